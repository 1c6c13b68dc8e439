"""Tables ruled by horizontal lines (booktabs' top, middle and bottom rules; a grid's rows):
the lines between the rules cut into columns where no row's words reach.

A LaTeX table's columns lie 12 points apart (twice ``\\tabcolsep``), about one font size:
closer than the gap that tells cells apart in a line of its own (``base._CELL_GAP``). Between
rules the evidence is the rows together: an x range that no word of any row covers (but a
heading spanning columns) separates two columns.
"""

from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass

from narezka.convert.pdf.base import _BULLET, _NUMBERED, _STREAM_GAP, _Line
from narezka.convert.pdf_bounded import paired

__all__ = ["mark_ruled_tables", "rules"]

_THIN = 2.0
"""A path at most this many points high is a rule (booktabs' rules are 0.4 to 0.8)."""
_MIN_RULE = 40.0
_SAME_WIDTH = 0.8
"""Rules of one table overlap by this share of the longer one's width."""
_MAX_SPAN = 0.5
"""A table between rules is at most this share of the page's height: a rule under a running
header and one over a footer hold a page, not a table."""
_COLUMN_GAP = 0.5
"""Font sizes of blank x range, met by no word of the rows, that separate two columns."""
_WORD_GAP = 0.25
"""Font sizes between two glyphs that separate words."""
_PROSE = 60
"""A median cell this long is prose between rules (a boxed note), not a table."""


@dataclass(frozen=True, slots=True)
class Rule:
    y: float
    left: float
    right: float


def rules(page: object) -> list[Rule]:
    """The page's horizontal rules, top down: thin, wide path objects."""
    import pypdfium2.raw as raw

    handle = page.raw  # type: ignore[attr-defined]
    found = []
    edges = [ctypes.c_float() for _ in range(4)]
    refs = [ctypes.byref(e) for e in edges]
    for i in range(int(raw.FPDFPage_CountObjects(handle))):
        obj = raw.FPDFPage_GetObject(handle, i)
        if raw.FPDFPageObj_GetType(obj) != raw.FPDF_PAGEOBJ_PATH:
            continue
        if not raw.FPDFPageObj_GetBounds(obj, *refs):
            continue
        left, bottom, right, top = (e.value for e in edges)
        if top - bottom <= _THIN and right - left >= _MIN_RULE:
            found.append(Rule((top + bottom) / 2, left, right))
    return sorted(found, key=lambda r: -r.y)


def _tables(found: list[Rule], height: float) -> list[list[Rule]]:
    """Rules grouped into tables: consecutive rules of about one width, close enough."""
    groups: list[list[Rule]] = []
    for rule in found:
        last = groups[-1][-1] if groups else None
        if (
            last is not None
            and _overlap(last, rule) >= _SAME_WIDTH
            and groups[-1][0].y - rule.y <= _MAX_SPAN * height
        ):
            groups[-1].append(rule)
        else:
            groups.append([rule])
    return [g for g in groups if len(g) >= 2]


def _overlap(a: Rule, b: Rule) -> float:
    shared = min(a.right, b.right) - max(a.left, b.left)
    return shared / max(a.right - a.left, b.right - b.left, 1.0)


Word = tuple[float, float, str]


def _words(tp: object, line: _Line) -> list[Word]:
    """The line's words as (left, right, text), from its glyph boxes."""
    import pypdfium2.raw as raw

    first, last = line.span
    words: list[Word] = []
    box = [ctypes.c_double() for _ in range(4)]
    refs = [ctypes.byref(b) for b in box]
    broken = True  # the next glyph starts a word
    halves = False  # an emoji's two UTF-16 units among them
    for index in range(first, last + 1):
        code = int(raw.FPDFText_GetUnicode(tp, index))
        halves = halves or 0xD800 <= code <= 0xDFFF
        ch = chr(code or 32)
        if ch.isspace() or not raw.FPDFText_GetCharBox(tp, index, *refs):
            broken = True
            continue
        left, right = box[0].value, box[1].value
        if ch == "\ufffe":
            ch = "-"
        if broken or not words or left - words[-1][1] > _WORD_GAP * line.size:
            words.append((left, right, ch))
        else:
            words[-1] = (words[-1][0], right, words[-1][2] + ch)
        broken = False
    return [(left, right, paired(text)) for left, right, text in words] if halves else words


