"""``sentences``: whole sentences grouped up to the size limit (Russian-aware)."""

from __future__ import annotations

from narezka.split.base import MarkdownStrategy, SplitParams, context_for, with_overlap
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document


class SentencesStrategy(MarkdownStrategy):
    """Groups sentences; a sentence longer than the limit is cut at words."""

    name = "sentences"

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        ctx = context_for(self, doc, params, counter)
        packer = ctx.packer([ctx.sentence_cuts, ctx.word_cuts], budget=params.size - params.overlap)
        ranges = packer.pack(doc.body_start, len(doc.text))
        return ctx.make_chunks(with_overlap(ctx, ranges, params))
