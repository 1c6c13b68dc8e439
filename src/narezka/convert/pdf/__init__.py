"""PDF text layer → Markdown through PDFium (pypdfium2): headings from the outline or font
sizes, hyphenated line ends joined, running headers, footers and page numbers taken out."""

from __future__ import annotations

import subprocess
from collections import Counter

from narezka.convert.markdown import Converted, MarkdownWriter
from narezka.convert.pdf.base import _BAD_SHARE, _SAME_PAGES, _Line
from narezka.convert.pdf.headings import _mark_headings, _outline
from narezka.convert.pdf.lines import _open, _page_lines
from narezka.convert.pdf.running import _strip_running
from narezka.convert.pdf.scan import _has_content, _ocr_lines
from narezka.convert.pdf.writer import _groups, _mark_wrapped, _write
from narezka.errors import (
    ConvertError,
    NoTextLayerError,
    UnsafeFileError,
)

__all__ = ["convert_pdf"]


def convert_pdf(data: bytes, path: str) -> Converted:
    """Convert a PDF's text layer to Markdown with one provenance span per page run.

    A page without a text layer that draws something (a scan) is read by OCR when
    ``tesseract`` is installed (``narezka.convert.ocr``; meta ``ocr_pages``), else listed in
    meta ``no_text_pages``, never left out silently.

    Raises ``PasswordProtectedError``, ``NoTextLayerError`` (no page has text, or the text is
    glyphs without a Unicode map) or ``ConvertError`` (truncated or corrupt), each naming
    ``path``.
    """
    from narezka.convert import ocr

    reader = ocr.engine()
    pdf = _open(data, path)
    no_text: list[int] = []
    gutters: list[float] = []  # the column gutters found on the pages so far
    ocr_pages: list[int] = []
    ocr_failed: list[str] = []
    same: Counter[int] = Counter()
    try:
        pages: list[list[_Line]] = []
        chars = bad = 0
        try:
            count = len(pdf)  # type: ignore[arg-type]
            for number in range(count):
                page = pdf[number]  # type: ignore[index]
                try:
                    lines, page_chars, page_bad = _page_lines(page, number + 1, gutters)
                    if page_chars == 0 and _has_content(page):
                        if reader is None:
                            no_text.append(number + 1)
                        else:
                            try:
                                lines = _ocr_lines(page, number + 1, *reader)
                                ocr_pages.append(number + 1)
                            except (OSError, subprocess.SubprocessError) as exc:
                                no_text.append(number + 1)
                                ocr_failed.append(f"page {number + 1}: {exc}")
                finally:
                    page.close()
                if lines:
                    key = hash(tuple(line.text for line in lines))
                    same[key] += 1
                    if same[key] >= _SAME_PAGES:
                        raise UnsafeFileError(
                            path,
                            f"one page's text recurs on {_SAME_PAGES} pages of {count} "
                            "(a page tree listing one page over and over?)",
                        )
                pages.append(lines)
                chars += page_chars
                bad += page_bad
            outline = _outline(pdf)
        except ConvertError:
            raise
        except Exception as exc:  # PDFium reports broken page content as generic errors
            raise ConvertError(path, f"PDF content cannot be read ({exc})") from exc
    finally:
        pdf.close()  # type: ignore[attr-defined]
    if not any(pages):
        if reader is None:
            why = "a scan? install tesseract-ocr with its Russian data to read it by OCR"
        else:
            why = f"OCR ({ocr.available()}) found no text" + (
                f": {ocr_failed[0]}" if ocr_failed else ""
            )
        raise NoTextLayerError(path, f"no text layer in {count} page(s) ({why})")
    if bad > chars * _BAD_SHARE:
        raise NoTextLayerError(
            path, f"no usable text layer: {bad} of {chars} characters have no Unicode mapping"
        )
    lines, running = _strip_running(pages)
    _mark_headings(lines, outline)
    _mark_wrapped(lines)
    writer = MarkdownWriter()
    for group in _groups(lines):
        _write(writer, group)
    meta: dict[str, object] = {"pages": count, "running_text": running}
    if ocr_pages:
        meta["ocr_pages"] = ocr_pages
        meta["ocr"] = ocr.available()
    if no_text:
        meta["no_text_pages"] = no_text
    if ocr_failed:
        meta["ocr_failed"] = ocr_failed
    return writer.result(meta)
