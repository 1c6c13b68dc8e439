"""``headings``: one section per chunk where it fits, breadcrumbs first (seed 003, strategy 3).

Sections open at headings of the configured levels (``levels=(2, 3)`` splits only at H2 and
H3, like the seed pipeline). A section that fits is one chunk; a longer one is cut between
blocks, then sentences, lines and words; tables and code blocks are atoms, split by rows or
lines only when one alone is too long, with the table header or the code fence repeated in
each piece's ``embed_text``. Chunks shorter than ``min_chars`` merge with a neighbour when
the merged chunk still fits. ``embed_text`` starts with the heading path
(``Доставка > Курьером > Тарифы``) so a bare table still says what it is about.
"""

from __future__ import annotations

import itertools

from narezka._native import core
from narezka.split.base import MarkdownStrategy, SplitParams, context_for
from narezka.split.context import DocumentContext
from narezka.split.packer import Refiner
from narezka.tokens import TokenCounter
from narezka.types import BlockKind, Chunk, Document


class HeadingsStrategy(MarkdownStrategy):
    """Structure-first splitting by Markdown headings."""

    name = "headings"
    breadcrumbs = True

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        ctx = context_for(self, doc, params, counter)
        lo, hi = params.levels
        bounds = [doc.body_start]
        bounds += [
            b.start
            for b in doc.blocks
            if b.kind is BlockKind.HEADING and lo <= b.level <= hi and b.start > doc.body_start
        ]
        bounds.append(len(doc.text))
        packed = native_ranges(ctx, bounds, params.min_chars)
        if packed is not None:
            return ctx.make_chunks(packed)
        refiners = structure_refiners(ctx)
        packer = ctx.packer(refiners)
        headings = {b.start: b for b in doc.blocks if b.kind is BlockKind.HEADING}
        ranges: list[tuple[int, int]] = []
        for start, end in itertools.pairwise(bounds):
            section = packer.pack(start, end)
            heading = headings.get(start)
            if heading is not None and len(section) > 1 and section[0] == (start, heading.end):
                # The heading line was left alone: glue it to the start of what follows.
                section = pack_under_heading(ctx, refiners, heading.end, start, end)
            ranges.extend(section)
        return ctx.make_chunks(merge_short(ctx, ranges, params.min_chars))


# An atom's kind as native/src/pack.rs reads it (an HTML block takes no frame: no bit).
_TABLE, _CODE, _FENCE, _FENCE_CLOSE = 1, 2, 4, 8
_ATOM_BITS = {BlockKind.TABLE: _TABLE, BlockKind.CODE: _CODE}


def native_ranges(
    ctx: DocumentContext, bounds: list[int], min_chars: int
) -> list[tuple[int, int]] | None:
    """What :meth:`HeadingsStrategy.split` packs, from the native core where it answers:
    in characters, or in the tokens of a counter the core counts (cl100k_base), for a
    document without secrets (their markers' sizes stay Python's). Breadcrumbs and split
    atoms' frames are asked of the context, once each."""
    if core is None or ctx.secrets:
        return None
    native = None if ctx.chars else getattr(ctx.counter, "native", None)
    if not ctx.chars and native is None:
        return None
    atoms = native_atoms(ctx)
    state = (
        ctx.text,
        bounds,
        [(b.start, b.end) for b in ctx.blocks if b.kind is BlockKind.HEADING],
        ctx.block_starts,
        glued_starts(ctx),
        atoms,
        ctx.section_starts,
        ctx.budget,
        min_chars,
    )
    if native is None:
        found: list[tuple[int, int]] | None = core.pack_headings(
            *state, lambda start, end: len(ctx.crumb(start, end)), ctx.frame_lengths
        )
        return found
    clean = ctx.clean
    # Python's own counts where sanitizing may change a range (a document that needs it).
    packed: tuple[list[tuple[int, int]], list[int]] | None = core.pack_headings_tokens(
        native,
        *state,
        ctx.crumb,
        ctx.frame_texts,
        clean,
        ([], []) if clean else ctx.changed,
        ctx.embed_text,
        ctx.piece_text,
    )
    if packed is None:
        return None
    ranges, counts = packed
    ctx.known_counts(ranges, counts)
    return ranges


def native_atoms(ctx: DocumentContext) -> list[tuple[int, int, int]]:
    """The context's atoms as the native packer reads them: start, end, kind bits."""
    return [
        (
            a.start,
            a.end,
            _ATOM_BITS.get(a.kind, 0)
            | (_FENCE if a.fence else 0)
            | (_FENCE_CLOSE if a.fence_close else 0),
        )
        for a in ctx.atoms
    ]


def glued_starts(ctx: DocumentContext) -> list[int]:
    """The block starts no block cut may use: right after a heading (alone it would be an
    empty chunk) or after a lead-in ending in a colon («Как выбрать пункт выдачи:» + its
    list)."""
    return [
        nxt.start
        for prev, nxt in itertools.pairwise(ctx.blocks)
        if prev.kind is BlockKind.HEADING or ctx.text[prev.end - 1 : prev.end] == ":"
    ]


def structure_refiners(ctx: DocumentContext) -> list[Refiner]:
    """Cuts between blocks (but not at :func:`glued_starts`), then sentences, lines and
    words."""
    glued = set(glued_starts(ctx))

    def block_cuts(start: int, end: int) -> list[int]:
        return [c for c in ctx.block_cuts(start, end) if c not in glued]

    return [block_cuts, ctx.sentence_cuts, ctx.line_cuts, ctx.word_cuts]


def pack_under_heading(
    ctx: DocumentContext, refiners: list[Refiner], heading_end: int, start: int, end: int
) -> list[tuple[int, int]]:
    """Pack a too-long section so its heading line opens the first chunk, not one of its own."""
    packer = ctx.packer(refiners)
    ranges = packer.pack(heading_end, end)
    if not ranges:
        return packer.pack(start, heading_end)
    if packer.fits(start, ranges[0][1]):
        return [(start, ranges[0][1]), *ranges[1:]]
    # Re-pack the first piece with room left for the heading line.
    room = ctx.budget - ctx.cost(start, heading_end)
    if room > ctx.budget // 4:
        tight = ctx.packer(refiners, budget=room).pack(*ranges[0])
        if tight and packer.fits(start, tight[0][1]):
            return [(start, tight[0][1]), *tight[1:], *ranges[1:]]
    return [*packer.pack(start, heading_end), *ranges]


def merge_short(
    ctx: DocumentContext, ranges: list[tuple[int, int]], min_chars: int
) -> list[tuple[int, int]]:
    """Merge each range shorter than ``min_chars`` into its next, else previous, neighbour."""
    if min_chars <= 0:
        return ranges
    out = list(ranges)
    i = 0
    while i < len(out):
        start, end = out[i]
        if end - start < min_chars:
            if i + 1 < len(out) and ctx.joined_cost(out[i], out[i + 1]) <= ctx.budget:
                out[i : i + 2] = [(start, out[i + 1][1])]
                continue
            if i > 0 and ctx.joined_cost(out[i - 1], out[i]) <= ctx.budget:
                out[i - 1 : i + 1] = [(out[i - 1][0], end)]
                i -= 1
                continue
        i += 1
    return out