def _separators(rows: list[list[Word]], size: float) -> list[float]:
    """X positions between columns: the middles of x ranges that the words of at most one
    row in five (a heading over several columns) cover, at least ``_COLUMN_GAP`` font sizes
    wide."""
    edges = sorted({x for row in rows for w in row for x in (w[0], w[1])})
    allowed = (len(rows) - 1) // 5
    cuts: list[float] = []
    run: list[float] = []  # the open range no row covers: [start, end]
    for a, b in itertools.pairwise(edges):
        covering = sum(1 for row in rows if any(w[0] < b and w[1] > a for w in row))
        if covering <= allowed:
            run = [run[0] if run else a, b]
            continue
        if run and run[1] - run[0] >= _COLUMN_GAP * size:
            cuts.append((run[0] + run[1]) / 2)
        run = []
    return cuts


def _cells_of(row: list[Word], cuts: list[float]) -> tuple[str, ...]:
    cells = [""] * (len(cuts) + 1)
    for left, right, text in row:
        column = sum(1 for cut in cuts if (left + right) / 2 > cut)
        cells[column] = f"{cells[column]} {text}".strip()
    return tuple(cells)


def _region(lines: list[_Line], group: list[Rule]) -> list[_Line]:
    """The lines between a table's first and last rules, within its width."""
    top, bottom = group[0].y, group[-1].y
    left, right = min(r.left for r in group), max(r.right for r in group)
    return [
        ln
        for ln in lines
        if bottom < ln.baseline < top and ln.runs and left - 2 <= ln.runs[0][0] <= right
    ]


def _fold_header(inside: list[_Line], cells: list[tuple[str, ...]], group: list[Rule]) -> None:
    """The lines above the second rule (booktabs' header over two lines) as one header row:
    the first holds it, the others are emptied."""
    head = [i for i, ln in enumerate(inside) if ln.baseline > group[1].y]
    if len(group) < 3 or len(head) < 2:
        return
    width = len(cells[head[0]])
    cells[head[0]] = tuple(" ".join(cells[i][c] for i in head if cells[i][c]) for c in range(width))
    for i in head[1:]:
        inside[i].text = ""


