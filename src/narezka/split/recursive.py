"""``recursive``: split on the first separator of a list that makes pieces fit, then finer.

The default list is paragraph breaks, line breaks, sentence ends, ``", "``, spaces and
finally characters (``""``); :data:`~narezka.split.base.SENTENCE` stands for sentence ends.
Unlike LangChain's splitter of the same idea, separators inside a code block or table that
fits are not used, and spans stay exact.
"""

from __future__ import annotations

from narezka.split.base import SENTENCE, MarkdownStrategy, SplitParams, context_for, with_overlap
from narezka.split.packer import Refiner
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document


class RecursiveStrategy(MarkdownStrategy):
    """Recursive separator splitting with optional overlap."""

    name = "recursive"

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        ctx = context_for(self, doc, params, counter)
        refiners: list[Refiner] = []
        for separator in params.separators:
            if separator == SENTENCE:
                refiners.append(ctx.sentence_cuts)
            elif separator:
                refiners.append(ctx.separator_cuts(separator))
            # "" means characters: the packer's hard split, always the last resort.
        packer = ctx.packer(refiners, budget=params.size - params.overlap)
        ranges = packer.pack(doc.body_start, len(doc.text))
        return ctx.make_chunks(with_overlap(ctx, ranges, params))
