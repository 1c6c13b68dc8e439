"""The one packer every strategy goes through.

A strategy only declares where text may be cut: an ordered list of *refiners*, coarsest
first, each returning candidate cut offsets inside a range. The packer cuts a range at the
coarsest level that has candidates, greedily merges neighbouring pieces while they fit the
budget, and recurses into any piece that still does not fit, one level finer. With no
candidates left it falls back to the longest prefix that fits (binary search on the exact
cost), so every output range fits — on any input, in O(n log n) cost evaluations at worst.

Ranges are half-open offsets into one text; cuts fall between pieces, so the pieces of a
range always tile it, and trimming whitespace at both ends is the only thing that drops
characters.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Callable, Sequence
from unicodedata import combining

from narezka.parse.sanitize import trim_whitespace

Cost = Callable[[int, int], int]
"""Exact cost of the range as a chunk, in the budget's unit (memoize it: it is called often)."""
Refiner = Callable[[int, int], list[int]]
"""Candidate cut offsets strictly inside the range, ascending."""
Bounds = Callable[[list[tuple[int, int]], int, int], tuple[int, int] | None]
"""Lower and upper bound of the exact cost of the group of pieces ``i..j`` (equal when the
sum of the pieces is exact), from counts already made; None when it cannot say."""


class Packer:
    """Packs ranges of ``text`` into chunks whose ``cost`` is at most ``budget``."""

    def __init__(
        self,
        text: str,
        budget: int,
        cost: Cost,
        refiners: Sequence[Refiner],
        *,
        max_probe: int,
        ceiling: int | None = None,
        atom_of: Callable[[int, int], tuple[int, int] | None] | None = None,
        trim: Callable[[int, int], tuple[int, int]] | None = None,
        estimate: Cost | None = None,
        overhead: Cost | None = None,
        prefetch: Callable[[list[tuple[int, int]]], None] | None = None,
        likely: Callable[[int, int], bool] | None = None,
        bounds: Bounds | None = None,
        flat: Callable[[list[tuple[int, int]]], int | None] | None = None,
    ) -> None:
        self.text = text
        self.budget = budget
        self.cost = cost
        self.refiners = list(refiners)
        # How far past a range's start the hard split may look; a bound on raw length that
        # keeps binary search cheap (no chunk can be longer than this anyway).
        self.max_probe = max(1, max_probe)
        # An atom (code, table) that fits ``ceiling`` whole may use it when the budget is
        # lower (room kept for overlap or a heading line): keeping the atom whole matters more.
        self.ceiling = budget if ceiling is None else max(budget, ceiling)
        self.atom_of = atom_of
        self.trim = trim or (lambda s, e: trim_whitespace(text, s, e))
        # Size of a range's own text without breadcrumb or other context, for summing pieces;
        # None when exact costs are cheap enough to ask for every candidate group.
        self.estimate = estimate
        # Size of what surrounds a range's text in its chunk (breadcrumb, repeated headers).
        self.overhead: Cost = overhead or (lambda s, e: 0)
        # Given the pieces of one merge before they are grouped, so ``estimate`` can size
        # them in one batch: a tokenizer's cost per call outweighs its cost per short piece.
        self.prefetch = prefetch
        # Whether a range is short enough to most likely fit whole: then its one exact count
        # (the chunk's own) is cheaper than counting its pieces and then their group.
        self.likely = likely
        # Bounds on a group's cost from its pieces' counts: a group surely in or surely out
        # is decided without tokenizing it; only one near the limit is counted whole.
        self.bounds = bounds
        # When every group of a merge's pieces costs its length plus one constant (a
        # breadcrumb, in characters), that constant: a group then grows by bisection.
        self.flat = flat

    def fits(self, start: int, end: int) -> bool:
        cost = self.cost(start, end)
        if cost <= self.budget:
            return True
        if cost > self.ceiling or self.atom_of is None:
            return False
        atom = self.atom_of(start, end)
        return atom is not None and self.cost(*atom) <= self.ceiling

    def pack(self, start: int, end: int, level: int = 0) -> list[tuple[int, int]]:
        """Trimmed, ordered, non-overlapping ranges covering the non-whitespace of the range."""
        start, end = self.trim(start, end)
        if start >= end:
            return []
        # With costly exact costs, asking whether the whole range fits would tokenize it once
        # more: grouping its pieces answers that too (a range that fits becomes one group).
        inside_atom = self.atom_of is not None and self.atom_of(start, end) is not None
        cheap = self.estimate is None or inside_atom
        if (cheap or (self.likely is not None and self.likely(start, end))) and self.fits(
            start, end
        ):
            return [(start, end)]
        for depth in range(level, len(self.refiners)):
            cuts = self.refiners[depth](start, end)
            if cuts:
                return self._merge(start, end, cuts, depth)
        if self.estimate is not None and self.fits(start, end):
            return [(start, end)]
        return self.hard_split(start, end)

    def _merge(self, start: int, end: int, cuts: list[int], depth: int) -> list[tuple[int, int]]:
        pieces = []
        for a, b in itertools.pairwise([start, *cuts, end]):
            a, b = self.trim(a, b)
            if a < b:
                pieces.append((a, b))
        if self.prefetch is not None and self.estimate is not None:
            self.prefetch(pieces)
        out: list[tuple[int, int]] = []
        i, n = 0, len(pieces)
        constant = self.flat(pieces) if self.flat is not None and pieces else None
        ends = [b for _, b in pieces] if constant is not None else []
        while i < n:
            if constant is None:
                j = self._grow(pieces, i)
            else:
                # Cost rises with the end: the loop in _grow stops where this lands.
                j = max(i, bisect_right(ends, pieces[i][0] + self.budget - constant) - 1)
            if j > i or self._piece_fits(pieces, i):
                out.append((pieces[i][0], pieces[j][1]))
            else:
                out.extend(self.pack(*pieces[i], depth + 1))
            i = j + 1
        return out

    def _grow(self, pieces: list[tuple[int, int]], i: int) -> int:
        """Index of the last piece that can join a group starting at piece ``i``."""
        n = len(pieces)
        group_start = pieces[i][0]
        j = i
        if self.estimate is None:
            # Exact costs are cheap (characters): ask for each extension.
            cost, budget = self.cost, self.budget
            while j + 1 < n and cost(group_start, pieces[j + 1][1]) <= budget:
                j += 1
            return j
        # Exact costs mean tokenizing, and asking for every extension would tokenize each
        # chunk once per piece. Sum the pieces' own sizes instead (a line break between them
        # is one more token; a space joins the next word's token), then confirm the group
        # once and back off if the estimate was low.
        estimate, budget, find = self.estimate, self.budget, self.text.find
        total = self.overhead(*pieces[i]) + estimate(*pieces[i])
        while j + 1 < n:
            following = pieces[j + 1]
            gap = 1 if find("\n", pieces[j][1], following[0]) >= 0 else 0
            grown = total + gap + estimate(*following)
            if grown > budget:
                break
            total, j = grown, j + 1
        while j > i and not self._group_fits(pieces, i, j):
            j -= 1
        return j

    def _group_fits(self, pieces: list[tuple[int, int]], i: int, j: int) -> bool:
        known = self.bounds(pieces, i, j) if self.bounds is not None else None
        if known is not None:
            low, high = known
            if high <= self.budget:
                return True
            if low > self.budget:
                return False
        return self.cost(pieces[i][0], pieces[j][1]) <= self.budget

    def _piece_fits(self, pieces: list[tuple[int, int]], i: int) -> bool:
        known = self.bounds(pieces, i, i) if self.bounds is not None else None
        if known is not None:
            if known[1] <= self.budget:
                return True
            if known[0] > self.ceiling:
                return False
        return self.fits(*pieces[i])

    def hard_split(self, start: int, end: int) -> list[tuple[int, int]]:
        """Cut wherever needed: the longest fitting prefix, again and again."""
        out: list[tuple[int, int]] = []
        text = self.text
        while start < end:
            start, end = self.trim(start, end)
            if start >= end:
                break
            limit = min(end, start + self.max_probe)
            if limit == end and self.cost(start, end) <= self.budget:
                out.append((start, end))
                break
            lo, hi = start + 1, limit
            if self.cost(start, lo) > self.budget:
                # Not even one character fits (a budget smaller than the context around
                # it): emit it alone rather than loop forever; callers size budgets so this
                # cannot happen with the contract's parameters.
                out.append((start, lo))
                start = lo
                continue
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.cost(start, mid) <= self.budget:
                    lo = mid
                else:
                    hi = mid - 1
            piece_end = lo
            # Step back over combining marks so a letter keeps its accents.
            while piece_end < end and piece_end - 1 > start and combining(text[piece_end]):
                piece_end -= 1
            s, e = self.trim(start, piece_end)
            if s < e:
                out.append((s, e))
            start = piece_end
        return out


def extend_back(
    text: str,
    ranges: list[tuple[int, int]],
    overlap: int,
    cost: Cost,
    budget: int,
    snap: Callable[[int, int], list[int]],
    measure: Callable[[int, int], int],
    reach: int,
    trim: Callable[[int, int], tuple[int, int]] | None = None,
) -> list[tuple[int, int]]:
    """Give each range after the first up to ``overlap`` units of its predecessor's tail.

    The new start is the earliest candidate from ``snap(lo, start)`` (sentence or word
    starts) whose extra ``measure`` is within the overlap and whose chunk still fits; starts
    stay strictly increasing, so chunk order is preserved.
    """
    if overlap <= 0 or len(ranges) < 2:
        return ranges
    out = [ranges[0]]
    for k in range(1, len(ranges)):
        start, end = ranges[k]
        floor = out[-1][0] + 1
        new_start = start
        for cand in snap(max(floor, ranges[k - 1][0], start - reach), start):
            s, _ = trim(cand, start) if trim else trim_whitespace(text, cand, start)
            if s >= start or s < floor:
                continue
            if measure(s, start) <= overlap and cost(s, end) <= budget:
                new_start = s
                break
        out.append((new_start, end))
    return out
