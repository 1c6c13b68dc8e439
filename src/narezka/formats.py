"""The one registry of the formats narezka converts to Markdown: a row per format says its
suffixes, the converter that reads it, the largest file read, the provenance keys its chunks
carry and what a hit's ``where`` says about them.

Adding a format is a converter module under :mod:`narezka.convert` and one row of
:data:`FORMATS`; the walk, the default globs, the size limits, the conversion, the stored
payload and every hit's ``where`` read it from here. ``tests/test_formats.py`` checks each row
against its converter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from narezka.types import SourceLocation

__all__ = [
    "CONVERTED_SUFFIXES",
    "FORMATS",
    "MARKDOWN_GLOBS",
    "PAGE_SUFFIXES",
    "PLACE_KEYS",
    "SLIDE_NOTES",
    "TEXT_SUFFIXES",
    "TOP_OF_PAGE",
    "Format",
    "format_for",
    "place",
    "sheet_ref",
    "where",
]

TOP_OF_PAGE = "top of page"
"""What a web page's hit says when it lies before the page's first heading and first id."""

PLACE_KEYS = ("page_start", "page_end", "slide", "sheet", "element")
"""The payload keys that say where a converted file's chunk lies in its original, made from
its provenance by :func:`place` (the only place that spells them)."""

SLIDE_NOTES = "notes"
"""The ``element`` of a slide's speaker notes: in the provenance of their text, and the
``element`` of each chunk holding some of it (a filter or a display tells them apart)."""

Where = Callable[[Mapping[str, Any], Sequence[str]], str]
"""What a hit's ``where`` says, from its place keys and its heading path."""


_CELLS = re.compile(r"([A-Z]{1,3})([1-9][0-9]{0,6})(?::([A-Z]{1,3})([1-9][0-9]{0,6}))?")
"""A cell range in A1 notation (``B3``, ``A1:D20``): a sheet's element."""


def _column(letters: str) -> int:
    number = 0
    for letter in letters:
        number = number * 26 + ord(letter) - 64
    return number


