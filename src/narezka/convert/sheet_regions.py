"""The tables of one sheet: its non-empty cells grouped into regions that blank rows and
columns keep apart (cells touching, diagonals too, are one region; regions whose boxes
overlap are merged), a defined table (``Insert > Table``) always a region of its own.
Each region becomes title lines (leading rows of one cell: "Revenue and results") and a
table whose first row is its header."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Box", "Region", "cell_name", "regions"]

_MAX_BOXES = 200
"""Regions a sheet is split into at most."""

Cell = tuple[int, int]
"""(row, column), both from 1."""


@dataclass(frozen=True, slots=True, order=True)
class Box:
    """A rectangle of cells, bounds included."""

    top: int
    left: int
    bottom: int
    right: int

    def meets(self, other: Box) -> bool:
        return not (
            other.left > self.right
            or other.right < self.left
            or other.top > self.bottom
            or other.bottom < self.top
        )

    def union(self, other: Box) -> Box:
        return Box(
            min(self.top, other.top),
            min(self.left, other.left),
            max(self.bottom, other.bottom),
            max(self.right, other.right),
        )

    def ref(self) -> str:
        """``A1:C4`` (``A1`` for one cell)."""
        first, last = cell_name(self.top, self.left), cell_name(self.bottom, self.right)
        return first if first == last else f"{first}:{last}"

    def row(self, row: int) -> str:
        """``A5:C5``: the box's columns in one row (``A5`` for a box one column wide)."""
        return Box(row, self.left, row, self.right).ref()


def cell_name(row: int, column: int) -> str:
    """``B3`` for row 3, column 2 (both from 1)."""
    letters = ""
    while column > 0:
        column, rest = divmod(column - 1, 26)
        letters = chr(65 + rest) + letters
    return f"{letters}{row}"


@dataclass(frozen=True, slots=True)
class Region:
    """One region of a sheet: where it is, its title lines and its table's rows, and the
    sheet row each title line and table row was read from (a hit names its cells)."""

    box: Box
    titles: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    title_rows: tuple[int, ...] = ()
    row_numbers: tuple[int, ...] = ()


def _components(cells: Iterable[Cell]) -> list[Box]:
    """Bounding boxes of the groups of cells that touch (8 neighbours)."""
    left = set(cells)
    boxes = []
    while left:
        start = left.pop()
        stack = [start]
        box = Box(start[0], start[1], start[0], start[1])
        while stack:
            row, column = stack.pop()
            box = box.union(Box(row, column, row, column))
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    near = (row + dr, column + dc)
                    if near in left:
                        left.remove(near)
                        stack.append(near)
        boxes.append(box)
    return boxes


def _merge_overlapping(boxes: list[Box]) -> list[Box]:
    """Boxes that overlap joined until none do (an L-shaped group inside another's box)."""
    merged = True
    while merged:
        merged = False
        out: list[Box] = []
        for box in boxes:
            for i, kept in enumerate(out):
                if kept.meets(box):
                    out[i] = kept.union(box)
                    merged = True
                    break
            else:
                out.append(box)
        boxes = out
    return sorted(boxes)


class _Grid:
    """The non-empty cells by row, so a box's cells are found without walking its area (a
    defined table may claim A1:XFD1048576)."""

    def __init__(self, text: Mapping[Cell, str]) -> None:
        self.text = text
        by_row: dict[int, list[int]] = {}
        for row, column in text:
            by_row.setdefault(row, []).append(column)
        self.rows = sorted(by_row)
        self.columns = {row: sorted(columns) for row, columns in by_row.items()}

    def cells(self, box: Box) -> list[Cell]:
        """The non-empty cells inside ``box``, row by row."""
        found: list[Cell] = []
        start = bisect.bisect_left(self.rows, box.top)
        for row in self.rows[start : bisect.bisect_right(self.rows, box.bottom)]:
            columns = self.columns[row]
            first = bisect.bisect_left(columns, box.left)
            found.extend((row, c) for c in columns[first : bisect.bisect_right(columns, box.right)])
        return found


def _filled(box: Box, grid: _Grid) -> list[str]:
    return [grid.text[cell] for cell in grid.cells(box)]


def _numeric(value: str) -> bool:
    try:
        float(value.replace(",", "").replace("\u2212", "-").strip().rstrip("%"))
    except ValueError:
        return False
    return True


