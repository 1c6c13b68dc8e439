"""Other formats → Markdown canonical text plus a provenance map.

``convert(data, suffix, path)`` turns a PDF (its text layer), a Word .docx, an OpenDocument
.odt, an EPUB, an HTML page, a PowerPoint .pptx, an Excel .xlsx or a .csv file into Markdown,
the document's canonical text, and a sorted map of spans to where they lie in the original
(page, slide, sheet, element id). Splitting never branches on the source format: it sees
Markdown only. Each failure is a ``ConvertError`` naming the file.
"""

from __future__ import annotations

import bisect
import zipfile
import zlib
from collections.abc import Callable, Collection

from narezka.convert.markdown import Converted
from narezka.errors import ConvertError
from narezka.types import CONVERTED_SUFFIXES, ProvenanceSpan, SourceLocation

__all__ = ["CONVERTER_VERSION", "SUFFIXES", "Converted", "convert", "locate"]

CONVERTER_VERSION = "11"
"""Bumped whenever any converter's output changes: cached conversions of an older version
are converted again."""

SUFFIXES = CONVERTED_SUFFIXES
"""File suffixes (lowercase) that ``convert`` reads."""


def _pdf(data: bytes, path: str) -> Converted:
    from narezka.convert.pdf import convert_pdf

    return convert_pdf(data, path)


def _docx(data: bytes, path: str) -> Converted:
    from narezka.convert.docx import convert_docx

    return convert_docx(data, path)


def _odt(data: bytes, path: str) -> Converted:
    from narezka.convert.odt import convert_odt

    return convert_odt(data, path)


def _epub(data: bytes, path: str) -> Converted:
    from narezka.convert.epub import convert_epub

    return convert_epub(data, path)


def _pptx(data: bytes, path: str) -> Converted:
    from narezka.convert.slides import convert_pptx

    return convert_pptx(data, path)


def _xlsx(data: bytes, path: str) -> Converted:
    from narezka.convert.sheets import convert_xlsx

    return convert_xlsx(data, path)


def _csv(data: bytes, path: str) -> Converted:
    from narezka.convert.sheets import convert_csv

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Excel saves Russian CSV in the Windows code page; any byte decodes in it.
        text = data.decode("cp1251", errors="replace")
    return convert_csv(text.replace("\r\n", "\n").replace("\r", "\n"), path)


_UNREADABLE = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    NotImplementedError,
    LookupError,
    UnicodeError,
    ValueError,
)
"""What a damaged container or an odd encoding raises deep in a library: a last net under the
converters, which name these themselves where they can."""

# Loaded on first use: importing narezka must not import PDFium, lxml or openpyxl.
_CONVERTERS: dict[str, Callable[[bytes, str], Converted]] = {
    ".pdf": _pdf,
    ".docx": _docx,
    ".odt": _odt,
    ".epub": _epub,
    ".pptx": _pptx,
    ".xlsx": _xlsx,
    ".csv": _csv,
}


def convert(
    data: bytes, suffix: str, path: str = "", *, boilerplate: Collection[str] = frozenset()
) -> Converted:
    """Convert the bytes of a file with ``suffix`` (``.pdf``, ``.docx``…) to Markdown.

    ``path`` names the file in errors. For HTML, ``boilerplate`` holds the keys of blocks
    repeated across the page's crawl (``narezka.convert.html.repeated_blocks``), left out.
    Raises ``ConvertError`` (or its ``PasswordProtectedError``, ``NoTextLayerError``,
    ``UnsafeFileError``) naming ``path``; never anything else for any bytes.
    """
    kind = suffix.lower()
    name = path or f"<{kind} file>"
    page = kind in (".html", ".htm")
    converter = _CONVERTERS.get(kind)
    if converter is None and not page:
        raise ConvertError(name, f"no converter for {suffix!r} files")
    if not page and not data.strip():
        raise ConvertError(name, "file is empty")
    try:
        if converter is None:
            from narezka.convert.html import convert_html

            return convert_html(data, name, boilerplate)
        return converter(data, name)
    except ConvertError:
        raise
    except (MemoryError, RecursionError) as exc:
        raise ConvertError(name, f"too large or deep to convert ({type(exc).__name__})") from exc
    except _UNREADABLE as exc:  # a converter's gap: the run must still go on without the file
        raise ConvertError(name, f"damaged or unreadable ({type(exc).__name__})") from exc


def locate(
    provenance: tuple[ProvenanceSpan, ...], start: int, end: int
) -> tuple[SourceLocation, SourceLocation] | None:
    """The locations of the first and last provenance spans that meet ``[start, end)``
    (e.g. a chunk's pages: ``first.page``–``last.page``), or None where the map is silent."""
    end = max(end, start + 1)
    first = bisect.bisect_right(provenance, start, key=lambda s: s.end)
    last = bisect.bisect_left(provenance, end, key=lambda s: s.start) - 1
    if first > last:
        return None
    return provenance[first].where, provenance[last].where
