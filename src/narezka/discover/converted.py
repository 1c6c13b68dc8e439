"""A PDF, Word, HTML, slide or sheet file read as the Markdown ``narezka.convert`` makes."""

from __future__ import annotations

import contextlib
import io
import os
import sqlite3
import zipfile
from collections.abc import Collection, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from narezka.convert import Converted, anchored_comments, document_parts
from narezka.convert.cache import ConvertCache, redacted
from narezka.convert.capability import lacking
from narezka.convert.failures import FAILED_NAME, REMEMBERED, FailedConversions, failure_key
from narezka.convert.isolate import convert_bounded as convert
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.errors import ConversionLimitError, ConvertError
from narezka.formats import PAGE_SUFFIXES
from narezka.types import RawDocument

# ``convert`` here is ``convert_bounded``: every conversion of a run runs in a child process
# under limits (narezka.convert.isolate); a file that explodes costs its own conversion,
# never the run or the server.

_MAX_CRAWL = 2000
"""Pages of one folder read to find its repeated blocks: enough to see a site's menu."""

__all__ = ["conversion_notes", "converted_document", "ooxml_suffix"]

_OOXML_PARTS = (
    ("word/document.xml", ".docx"),
    ("ppt/presentation.xml", ".pptx"),
    ("xl/workbook.xml", ".xlsx"),
)


def ooxml_suffix(data: bytes) -> str | None:
    """``.docx``, ``.pptx`` or ``.xlsx`` when ``data`` is that Office Open XML package by
    its main part, else None: a Word 2007+ file saved under a ``.doc`` name is read by what
    it holds, not refused by its name."""
    if not data.startswith(b"PK\x03\x04"):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            names = set(package.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return None
    return next((suffix for part, suffix in _OOXML_PARTS if part in names), None)


def _crawl(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """The folder's pages with their sizes and times: the key of ``_folder_boilerplate``."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.lower().endswith(PAGE_SUFFIXES) and entry.is_file():
                st = entry.stat()
                found.append((entry.name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(found)[:_MAX_CRAWL])


@lru_cache(maxsize=64)
def _folder_boilerplate(folder: Path, pages: tuple[tuple[str, int, int], ...]) -> frozenset[str]:
    """Blocks repeated across the web pages of one folder (a crawl's menus and footers)."""
    # The HTML converter (and its CSS tables) loads only for a folder with web pages.
    from narezka.convert.html import page_block_keys, repeated_blocks

    keys = []
    for name, _, _ in pages:
        try:
            keys.append(page_block_keys((folder / name).read_bytes(), name))
        except (OSError, ConvertError):
            continue  # a page that cannot be read is named when its own turn comes
    return repeated_blocks(keys)


def _boilerplate(file: Path) -> Collection[str]:
    if file.suffix.lower() not in PAGE_SUFFIXES:
        return frozenset()
    try:
        return _folder_boilerplate(file.parent, _crawl(file.parent))
    except OSError:
        return frozenset()


def _remembered(cache: Path, key: str) -> str | None:
    if not cache.with_name(FAILED_NAME).exists():
        return None  # nothing ever broke a limit here: no record made for nothing
    try:
        with FailedConversions(cache) as failed:
            return failed.reason(key)
    except sqlite3.Error:
        return None


def _remember(cache: Path, key: str, reason: str) -> None:
    with contextlib.suppress(sqlite3.Error), FailedConversions(cache) as failed:
        failed.remember(key, reason)


def _converted(
    data: bytes,
    file: Path,
    cache: Path | None,
    *,
    redact: bool,
    options: ConvertOptions,
    suffix: str,
) -> Converted:
    boilerplate = _boilerplate(file)
    if cache is not None:
        # A file that broke a conversion's limits is named again at once, not converted again.
        key = failure_key(data, suffix, options)
        reason = _remembered(cache, key)
        if reason is not None:
            raise ConversionLimitError(str(file), reason + REMEMBERED)
        try:
            with ConvertCache(cache, redact=redact) as converted:
                return converted.convert(
                    data, suffix, str(file), boilerplate=boilerplate, options=options
                )
        except ConversionLimitError as exc:
            _remember(cache, key, exc.problem)
            raise
        except sqlite3.Error:
            # A cache that cannot be written (locked by another process, read-only, full)
            # costs a conversion, never the file.
            pass
    result = convert(data, suffix, str(file), boilerplate=boilerplate, options=options)
    # Redacted as the cache redacts: the same canonical text, cached or not.
    return redacted(result) if redact else result


def _pages(numbers: list[int]) -> str:
    """``[1, 2, 3, 7]`` as ``pages 1–3, 7``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    spans = [f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs]
    return ("pages " if len(numbers) > 1 else "page ") + ", ".join(spans)


def conversion_notes(meta: Mapping[str, Any], file: Path | str) -> list[str]:
    """What a run should say about a conversion: pages read by OCR, pages left unread, and
    the converter's own ``meta["notes"]`` (a web page's charset it could not follow)."""
    notes = []
    if meta.get("ocr_pages"):
        notes.append(f"{file}: {_pages(meta['ocr_pages'])} read by OCR ({meta.get('ocr', '')})")
    if meta.get("no_text_pages"):
        failed = meta.get("ocr_failed") or ()
        why = (
            f"OCR failed ({failed[0]})"
            if failed
            else "a scan? install tesseract-ocr and tesseract-ocr-rus to read it by OCR"
        )
        notes.append(f"{file}: {_pages(meta['no_text_pages'])}: no text layer, not indexed ({why})")
    notes.extend(f"{file}: {note}" for note in meta.get("notes", ()))  # e.g. a bad charset
    if meta.get("rows_left_out"):
        from narezka.convert.sheets import CSV_MAX_ROWS  # the sheet converter ran: loaded

        notes.append(
            f"{file}: {meta['rows_left_out']:,} rows after the first {CSV_MAX_ROWS:,} not indexed"
        )
    return notes


def converted_document(
    data: bytes,
    file: Path,
    source: str,
    mtime: float,
    cache: Path | None = None,
    *,
    redact: bool = True,
    options: ConvertOptions = DEFAULT,
    suffix: str | None = None,
) -> tuple[RawDocument, list[str]]:
    """The document whose text is the file's canonical Markdown, with its provenance map,
    and the run's notes on it (``conversion_notes``); converted through the ``cache`` sqlite
    file when given (unchanged bytes never twice). A web page loses the blocks repeated
    across most pages of its folder (a crawl's menus, footers, notices:
    ``narezka.convert.html.repeated_blocks``). With ``redact`` (the index's default) the
    canonical text, its provenance and meta have their secrets replaced by markers
    (``narezka.convert.cache.redacted``), cached or not. ``options`` (OCR, limits) are the
    run's, handed down from the top.

    ``suffix`` names the format when the file's own suffix does not (``ooxml_suffix``).
    Raises ``ConvertError`` naming ``file``.
    """
    result = _converted(
        data, file, cache, redact=redact, options=options, suffix=suffix or file.suffix
    )
    document = RawDocument(
        source=source,
        text=result.markdown,
        mtime=mtime,
        size=len(data),
        provenance=result.provenance,
        lacks=lacking(result.meta),
        comments=anchored_comments(result.meta),
        parts=document_parts(result.meta, len(result.markdown)),
    )
    notes = conversion_notes(result.meta, file)
    if not result.markdown.strip():
        notes.append(f"{file}: converted to no text (nothing in it to index)")
    return document, notes