def _side_by_side(a: Box, b: Box) -> bool:
    """Blocks one blank column apart sharing two rows or more, or up to three apart sharing
    most of their rows: a report's spacer columns inside one table, not two tables."""
    gap = max(b.left - a.right, a.left - b.right) - 1
    shared = min(a.bottom, b.bottom) - max(a.top, b.top) + 1
    if gap == 1:
        return shared >= 2
    shorter = min(a.bottom - a.top, b.bottom - b.top) + 1
    return 1 < gap <= 3 and shared >= 2 and shared * 5 >= shorter * 4


def _header_over_data(upper: Box, lower: Box, grid: _Grid) -> bool:
    """A block of at most three rows of words one blank row above a block of numbers, over
    the same columns: the table's header set off by a blank row, not a table of its own."""
    if lower.top - upper.bottom != 2 or upper.bottom - upper.top > 2:
        return False
    if upper.right < lower.left or upper.left > lower.right:
        return False
    head, body = _filled(upper, grid), _filled(lower, grid)
    numbers = sum(1 for v in body if _numeric(v))
    return not any(_numeric(v) for v in head) and numbers * 2 >= len(body) > 0


def _join(boxes: list[Box], grid: _Grid) -> list[Box]:
    """Boxes joined while two are side by side across a spacer column, or a header sits one
    blank row above its numbers."""
    joined = True
    while joined:
        joined = False
        for i, a in enumerate(boxes):
            for j, b in enumerate(boxes):
                if i != j and (_side_by_side(a, b) or _header_over_data(a, b, grid)):
                    boxes = [x for k, x in enumerate(boxes) if k not in (i, j)] + [a.union(b)]
                    joined = True
                    break
            if joined:
                break
        boxes = _merge_overlapping(boxes)
    return boxes


def _title_row(row: tuple[str, ...], following: tuple[str, ...]) -> bool:
    """Whether a table's leading row is a title or caption rather than its header: one
    cell, or a few cells over a fuller row of words ("In millions of CHF … January–June")."""
    filled = sum(1 for c in row if c.strip())
    if filled == 1:
        return True
    fuller = sum(1 for c in following if c.strip())
    return filled * 3 <= len(row) and fuller > filled and not any(map(_numeric, following))


def _region(box: Box, grid: _Grid) -> Region:
    cells = [cell for cell in grid.cells(box) if grid.text[cell].strip()]
    row_numbers = sorted({row for row, _ in cells})
    used = sorted({column for _, column in cells})
    rows = [tuple(grid.text.get((r, c), "") for c in used) for r in row_numbers]
    titles: list[str] = []
    # Leading rows of a single cell over a wider table are its title and captions, not
    # its header: repeated above every piece of a split table they would hide the header.
    while len(rows) > 1 and len(used) > 1 and _title_row(rows[0], rows[1]):
        titles.append(" — ".join(c for c in rows[0] if c.strip()))
        rows = rows[1:]
    if len(rows) == 1 and sum(1 for c in rows[0] if c.strip()) == 1:
        titles.append(next(c for c in rows[0] if c.strip()))
        rows = []
    title_rows = tuple(row_numbers[: len(titles)])
    return Region(box, tuple(titles), tuple(rows), title_rows, tuple(row_numbers[len(titles) :]))


def regions(
    text: Mapping[Cell, str], occupied: Iterable[Cell] = (), tables: Iterable[Box] = ()
) -> list[Region]:
    """The regions of a sheet whose non-empty cells are ``text``, in reading order.

    ``occupied`` are cells that hold nothing but belong to a neighbour (the rest of a merged
    range); ``tables`` are the sheet's defined tables, each a region whatever touches it."""
    defined = sorted(set(tables))
    grid = _Grid(text)
    free = [cell for cell in (*text, *occupied) if not any(_inside(cell, b) for b in defined)]
    boxes = _merge_overlapping(_components(free)) if free else []
    if len(boxes) > _MAX_BOXES:
        # Thousands of scattered cells are no set of tables: the free cells as one region,
        # in time linear in them (joining boxes pairwise would be quadratic).
        whole = boxes[0]
        for box in boxes[1:]:
            whole = whole.union(box)
        boxes = [whole]
    found = [_region(box, grid) for box in sorted(_join(boxes, grid) + defined)]
    return [r for r in found if r.titles or r.rows]


def _inside(cell: Cell, box: Box) -> bool:
    return box.top <= cell[0] <= box.bottom and box.left <= cell[1] <= box.right
