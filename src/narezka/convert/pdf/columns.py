"""Reading order on a page: lines top down, and pages written line across two columns
read column by column."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator

from narezka.convert.pdf.base import _ALIGN, _Line, _unhyphen

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
        edge=line.edge,
    )


def _column_split(line: _Line, gutter: float, gap: float) -> tuple[_Line, _Line] | None:
    """A line with text on both sides of ``gutter``, ``gap`` points apart, cut there; never
    a ruled table's row (its wide gaps are its columns')."""
    if line.table:
        return None
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
        halves_of, crossing = _cut_at(lines, gutter, gap)
        if len(halves_of) < (1 if known else _COLUMN_ROWS) or crossing > max(
            2, _CROSSING * len(halves_of)
        ):
            continue
        if not known:
            if _short_of_columns(halves_of, gutter):
                continue
            gutters.append(gutter)
        return _by_columns(lines, gutter, halves_of)
    return lines


def _cut_at(
    lines: list[_Line], gutter: float, gap: float
) -> tuple[dict[int, tuple[_Line, _Line]], int]:
    """The lines a gap at ``gutter`` cuts in two (their halves by the line's id), and how
    many lines run across it instead."""
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
    return halves_of, crossing


def _short_of_columns(halves_of: dict[int, tuple[_Line, _Line]], gutter: float) -> bool:
    """Whether the cut lines' text on a side of ``gutter`` falls short of filling its column
    (``_COLUMN_FILL`` at the median), as a two-column table's cells do and a column's lines
    do not."""
    lefts = [a.runs for a, _ in halves_of.values()]
    rights = [b.runs for _, b in halves_of.values()]
    start = min(r[0][0] for r in lefts)
    end = max(r[-1][1] for r in rights)
    fill_left = sorted((r[-1][1] - start) / (gutter - start) for r in lefts)
    fill_right = sorted((r[-1][1] - r[0][0]) / (end - gutter) for r in rights)
    middle = len(fill_left) // 2
    return min(fill_left[middle], fill_right[middle]) < _COLUMN_FILL


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
