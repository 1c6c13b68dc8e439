"""A PDF, Word, HTML, slide or sheet file read as the Markdown ``narezka.convert`` makes."""

from __future__ import annotations

from pathlib import Path

from narezka.convert import convert
from narezka.types import RawDocument

__all__ = ["converted_document"]


def converted_document(data: bytes, file: Path, source: str, mtime: float) -> RawDocument:
    """The document whose text is the file's canonical Markdown, with its provenance map.

    Raises ``ConvertError`` naming ``file``.
    """
    result = convert(data, file.suffix, str(file))
    return RawDocument(
        source=source,
        text=result.markdown,
        mtime=mtime,
        size=len(data),
        provenance=result.provenance,
    )
