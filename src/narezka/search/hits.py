"""What a search returns (:class:`Hit`) and what it may be narrowed by (:class:`Filter`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from narezka.enrich.anchors import anchor_for
from narezka.enrich.payload import ORIGIN_KEYS, Payload
from narezka.formats import where
from narezka.globs import compile_glob, glob_matches
from narezka.parse.obsidian import normalize_tag
from narezka.search.relevance import Signals
from narezka.store import Eq, StoredHit
from narezka.store import Filter as StoreFilter

SNIPPET_CHARS = 240


@dataclass(frozen=True, slots=True)
class Filter:
    """Which chunks may answer: exact zone, project and category, a path glob, and whether
    archived pages count (they do not by default)."""

    zone: str | None = None
    project: str | None = None
    category: str | None = None
    path: str | None = None
    """A glob over the file's path inside the corpus, e.g. ``products/**``."""
    include_archived: bool = False
    tag: str | None = None
    """A tag the note carries (front matter ``tags``, or an Obsidian ``#tag``), without
    ``#``; compared case-insensitively, as Obsidian does."""

    def __post_init__(self) -> None:
        if self.path is not None:
            compile_glob(self.path)  # a malformed or too long glob fails here, not mid-search
        if self.tag is not None:
            object.__setattr__(self, "tag", normalize_tag(self.tag) or None)

    def store_filter(self) -> StoreFilter:
        """The part the store evaluates itself (the path glob is applied to candidates)."""
        fields = (("zone", self.zone), ("project", self.project), ("category", self.category))
        must = tuple(Eq(name, value) for name, value in fields if value)
        if self.tag:  # tags is a list: Eq holds when it contains the tag
            must += (Eq("tags", self.tag),)
        must_not = () if self.include_archived else (Eq("archived", True),)
        return StoreFilter(must, must_not)

    def matches_path(self, file_path: str) -> bool:
        """Whether a file's corpus path passes the path glob (always, without one)."""
        return self.path is None or glob_matches(self.path, file_path)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: where it is, what it says, how it ranked."""

    score: float
    url: str
    file_path: str
    section: tuple[str, ...]
    text: str
    snippet: str
    chunk_index: int
    start: int
    end: int
    payload: dict[str, Any] = field(default_factory=dict)
    merged: tuple[int, ...] = ()
    """Indices of neighbouring chunks of the same section folded into this hit."""
    stale: bool = False
    """The file changed since it was indexed: the text is what the index holds, and folding
    or section expansion (which read the file) were not applied."""
    chunk_id: str = ""
    """The point id of the hit's best chunk: ``Index.get`` and ``Index.neighbours`` take it."""
    relevance: float = 0.0
    """The calibrated chance in [0, 1] that the hit answers the query, the same whatever the
    query, mode or k (:mod:`narezka.search.relevance`); ``score`` only orders one list."""
    signals: Signals | None = None
    """The raw per-hit signals ``relevance`` was computed from."""
    covers: Mapping[str, Any] | None = None
    """The place keys (:data:`narezka.formats.PLACE_KEYS`) of the hit's text once it grew
    past its best chunk (folded neighbours, an expanded section): the pages it reaches. None:
    the best chunk's own, in ``payload``."""
    link: str | None = None
    """The URL a reader opens for an index of a source: a repository's file at the indexed
    commit and lines (None for a folder's index, whose ``url`` is the file's)."""

    @property
    def breadcrumb(self) -> str:
        return " > ".join(self.section)

    @property
    def place(self) -> Mapping[str, Any]:
        """The place keys of the hit's text: where in a converted file's original it lies."""
        if self.covers is not None:
            return self.covers
        return {key: self.payload[key] for key in ORIGIN_KEYS if key in self.payload}

    @property
    def where(self) -> str:
        """Where a converted file's hit lies in its original, as its format's row says
        (:mod:`narezka.formats`): ``p. 12–13``, ``slide 3``, ``Прайс!A1:D20``,
        ``§ Доставка > Тарифы``; empty for Markdown."""
        return where(self.file_path, self.place, self.section)

    def to_json(self) -> dict[str, Any]:
        """The hit as JSON-ready data (what ``search --format json`` prints)."""
        return {
            "relevance": round(self.relevance, 4),
            "score": self.score,
            "signals": self.signals.to_json() if self.signals else None,
            "chunk_id": self.chunk_id,
            "url": self.url,
            "file_path": self.file_path,
            "section": list(self.section),
            "chunk_index": self.chunk_index,
            "start": self.start,
            "end": self.end,
            "snippet": self.snippet,
            "text": self.text,
            "merged": list(self.merged),
            "stale": self.stale,
            "zone": self.payload.get("zone"),
            "project": self.payload.get("project"),
            "category": self.payload.get("category"),
            "archived": self.payload.get("archived"),
            # Where a converted file's hit lies in its original (null for Markdown).
            "where": self.where or None,
            **{key: self.place.get(key) for key in ORIGIN_KEYS},
            **({"link": self.link} if self.link is not None else {}),
            # Reviewers' comments on the hit's text (Word, cells): metadata, not its text.
            **({"comments": self.payload["comments"]} if self.payload.get("comments") else {}),
        }

    @property
    def record(self) -> Payload:
        """The stored payload, typed (what the index holds for this hit's best chunk)."""
        return Payload.from_dict(self.payload)

    @classmethod
    def from_stored(cls, stored: StoredHit, query: str) -> Hit:
        """A hit for a point the store returned, its snippet taken around the query."""
        p = Payload.from_dict(stored.payload)
        return cls(
            score=stored.score,
            url=_url_for(p, query),
            file_path=p.file_path,
            section=p.section_path,
            text=p.text,
            snippet=snippet(p.text, query),
            chunk_index=p.chunk_index,
            start=p.start,
            end=p.end,
            payload=dict(stored.payload),
            chunk_id=stored.id,
        )


