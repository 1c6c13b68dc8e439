"""A PDF, Word, HTML, slide or sheet file read as the Markdown ``narezka.convert`` makes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from narezka.convert import Converted, convert
from narezka.convert.cache import ConvertCache
from narezka.types import RawDocument

__all__ = ["converted_document"]


def _converted(data: bytes, file: Path, cache: Path | None) -> Converted:
    if cache is None:
        return convert(data, file.suffix, str(file))
    try:
        with ConvertCache(cache) as converted:
            return converted.convert(data, file.suffix, str(file))
    except sqlite3.Error:
        # A cache that cannot be written (locked by another process, read-only, full) costs
        # a conversion, never the file.
        return convert(data, file.suffix, str(file))


def converted_document(
    data: bytes, file: Path, source: str, mtime: float, cache: Path | None = None
) -> RawDocument:
    """The document whose text is the file's canonical Markdown, with its provenance map;
    converted through the ``cache`` sqlite file when given (unchanged bytes never twice).

    Raises ``ConvertError`` naming ``file``.
    """
    result = _converted(data, file, cache)
    return RawDocument(
        source=source,
        text=result.markdown,
        mtime=mtime,
        size=len(data),
        provenance=result.provenance,
    )
