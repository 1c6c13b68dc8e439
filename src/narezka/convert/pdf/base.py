"""What every part of the PDF reader shares: a page line (``_Line``) and the measures
lines are told apart by."""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WORDS = re.compile(r"\w+")
_WORD_SPAN = re.compile(r"\S+")
_SOFT_HYPHEN = re.compile(r"[\ufffe\x02](?=(\w))")
_BULLET = re.compile(r"^[•◦▪▫●○■□➢►‣∙·\-–]\s+")
_NUMBERED = re.compile(r"^\d{1,2}[.)]\s+")
"""A numbered list item's start: kept as Markdown's ordered list (not escaped into text)."""
_MONO = re.compile(r"mono|courier|consol|menlo|code", re.IGNORECASE)
_HYPHENS = ("-", "\x02", "\u00ad", "\ufffe")
"""A line-end hyphen as PDFium gives it: plain, or marked as generated (U+0002, U+FFFE)."""
_MARGIN = 0.08
"""Lines within this share of the page height from its top or bottom edge may be running
headers or footers; so may the first and last two lines in reading order."""
_DIGITS = re.compile(r"\d+")
_BAD_SHARE = 0.3
"""Above this share of private-use, replacement or unmapped characters the text layer is noise."""
_PARAGRAPH_GAP = 1.6
"""Font sizes between two baselines under which the lines are one paragraph's. CSS's
``line-height: 1.5`` (pandoc's HTML as Chromium prints it) sets a paragraph's lines exactly
1.5 apart, and its paragraphs 2.5: at 1.5 every printed line was a paragraph of its own
(retrieval over those PDFs fell 16.6 points). LibreOffice's body text parts paragraphs by
1.7 and more, LaTeX sets lines 1.2 apart."""
_CELL_GAP = 1.5
"""A gap wider than this many font sizes inside a line separates table cells (a space is
a quarter to a third of one)."""
_STREAM_GAP = 0.9
"""Font sizes between two words of one line that may part two columns of a table without
rules (LaTeX's ``tabular`` sets them 12 points apart, an 11-point font's 1.1; a justified
line's word space stays under half a font size)."""
_CODE_GAP = 2.8
_HEADING_RATIO = 1.08
_MAX_HEADING = 160
_SAME_PAGES = 200
"""A page whose text recurs this many times is a page tree listing one page over and over
(200,000 times in 1.2 MB ran for minutes), not a document."""
_INDEXED_CHARS = 4000
"""A page of more characters has its runs' texts read from one index of its characters
(``BoundedText``) instead of a PDFium call over the whole page per run: linear, not
quadratic, in the page's text objects."""
_PDFIUM_CALLS = 200
"""Runs a page's text is read for by PDFium's own call before the index is built anyway.
Both cost in proportion to the page's characters: the index about 300-400 of PDFium's
calls, then a few times less per run. A Chromium page (a run per word, 1,600 runs) reads 40%
faster so; a page of few runs (LibreOffice's, 60) never builds it; past this many calls a
page costs at most this many calls more than the better choice made in advance."""


@dataclass(slots=True)
class _Line:
    text: str
    page: int
    size: float
    bold: bool
    mono: bool
    baseline: float
    margin: bool
    heading: int = 0
    cells: tuple[str, ...] = ()
    """The line's texts between wide gaps (table cells), when there are at least two."""
    runs: tuple[tuple[float, float, str], ...] = ()
    """The line's text runs (left edge, right edge, text; one run's text left empty): a line
    whose cells lie closer than ``_CELL_GAP`` is split where a neighbouring row's cells
    start, and a page's columns are found by their edges."""
    starts: tuple[float, ...] = ()
    """The left edges of ``cells``."""
    paragraph: tuple[int, int] | None = None
    """For a line read by OCR: its paragraph as tesseract found it (no fonts to go by)."""
    extent: tuple[float, float] = (0.0, 0.0)
    """A code line's left and right edges (points), to find lines wrapped at the page's
    width; (0, 0) when unknown."""
    last_baseline: float | None = None
    """The baseline where the line's text ends, when PDFium joined lines into it (a word
    hyphenated at the line end); None: the line's own."""
    span: tuple[int, int] = (0, -1)
    """PDFium's indexes of the line's first and last characters."""
    table: int = 0
    """The ruled table the line is a row of (``tables``); 0 for none."""
    upright: bool = True
    """False for a line set turned (an arXiv stamp up a margin): never a heading."""
    edge: bool = False
    """Set within ``_MARGIN`` of the page's top or bottom edge (``margin`` is also set for a
    page's first and last lines in reading order, wherever they stand)."""
    note: bool = False
    """A footnote's line (``notes``): it never joins the body text around it."""
    wraps: bool = False
    """A code line that runs on in the next line (``_mark_wrapped``)."""
    folio: bool = False
    """One of the page's first or last two lines with a bare number at its start or end
    set apart by a gap of ``_CELL_GAP`` font sizes: a running head and its page number
    (``LayoutParser: A Unified Toolkit …      5``)."""
    blanks: tuple[int, ...] = ()
    """PDFium's indexes of the characters on either side of each blank between the line's
    words (before, after, before, after…), where a table's columns may part
    (``tables.mark_stream_tables``); none when unknown. Emptied once its page is read."""


def _cells(
    runs: tuple[tuple[float, float, str], ...], size: float, gap: float = _CELL_GAP
) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The texts of a line between gaps wider than ``gap`` font sizes (table cells), and
    where each starts; runs closer than the gap are one cell."""
    if len(runs) < 2:
        return (), ()
    groups: list[list[tuple[float, float, str]]] = [[runs[0]]]
    for run in runs[1:]:
        if run[0] - groups[-1][-1][1] > gap * max(size, 1.0):
            groups.append([run])
        else:
            groups[-1].append(run)
    if len(groups) < 2:
        return (), ()
    return (
        tuple("".join(run[2] for run in group).strip() for group in groups),
        tuple(group[0][0] for group in groups),
    )


_ALIGN = 2.0
"""Points within which a run's left edge meets a column's."""


def _unhyphen(line: str) -> str:
    """PDFium joins a word hyphenated at a line end itself, marking the hyphen U+FFFE: out
    before a lower-case letter (a word hyphenated to fit), kept before a capital or a digit
    (``Content-Disposition``, ``UTF-8`` wrapped at their own hyphen). One at the line's very
    end stays U+FFFE: the join was cut there (``lines._segments``), the writer makes it."""
    joined = _SOFT_HYPHEN.sub(lambda m: "" if m.group(1).islower() else "-", line)
    if joined.endswith("\ufffe"):
        return joined[:-1].replace("\ufffe", "-") + "\ufffe"
    return joined.replace("\ufffe", "-")
