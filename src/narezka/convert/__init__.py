"""Other formats → Markdown canonical text plus a provenance map.

``convert(data, suffix, path)`` turns a file of any format of :mod:`narezka.formats` (a PDF's
text layer, Word, OpenDocument, EPUB, HTML, PowerPoint, Excel, CSV, TSV) into Markdown, the
document's canonical text, and a sorted map of spans to where they lie in the original
(page, slide, sheet, element id). Splitting never branches on the source format: it sees
Markdown only. Each failure is a ``ConvertError`` naming the file.
"""

from __future__ import annotations

import bisect
import functools
import importlib
import zipfile
import zlib
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from narezka._lazy import lazy_face
from narezka.convert.markdown import Converted
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.errors import ConvertError
from narezka.formats import CONVERTED_SUFFIXES, format_for
from narezka.types import ProvenanceSpan, SourceLocation

if TYPE_CHECKING:
    from narezka.convert.cache import ConvertCache

__getattr__, __dir__ = lazy_face(globals(), cache="ConvertCache")

__all__ = [
    "CONVERTER_VERSION",
    "SUFFIXES",
    "ConvertCache",
    "Converted",
    "anchored_comments",
    "convert",
    "document_parts",
    "locate",
]

CONVERTER_VERSION = "22"
"""Bumped whenever any converter's output changes: cached conversions of an older version
are converted again."""

SUFFIXES = CONVERTED_SUFFIXES
"""File suffixes (lowercase) that ``convert`` reads: those of :data:`narezka.formats.FORMATS`."""


@functools.cache
def _converter(name: str) -> Callable[..., Converted]:
    """The converter a format's row names (``module:function`` of this package), imported
    on first use."""
    module, _, function = name.partition(":")
    found: Callable[..., Converted] = getattr(
        importlib.import_module(f"{__name__}.{module}"), function
    )
    return found


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


def convert(
    data: bytes,
    suffix: str,
    path: str = "",
    *,
    boilerplate: Collection[str] = frozenset(),
    options: ConvertOptions = DEFAULT,
) -> Converted:
    """Convert the bytes of a file with ``suffix`` (``.pdf``, ``.docx``…) to Markdown.

    ``path`` names the file in errors. For HTML, ``boilerplate`` holds the keys of blocks
    repeated across the page's crawl (``narezka.convert.html.repeated_blocks``), left out.
    ``options`` (OCR on or off, size limits) are the run's, read at the top and handed down
    to the converters that scan or hold other files (:attr:`~narezka.formats.Format.options`).
    Raises ``ConvertError`` (or its ``PasswordProtectedError``, ``NoTextLayerError``,
    ``UnsafeFileError``) naming ``path``; never anything else for any bytes.
    """
    kind = suffix.lower()
    name = path or f"<{kind} file>"
    found = format_for(kind)
    if found is None:
        raise ConvertError(name, f"no converter for {suffix!r} files")
    if not found.page and not data.strip():
        raise ConvertError(name, "file is empty")
    try:
        converter = _converter(found.converter)
        if found.page:
            return converter(data, name, boilerplate)
        if found.options:
            return converter(data, name, options)
        return converter(data, name)
    except ConvertError:
        raise
    except (MemoryError, RecursionError) as exc:
        raise ConvertError(name, f"too large or deep to convert ({type(exc).__name__})") from exc
    except _UNREADABLE as exc:  # a converter's gap: the run must still go on without the file
        raise ConvertError(name, f"damaged or unreadable ({type(exc).__name__})") from exc


def document_parts(meta: Mapping[str, Any], size: int) -> tuple[int, ...]:
    """Where the documents a conversion holds after its first start (``meta["parts"]``: a
    mail's attachments), ascending and inside a text of ``size`` characters
    (``RawDocument.parts``)."""
    parts = meta.get("parts") or ()
    if not isinstance(parts, list | tuple):
        return ()
    return tuple(sorted({p for p in parts if type(p) is int and 0 < p < size}))


def anchored_comments(meta: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """A conversion's comments anchored in its text: the entries of ``meta["comments"]`` with
    an ``at`` span (``RawDocument.comments``): Word comments, cell comments, a slide's
    comments (anchored to its shape or the whole slide)."""
    found = []
    for note in meta.get("comments") or ():
        at = note.get("at") if isinstance(note, Mapping) else None
        if isinstance(at, list | tuple) and len(at) == 2 and all(type(x) is int for x in at):
            found.append(note)
    return tuple(found)


def locate(
    provenance: tuple[ProvenanceSpan, ...], start: int, end: int
) -> tuple[SourceLocation, SourceLocation] | None:
    """The locations of the first and last provenance spans that meet ``[start, end)``
    (e.g. a chunk's pages: ``first.page``–``last.page``), or None where the map is silent.

    A span that runs from one sheet into the next ends, here, at the first sheet's last
    location: one sheet's cells say nothing of another's (``Прайс!A1:B3``, not ``A1:B1``)."""
    end = max(end, start + 1)
    first = bisect.bisect_right(provenance, start, key=lambda s: s.end)
    last = bisect.bisect_left(provenance, end, key=lambda s: s.start) - 1
    if first > last:
        return None
    sheet = provenance[first].where.sheet
    if sheet is not None:
        while provenance[last].where.sheet != sheet:
            last -= 1
    return provenance[first].where, provenance[last].where
