"""Frozen value types passed between pipeline stages.

Every offset in narezka indexes ``Document.text``: the decoded file with the BOM removed and
CRLF/CR turned into LF, and nothing else changed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A place in a converted file's original: a PDF page, a slide, a sheet, an element id
    (stored with a chunk as the place keys of :func:`narezka.formats.place`)."""

    page: int | None = None
    """1-based PDF page."""
    slide: int | None = None
    """1-based slide number."""
    sheet: str | None = None
    element: str | None = None
    """An HTML element id near the text, an EPUB chapter (``OEBPS/ch1.xhtml#id``), or a Word
    or OpenDocument block number such as ``p12``."""
    note: str | None = None
    """For an Obsidian note's text that an ``![[embed]]`` brought in: the note it came from
    (``Note.md``, ``Note.md#Heading``, ``Note.md#^block``); chunks say ``embedded_from``."""


@dataclass(frozen=True, slots=True)
class ProvenanceSpan:
    """``[start, end)`` of a converted document's canonical text comes from ``where``."""

    start: int
    end: int
    where: SourceLocation


@dataclass(frozen=True, slots=True)
class RawDocument:
    """A file that was read and decoded, before any Markdown parsing."""

    source: str
    """Path relative to the corpus root, with forward slashes; the chunk's ``source``."""
    text: str
    """Decoded text, BOM removed, CRLF/CR turned into LF."""
    encoding: str = "utf-8"
    mtime: float = 0.0
    size: int = 0
    provenance: tuple[ProvenanceSpan, ...] = ()
    """For a converted file (PDF, Word, HTML…): where each span of ``text`` lies in the original,
    sorted by ``start``; empty for Markdown and plain text."""
    lacks: str = ""
    """For a converted file: the mark of a capability its conversion lacked (scanned pages
    left unread without OCR: ``narezka.convert.capability``), recorded with it in the index."""
    comments: tuple[Mapping[str, Any], ...] = ()
    """For a converted file: its reviewers' comments (Word comments, cell comments), each
    ``author``, ``text``, ``on`` (the text or cell it is anchored to) and ``at``, the
    ``[start, end)`` of ``text`` it is anchored in: the metadata of the chunks that meet it,
    never their text."""
    parts: tuple[int, ...] = ()
    """For a converted file that holds several documents (a mail and each of its
    attachments): the offsets of ``text`` where each after the first starts, ascending. Each
    part is split as a document of its own (its heading path still under the mail's), so no
    chunk holds text of two parts and a hit on an attachment is named by it alone."""
    embeds: tuple[str, ...] = ()
    """For an Obsidian note with ``![[embeds]]``: the note names they asked for (lowercased,
    nested ones included), recorded in the index so that a sync re-reads the note when a
    note of one of these names appears, changes or goes."""


class BlockKind(enum.Enum):
    """Kinds of Markdown blocks that the splitters care about."""

    HEADING = "heading"
    PARAGRAPH = "paragraph"
    CODE = "code"
    """Fenced or indented code: an atom."""
    TABLE = "table"
    """A GFM table: an atom, split by rows only when it alone is too long."""
    HTML = "html"
    """An HTML block or comment: an atom."""
    LIST_ITEM = "list_item"
    QUOTE = "quote"
    RULE = "rule"


@dataclass(frozen=True, slots=True)
class Block:
    """One leaf block of the Markdown block map, as a character range of ``Document.text``."""

    kind: BlockKind
    start: int
    end: int
    """Exclusive; the block's last line without its newline."""
    level: int = 0
    """Heading level 1–6 for headings; list nesting depth for list items."""
    title: str = ""
    """Heading title with trailing ``#`` and ``{#anchor}`` removed."""
    anchor: str = ""
    """Explicit ``{#id}`` of a heading, else a slug of its title."""
    fence: str = ""
    """For fenced code: the opening fence line, e.g. ```` ```python ````."""
    fence_close: str = ""
    """For fenced code: the closing fence line, empty when the fence runs to end of file."""

    @property
    def is_atom(self) -> bool:
        return self.kind in (BlockKind.CODE, BlockKind.TABLE, BlockKind.HTML)


@dataclass(frozen=True, slots=True)
class Secret:
    """A secret found in a document (``text[start:end]``): redacted from all it derives."""

    start: int
    end: int
    kind: str
    """What it is: ``github-token``, ``private-key``, ``password``…"""


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed document: normalized text, front matter, and its block map."""

    source: str
    text: str
    body_start: int = 0
    """Offset just past the YAML front matter; 0 when there is none."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    blocks: tuple[Block, ...] = ()
    encoding: str = "utf-8"
    mtime: float = 0.0
    secrets: tuple[Secret, ...] = ()
    """Secrets in ``text``, sorted and disjoint; found once per document before splitting."""
    provenance: tuple[ProvenanceSpan, ...] = ()
    """For a converted file: ``RawDocument.provenance`` (pages, slides, sheets of ``text``)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrieval unit: an exact span of a document plus the text its embedding is made from.

    ``text == document.text[start:end]`` always holds; size limits apply to ``embed_text``.
    """

    source: str
    index: int
    start: int
    end: int
    text: str
    embed_text: str
    section: tuple[str, ...] = ()
    anchor: str = ""
    url: str = ""
    chars: int = 0
    """Length of ``embed_text`` in characters."""
    tokens: int = 0
    """Length of ``embed_text`` in the configured tokenizer's tokens (characters for chars)."""
    tokenizer: str = "chars"
    strategy: str = ""
    content_hash: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    secrets: tuple[Secret, ...] = ()
    """The document's secrets that overlap the span (document offsets): ``embed_text`` and
    every stored or served text of the chunk carry ``[REDACTED:<kind>]`` in their place."""

    def to_json(self) -> dict[str, Any]:
        """The JSONL export of the chunk contract (``secrets`` only when there are any:
        ``text`` is the exact span, so a consumer must know which parts to withhold)."""
        data: dict[str, Any] = {
            "source": self.source,
            "index": self.index,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "embed_text": self.embed_text,
            "section": list(self.section),
            "anchor": self.anchor,
            "url": self.url,
            "chars": self.chars,
            "tokens": self.tokens,
            "tokenizer": self.tokenizer,
            "strategy": self.strategy,
            "content_hash": self.content_hash,
            "meta": dict(self.meta),
        }
        if self.secrets:
            data["secrets"] = [
                {"start": s.start, "end": s.end, "kind": s.kind} for s in self.secrets
            ]
        return data


@dataclass(frozen=True, slots=True)
class SparseVector:
    """A sparse vector: sorted unique ``indices`` and their ``values`` (a BM25 analysis of a
    text, :mod:`narezka.tokens.bm25`, as the store keeps it)."""

    indices: tuple[int, ...]
    values: tuple[float, ...]
