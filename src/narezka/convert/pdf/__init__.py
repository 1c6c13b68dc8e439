"""PDF text layer → Markdown through PDFium (pypdfium2): headings from the outline or font
sizes, hyphenated line ends joined, running headers, footers and page numbers taken out."""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass, field

from narezka.convert.markdown import Converted, MarkdownWriter
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.convert.pdf.base import _BAD_SHARE, _SAME_PAGES, _Line
from narezka.convert.pdf.headings import _mark_headings, _outline
from narezka.convert.pdf.lines import _open, _page_lines
from narezka.convert.pdf.notes import separate_notes
from narezka.convert.pdf.running import _strip_running
from narezka.convert.pdf.scan import _has_content, _ocr_lines
from narezka.convert.pdf.writer import _groups, _joins, _mark_wrapped, _write
from narezka.errors import (
    ConvertError,
    NoTextLayerError,
    UnsafeFileError,
)

__all__ = ["convert_pdf"]


@dataclass(slots=True)
class _Reading:
    """What the pages of one PDF gave, page by page."""

    pages: list[list[_Line]] = field(default_factory=list)
    chars: int = 0
    bad: int = 0
    no_text: list[int] = field(default_factory=list)
    ocr_pages: list[int] = field(default_factory=list)
    ocr_failed: list[str] = field(default_factory=list)
    unreadable: list[int] = field(default_factory=list)
    """Pages whose content PDFium could not read: skipped, named in the notes."""
    gutters: list[float] = field(default_factory=list)
    """The column gutters found on the pages so far."""
    same: Counter[int] = field(default_factory=Counter)


def _ocr_error(exc: OSError | subprocess.SubprocessError) -> str:
    """What went wrong with tesseract, in words: its own last message when it ran and
    failed (``ocr.recognise`` words it so), never Python's text for a process error."""
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"tesseract took longer than {exc.timeout:.0f} s"
    if isinstance(exc, OSError) and str(exc).startswith("tesseract failed"):
        return str(exc)
    return "tesseract could not be run"


def _read_page(
    pdf: object, number: int, reading: _Reading, reader: tuple[str, str] | None
) -> list[_Line]:
    """Page ``number``'s lines, by its text layer or by OCR; raises what PDFium raises."""
    page = pdf[number - 1]  # type: ignore[index]
    try:
        lines, chars, bad = _page_lines(page, number, reading.gutters)
        reading.chars += chars
        reading.bad += bad
        if chars or not _has_content(page):
            return lines
        if reader is None:
            reading.no_text.append(number)
            return lines
        try:
            lines = _ocr_lines(page, number, *reader)
            reading.ocr_pages.append(number)
        except (OSError, subprocess.SubprocessError) as exc:
            reading.no_text.append(number)
            reading.ocr_failed.append(f"page {number}: {_ocr_error(exc)}")
        return lines
    finally:
        page.close()


def _read(pdf: object, path: str, reader: tuple[str, str] | None) -> tuple[_Reading, int]:
    """Every page that can be read, and the page count. A page PDFium fails on is skipped
    and named (``unreadable``): one broken page costs that page, not the document."""
    reading = _Reading()
    try:
        count = len(pdf)  # type: ignore[arg-type]
    except Exception as exc:  # PDFium reports a broken page tree as a generic error
        raise ConvertError(path, "PDF page tree cannot be read (damaged file)") from exc
    for number in range(1, count + 1):
        try:
            lines = _read_page(pdf, number, reading, reader)
        except Exception:  # PDFium reports broken page content as generic errors
            reading.unreadable.append(number)
            lines = []
        if lines:
            key = hash(tuple(line.text for line in lines))
            reading.same[key] += 1
            if reading.same[key] >= _SAME_PAGES:
                raise UnsafeFileError(
                    path,
                    f"one page's text recurs on {_SAME_PAGES} pages of {count} "
                    "(a page tree listing one page over and over?)",
                )
        reading.pages.append(lines)
    return reading, count


def _no_text_error(path: str, reading: _Reading, count: int, ocr_name: str | None) -> None:
    """Raise ``NoTextLayerError`` saying why a PDF gave no text, when it gave none."""
    if any(reading.pages):
        if reading.bad > reading.chars * _BAD_SHARE:
            raise NoTextLayerError(
                path,
                f"no usable text layer: {reading.bad} of {reading.chars} characters have no "
                "Unicode mapping",
            )
        return
    if reading.unreadable and len(reading.unreadable) == count:
        why = "no page's content can be read (damaged file)"
    elif ocr_name is None:
        why = "a scan? install tesseract-ocr with its Russian data to read it by OCR"
    else:
        why = f"OCR ({ocr_name}) found no text" + (
            f": {reading.ocr_failed[0]}" if reading.ocr_failed else ""
        )
    raise NoTextLayerError(path, f"no text layer in {count} page(s) ({why})")


def convert_pdf(data: bytes, path: str, options: ConvertOptions = DEFAULT) -> Converted:
    """Convert a PDF's text layer to Markdown with one provenance span per page run.

    A page without a text layer that draws something (a scan) is read by OCR when
    ``tesseract`` is installed and ``options`` allow it (``narezka.convert.ocr``; meta
    ``ocr_pages``), else listed in
    meta ``no_text_pages``, never left out silently. A page whose content cannot be read is
    skipped and named in meta ``notes`` (a run prints them as warnings naming the file).

    Raises ``PasswordProtectedError``, ``NoTextLayerError`` (no page has text, or the text is
    glyphs without a Unicode map) or ``ConvertError`` (truncated or corrupt), each naming
    ``path``.
    """
    from narezka.convert import ocr

    reader = ocr.engine(options)
    pdf = _open(data, path)
    try:
        reading, count = _read(pdf, path, reader)
        outline = _outline(pdf)
    finally:
        pdf.close()  # type: ignore[attr-defined]
    _no_text_error(path, reading, count, ocr.available(options) if reader else None)
    lines, running = _strip_running(reading.pages)
    lines = _mark_headings(lines, outline)
    lines = separate_notes(lines, _joins)
    _mark_wrapped(lines)
    writer = MarkdownWriter()
    for group in _groups(lines):
        _write(writer, group)
    meta: dict[str, object] = {"pages": count, "running_text": running}
    if reading.ocr_pages:
        meta["ocr_pages"] = reading.ocr_pages
        meta["ocr"] = ocr.available(options)
    if reading.no_text:
        meta["no_text_pages"] = reading.no_text
    if reading.ocr_failed:
        meta["ocr_failed"] = reading.ocr_failed
    if reading.unreadable:
        meta["notes"] = [
            f"page {n} skipped: its content cannot be read (damaged)" for n in reading.unreadable
        ]
    return writer.result(meta)
