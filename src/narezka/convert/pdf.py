"""PDF text layer → Markdown through PDFium (pypdfium2): headings from the outline or font
sizes, hyphenated line ends joined, running headers, footers and page numbers taken out."""

from __future__ import annotations

import bisect
import ctypes
import itertools
import math
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from narezka.convert.markdown import Converted, MarkdownWriter, escape_line, table_markdown
from narezka.convert.pdf_bounded import BoundedText
from narezka.errors import (
    ConvertError,
    NoTextLayerError,
    PasswordProtectedError,
    UnsafeFileError,
)
from narezka.types import SourceLocation

__all__ = ["convert_pdf"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_PAGE_NUMBER = re.compile(
    r"^[\s\-–—.·|•]*(?:(?:page|p\.|стр\.?|страница|с\.)\s*)?\d{1,5}"
    r"(?:\s*(?:/|of|из)\s*\d{1,5})?[\s\-–—.·|•]*$",
    re.IGNORECASE,
)
"""A page number line: ``12``, ``- 12 -``, ``Page 3 of 10``, ``стр. 4``, ``3/10``. Not a line
of code at a page's top that holds a number (``"80"]``)."""
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
_REPEAT_SHARE = 0.5
"""A margin line (digits ignored) on at least this share of the pages is a running header,
when its numbers are constant or count the pages (``_follows_pages``)."""
_PAGE_OFFSET = 50
"""The largest difference between a printed page number and the page's place in the file
(front matter numbered apart, a chapter printed from page 31)."""
_DIGITS = re.compile(r"\d+")
_BAD_SHARE = 0.3
"""Above this share of private-use, replacement or unmapped characters the text layer is noise."""
_PARAGRAPH_GAP = 1.5
_CELL_GAP = 1.5
"""A gap wider than this many font sizes inside a line separates table cells (a space is
a quarter to a third of one)."""
_CODE_GAP = 2.8
_HEADING_RATIO = 1.12
_MAX_HEADING = 160
_SAME_PAGES = 200
"""A page whose text recurs this many times is a page tree listing one page over and over
(200,000 times in 1.2 MB ran for minutes), not a document."""
_INDEXED_CHARS = 4000
"""A page of more characters has its runs' texts read from one index of its characters
(``BoundedText``) instead of a PDFium call over the whole page per run: linear, not
quadratic, in the page's text objects."""


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
    wraps: bool = False
    """A code line that runs on in the next line (``_mark_wrapped``)."""


def _open(data: bytes, path: str) -> object:
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == 4:  # FPDF_ERR_PASSWORD
            raise PasswordProtectedError(
                path, "PDF is password-protected (the empty password does not open it)"
            ) from exc
        raise ConvertError(path, f"not a readable PDF ({exc})") from exc


def _font(tp: object, index: int) -> tuple[float, bool, bool]:
    """Font size, bold and monospace of the character at ``index``."""
    import pypdfium2.raw as raw

    size = float(raw.FPDFText_GetFontSize(tp, index))
    weight = int(raw.FPDFText_GetFontWeight(tp, index))
    flags = ctypes.c_int(0)
    need = raw.FPDFText_GetFontInfo(tp, index, None, 0, ctypes.byref(flags))
    name = b""
    if 0 < need < 256:
        buffer = ctypes.create_string_buffer(need)
        raw.FPDFText_GetFontInfo(tp, index, buffer, need, ctypes.byref(flags))
        name = buffer.value
    mono = bool(flags.value & 1) or bool(_MONO.search(name.decode("latin-1")))
    return size, weight >= 600 or b"bold" in name.lower(), mono


class _Units:
    """Python string indexes of a page's text as PDFium's text indexes, which count UTF-16
    units: after an emoji or another astral character they are one further on (reading
    fonts at the string's index picked the next character's: "Install `S`QLModel")."""

    def __init__(self, text: str) -> None:
        self.astral = [i for i, ch in enumerate(text) if ord(ch) > 0xFFFF]

    def __call__(self, index: int) -> int:
        return index + bisect.bisect_left(self.astral, index) if self.astral else index


def _char(tp: object, units: _Units, index: int) -> int:
    """PDFium's character index of the page text's character at string ``index``."""
    import pypdfium2.raw as raw

    return int(raw.FPDFText_GetCharIndexFromTextIndex(tp, units(index)))


def _is_mono(tp: object, units: _Units, text_index: int) -> bool:
    """Whether the character at ``text_index`` of the page's text is in a monospace font."""
    import pypdfium2.raw as raw

    index = _char(tp, units, text_index)
    if index < 0:
        return False
    flags = ctypes.c_int(0)
    need = raw.FPDFText_GetFontInfo(tp, index, None, 0, ctypes.byref(flags))
    if flags.value & 1:
        return True
    if not 0 < need < 256:
        return False
    buffer = ctypes.create_string_buffer(need)
    raw.FPDFText_GetFontInfo(tp, index, buffer, need, ctypes.byref(flags))
    return bool(_MONO.search(buffer.value.decode("latin-1")))


def _is_bold(tp: object, units: _Units, text_index: int) -> bool:
    """Whether the character at ``text_index`` of the page's text is set in a bold face."""
    import pypdfium2.raw as raw

    index = _char(tp, units, text_index)
    if index < 0:
        return False
    if int(raw.FPDFText_GetFontWeight(tp, index)) >= 600:
        return True
    flags = ctypes.c_int(0)
    need = raw.FPDFText_GetFontInfo(tp, index, None, 0, ctypes.byref(flags))
    if not 0 < need < 256:
        return False
    buffer = ctypes.create_string_buffer(need)
    raw.FPDFText_GetFontInfo(tp, index, buffer, need, ctypes.byref(flags))
    return b"bold" in buffer.value.lower()


def _flagged(line: str, flag: Callable[[int], bool]) -> list[list[int]]:
    """The spans of ``line`` whose characters ``flag`` (by index in the line), over whole
    words and the blanks between them. A word is checked at its first, middle and last
    character, and letter by letter only where those differ."""
    spans: list[list[int]] = []
    for word in _WORD_SPAN.finditer(line):
        a, b = word.start(), word.end()
        head, tail = flag(a), flag(b - 1)
        if head and tail:
            found = [(a, b)]
        elif head or tail or (b - a > 2 and flag((a + b) // 2)):  # "(**required**):"
            flags = [flag(k) for k in range(a, b)]
            found = []
            for k, on in enumerate(flags):
                if on and (k == 0 or not flags[k - 1]):
                    found.append((a + k, a + k + 1))
                elif on:
                    found[-1] = (found[-1][0], a + k + 1)
        else:
            continue
        for s, e in found:
            if spans and not line[spans[-1][1] : s].strip():
                spans[-1][1] = e  # "allow_origins = ['*']": one span over several words
            else:
                spans.append([s, e])
    return spans


def _inline_marks(tp: object, units: _Units, line: str, start: int) -> str:
    """``line`` (at ``start`` in the page's text) with its monospace runs as code spans (the
    `name` a document sets in a code font inside a sentence) and its bold runs as strong
    emphasis (**this**). A line bold from end to end (a heading, a bold paragraph) gets no
    marks: its weight is the line's own, told by ``_Line.bold``."""
    code = _flagged(line, lambda k: _is_mono(tp, units, start + k))
    bold = _flagged(line, lambda k: _is_bold(tp, units, start + k))
    text = line.strip()
    first = len(line) - len(line.lstrip())
    if len(bold) == 1 and bold[0] == [first, first + len(text)]:
        bold = []
    bold = [b for b in bold if not any(b[0] < c[1] and c[0] < b[1] for c in code)]
    marks = sorted([(s, e, "code") for s, e in code] + [(s, e, "bold") for s, e in bold])
    if not marks:
        return line
    out, at = [], 0
    for s, e, kind in marks:
        inner = line[s:e]
        if kind == "bold":
            out += [line[at:s], "**", inner, "**"]
        else:
            fence = "``" if "`" in inner else "`"
            pad = " " if fence == "``" else ""
            out += [line[at:s], fence, pad, inner, pad, fence]
        at = e
    out.append(line[at:])
    return "".join(out)


def _page_lines(
    page: object, number: int, gutters: list[float] | None = None
) -> tuple[list[_Line], int, int]:
    """The page's lines in reading order, its character count and its bad-character count;
    ``gutters`` holds the column gutters the document's pages so far had (``_reading_order``)."""
    import pypdfium2.raw as raw

    tp = page.get_textpage()  # type: ignore[attr-defined]
    try:
        chars = tp.count_chars()
        if chars <= 0:
            return [], 0, 0
        text = tp.get_text_range()
        units = _Units(text)
        height = float(page.get_height())  # type: ignore[attr-defined]
        bad = sum(1 for ch in text if "\ue000" <= ch <= "\uf8ff" or ch == "\ufffd")
        step = max(1, chars // 200)
        # Glyphs with no Unicode mapping, sampled: checking each of 3,000 characters a page
        # would cost more than the extraction itself.
        unmapped = sum(raw.FPDFText_HasUnicodeMapError(tp, i) == 1 for i in range(0, chars, step))
        bad += unmapped * step
        lines: list[_Line] = []
        pos = 0
        bounded = _Bounded(tp, chars)
        for match in [*_LINE_BREAK.finditer(text), None]:
            end = match.start() if match else len(text)
            line = text[pos:end]
            pos_start = pos
            stripped = line.strip()
            first = pos + (len(line) - len(line.lstrip()))
            pos = match.end() if match else len(text)
            if not stripped:
                continue
            ci = max(_char(tp, units, first), 0)
            size, bold, mono = _font(tp, ci)
            if mono:  # code only if its middle and end are monospace too, not an inline run
                inner = [first + k for k, ch in enumerate(stripped) if not ch.isspace()]
                for at in (inner[len(inner) // 2], inner[-1]):
                    index = max(_char(tp, units, at), 0)
                    mono = mono and _font(tp, index)[2]
            x, y = ctypes.c_double(0), ctypes.c_double(0)
            raw.FPDFText_GetCharOrigin(tp, ci, ctypes.byref(x), ctypes.byref(y))
            margin = not height * _MARGIN < y.value < height * (1 - _MARGIN)
            last = max(_char(tp, units, first + len(stripped) - 1), ci)
            runs = () if mono else _runs(tp, ci, last - ci + 1, bounded)
            cells, starts = _cells(runs, size)
            if not mono and not cells:
                line = _inline_marks(tp, units, line, pos_start)
            found = _Line(
                _unhyphen(line.rstrip()),
                *(number, size, bold, mono, y.value, margin, 0, cells, runs, starts),
            )
            if mono:
                found.extent = _extent_of(tp, ci, last - ci + 1)
            lines.append(found)
        width = float(page.get_width())  # type: ignore[attr-defined]
        lines = _reading_order(_top_down(lines), width, [] if gutters is None else gutters)
        for extreme in (*lines[:2], *lines[-2:]):
            extreme.margin = True
        _align_rows(lines)
        return lines, chars, bad
    finally:
        tp.close()


class _Bounded:
    """The text in a rectangle of the page: PDFium's own call on a page of few characters,
    an index of them built once (``BoundedText``) on a page of many."""

    def __init__(self, tp: object, chars: int) -> None:
        self.tp, self.chars = tp, chars
        self.index: BoundedText | None = None

    def __call__(self, left: float, bottom: float, right: float, top: float) -> str:
        if self.chars <= _INDEXED_CHARS:
            return str(self.tp.get_text_bounded(left, bottom, right, top))  # type: ignore[attr-defined]
        if self.index is None:
            self.index = BoundedText(self.tp, self.chars)
        return self.index.text(left, bottom, right, top)


def _runs(
    tp: object, index: int, count: int, bounded: Callable[[float, float, float, float], str]
) -> tuple[tuple[float, float, str], ...]:
    """A line's text runs as (left edge, right edge, text); one run's text left empty.

    PDFium gives a line's text as rectangles of runs (split at gaps and font changes)."""
    rects = [tp.get_rect(i) for i in range(tp.count_rects(index, count))]  # type: ignore[attr-defined]
    if not rects:
        return ()
    if len(rects) == 1:  # one run: its extent only (the line's text is read as a whole)
        return ((rects[0][0], rects[0][2], ""),)
    return tuple((r[0], r[2], bounded(*r)) for r in rects)


def _extent_of(tp: object, index: int, count: int) -> tuple[float, float]:
    """The left and right edges of ``count`` characters from ``index`` on (one line)."""
    rects = int(tp.count_rects(index, count))  # type: ignore[attr-defined]
    if rects <= 0:
        return 0.0, 0.0
    return float(tp.get_rect(0)[0]), float(tp.get_rect(rects - 1)[2])  # type: ignore[attr-defined]


_WRAP_SLACK = 0.0
"""Characters of slack when telling whether the next line's first word would have fitted.
A code box ends a little left of the prose's edge, so a line that fills it exactly and a
line wrapped there look alike (``RUN pip install … requirements.txt`` then ``COPY``, or
``"--workers",`` then ``"4"]``); none is taken: a wrapped line read as two cuts quoted
strings, two lines read as one keep every string."""


def _mark_wrapped(lines: list[_Line]) -> None:
    """Mark code lines that a renderer wrapped at the page's width (a browser prints ``pre``
    with ``white-space: pre-wrap``): a line whose next line's first word would not have
    fitted before the text's right edge, the rightmost end of the document's prose lines
    (text wraps there). A document of code alone has no such edge and is left as it is."""
    edges = [ln.runs[-1][1] for ln in lines if ln.runs and not ln.mono and not ln.cells]
    if not edges:
        return
    edge = max(edges)
    for prev, line in itertools.pairwise(lines):
        if not (prev.mono and line.mono and prev.extent[1] > prev.extent[0]):
            continue
        words = line.text.split()
        if not words or line.text[:1].isspace():
            continue  # an indented line is a line of its own
        if prev.text.rstrip().endswith((".", "!", "?")) and words[0][:1].isupper():
            continue  # a sentence ends and the next begins: lines of their own (text in code)
        per_char = (prev.extent[1] - prev.extent[0]) / max(len(prev.text.strip()), 1)
        room = edge - prev.extent[1]
        prev.wraps = room < per_char * (1 + len(words[0]) - _WRAP_SLACK)


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
_COLUMN_ROWS = 4
"""Lines of a page cut at one gutter, text on both sides, that make it a page of two text
columns written line across line."""
_COLUMN_FILL = 0.5
"""A column's prose fills it: at the median, each side of a cut line spans at least this
share of its column. A two-column table's cells rarely do (its column is as wide as its
longest cell)."""
_GUTTER_GAP = 0.8
"""Font sizes of blank space before a run that may start the right column (a word space
is a quarter to a third of one; column gaps are an em or more)..."""
_GUTTER_MIN = 0.015
"""...and at least this share of the page's width (9 points on A4): a font size may read 1
where the text matrix scales the glyphs (Chromium), and word gaps measure 5 points."""
_CROSSING = 0.25
"""At most this many lines per cut line may run across a gutter (titles over both columns):
inside one column's prose, most lines do."""


def _gutter_votes(line: _Line, low: float, high: float, gap: float) -> Iterator[float]:
    """Where the right column may start on this line: after a gap of ``gap`` points or more,
    between ``low`` and ``high``; or the line's start, for a line on the right alone."""
    if line.runs and low <= line.runs[0][0] <= high:
        yield line.runs[0][0]
    for prev, run in itertools.pairwise(line.runs):
        if low <= run[0] <= high and run[0] - prev[1] >= max(gap, _GUTTER_GAP * line.size):
            yield run[0]


def _half(line: _Line, runs: tuple[tuple[float, float, str], ...], text: str) -> _Line:
    return _Line(
        _unhyphen(text.strip()),
        *(line.page, line.size, line.bold, line.mono, line.baseline, line.margin),
        runs=runs,
        starts=(runs[0][0],),
    )


def _column_split(line: _Line, gutter: float, gap: float) -> tuple[_Line, _Line] | None:
    """A line with text on both sides of ``gutter``, ``gap`` points apart, cut there."""
    left = tuple(r for r in line.runs if r[0] < gutter - _ALIGN)
    right = tuple(r for r in line.runs if r[0] >= gutter - _ALIGN)
    if not left or not right or right[0][0] - left[-1][1] < max(gap, _GUTTER_GAP * line.size):
        return None
    return (
        _half(line, left, "".join(r[2] for r in left)),
        _half(line, right, "".join(r[2] for r in right)),
    )


def _sides(line: _Line) -> tuple[float, float] | None:
    """A line's left and right edges, when known."""
    if line.mono:
        return line.extent if line.extent[1] > line.extent[0] else None
    return (line.runs[0][0], line.runs[-1][1]) if line.runs else None


def _top_down(lines: list[_Line]) -> list[_Line]:
    """A one-column page's lines from top to bottom, whatever order it drew them in.

    Chromium paints a box that scrolls (a ``pre`` code block) after the text around it, so
    PDFium gives a page's code blocks after its prose: the code would leave its heading and
    the sentence that introduces it. A page where two lines stand side by side (their
    baselines within half a font size, their extents apart: columns, a table's cells drawn
    apart) is left in its own order (``_reading_order`` reads it)."""
    order = sorted(range(len(lines)), key=lambda i: -lines[i].baseline)
    if order == list(range(len(lines))):
        return lines
    for a, b in itertools.pairwise(order):
        one, two = lines[a], lines[b]
        if one.baseline - two.baseline < 0.5 * max(one.size, two.size, 1.0):
            x, y = _sides(one), _sides(two)
            if x is None or y is None or x[1] <= y[0] or y[1] <= x[0]:
                return lines
    return [lines[i] for i in order]


def _reading_order(lines: list[_Line], width: float, gutters: list[float]) -> list[_Line]:
    """The page's lines column by column when its text layer runs line across two columns.

    PDFium keeps the order in which a page draws its text. Chromium, LibreOffice and TeX
    draw a column after the other, and their pages read right as they are; a generator that
    writes each baseline across both columns makes every line hold two columns' text. Such a
    page has a gutter near the middle where at least ``_COLUMN_ROWS`` lines are cut by a gap
    with text on both sides, and the text on each side fills its column (``_COLUMN_FILL``;
    a two-column table's cells do not). Its lines are then cut at the gutter, and each
    stretch of the page between lines that cross it (a title over both columns) is read
    left column first, then right. A gutter found is added to ``gutters``: a later page
    with the same gutter (a short last page, a list in short items) needs one cut line."""
    if width <= 0 or not lines:
        return lines
    gap = _GUTTER_MIN * width
    found: Counter[int] = Counter()
    for line in lines:
        votes = _gutter_votes(line, 0.3 * width, 0.7 * width, gap)
        found.update({round(x / _ALIGN) for x in votes})
    for common, _ in found.most_common(3):
        gutter = common * _ALIGN
        known = any(abs(gutter - g) <= 2 * _ALIGN for g in gutters)
        halves_of: dict[int, tuple[_Line, _Line]] = {}
        crossing = 0
        for line in lines:
            halves = _column_split(line, gutter, gap)
            if halves is not None:
                halves_of[id(line)] = halves
            elif any(r[0] < gutter - _ALIGN < r[1] for r in line.runs) or (
                line.runs and line.runs[0][0] < gutter - _ALIGN and line.runs[-1][1] > gutter
            ):
                crossing += 1
        if len(halves_of) < (1 if known else _COLUMN_ROWS) or crossing > max(
            2, _CROSSING * len(halves_of)
        ):
            continue
        if not known:
            lefts = [a.runs for a, _ in halves_of.values()]
            rights = [b.runs for _, b in halves_of.values()]
            start = min(r[0][0] for r in lefts)
            end = max(r[-1][1] for r in rights)
            fill_left = sorted((r[-1][1] - start) / (gutter - start) for r in lefts)
            fill_right = sorted((r[-1][1] - r[0][0]) / (end - gutter) for r in rights)
            middle = len(fill_left) // 2
            if min(fill_left[middle], fill_right[middle]) < _COLUMN_FILL:
                continue
            gutters.append(gutter)
        return _by_columns(lines, gutter, halves_of)
    return lines


def _by_columns(
    lines: list[_Line], gutter: float, halves_of: dict[int, tuple[_Line, _Line]]
) -> list[_Line]:
    out: list[_Line] = []
    left: list[_Line] = []
    right: list[_Line] = []
    for line in lines:
        pair = halves_of.get(id(line))
        if pair is not None:
            left.append(pair[0])
            right.append(pair[1])
        elif line.runs and line.runs[-1][1] <= gutter:
            left.append(line)
        elif line.runs and line.runs[0][0] >= gutter - _ALIGN:
            right.append(line)
        else:  # over both columns (or no extent known): ends the stretch
            out += left + right
            left, right = [], []
            out.append(line)
    return out + left + right


def _align_rows(lines: list[_Line]) -> None:
    """Split a line whose runs start at a neighbouring table row's cell edges into as many
    cells, though its gaps are narrower than ``_CELL_GAP`` (a long cell in a tight column)."""
    for pass_lines in (lines, lines[::-1]):
        for prev, line in itertools.pairwise(pass_lines):
            if line.cells or not prev.cells or len(line.runs) < len(prev.cells):
                continue
            groups: list[list[tuple[float, float, str]]] = []
            for run in line.runs:
                if not groups or any(abs(run[0] - x) <= _ALIGN for x in prev.starts[1:]):
                    groups.append([run])
                else:
                    groups[-1].append(run)
            edges = [g[0][0] for g in groups]
            if len(groups) == len(prev.cells) and all(
                abs(a - b) <= _ALIGN for a, b in zip(edges, prev.starts, strict=True)
            ):
                line.cells = tuple("".join(r[2] for r in g).strip() for g in groups)
                line.starts = tuple(edges)


def _unhyphen(line: str) -> str:
    """PDFium joins a word hyphenated at a line end itself, marking the hyphen U+FFFE: out
    before a lower-case letter (a word hyphenated to fit), kept before a capital or a digit
    (``Content-Disposition``, ``UTF-8`` wrapped at their own hyphen)."""
    joined = _SOFT_HYPHEN.sub(lambda m: "" if m.group(1).islower() else "-", line)
    return joined.replace("\ufffe", "-")


def _running_key(text: str) -> str:
    return _DIGITS.sub("#", " ".join(text.lower().split()))


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in _DIGITS.findall(text))


def _follows_pages(seen: list[tuple[int, tuple[int, ...]]]) -> bool:
    """Whether the numbers of one margin line as it recurs on pages (page, its numbers) are
    constant or count the pages (``Page 3 of 12``, ``- 14 -`` with a fixed offset): a running
    header's. Lines that differ otherwise are text (one invoice a page: ``Invoice 1001``,
    ``Invoice 1002``… with their totals)."""
    for values in zip(*(numbers for _, numbers in seen), strict=True):
        if len(set(values)) == 1:
            continue
        offsets = {value - page for value, (page, _) in zip(values, seen, strict=True)}
        if len(offsets) != 1 or abs(next(iter(offsets))) > _PAGE_OFFSET:
            return False
    return True


def _strip_running(pages: list[list[_Line]]) -> tuple[list[_Line], list[str]]:
    """All lines but running headers, footers and page numbers; and the texts removed. A
    page is never left empty by it: a page of such lines alone keeps them (but its page
    number)."""
    seen: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
    for lines in pages:
        for key, line in {_running_key(ln.text): ln for ln in lines if ln.margin}.items():
            seen.setdefault(key, []).append((line.page, _numbers(line.text)))
    need = max(2, math.ceil(len(pages) * _REPEAT_SHARE))
    running = {key for key, where in seen.items() if len(where) >= need and _follows_pages(where)}
    kept: list[_Line] = []
    removed: dict[str, str] = {}
    for lines in pages:
        page_kept, page_removed = _page_running(lines, running)
        for key, line in page_removed:
            removed.setdefault(key, line.text.strip())
        kept.extend(page_kept)
    return kept, list(removed.values())


def _page_running(
    lines: list[_Line], running: set[str]
) -> tuple[list[_Line], list[tuple[str, _Line]]]:
    """One page's lines kept, and its running lines (with their keys) removed; a page of
    running lines alone keeps them, but its page number."""
    page_kept = []
    page_removed: list[tuple[str, _Line]] = []
    for line in lines:
        key = _running_key(line.text)
        if line.margin and (key in running or _PAGE_NUMBER.match(line.text.strip())):
            page_removed.append((key, line))
        else:
            page_kept.append(line)
    if not page_kept:
        back = {id(ln) for _, ln in page_removed if not _PAGE_NUMBER.match(ln.text.strip())}
        page_kept = [ln for _, ln in page_removed if id(ln) in back]
        page_removed = [(k, ln) for k, ln in page_removed if id(ln) not in back]
    return page_kept, page_removed


def _title_key(title: str) -> str:
    """A heading's letters and digits, lowercased: a title wrapped over lines, its hyphen
    joined or not, still matches its bookmark."""
    return "".join(_WORDS.findall(title.lower()))


def _outline(pdf: object) -> dict[str, int]:
    """Outline (bookmark) titles by ``_title_key``, with levels from 1."""
    titles: dict[str, int] = {}
    try:
        for mark in pdf.get_toc():  # type: ignore[attr-defined]
            title = _title_key(mark.get_title())
            if title:
                titles.setdefault(title, min(mark.level + 1, 6))
    except Exception:  # a broken outline costs headings, not the document
        return {}
    return titles


def _mark_headings(lines: list[_Line], outline: dict[str, int]) -> None:
    """Set ``heading`` on lines that start a heading: outline titles if the PDF has them (a
    title may run over up to three lines), else sizes above the body text's."""
    if len(outline) >= 2:
        for i in range(len(lines)):
            joined = ""
            for j in range(i, min(i + 3, len(lines))):
                joined += lines[j].text
                level = outline.get(_title_key(joined))
                if level:
                    for k in range(i, j + 1):
                        lines[k].heading = level
                    break
        return
    lines = [line for line in lines if line.paragraph is None]  # OCR gives no font sizes
    weights: Counter[float] = Counter()
    for line in lines:
        weights[round(line.size, 1)] += len(line.text)
    if not weights:
        return
    body = weights.most_common(1)[0][0]
    sizes = sorted(
        {round(ln.size, 1) for ln in lines if ln.size >= body * _HEADING_RATIO}, reverse=True
    )
    levels = {size: min(i + 1, 6) for i, size in enumerate(sizes)}
    for line in lines:
        if len(line.text) <= _MAX_HEADING and round(line.size, 1) in levels:
            line.heading = levels[round(line.size, 1)]


def _joins(prev: _Line, line: _Line) -> bool:
    """Whether ``line`` continues ``prev``'s paragraph."""
    if prev.paragraph is not None or line.paragraph is not None:  # read by OCR
        return prev.paragraph == line.paragraph and prev.page == line.page
    if prev.cells or line.cells:  # rows of one table: as many cells, on one page
        return len(prev.cells) == len(line.cells) and prev.page == line.page
    if prev.heading != line.heading or prev.mono != line.mono:
        return False
    if prev.wraps:  # a code line the renderer wrapped, maybe over a page break
        return True
    if line.heading:
        return prev.page == line.page
    if _BULLET.match(line.text.lstrip()) or _NUMBERED.match(line.text.lstrip()):
        return False
    if prev.page != line.page or line.baseline > prev.baseline:
        # A page or column break: a sentence that runs on continues in lower case.
        return not prev.text.rstrip().endswith((".", "!", "?", ":")) and line.text[:1].islower()
    # Baselines: lines of a paragraph lie 1.15-1.4 font sizes apart; a paragraph's spacing
    # or a blank line adds at least half a line more.
    gap = _CODE_GAP if line.mono else _PARAGRAPH_GAP  # a code block's blank line stays in it
    return 0 < prev.baseline - line.baseline < gap * max(prev.size, 1.0)


def _groups(lines: list[_Line]) -> Iterator[list[_Line]]:
    group: list[_Line] = []
    for line in lines:
        if group and not _joins(group[-1], line):
            yield group
            group = []
        group.append(line)
    if group:
        yield group


def _indents(group: list[_Line], starts: list[bool]) -> list[int]:
    """Spaces before each line of a code block: its left edge's offset from the block's, in
    characters: PDFium's text keeps one blank of many (or none), the glyphs' places keep
    them all. -1 where the line keeps its own text's blanks: it continues a wrapped one
    (``starts`` False) or its place is unknown."""
    known = [ln for ln, s in zip(group, starts, strict=True) if s and ln.extent[1] > ln.extent[0]]
    widths = sorted(
        (ln.extent[1] - ln.extent[0]) / len(ln.text.strip())
        for ln in known
        if len(ln.text.strip()) >= 4
    )
    if not widths or widths[len(widths) // 2] <= 0:
        return [-1] * len(group)
    per_char = widths[len(widths) // 2]
    left = min(ln.extent[0] for ln in known)
    return [
        max(0, round((ln.extent[0] - left) / per_char)) if s and ln.extent[1] > ln.extent[0] else -1
        for ln, s in zip(group, starts, strict=True)
    ]


def _broken_mark(text: str, piece: str) -> str | None:
    """The mark (`` ` `` or ``**``) that closes ``text`` and opens the next line's ``piece``
    when a line end cut one code span or bold run in two (`` `uv add` `python-dotenv` ``)."""
    for mark in ("**", "`"):
        if text.endswith(mark) and piece.startswith(mark):
            if mark == "`" and (text.endswith("``") or piece.startswith("``")):
                return None
            return mark
    return None


def _write(writer: MarkdownWriter, group: list[_Line]) -> None:
    first = group[0]
    if first.cells and len(group) > 1:
        table = table_markdown([line.cells for line in group])
        writer.block(table, SourceLocation(page=first.page))
        return
    if first.mono and not first.heading:
        body = "\n".join(line.text for line in group)
        fence = "~~~~" if "```" in body else "```"
        pieces = [(fence + "\n", SourceLocation(page=first.page))]
        # A line the renderer wrapped runs on into the next: one line again.
        ends = [" " if line.wraps else "\n" for line in group[:-1]] + ["\n"]
        starts = [True] + [not line.wraps for line in group[:-1]]
        indents = _indents(group, starts)
        pieces += [
            (
                (line.text if indent < 0 else " " * indent + line.text.lstrip()) + end,
                SourceLocation(page=line.page),
            )
            for line, end, indent in zip(group, ends, indents, strict=True)
        ]
        pieces[-1] = (pieces[-1][0] + fence, pieces[-1][1])
        writer.pieces(pieces)
        return
    parts: list[tuple[str, SourceLocation]] = []
    text = ""
    for line in group:
        piece = line.text.strip()
        if text:
            if text.endswith(_HYPHENS) and text[-2:-1].isalpha() and piece[:1].islower():
                text = text[:-1]  # a word hyphenated at the line end, joined
                parts[-1] = (parts[-1][0][:-1], parts[-1][1])
            elif (mark := _broken_mark(text, piece)) is not None:
                # A code span or bold run the line end cut in two: one again.
                text = text[: -len(mark)]
                parts[-1] = (parts[-1][0][: -len(mark)], parts[-1][1])
                piece = " " + piece[len(mark) :]
            else:
                piece = " " + piece
        text += piece
        parts.append((piece, SourceLocation(page=line.page)))
    if first.heading:
        parts[0] = ("#" * first.heading + " " + parts[0][0], parts[0][1])
    else:
        bullet = _BULLET.match(parts[0][0])
        if bullet:
            head = "- " + parts[0][0][bullet.end() :]
        elif _NUMBERED.match(parts[0][0]):
            head = parts[0][0]
        else:
            head = escape_line(parts[0][0])
        parts[0] = (head, parts[0][1])
    writer.pieces([(t.replace("\x02", "-").replace("\ufffe", "-"), w) for t, w in parts])


def _has_content(page: object) -> bool:
    """Whether a page draws anything (an image, paths): a blank page has nothing to read."""
    import pypdfium2.raw as raw

    return int(raw.FPDFPage_CountObjects(page.raw)) > 0  # type: ignore[attr-defined]


def _ocr_lines(page: object, number: int, exe: str, languages: str) -> list[_Line]:
    """The lines tesseract reads on a page rendered at ``ocr.DPI``, placed as a text layer's
    would be (running headers found in the margins, paragraphs as tesseract groups them).

    Raises ``OSError`` or ``subprocess.SubprocessError`` when tesseract fails."""
    from narezka.convert import ocr
    from narezka.convert.child import progress

    pixels = ocr.scale_for(float(page.get_width()), float(page.get_height()))  # type: ignore[attr-defined]
    bitmap = page.render(scale=pixels, grayscale=True)  # type: ignore[attr-defined]
    try:
        image = ocr.pgm(bitmap.width, bitmap.height, bitmap.stride, bytes(bitmap.buffer))
        height = bitmap.height
    finally:
        bitmap.close()
    scale = 1 / pixels
    lines = []
    progress()  # tesseract's time is its own (ocr.TIMEOUT a page): the wall clock allows it
    for found in ocr.recognise(image, exe, languages):
        margin = found.top < height * _MARGIN or found.bottom > height * (1 - _MARGIN)
        size = (found.bottom - found.top) * scale
        baseline = (height - found.bottom) * scale
        text = _unhyphen(found.text)
        line = _Line(text, number, size, False, False, baseline, margin, paragraph=found.paragraph)
        lines.append(line)
    for extreme in (*lines[:2], *lines[-2:]):
        extreme.margin = True
    return lines


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
