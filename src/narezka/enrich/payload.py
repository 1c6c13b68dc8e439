"""The payload stored with every chunk's point, and the path rules that add zone and project.

Zones follow the seed pipeline by default: ``MEMORY.md`` is hot, ``memory/_archive/**`` cold,
everything else warm. Projects come from filename patterns. Both are configurable in
``narezka.toml`` (first matching rule wins).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from narezka.formats import PLACE_KEYS
from narezka.globs import glob_matches
from narezka.parse.obsidian import normalize_tag
from narezka.parse.redaction import redacted_text
from narezka.types import Chunk

PREVIEW_CHARS = 200

DEFAULT_ZONES: tuple[tuple[str, str], ...] = (
    ("MEMORY.md", "hot"),
    ("**/MEMORY.md", "hot"),
    ("memory/_archive/**", "cold"),
    ("**/memory/_archive/**", "cold"),
    ("memory/*.md", "warm"),
)
DEFAULT_ZONE = "warm"


@dataclass(frozen=True, slots=True)
class Rules:
    """Ordered (glob, value) rules for zones and projects."""

    zones: tuple[tuple[str, str], ...] = DEFAULT_ZONES
    projects: tuple[tuple[str, str], ...] = ()
    default_zone: str = DEFAULT_ZONE
    default_project: str = field(default="")


def match_rule(path: str, rules: Sequence[tuple[str, str]], default: str) -> str:
    """The value of the first rule whose glob matches the POSIX path, else ``default``."""
    for pattern, value in rules:
        if glob_matches(pattern, path):
            return value
    return default


@dataclass(frozen=True, slots=True)
class ParentSpan:
    """A parent-child chunk's parent: the span and text ``search --expand parent`` returns."""

    index: int
    start: int
    end: int
    text: str
    section: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Payload:
    """What the store keeps with every chunk's point: the one schema, written by
    :func:`chunk_payload` and read back by :meth:`from_dict` (search, serve, sync recovery).

    ``text`` is the chunk's span with its secrets redacted (``start``/``end`` still locate the
    span in the source); with redaction off (``--no-redact``) it is the span itself."""

    file_path: str
    section_path: tuple[str, ...]
    zone: str
    project: str
    mtime: float
    doc_hash: str
    """The source document's content hash when it was indexed: search re-reads the file only
    while it still matches."""
    content_hash: str
    text: str
    url: str
    anchor: str
    anchors: tuple[Mapping[str, Any], ...]
    """Each merged section's anchor and start offset (see ``enrich.anchors.anchor_for``)."""
    start: int
    end: int
    chunk_index: int
    strategy: str
    category: str
    archived: bool
    tags: tuple[str, ...]
    title: str
    tokens: int
    """Size of ``embed_text`` in the index's unit (its embedder's tokens by default)."""
    embed_chars: int = 0
    """Characters of ``embed_text`` (0 in an index older than this field)."""
    embed_tokens: int = 0
    """``embed_text`` in the embedder's own tokens, whatever the unit (0: not recorded)."""
    parent: ParentSpan | None = None
    llm_context: str = ""
    """The LLM-written context prepended to ``embed_text`` (empty: none; see
    :mod:`narezka.enrich.llm_context`)."""
    origin: tuple[tuple[str, int | str], ...] = ()
    """For a converted file, where the chunk lies in the original: ``page_start`` and
    ``page_end`` (PDF), ``slide``, ``sheet`` or ``element`` (stored as top-level keys)."""
    comments: tuple[Mapping[str, str], ...] = ()
    """For a converted file, the reviewers' comments anchored in the chunk's text (Word
    comments, cell comments): ``author``, ``text`` and ``on`` each (stored when any)."""
    embedded_from: tuple[str, ...] = ()
    """For an Obsidian note: the notes whose text its ``![[embeds]]`` brought into this chunk
    (``Note.md``, ``Note.md#Heading``, ``Note.md#^id``; stored only when there are some)."""
    callouts: tuple[str, ...] = ()
    """For an Obsidian note: the kinds of the callouts (``note``, ``warning``…) the chunk
    holds (stored only when there are some)."""

    def to_dict(self) -> dict[str, Any]:
        """The stored form (flat, JSON-ready; ``section`` and ``text_preview`` for people)."""
        data: dict[str, Any] = {
            "file_path": self.file_path,
            "section": " > ".join(self.section_path),
            "section_path": list(self.section_path),
            "zone": self.zone,
            "project": self.project,
            "mtime": self.mtime,
            "doc_hash": self.doc_hash,
            "content_hash": self.content_hash,
            "text_preview": self.text[:PREVIEW_CHARS],
            "text": self.text,
            "url": self.url,
            "anchor": self.anchor,
            "anchors": [dict(a) for a in self.anchors],
            "start": self.start,
            "end": self.end,
            "chunk_index": self.chunk_index,
            "strategy": self.strategy,
            "category": self.category,
            "archived": self.archived,
            "tags": list(self.tags),
            "title": self.title,
            "tokens": self.tokens,
            "embed_chars": self.embed_chars,
            "embed_tokens": self.embed_tokens,
        }
        if self.parent is not None:
            data |= {
                "parent_index": self.parent.index,
                "parent_start": self.parent.start,
                "parent_end": self.parent.end,
                "parent_text": self.parent.text,
                "parent_section": list(self.parent.section),
            }
        if self.llm_context:
            data["llm_context"] = self.llm_context
        if self.embedded_from:
            data["embedded_from"] = list(self.embedded_from)
        if self.callouts:
            data["callouts"] = list(self.callouts)
        data.update(self.origin)
        if self.comments:
            data["comments"] = [dict(c) for c in self.comments]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Payload:
        """A stored payload read back; fields an older index did not write get empty values
        (``doc_hash`` '' means "compare the text itself")."""
        parent = None
        if "parent_text" in data:
            parent = ParentSpan(
                int(data.get("parent_index", 0)),
                int(data.get("parent_start", 0)),
                int(data.get("parent_end", 0)),
                str(data["parent_text"]),
                tuple(str(s) for s in data.get("parent_section") or ()),
            )
        return cls(
            file_path=str(data.get("file_path", "")),
            section_path=tuple(str(s) for s in data.get("section_path") or ()),
            zone=str(data.get("zone", "")),
            project=str(data.get("project", "")),
            mtime=float(data.get("mtime", 0.0)),
            doc_hash=str(data.get("doc_hash") or ""),
            content_hash=str(data.get("content_hash", "")),
            text=str(data.get("text", "")),
            url=str(data.get("url", "")),
            anchor=str(data.get("anchor", "")),
            anchors=tuple(data.get("anchors") or ()),
            start=int(data.get("start", 0)),
            end=int(data.get("end", 0)),
            chunk_index=int(data.get("chunk_index", 0)),
            strategy=str(data.get("strategy", "")),
            category=str(data.get("category", "")),
            archived=bool(data.get("archived", False)),
            tags=tuple(str(t) for t in data.get("tags") or ()),
            title=str(data.get("title", "")),
            tokens=int(data.get("tokens", 0)),
            embed_chars=int(data.get("embed_chars", 0)),
            embed_tokens=int(data.get("embed_tokens", 0)),
            parent=parent,
            llm_context=str(data.get("llm_context") or ""),
            origin=_origin(data),
            comments=_comments(data),
            embedded_from=_strings(data.get("embedded_from")),
            callouts=_strings(data.get("callouts")),
        )


