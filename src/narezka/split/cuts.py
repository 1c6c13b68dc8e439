"""Candidate cuts inside a document: the refiners strategies hand to the packer.

Every refiner returns ascending offsets strictly inside a range and never one inside an atom
(code block, table) unless the range lies within that atom, where its rows or lines are the
cuts. :class:`~narezka.split.context.DocumentContext` provides the state they read.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from narezka.parse.sentences import sentence_ends
from narezka.split.packer import Refiner
from narezka.types import Block, BlockKind

_WORD_GAP = re.compile(r"\s+")


class Cuts:
    """The refiners of one document; the attributes and atom lookups come from the context."""

    text: str
    blocks: list[Block]
    block_starts: list[int]
    atoms: list[Block]
    atom_starts: list[int]

    def atom_at(self, pos: int) -> Block | None:
        raise NotImplementedError

    def within_atom(self, start: int, end: int) -> bool:
        raise NotImplementedError

    def table_body_start(self, table: Block) -> int:
        raise NotImplementedError

    def _outside_atoms(self, start: int, end: int, cuts: list[int]) -> list[int]:
        """Drop cuts inside atoms; inside one oversized atom, prefer its own row cuts.

        Every text refiner goes through here, so whatever level the packer has reached, a
        too-long table is cut between rows and a too-long code block between lines first.
        """
        if self.within_atom(start, end):
            return self.atom_row_cuts(start, end) or cuts
        return [c for c in cuts if self.atom_at(c) is None]

    def atom_bounds(self, start: int, end: int) -> list[int]:
        """Starts and ends of the atoms in the range (none inside one atom)."""
        if self.within_atom(start, end):
            return []
        cuts: list[int] = []
        k = max(0, bisect_right(self.atom_starts, start) - 1)
        while k < len(self.atoms) and self.atoms[k].start < end:
            for pos in (self.atoms[k].start, self.atoms[k].end):
                if start < pos < end and (not cuts or cuts[-1] < pos):
                    cuts.append(pos)
            k += 1
        return cuts

    def block_cuts(self, start: int, end: int) -> list[int]:
        lo = bisect_right(self.block_starts, start)
        hi = bisect_left(self.block_starts, end)
        return [self.block_starts[k] for k in range(lo, hi)]

    def atom_row_cuts(self, start: int, end: int) -> list[int]:
        """Line starts inside an oversized atom: table rows past the header, code lines."""
        atom = self.atom_at(start) or self.atom_at(start + 1)
        if atom is None or not (atom.start <= start and end <= atom.end):
            return []
        first = self.table_body_start(atom) if atom.kind is BlockKind.TABLE else atom.start
        if atom.kind is BlockKind.CODE and atom.fence:
            first = self.text.find("\n", atom.start, atom.end) + 1
        cuts = []
        pos = self.text.find("\n", max(start, first - 1), end)
        while pos != -1 and pos + 1 < end:
            if pos + 1 > first:
                cuts.append(pos + 1)
            pos = self.text.find("\n", pos + 1, end)
        if atom.kind is BlockKind.CODE and atom.fence_close and cuts:
            # A cut before the closing fence line would leave the fence alone in a piece.
            last_line = self.text.rfind("\n", atom.start, atom.end) + 1
            cuts = [c for c in cuts if c != last_line]
        return cuts

    def sentence_cuts(self, start: int, end: int) -> list[int]:
        ends = [c for c in sentence_ends(self.text, start, end) if start < c < end]
        return self._outside_atoms(start, end, ends)

    def line_cuts(self, start: int, end: int) -> list[int]:
        cuts = []
        pos = self.text.find("\n", start, end)
        while pos != -1:
            if start < pos + 1 < end:
                cuts.append(pos + 1)
            pos = self.text.find("\n", pos + 1, end)
        return self._outside_atoms(start, end, cuts)

    def separator_cuts(self, separator: str) -> Refiner:
        """Cuts just after every occurrence of a literal separator."""

        def refine(start: int, end: int) -> list[int]:
            cuts = []
            pos = self.text.find(separator, start, end)
            while pos != -1:
                cut = pos + len(separator)
                if start < cut < end:
                    cuts.append(cut)
                pos = self.text.find(separator, cut, end)
            return self._outside_atoms(start, end, cuts)

        return refine

    def word_cuts(self, start: int, end: int) -> list[int]:
        cuts = [m.end() for m in _WORD_GAP.finditer(self.text, start, end)]
        return self._outside_atoms(start, end, [c for c in cuts if start < c < end])
