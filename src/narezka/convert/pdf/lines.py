"""A page's text layer as lines: text, font, position and text runs, read through PDFium."""

from __future__ import annotations

import ctypes
import itertools
import math
import re
from collections.abc import Callable, Iterator

from narezka.convert.pdf.base import (
    _ALIGN,
    _CELL_GAP,
    _INDEXED_CHARS,
    _LINE_BREAK,
    _MARGIN,
    _PDFIUM_CALLS,
    _cells,
    _Line,
    _unhyphen,
)
from narezka.convert.pdf.columns import _reading_order, _top_down
from narezka.convert.pdf.marks import _char, _Faces, _font, _inline_marks, _Units
from narezka.convert.pdf.tables import mark_ruled_tables, mark_stream_tables, rules
from narezka.convert.pdf_bounded import BoundedText
from narezka.errors import (
    ConvertError,
    PasswordProtectedError,
)

_JOINED = re.compile("\ufffe(?=\\S)")
"""A hyphen PDFium generated where it joined a line to the next."""
_BLANKS = re.compile(r"\s+")
_OPEN_ERRORS = {
    3: "damaged or not a PDF",  # FPDF_ERR_FORMAT
    5: "an encryption this reader does not support",  # FPDF_ERR_SECURITY
    6: "its page tree is damaged",  # FPDF_ERR_PAGE
}
"""Why PDFium would not open a file, said in words: its own message names its error codes."""


