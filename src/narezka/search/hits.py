"""What a search returns (:class:`Hit`) and what it may be narrowed by (:class:`Filter`)."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from narezka.enrich.anchors import anchor_for
from narezka.enrich.payload import Payload
from narezka.errors import ConfigError
from narezka.globs import glob_regex
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

    def __post_init__(self) -> None:
        if self.path is not None:
            glob_regex(self.path)  # a malformed glob fails here, not mid-search

    def store_filter(self) -> StoreFilter:
        """The part the store evaluates itself (the path glob is applied to candidates)."""
        fields = (("zone", self.zone), ("project", self.project), ("category", self.category))
        must = tuple(Eq(name, value) for name, value in fields if value)
        must_not = () if self.include_archived else (Eq("archived", True),)
        return StoreFilter(must, must_not)

    def matches_path(self, file_path: str) -> bool:
        """Whether a file's corpus path passes the path glob (always, without one)."""
        return self.path is None or bool(glob_regex(self.path).match(file_path))


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

    @property
    def breadcrumb(self) -> str:
        return " > ".join(self.section)

    def to_json(self) -> dict[str, Any]:
        """The hit as JSON-ready data (what ``search --format json`` prints)."""
        return {
            "score": self.score,
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


class Indexed(Protocol):
    """What the index recorded of a file at its last sync (a manifest entry)."""

    @property
    def size(self) -> int: ...
    @property
    def mtime(self) -> float: ...
    @property
    def doc_hash(self) -> str: ...


class Records(Protocol):
    """The index's records of its files (the manifest), by corpus path."""

    def get(self, path: str) -> Indexed | None:
        """The record of ``path``, or None if the index does not hold it."""


def mark_stale(
    hits: Sequence[Hit], corpus: Path, records: Callable[[], AbstractContextManager[Records]]
) -> list[Hit]:
    """``hits``, each flagged ``stale`` whose file changed since its text was indexed: gone,
    or not what the last sync recorded, or a sync has replaced its points since this search
    read them (another document hash). One stat per distinct file; ``records`` is opened only
    when a file's mtime is not the one its hit was indexed at, and a file is read (hashed)
    only when just its mtime moved, so a touched but unchanged file is not called stale."""
    root = corpus if corpus.is_dir() else corpus.parent
    changed: dict[str, bool] = {}
    suspects: dict[str, tuple[Hit, os.stat_result]] = {}
    for hit in hits:
        if hit.file_path in changed or hit.file_path in suspects:
            continue
        try:
            stat = os.stat(root / hit.file_path)
        except OSError:
            changed[hit.file_path] = True
            continue
        if stat.st_mtime == hit.payload.get("mtime"):
            changed[hit.file_path] = False  # untouched since this version was indexed
        else:
            suspects[hit.file_path] = (hit, stat)  # edited, or only touched: ask the record
    if suspects:
        with records() as known:
            for path, (hit, stat) in suspects.items():
                changed[path] = _differs(hit, stat, known.get(path), corpus)
    return [
        dataclasses.replace(h, stale=True) if changed[h.file_path] and not h.stale else h
        for h in hits
    ]


def _differs(hit: Hit, stat: os.stat_result, entry: Indexed | None, corpus: Path) -> bool:
    if entry is None:
        return True  # synced away (deleted) since the hit's points were read
    stored = str(hit.payload.get("doc_hash") or "")
    if stored and entry.doc_hash and stored != entry.doc_hash:
        return True  # a sync replaced the file's points after this search read them
    if (stat.st_size, stat.st_mtime) == (entry.size, entry.mtime):
        return False  # touched, and the last sync saw it so
    if stat.st_size != entry.size:
        return True
    # Same size, new mtime: only its content can tell an edit from a touch. (Imported here:
    # expansion builds on this module.)
    from narezka.search.expansion import current_source

    return current_source(corpus, hit) is None


def check_k(k: int) -> None:
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")


_WORD = re.compile(r"\w+", re.U)


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first query word it contains (by a 5-letter stem)."""
    stems = {w.lower()[:5] for w in _WORD.findall(query) if len(w) > 2}
    lowered = text.lower()
    first = min((i for s in stems if (i := lowered.find(s)) >= 0), default=0)
    begin = max(0, first - width // 3)
    piece = text[begin : begin + width].replace("\n", " ")
    return ("…" if begin else "") + piece + ("…" if begin + width < len(text) else "")
