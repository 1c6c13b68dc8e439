"""``overlap``: windows of N units overlapping by O, boundaries snapped to structure.

Ends snap to a paragraph boundary when one is in reach, else a sentence end, else a word
gap; each window then reaches back over its predecessor's tail by up to O units, starting
at a sentence or word start. Code blocks and tables that fit are never cut.
"""

from __future__ import annotations

from narezka.split.base import MarkdownStrategy, SplitParams, context_for, with_overlap
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document


class OverlapStrategy(MarkdownStrategy):
    """Sliding windows with overlap, snapped to paragraph, sentence, then word boundaries."""

    name = "overlap"

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        ctx = context_for(self, doc, params, counter)
        refiners = [ctx.block_cuts, ctx.sentence_cuts, ctx.word_cuts]
        packer = ctx.packer(refiners, budget=params.size - params.overlap)
        ranges = packer.pack(doc.body_start, len(doc.text))
        return ctx.make_chunks(with_overlap(ctx, ranges, params))
