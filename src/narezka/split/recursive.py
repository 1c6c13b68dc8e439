"""``recursive``: split on the first separator of a list that makes pieces fit, then finer.

The default list is paragraph breaks, line breaks, sentence ends, ``", "``, spaces and
finally characters (``""``); :data:`~narezka.split.base.SENTENCE` stands for sentence ends.
Unlike LangChain's splitter of the same idea, separators inside a code block or table that
fits are not used, and spans stay exact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from narezka._native import core
from narezka.split.base import SENTENCE, MarkdownStrategy, SplitParams, context_for, with_overlap
from narezka.split.context import DocumentContext
from narezka.split.headings import native_atoms
from narezka.split.packer import Refiner
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document


class RecursiveStrategy(MarkdownStrategy):
    """Recursive separator splitting with optional overlap."""

    name = "recursive"

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        ctx = context_for(self, doc, params, counter)
        packed = native_ranges(ctx, params)
        if packed is not None:
            return ctx.make_chunks(with_overlap(ctx, packed, params))
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


def native_ranges(ctx: DocumentContext, params: SplitParams) -> list[tuple[int, int]] | None:
    """What :meth:`RecursiveStrategy.split` packs before the overlap, from the native core
    where it answers: in characters, or in the tokens of a counter the core counts
    (cl100k_base), for a document without secrets (as ``headings`` does)."""
    if core is None or ctx.secrets:
        return None
    native = None if ctx.chars else getattr(ctx.counter, "native", None)
    if not ctx.chars and native is None:
        return None
    separators = [None if s == SENTENCE else s for s in params.separators]
    crumb: Callable[[int, int], Any] = ctx.crumb
    frame: Callable[[int], Any] = ctx.frame_texts
    clean = True
    changed: tuple[list[int], list[int]] = ([], [])
    if ctx.chars:  # lengths: the core adds them up
        crumb, frame = (lambda start, end: len(ctx.crumb(start, end))), ctx.frame_lengths
    else:
        clean = ctx.clean
        changed = ([], []) if clean else ctx.changed
    packed: tuple[list[tuple[int, int]], list[int] | None] | None = core.pack_recursive(
        native,
        ctx.text,
        separators,
        native_atoms(ctx),
        ctx.section_starts,
        ctx.budget,
        params.size - params.overlap,
        ctx.doc.body_start,
        len(ctx.text),
        crumb,
        frame,
        clean,
        changed,
        ctx.embed_text,
        ctx.piece_text,
    )
    if packed is None:
        return None
    ranges, counts = packed
    if counts is not None:
        ctx.known_counts(ranges, counts)
    return ranges