def _letters(column: int) -> str:
    letters = ""
    while column > 0:
        column, rest = divmod(column - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _cell_box(ref: str | None) -> tuple[int, int, int, int] | None:
    """``(top, left, bottom, right)`` of an A1 range, or None if ``ref`` is none."""
    found = _CELLS.fullmatch(ref or "")
    if found is None:
        return None
    left, top = _column(found[1]), int(found[2])
    right, bottom = (_column(found[3]), int(found[4])) if found[3] else (left, top)
    return top, left, bottom, right


def _cells(first: SourceLocation, last: SourceLocation) -> str | None:
    """The range a span of one sheet covers from the row range ``first`` starts in to the one
    ``last`` ends in (``A1:D1`` … ``A40:D40`` → ``A1:D40``); None if they are not two ranges
    of one sheet (a span running into the next sheet keeps the range it starts in)."""
    # A mail's attached workbook names its cells after the attachment (``x.xlsx › A2:B2``).
    head, sep, first_ref = (first.element or "").rpartition(" › ")
    last_head, _, last_ref = (last.element or "").rpartition(" › ")
    a, b = _cell_box(first_ref), _cell_box(last_ref)
    # An HTML id may read as a cell (``id="A1"``): only a sheet's element is its cells.
    if (
        a is None
        or b is None
        or first.sheet is None
        or (first.sheet, head) != (last.sheet, last_head)
    ):
        return None
    top, left = min(a[0], b[0]), min(a[1], b[1])
    bottom, right = max(a[2], b[2]), max(a[3], b[3])
    start, end = f"{_letters(left)}{top}", f"{_letters(right)}{bottom}"
    return head + sep + (start if start == end else f"{start}:{end}")


def place(first: SourceLocation, last: SourceLocation) -> dict[str, int | str]:
    """The place keys of a span whose provenance runs from ``first`` to ``last``: the pages it
    covers, the cells of a sheet it covers (``element``, ``A1:D40``), and the slide, sheet
    and element (an HTML id, a Word block) it starts in; a slide's chunk that runs into the
    slide's speaker notes is ``element`` :data:`SLIDE_NOTES` too."""
    keys: dict[str, int | str] = {}
    if first.page is not None:
        keys["page_start"] = first.page
        keys["page_end"] = last.page if last.page is not None else first.page
    if first.slide is not None:
        keys["slide"] = first.slide
    if first.sheet is not None:
        keys["sheet"] = first.sheet
    if first.element is not None:
        keys["element"] = _cells(first, last) or first.element
    elif first.slide is not None and last.element == SLIDE_NOTES:
        keys["element"] = SLIDE_NOTES
    return keys


def _pages(p: Mapping[str, Any], section: Sequence[str]) -> str:
    if "page_start" not in p:
        return ""
    first, last = p["page_start"], p.get("page_end", p["page_start"])
    return f"p. {first}" if first == last else f"p. {first}–{last}"


def _slide(p: Mapping[str, Any], section: Sequence[str]) -> str:
    if "slide" not in p:
        return ""
    return f"slide {p['slide']}" + (", notes" if p.get("element") == SLIDE_NOTES else "")


_BARE_SHEET = re.compile(r"[^\W\d]\w*(?:\.\w+)*")
_LOOKS_LIKE_CELL = re.compile(r"[A-Za-z]{1,3}[0-9]+|[Rr][0-9]*[Cc][0-9]*")


def sheet_ref(sheet: str) -> str:
    """A sheet's name as a formula names it: bare (``Budget``, ``Прайс``), or quoted as Excel
    quotes it when it holds a space or a sign, starts with a digit, or reads as a cell
    (``'Q1 plan'``, ``'2024'``, ``'A1'``; a ``'`` inside doubled)."""
    if _BARE_SHEET.fullmatch(sheet) and not _LOOKS_LIKE_CELL.fullmatch(sheet):
        return sheet
    return "'" + sheet.replace("'", "''") + "'"


def _sheet(p: Mapping[str, Any], section: Sequence[str]) -> str:
    # A sheet's cells in a formula's notation (``Budget!A1:D20``); a CSV file is one
    # unnamed sheet (``A2:F41``); a place without cells says the sheet alone.
    sheet, cells = str(p.get("sheet") or ""), str(p.get("element") or "")
    if _CELLS.fullmatch(cells):
        return f"{sheet_ref(sheet)}!{cells}" if sheet else cells
    return f"sheet {sheet}" if sheet else ""


def _attachment(p: Mapping[str, Any], section: Sequence[str]) -> str:
    # A mail's attachment is named by its element; its own page, slide or sheet follows.
    # The body has no element: its heading path (the subject, the body's own headings) says
    # where a hit lies.
    inner = " ".join(
        part for part in (_pages(p, section), _slide(p, section), _sheet(p, section)) if part
    )
    found = " ".join(part for part in (str(p.get("element") or ""), inner) if part)
    return found or _heading(section)


def _heading(section: Sequence[str]) -> str:
    return "§ " + " > ".join(section) if section else ""


def _page_element(p: Mapping[str, Any], section: Sequence[str]) -> str:
    # A web page's or an e-book's element id is a link target; the heading path says more
    # to a reader, so both are given when both are known.
    element = f"#{p['element']}" if p.get("element") else ""
    # Neither is known only before the page's first heading and first id: its top (a
    # filing's cover page), which is still a place a reader can find.
    return " · ".join(part for part in (_heading(section), element) if part) or TOP_OF_PAGE


def _chapter(p: Mapping[str, Any], section: Sequence[str]) -> str:
    chapter = str(p.get("element") or "")
    return " · ".join(part for part in (chapter, _heading(section)) if part)


def _word(p: Mapping[str, Any], section: Sequence[str]) -> str:
    # A Word block number (``p12``) means nothing in Word's window; its heading path does.
    if section:
        return _heading(section)
    element = str(p.get("element") or "")
    return f"¶ {element[1:]}" if element.startswith("p") and element[1:].isdigit() else element


@dataclass(frozen=True, slots=True)
class Format:
    """One converted format."""

    name: str
    suffixes: tuple[str, ...]
    """Lower-case file suffixes read as this format."""
    converter: str
    """``module:function`` of :mod:`narezka.convert` (``pdf:convert_pdf``), imported on
    first use (importing narezka must not import PDFium, lxml or openpyxl):
    ``function(data, path) -> Converted``, ``function(data, path, boilerplate)`` for a
    web page, ``function(data, path, options)`` for one that reads :attr:`options`."""
    max_mb: int
    """The largest file read, in MiB; a larger one is named and skipped unread."""
    keys: tuple[str, ...]
    """The :data:`PLACE_KEYS` its chunks carry."""
    where: Where
    text: bool = False
    """Its bytes are text: bytes that are not are named as binary before conversion (a
    converter reads any bytes as some text)."""
    page: bool = False
    """A web page: converted without the blocks repeated across its folder's pages, and an
    empty one is an empty document rather than an error."""
    options: bool = False
    """Its converter takes the run's ``ConvertOptions`` (OCR on or off, size limits): it
    reads scans, or converts the files a file holds."""
    default: bool = True
    """Read when nobody names ``--include`` (images are not: a notes folder's screenshots
    would cost seconds of OCR each and index their noise)."""


FORMATS: tuple[Format, ...] = (
    # name, suffixes, converter, max MiB, place keys, where; text and page bytes marked.
    Format("PDF", (".pdf",), "pdf:convert_pdf", 256, PLACE_KEYS[:2], _pages, options=True),
    Format("Word", (".docx",), "docx:convert_docx", 128, ("element",), _word),
    Format("OpenDocument text", (".odt",), "odt:convert_odt", 128, ("element",), _word),
    Format("EPUB", (".epub",), "epub:convert_epub", 128, ("element",), _chapter),
    Format("HTML", (".html", ".htm"), "html:convert_html", 32, ("element",), _page_element,
           text=True, page=True),
    Format("PowerPoint", (".pptx",), "slides:convert_pptx", 256, ("slide", "element"), _slide),
    Format("OpenDocument slides", (".odp",), "odf_slides:convert_odp", 256, ("slide", "element"),
           _slide),
    # A macro-enabled workbook is a workbook: its cells are read, its macros never run.
    Format("Excel", (".xlsx", ".xlsm"), "sheets:convert_xlsx", 64, ("sheet", "element"),
           _sheet),
    Format("OpenDocument sheets", (".ods",), "odf_sheets:convert_ods", 64, ("sheet", "element"),
           _sheet),
    # A CSV or TSV file is one unnamed sheet: its place is its cells (``A2:F41``).
    Format("CSV", (".csv",), "sheets:convert_csv_file", 64, ("sheet", "element"), _sheet,
           text=True),
    Format("TSV", (".tsv",), "sheets:convert_tsv_file", 64, ("sheet", "element"), _sheet,
           text=True),
    # A mail's attachments are its sections: the element names one, with its own place.
    Format("E-mail", (".eml",), "mail:convert_eml", 64, PLACE_KEYS, _attachment, text=True,
           options=True),
    Format("Outlook mail", (".msg",), "msg:convert_msg", 64, PLACE_KEYS, _attachment,
           options=True),
    Format("Image", (".png", ".jpg", ".jpeg"), "image:convert_image", 32, PLACE_KEYS[:2], _pages,
           options=True, default=False),
    Format("TIFF image", (".tif", ".tiff"), "image:convert_image", 128, PLACE_KEYS[:2], _pages,
           options=True, default=False),
)  # fmt: skip
"""Every format narezka converts, one row each."""

_BY_SUFFIX = {suffix: f for f in FORMATS for suffix in f.suffixes}

CONVERTED_SUFFIXES = frozenset(_BY_SUFFIX)
"""Suffixes (lowercase) of files converted to Markdown (``narezka.convert``) when read."""
TEXT_SUFFIXES = frozenset(s for f in FORMATS if f.text for s in f.suffixes)
"""Converted formats whose bytes are text (:attr:`Format.text`)."""
PAGE_SUFFIXES = tuple(s for f in FORMATS if f.page for s in f.suffixes)
"""Suffixes of web pages (:attr:`Format.page`)."""
MARKDOWN_GLOBS = (
    "**/*.md",
    "**/*.markdown",
    "**/*.mdx",
    "**/*.txt",
    *(f"**/*{s}" for s in sorted(s for f in FORMATS if f.default for s in f.suffixes)),
)
"""The files read when nobody names ``--include``: Markdown, plain text, and the documents
converted to Markdown (PDF, Word, HTML, slides, sheets, mails; not images)."""


def format_for(path: str) -> Format | None:
    """The format a file of this name is read as, or None (Markdown, plain text, unknown)."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return _BY_SUFFIX.get(path[dot:].lower())


def where(path: str, keys: Mapping[str, Any], section: Sequence[str]) -> str:
    """Where a hit of the file ``path`` lies in its original, from its place ``keys`` and
    heading ``section``: ``p. 12–13``, ``slide 3``, ``Прайс!A1:D20``, ``§ Доставка > Тарифы``;
    empty for Markdown and plain text."""
    found = format_for(path)
    return found.where(keys, section) if found is not None else ""