def chunk_payload(chunk: Chunk, rules: Rules, *, embed_tokens: int | None = None) -> dict[str, Any]:
    """Everything search filters on or shows, plus what sync recovery needs (see
    :class:`Payload`), in its stored form. ``embed_tokens`` is ``embed_text`` in the
    embedder's tokens when the chunk was sized in another unit."""
    meta: Mapping[str, Any] = chunk.meta
    tags = meta.get("tags")
    return Payload(
        file_path=chunk.source,
        section_path=tuple(chunk.section),
        zone=match_rule(chunk.source, rules.zones, rules.default_zone),
        project=match_rule(chunk.source, rules.projects, rules.default_project),
        mtime=float(meta.get("mtime", 0.0)),
        doc_hash=str(meta.get("doc_hash") or ""),
        content_hash=chunk.content_hash,
        text=redacted_text(chunk),
        url=chunk.url,
        anchor=chunk.anchor,
        anchors=tuple(meta.get("anchors") or ()),
        start=chunk.start,
        end=chunk.end,
        chunk_index=chunk.index,
        strategy=chunk.strategy,
        category=str(meta.get("category") or ""),
        archived=bool(meta.get("archived", False)),
        # Stored as a tag filter compares them: without "#", lowercased (as Obsidian does).
        tags=tuple(dict.fromkeys(normalize_tag(str(t)) for t in tags if normalize_tag(str(t))))
        if isinstance(tags, list)
        else (),
        title=str(meta.get("title") or ""),
        tokens=chunk.tokens,
        embed_chars=len(chunk.embed_text),
        embed_tokens=chunk.tokens if embed_tokens is None else embed_tokens,
        parent=_parent_span(meta.get("parent")),
        llm_context=str(meta.get("llm_context") or ""),
        origin=_origin(meta),
        comments=_comments(meta),
        embedded_from=_strings(meta.get("embedded_from")),
        callouts=_strings(meta.get("callouts")),
    ).to_dict()


ORIGIN_KEYS = PLACE_KEYS
"""Where a converted file's chunk lies in its original (:func:`narezka.formats.place`)."""


def _origin(data: Mapping[str, Any]) -> tuple[tuple[str, int | str], ...]:
    return tuple((k, data[k]) for k in ORIGIN_KEYS if isinstance(data.get(k), (int, str)))


def _comments(data: Mapping[str, Any]) -> tuple[Mapping[str, str], ...]:
    found = data.get("comments")
    if not isinstance(found, list):  # front matter's ``comments: true`` is no comment
        return ()
    return tuple(
        {k: str(v) for k, v in c.items() if k in ("author", "text", "on")}
        for c in found
        if isinstance(c, Mapping) and c.get("text")
    )


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def _parent_span(parent: Any) -> ParentSpan | None:
    if not isinstance(parent, Mapping):
        return None
    return ParentSpan(
        int(parent.get("index", 0)),
        int(parent.get("start", 0)),
        int(parent.get("end", 0)),
        str(parent.get("text", "")),
        tuple(str(s) for s in parent.get("section") or ()),
    )