def _open(data: bytes, path: str) -> object:
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == 4:  # FPDF_ERR_PASSWORD
            raise PasswordProtectedError(
                path, "PDF is password-protected (the empty password does not open it)"
            ) from exc
        why = _OPEN_ERRORS.get(int(getattr(exc, "err_code", 0) or 0), "damaged or not a PDF")
        raise ConvertError(path, f"not a readable PDF ({why})") from exc


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
        faces = _Faces(tp, units)
        height = float(page.get_height())  # type: ignore[attr-defined]
        bad = sum(1 for ch in text if "\ue000" <= ch <= "\uf8ff" or ch == "\ufffd")
        step = max(1, chars // 200)
        # Glyphs with no Unicode mapping, sampled: checking each of 3,000 characters a page
        # would cost more than the extraction itself.
        unmapped = sum(raw.FPDFText_HasUnicodeMapError(tp, i) == 1 for i in range(0, chars, step))
        bad += unmapped * step
        lines: list[_Line] = []
        bounded = _Bounded(tp, chars)
        for pos, end in _segments(faces.handle, units, text):
            found = _read_line(tp, faces, text, pos, end, bounded)
            if found is not None:
                found.page = number
                found.margin = not height * _MARGIN < found.baseline < height * (1 - _MARGIN)
                found.edge = found.margin
                lines.append(found)
        found_rules = rules(page)
        if found_rules:
            mark_ruled_tables(tp, lines, found_rules, height)
            lines = [ln for ln in lines if ln.text]
        width = float(page.get_width())  # type: ignore[attr-defined]
        lines = _reading_order(_top_down(lines), width, [] if gutters is None else gutters)
        mark_stream_tables(tp, lines)
        for line in (*lines[:2], *lines[-2:]):
            line.folio = _folio_apart(tp, line)
        for line in lines:
            line.blanks = ()
        for extreme in (*lines[:2], *lines[-2:]):
            extreme.margin = True
        _align_rows(lines)
        return lines, chars, bad
    finally:
        tp.close()


def _segments(tp: object, units: _Units, text: str) -> Iterator[tuple[int, int]]:
    """The page text's lines as (start, end) indexes. PDFium joins a line that ends in a
    hyphen to whatever text comes next, without a line break: the next line, or a footnote
    at the page's foot. Such a join is cut where the text moves to another baseline (the
    hyphen stays at the first line's end, for the writer to join the word)."""
    pos = 0
    for match in [*_LINE_BREAK.finditer(text), None]:
        end = match.start() if match else len(text)
        for hyphen in _JOINED.finditer(text, pos, end):
            at = hyphen.start()
            before = _char(tp, units, at - 1) if at else -1
            after = _char(tp, units, at + 1)
            if before >= 0 and after >= 0 and _origin_y(tp, before) != _origin_y(tp, after):
                yield pos, at + 1
                pos = at + 1
        yield pos, end
        pos = match.end() if match else len(text)


def _origin_y(tp: object, index: int) -> float:
    import pypdfium2.raw as raw

    x, y = ctypes.c_double(0), ctypes.c_double(0)
    raw.FPDFText_GetCharOrigin(tp, index, ctypes.byref(x), ctypes.byref(y))
    return y.value


_TURNED = 0.1
"""Radians a glyph may be turned and its line still count as set upright."""


def _read_line(
    tp: object, faces: _Faces, text: str, pos: int, end: int, bounded: _Bounded
) -> _Line | None:
    """The line ``text[pos:end]`` with its font, place and runs (page and margin unset)."""
    import pypdfium2.raw as raw

    line = text[pos:end]
    stripped = line.strip()
    if not stripped:
        return None
    handle, units = faces.handle, faces.units
    first = pos + (len(line) - len(line.lstrip()))
    ci = max(_char(handle, units, first), 0)
    last = max(_char(handle, units, first + len(stripped) - 1), ci)
    size, bold, mono = _font(faces, ci)
    # A line is bold when it ends bold too: a bold term that starts a sentence is not.
    bold = bold and _font(faces, last)[1]
    if mono:  # code only if its middle and end are monospace too, not an inline run
        inner = [first + k for k, ch in enumerate(stripped) if not ch.isspace()]
        for at in (inner[len(inner) // 2], inner[-1]):
            mono = mono and _font(faces, max(_char(handle, units, at), 0))[2]
    runs = () if mono else _runs(tp, ci, last - ci + 1, bounded)
    cells, starts = _cells(runs, size)
    if not mono and not cells:
        line = _inline_marks(faces, line, pos)
    found = _Line(
        _unhyphen(line.rstrip()),
        *(0, size, bold, mono, _origin_y(handle, ci), False, 0, cells, runs, starts),
    )
    # PDFium joins a line hyphenated at its end to the next one: the paragraph's spacing
    # is measured from where the joined text ends.
    found.span = (ci, last)
    angle = float(raw.FPDFText_GetCharAngle(handle, ci))
    found.upright = not _TURNED < angle < 2 * math.pi - _TURNED
    ends = _origin_y(handle, last)
    if ends < found.baseline - 0.5 * size:  # not a superscript's raised baseline
        found.last_baseline = ends
    if mono:
        found.extent = _extent_of(tp, ci, last - ci + 1)
    elif not cells:
        found.blanks = _blanks(faces, stripped, first, ci, last)
    return found


_FOLIO_NUMBER = re.compile(r"\d{1,4}")


def _folio_apart(tp: object, line: _Line) -> bool:
    """``_Line.folio``: the line's first or last word is a bare number set ``_CELL_GAP``
    font sizes or more apart from two words or more of text (PDFium's runs may hold the
    gap inside one; its characters' boxes show it)."""
    words = line.text.split()
    if len(line.blanks) < 2 or len(words) < 3 or line.table or line.cells or not line.upright:
        return False
    import pypdfium2.raw as raw

    handle = getattr(tp, "raw", tp)
    box = [ctypes.c_double() for _ in range(4)]
    refs = [ctypes.byref(b) for b in box]
    wide = _CELL_GAP * max(line.size, 1.0)
    ends = (
        (words[0], line.blanks[0], line.blanks[1]),
        (words[-1], line.blanks[-2], line.blanks[-1]),
    )
    for word, before, after in ends:
        if not _FOLIO_NUMBER.fullmatch(word) or not raw.FPDFText_GetCharBox(handle, before, *refs):
            continue
        right = box[1].value
        if raw.FPDFText_GetCharBox(handle, after, *refs) and box[0].value - right >= wide:
            return True
    return False


def _blanks(faces: _Faces, stripped: str, first: int, ci: int, last: int) -> tuple[int, ...]:
    """``_Line.blanks`` of a line (``stripped``, at string index ``first``; PDFium's
    characters ``ci`` to ``last``), when its text indexes are its characters one for one."""
    units = faces.units
    start = units(first)
    if last - ci != units(first + len(stripped) - 1) - start:
        return ()
    found: list[int] = []
    for blank in _BLANKS.finditer(stripped):
        found += (
            ci + units(first + blank.start() - 1) - start,
            ci + units(first + blank.end()) - start,
        )
    return tuple(found)


class _Bounded:
    """The text in a rectangle of the page: PDFium's own call while a page asks for few, an
    index of its characters built once (``BoundedText``) on a page of many characters or
    after ``_PDFIUM_CALLS`` calls."""

    def __init__(self, tp: object, chars: int) -> None:
        self.tp, self.chars = tp, chars
        self.index: BoundedText | None = None
        self.calls = 0

    def __call__(self, left: float, bottom: float, right: float, top: float) -> str:
        if self.index is None:
            self.calls += 1
            if self.chars <= _INDEXED_CHARS and self.calls <= _PDFIUM_CALLS:
                return str(self.tp.get_text_bounded(left, bottom, right, top))  # type: ignore[attr-defined]
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
