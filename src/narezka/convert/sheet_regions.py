"""The tables of one sheet: its non-empty cells grouped into regions that blank rows and
columns keep apart (cells touching, diagonals too, are one region; regions whose boxes
overlap are merged), a defined table (``Insert > Table``) always a region of its own.
Each region becomes title lines (leading rows of one cell: "Revenue and results") and a
table whose first row is its header."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Box", "Region", "regions"]

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
        first, last = _name(self.top, self.left), _name(self.bottom, self.right)
        return first if first == last else f"{first}:{last}"


def _name(row: int, column: int) -> str:
    letters = ""
    while column > 0:
        column, rest = divmod(column - 1, 26)
        letters = chr(65 + rest) + letters
    return f"{letters}{row}"


@dataclass(frozen=True, slots=True)
class Region:
    """One region of a sheet: where it is, its title lines and its table's rows."""

    box: Box
    titles: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


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


def _filled(box: Box, text: Mapping[Cell, str]) -> list[str]:
    return [
        text[(r, c)]
        for r in range(box.top, box.bottom + 1)
        for c in range(box.left, box.right + 1)
        if (r, c) in text
    ]


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


def _header_over_data(upper: Box, lower: Box, text: Mapping[Cell, str]) -> bool:
    """A block of at most three rows of words one blank row above a block of numbers, over
    the same columns: the table's header set off by a blank row, not a table of its own."""
    if lower.top - upper.bottom != 2 or upper.bottom - upper.top > 2:
        return False
    if upper.right < lower.left or upper.left > lower.right:
        return False
    head, body = _filled(upper, text), _filled(lower, text)
    numbers = sum(1 for v in body if _numeric(v))
    return not any(_numeric(v) for v in head) and numbers * 2 >= len(body) > 0


def _join(boxes: list[Box], text: Mapping[Cell, str]) -> list[Box]:
    """Boxes joined while two are side by side across a spacer column, or a header sits one
    blank row above its numbers."""
    joined = True
    while joined:
        joined = False
        for i, a in enumerate(boxes):
            for j, b in enumerate(boxes):
                if i != j and (_side_by_side(a, b) or _header_over_data(a, b, text)):
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


def _region(box: Box, text: Mapping[Cell, str]) -> Region:
    rows = [
        tuple(text.get((r, c), "") for c in range(box.left, box.right + 1))
        for r in range(box.top, box.bottom + 1)
    ]
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    used = [i for i in range(box.right - box.left + 1) if any(row[i].strip() for row in rows)]
    rows = [tuple(row[i] for i in used) for row in rows]
    titles: list[str] = []
    # Leading rows of a single cell over a wider table are its title and captions, not
    # its header: repeated above every piece of a split table they would hide the header.
    while len(rows) > 1 and len(used) > 1 and _title_row(rows[0], rows[1]):
        titles.append(" — ".join(c for c in rows[0] if c.strip()))
        rows = rows[1:]
    if len(rows) == 1 and sum(1 for c in rows[0] if c.strip()) == 1:
        titles.append(next(c for c in rows[0] if c.strip()))
        rows = []
    return Region(box, tuple(titles), tuple(rows))


def regions(
    text: Mapping[Cell, str], occupied: Iterable[Cell] = (), tables: Iterable[Box] = ()
) -> list[Region]:
    """The regions of a sheet whose non-empty cells are ``text``, in reading order.

    ``occupied`` are cells that hold nothing but belong to a neighbour (the rest of a merged
    range); ``tables`` are the sheet's defined tables, each a region whatever touches it."""
    defined = sorted(set(tables))
    free = [cell for cell in (*text, *occupied) if not any(_inside(cell, b) for b in defined)]
    boxes = _join(_merge_overlapping(_components(free)), text) + defined
    found = [_region(box, text) for box in sorted(boxes)]
    return [r for r in found if r.titles or r.rows]


def _inside(cell: Cell, box: Box) -> bool:
    return box.top <= cell[0] <= box.bottom and box.left <= cell[1] <= box.right