def mark_ruled_tables(tp: object, lines: list[_Line], found: list[Rule], height: float) -> None:
    """Set ``cells`` on the lines of each table ruled by ``found``; lines folded into a
    header row are left with no text (the caller drops them)."""
    for group in _tables(found, height):
        inside = _region(lines, group)
        if len(inside) < 2:
            continue
        rows = [_words(tp, ln) for ln in inside]
        cuts = _separators(rows, max(min(ln.size for ln in inside), 1.0))
        if not cuts:
            continue
        cells = [_cells_of(row, cuts) for row in rows]
        lengths = sorted(len(c) for row in cells for c in row if c)
        if not lengths or lengths[len(lengths) // 2] > _PROSE:
            continue
        _fold_header(inside, cells, group)
        for line, row in zip(inside, cells, strict=True):
            line.cells = row
            line.starts = ()
            line.table = id(group[0])


_STREAM_ROWS = 3
"""Lines with a blank of ``base._STREAM_GAP`` font sizes between two words, on this many
consecutive lines at least (a header and two rows): a line or two with a
wide gap is a list's term and its text, or a formula."""
_ROW_STEP = 1.8
"""Font sizes at most between the baselines of two rows of one table."""
_STREAM_COLUMNS = 3
"""Columns at least: two columns over several rows are as often a list (a number or a mark,
then its text: a contents page, numbered points ``1.3:``) as a table."""
_STREAM_CELL = 30
"""A median cell this long is prose, not a table's."""


def _stream_candidate(line: _Line) -> bool:
    return (
        bool(line.blanks)
        and line.span[1] > line.span[0]  # a line split at a column gutter has no span of its own
        and not (line.mono or line.cells or line.table or line.note)
        and line.upright
        and line.last_baseline is None
        and len(line.text.split()) >= 2
        # A list item's marker stands apart from its text: a list, not a table's column.
        and not _BULLET.match(line.text.lstrip())
        and not _NUMBERED.match(line.text.lstrip())
    )


def _wide_gap(tp: object, line: _Line) -> bool:
    """Whether two words of ``line`` lie ``_STREAM_GAP`` font sizes apart or more."""
    import pypdfium2.raw as raw

    handle = getattr(tp, "raw", tp)
    box = [ctypes.c_double() for _ in range(4)]
    refs = [ctypes.byref(b) for b in box]
    wide = _STREAM_GAP * max(line.size, 1.0)
    for before, after in zip(line.blanks[::2], line.blanks[1::2], strict=True):
        if not raw.FPDFText_GetCharBox(handle, before, *refs):
            continue
        ends = box[1].value
        if raw.FPDFText_GetCharBox(handle, after, *refs) and box[0].value - ends >= wide:
            return True
    return False


def _runs_of_rows(tp: object, lines: list[_Line]) -> list[list[_Line]]:
    """Runs of at least ``_STREAM_ROWS`` consecutive lines with a wide gap each. Every such
    run holds a line whose index is a multiple of ``_STREAM_ROWS``: those are asked first,
    and their neighbours only when they have one (a page of prose asks a third of its
    lines)."""
    known: dict[int, bool] = {}

    def fits(i: int) -> bool:
        if i not in known:
            known[i] = _stream_candidate(lines[i]) and _wide_gap(tp, lines[i])
        return known[i]

    runs: list[list[_Line]] = []
    end = -1
    for anchor in range(0, len(lines), _STREAM_ROWS):
        if anchor <= end or not fits(anchor):
            continue
        start = anchor
        while start - 1 > end and fits(start - 1):
            start -= 1
        end = anchor
        while end + 1 < len(lines) and fits(end + 1):
            end += 1
        if end - start + 1 >= _STREAM_ROWS:
            runs.append(lines[start : end + 1])
    return runs


def _row_windows(tp: object, lines: list[_Line]) -> list[list[_Line]]:
    """Runs of at least ``_STREAM_ROWS`` consecutive lines, each with a wide gap, one font
    size, each baseline a row's step under the last."""
    windows: list[list[_Line]] = []
    for run in _runs_of_rows(tp, lines):
        window = [run[0]]
        for prev, line in itertools.pairwise(run):
            step = prev.baseline - line.baseline
            same = abs(prev.size - line.size) <= 0.1 * max(prev.size, 1.0)
            if same and 0 < step <= _ROW_STEP * max(prev.size, 1.0):
                window.append(line)
                continue
            if len(window) >= _STREAM_ROWS:
                windows.append(window)
            window = [line]
        if len(window) >= _STREAM_ROWS:
            windows.append(window)
    return windows


def mark_stream_tables(tp: object, lines: list[_Line]) -> None:
    """Set ``cells`` on the lines of each table drawn without rules whose columns lie closer
    than ``base._CELL_GAP`` (LaTeX's ``tabular`` without ``\\hline``): consecutive lines cut
    by wide gaps at x ranges no row's words reach, every row holding two cells or more. A
    wider gap already makes cells line by line (``base._cells``)."""
    for window in _row_windows(tp, lines):
        rows = [_words(tp, ln) for ln in window]
        cuts = _separators(rows, max(min(ln.size for ln in window), 1.0))
        if len(cuts) < _STREAM_COLUMNS - 1:
            continue
        cells = [_cells_of(row, cuts) for row in rows]
        if any(sum(1 for c in row if c) < 2 for row in cells):
            continue
        lengths = sorted(len(c) for row in cells for c in row if c)
        if lengths[len(lengths) // 2] > _STREAM_CELL:
            continue
        for line, row in zip(window, cells, strict=True):
            line.cells = row
            line.starts = ()
            line.table = id(window[0])
