"""``fixed``: naive windows of N units with no regard for structure (the seed's baseline)."""

from __future__ import annotations

import itertools

from narezka.split.base import MarkdownStrategy, SplitParams, context_for
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document

WINDOW_MARGIN = 3
"""Tokens kept free in each proposed window for edge effects."""


class FixedStrategy(MarkdownStrategy):
    """Cuts every N characters or tokens; may cut sentences, tables and code."""

    name = "fixed"

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        ctx = context_for(self, doc, params, counter)
        packer = ctx.packer([])
        start, end = doc.body_start, len(doc.text)
        cut_points = getattr(counter, "cut_points", None)
        if cut_points is None:
            return ctx.make_chunks(packer.hard_split(start, end))
        # One encoding of the body proposes the windows; each is confirmed on its own and
        # split further if it overflows. Alone, a window's edge words may tokenize into a
        # token or two more, so windows are proposed with that much room.
        every = max(1, params.size - WINDOW_MARGIN)
        bounds = [start, *(start + p for p in cut_points(doc.text[start:], every)), end]
        ranges: list[tuple[int, int]] = []
        for a, b in itertools.pairwise(bounds):
            ranges.extend(packer.hard_split(a, b))
        return ctx.make_chunks(ranges)
