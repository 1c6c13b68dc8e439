"""Where a source file may be cut: its lines, the items a walker found in each block, and
the outline the code strategy packs by. Shared by the Python (``ast``) and tree-sitter
walkers, so neither imports the other."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from narezka.split.context import Section
from narezka.split.packer import Refiner


class LineIndex:
    """Line starts of a text, and parser positions (row, UTF-8 byte column) as offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.rows = text.split("\n")
        self.starts = [0, *accumulate(len(row) + 1 for row in self.rows[:-1])]
        self.ascii = text.isascii()

    def __len__(self) -> int:
        return len(self.rows)

    def line_start(self, row: int) -> int:
        """Offset of the 0-based row's first character (clamped to the text)."""
        if 0 <= row < len(self.starts):
            return self.starts[row]
        return 0 if row < 0 else self.starts[-1]

    def line(self, row: int) -> str:
        return self.rows[row] if 0 <= row < len(self.rows) else ""

    def offset(self, row: int, column: int) -> int:
        """Character offset of a byte column: parsers count UTF-8 bytes, Python strings
        count characters, and a Cyrillic comment would otherwise shift every later cut."""
        start = self.line_start(row)
        if self.ascii:
            return min(start + column, len(self.text))
        line = self.line(row)
        if line.isascii():
            return min(start + column, start + len(line))
        head = line.encode("utf-8", "surrogatepass")[:column]
        return start + len(head.decode("utf-8", "ignore"))

    def starts_line(self, row: int, column: int) -> bool:
        """Whether only whitespace precedes the position on its line."""
        start = self.line_start(row)
        return not self.text[start : self.offset(row, column)].strip()


@dataclass(frozen=True, slots=True)
class Item:
    """One thing inside a block, as a Python or tree-sitter walker found it."""

    row: int
    """0-based first row, with the comments, decorators or attributes attached above it."""
    starts_line: bool
    """False when something else precedes it on its row (``a = 1; b = 2``): no cut there."""
    path: tuple[str, ...] | None = None
    """A definition's section path, its qualified name last (``("Repo", "Repo.save")``);
    None for statements and comments, which belong to the enclosing definition."""


class Outline:
    """Where a source file may be cut, and the definition each part belongs to."""

    def __init__(self, lines: LineIndex) -> None:
        self.lines = lines
        self._cuts: dict[int, int] = {}
        self._sections: list[tuple[int, tuple[str, ...]]] = []
        self._glued: set[int] = set()

    def add_block(
        self, items: list[Item], level: int, path: tuple[str, ...], *, glued: bool = False
    ) -> None:
        """Record one block's items (a body, a clause), ``level`` blocks deep.

        Each definition, and each run of other items, starts a group: cuts between groups
        come before cuts inside a run, so a run of constants or class attributes stays
        together when it fits, the way a definition does. In a ``glued`` block (one under a
        header line) the first run continues the header: a lone ``if x:`` or ``class A:``
        line must not become a group, and so a chunk, of its own.
        """
        previous_named = not glued
        for k, item in enumerate(items):
            start = self.lines.line_start(item.row)
            group = item.path is not None or previous_named
            if item.starts_line:
                self.cut(start, 2 * level + (0 if group else 1))
                if glued and k == 0:
                    self._glued.add(start)
            self._sections.append((start, path if item.path is None else item.path))
            previous_named = item.path is not None

    def cut(self, offset: int, depth: int) -> None:
        if 0 < offset < len(self.lines.text):
            self._cuts[offset] = min(depth, self._cuts.get(offset, depth))

    def refiners(self) -> list[Refiner]:
        """One refiner per depth, each offering the shallowest cuts inside its range."""
        offsets = sorted(self._cuts)
        depths = [self._cuts[o] for o in offsets]

        def refine(start: int, end: int) -> list[int]:
            lo = bisect_right(offsets, start)
            hi = bisect_left(offsets, end)
            if lo >= hi:
                return []
            shallowest = min(depths[lo:hi])
            return [offsets[k] for k in range(lo, hi) if depths[k] == shallowest]

        # The packer moves one refiner further for each nested piece, and a piece between
        # cuts of one depth holds only deeper cuts, so one refiner per depth suffices.
        return [refine] * (max(depths, default=-1) + 1)

    def glue_headers(
        self, ranges: list[tuple[int, int]], fits: Callable[[int, int], bool]
    ) -> list[tuple[int, int]]:
        """Join a lone header line (``def f(...):``, ``class A:``) to the first piece of its
        body when the body's first item was too long to join it whole."""
        out: list[tuple[int, int]] = []
        glued = sorted(self._glued)
        for start, end in ranges:
            if out:
                prev_start, prev_end = out[-1]
                k = bisect_left(glued, prev_end)
                if k < len(glued) and glued[k] <= start and fits(prev_start, end):
                    out[-1] = (prev_start, end)
                    continue
            out.append((start, end))
        return out

    def sections(self) -> list[Section]:
        """Sections sorted by start, one per change of path (what DocumentContext wants)."""
        out: list[Section] = []
        # Equal starts: the later entry is the deeper one (a parent records before children).
        ordered = sorted(enumerate(self._sections), key=lambda e: (e[1][0], e[0]))
        for _, (start, path) in ordered:
            if out and out[-1].start == start:
                out.pop()
            if out and out[-1].path == path:
                continue
            if not out and not path:
                continue
            out.append(Section(start, path, path))
        return out


def comment_row(lines: LineIndex, row: int) -> bool:
    return lines.line(row).lstrip().startswith("#")


def blank_row(lines: LineIndex, row: int) -> bool:
    return not lines.line(row).strip()


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# ---- Python -------------------------------------------------------------------------------
