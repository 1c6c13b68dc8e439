"""Reading a hit's neighbourhood back from its source file — only while the file still says
what the index holds (same document hash); otherwise the stored text, marked stale."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from narezka.convert import locate
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.discover import read_document
from narezka.discover.walk import inside
from narezka.enrich.hashes import doc_hash
from narezka.errors import NarezkaError
from narezka.formats import place
from narezka.parse.markdown import parse_document
from narezka.parse.redaction import find_secrets, redact_span
from narezka.search.hits import Hit, snippet
from narezka.types import BlockKind, RawDocument


@dataclass(frozen=True, slots=True)
class Reread:
    """How a hit's file is read again: as the index read it."""

    corpus: Path
    redact: bool = True
    """Secrets replaced by markers, as in everything the index stores (off only for an
    index built with --no-redact)."""
    convert_cache: Path | None = None
    """The index's cache of converted documents: a scanned PDF is not read by OCR again."""
    options: ConvertOptions = DEFAULT
    """OCR and the limits a file past the cache is converted under (the caller read them)."""

    def current(self, hit: Hit) -> RawDocument | None:
        """The hit's file read this way, only if it still says what the index holds: same
        document hash (or, for an index older than stored hashes, the same text at the hit's
        own span). None if it changed, is gone or is unreadable now."""
        raw = read_source(
            self.corpus, hit.file_path, self.convert_cache, redact=self.redact, options=self.options
        )
        if raw is None:
            return None
        own = hit.record
        if own.doc_hash:
            return raw if doc_hash(raw.text) == own.doc_hash else None
        return raw if raw.text[own.start : own.end] == own.text else None


def merged_text(hit: Hit, query: str, reread: Reread) -> Hit:
    """The text of a folded hit's whole span, read from its file; if the file changed since
    it was indexed, the hit shrinks back to its best chunk, marked stale."""
    raw = reread.current(hit)
    if raw is None:
        return _stored(hit, query)
    text = _span(raw.text, hit.start, hit.end, redact=reread.redact)
    return dataclasses.replace(
        hit, text=text, snippet=snippet(text, query), covers=_covers(hit, raw, hit.start, hit.end)
    )


def _covers(hit: Hit, raw: RawDocument, start: int, end: int) -> Mapping[str, Any] | None:
    """The place keys of ``[start, end)`` of the re-read file (the pages a grown hit's text
    reaches), or what the hit had where the file has no provenance."""
    found = locate(raw.provenance, start, end)
    return place(*found) if found is not None else hit.covers


def _span(text: str, start: int, end: int, *, redact: bool) -> str:
    """A span of a re-read file as the index would store it: secrets replaced by markers."""
    return redact_span(text, find_secrets(text), start, end) if redact else text[start:end]


def expand_section(hit: Hit, query: str, reread: Reread) -> Hit:
    """Replace the hit's text by its whole heading section from the source file (or keep the
    stored text, marked stale, when the file no longer matches the index)."""
    raw = reread.current(hit)
    if raw is None:
        return _stored(hit, query)
    doc, _ = parse_document(raw)
    level = len(hit.section)
    start, end = doc.body_start, len(doc.text)
    for block in doc.blocks:
        if block.kind is not BlockKind.HEADING:
            continue
        if block.start <= hit.start and block.level <= max(level, 1):
            start = block.start
        elif block.start > hit.start and block.level <= max(level, 1):
            end = block.start
            break
    # A file holding several documents (a mail's attachments): the section ends with its own.
    start = max([start, *(p for p in raw.parts if p <= hit.start)])
    end = min([end, *(p for p in raw.parts if p > hit.start)])
    while end > start and doc.text[end - 1].isspace():
        end -= 1
    while start < end and doc.text[start].isspace():
        start += 1
    text = _span(doc.text, start, end, redact=reread.redact)
    return dataclasses.replace(
        hit,
        text=text,
        snippet=snippet(text, query),
        start=start,
        end=end,
        covers=_covers(hit, raw, start, end),
    )


def _stored(hit: Hit, query: str) -> Hit:
    """The hit as the index holds it: its own chunk's span and text, nothing folded in."""
    own = hit.record
    return dataclasses.replace(
        hit,
        text=own.text,
        snippet=snippet(own.text, query),
        start=own.start,
        end=own.end,
        merged=(),
        stale=True,
        covers=None,
    )


def read_source(
    corpus: Path,
    file_path: str,
    convert_cache: Path | None = None,
    *,
    redact: bool = True,
    options: ConvertOptions = DEFAULT,
) -> RawDocument | None:
    """The indexed file as the index read it (decoded, LF newlines; a PDF, Word file or web
    page as its canonical Markdown, redacted unless the index was built with ``redact``
    false, taken from the index's ``convert_cache`` when it is there, so a scanned PDF is
    not read by OCR again), or None if it is gone, unreadable, or outside
    the corpus: a symlink leading out of it is not read here, even for an index built with
    ``follow_symlinks`` (its hits keep their stored text)."""
    root = corpus if corpus.is_dir() else corpus.parent
    relative = Path(file_path)
    if relative.is_absolute() or ".." in relative.parts:
        return None  # never a path the index wrote
    if not inside(os.path.realpath(root / relative), os.path.realpath(root)):
        return None  # a link put in the corpus after it was indexed must not leak
    try:
        return read_document(
            root, root / relative, convert_cache=convert_cache, redact=redact, options=options
        )[0]
    except (OSError, NarezkaError):
        return None