def _url_for(payload: Payload, query: str) -> str:
    """The chunk's url, pointing at the one of its sections the query matched when short
    sections were merged into it (each keeps its anchor)."""
    if len(payload.anchors) < 2 or not query:
        return payload.url
    anchor = anchor_for(payload.anchors, payload.text, payload.start, query, default=payload.anchor)
    return f"{payload.file_path}#{anchor}" if anchor else payload.file_path


_WORD = re.compile(r"\w+", re.U)


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first query word it contains (by a 5-letter stem)."""
    stems = {w.lower()[:5] for w in _WORD.findall(query) if len(w) > 2}
    lowered = text.lower()
    first = min((i for s in stems if (i := lowered.find(s)) >= 0), default=0)
    begin = max(0, first - width // 3)
    piece = text[begin : begin + width].replace("\n", " ")
    return ("…" if begin else "") + piece + ("…" if begin + width < len(text) else "")


class Hits(list[Hit]):
    """A search's hits, best first, and ``best_relevance``: the best relevance among all it
    found, those a ``min_relevance`` dropped too (None: it found nothing). No hits with a
    ``best_relevance`` means "the index holds nothing relevant", and says how close it came;
    ``min_relevance`` is the floor that was applied (the index's, unless the query set one)."""

    best_relevance: float | None
    min_relevance: float | None

    def __init__(
        self,
        hits: Iterable[Hit] = (),
        best_relevance: float | None = None,
        min_relevance: float | None = None,
    ) -> None:
        super().__init__(hits)
        self.best_relevance = best_relevance
        self.min_relevance = min_relevance


def above(hits: list[Hit], min_relevance: float) -> tuple[list[Hit], float | None]:
    """The hits whose relevance reaches ``min_relevance`` (in their order), and the best
    relevance among all of them (None without hits): what says "nothing relevant" and why."""
    best = max((h.relevance for h in hits), default=None)
    return [h for h in hits if h.relevance >= min_relevance], best
