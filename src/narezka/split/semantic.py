"""``semantic``: cut where the meaning shifts, and still never over the size limit.

Units are sentences from the Russian-aware finder, with every code block, table and HTML
block one unit of its own and a heading glued to the unit under it. Headings of the
configured ``levels`` are hard boundaries: a new section always starts a new chunk. The
units are embedded in batches (``stats`` counts the calls); the similarity across each gap
is the cosine between the mean vectors of a window on either side (the unit and ``window``
neighbours, never crossing a section). A gap is a breakpoint when its similarity is below
``threshold`` or among the lowest ``percentile`` percent of the document's gaps (both
given: either rule cuts, so the one that cuts more wins; neither: :data:`DEFAULT_PERCENTILE`).

The groups between breakpoints are then fitted to the limit, which peers with semantic
chunking do not do: a group that fits is one chunk; a longer one is cut at its weakest
internal gap, recursively, so it is never truncated and never left long; only a single unit
over the limit falls back to the shared packer's line and word cuts. Chunks shorter than
``min_chars`` merge into the more similar neighbour in the same section when the result
fits. ``overlap`` is ignored: a chunk is a unit of meaning, and the tail of another topic
would blur it.

Breadcrumbs are on by default, as in ``headings``: a chunk never spans a section boundary,
so its heading path is always well defined, and a chunk cut mid-section by meaning needs
the path to say what it is about.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from narezka.errors import ConfigError
from narezka.parse.sanitize import sanitize
from narezka.split.base import EmbedFunction, MarkdownStrategy, SplitParams, context_for
from narezka.split.context import DocumentContext
from narezka.split.headings import pack_under_heading
from narezka.split.packer import Refiner
from narezka.tokens import TokenCounter
from narezka.types import BlockKind, Chunk, Document

BATCH_SIZE = 64
"""Units per call of the embed function: one call per sentence would dominate the cost."""
DEFAULT_WINDOW = 1
"""Units on each side of a gap averaged with the one next to it. Measured on 40 Russian and
40 English documents of 5 topics (runs of 2–10 sentences from different md_corpus pages),
boundary F1 at the 20th percentile, ru / en: single sentences (0) 0.34 / 0.36, window 1
0.47 / 0.49, window 2 0.43 / 0.44; embedding the joined windows instead of averaging unit
vectors scored no better (0.46 / 0.48) for twice the texts embedded."""
DEFAULT_PERCENTILE = 10.0
"""Breakpoints at the lowest 10% of gaps when neither threshold nor percentile is given. On
the same documents (a shift every ~6 sentences) precision / recall was 0.45 / 0.35 (ru) and
0.46 / 0.36 (en), 0.69–0.73 precision within one sentence; higher percentiles find more
shifts there, but real pages shift topic far less often and every false cut is a fragment.
An absolute ``threshold`` depends on the model: the bundled ``use`` model's neighbour
cosines have a median of 0.22–0.28, and 0.10–0.15 across true shifts."""
EMBED_CHARS = 2000
"""Only a unit's opening characters are embedded: they steer cuts, they are not stored."""

Vectors = npt.NDArray[np.float32]


@dataclass(slots=True)
class _Unit:
    start: int
    end: int
    lead_end: int
    """End of the heading lines glued to the front of the unit (``start`` when none)."""
    bare: bool
    """Only heading lines so far: the unit still waits for the text under them."""


class SemanticStrategy(MarkdownStrategy):
    """Meaning-driven splitting under the size limit; see the module docstring."""

    name = "semantic"
    breadcrumbs = True

    def __init__(
        self,
        embed: EmbedFunction | None = None,
        *,
        window: int = DEFAULT_WINDOW,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        if window < 0:
            raise ConfigError(f"semantic window must not be negative, got {window}")
        if batch_size < 1:
            raise ConfigError(f"semantic batch size must be at least 1, got {batch_size}")
        # Opened on the first split, not here: other code instantiates strategies only to
        # read their ``include``, and loading a model for that would cost seconds.
        self._embed = embed
        self.window = window
        self.batch_size = batch_size
        self._calls = 0
        self._texts = 0
        self._chars = 0

    @property
    def stats(self) -> dict[str, int]:
        """Embedding work since construction: calls of the embed function, texts, chars."""
        return {"calls": self._calls, "texts": self._texts, "chars": self._chars}

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        ctx = context_for(self, doc, params, counter)
        units = _units(ctx)
        if not units:
            return []
        section = _section_ids(ctx, units, params.levels)
        vectors = self._vectors(ctx, units, section)
        sims = _gap_similarities(vectors, section, self.window)
        cuts = _breakpoints(sims, params.threshold, params.percentile)
        pieces: list[_Piece] = []
        refiners: list[Refiner] = [ctx.line_cuts, ctx.word_cuts]
        lo = 0
        for gap in [*np.flatnonzero(cuts).tolist(), len(units) - 1]:
            pieces.extend(_fit_group(ctx, units, sims, lo, gap + 1, refiners))
            lo = gap + 1
        pieces = _merge_fragments(ctx, pieces, vectors, section, params.min_chars)
        return ctx.make_chunks([(p.start, p.end) for p in pieces])

    def _vectors(self, ctx: DocumentContext, units: list[_Unit], section: list[int]) -> Vectors:
        """One row per unit; units alone in their section have no gap to judge and stay 0."""
        rows = [
            k
            for k in range(len(units))
            if (k > 0 and section[k - 1] == section[k])
            or (k + 1 < len(units) and section[k + 1] == section[k])
        ]
        texts = []
        for k in rows:
            # Redacted: the signal goes to the embedder, which may be a served model.
            text = ctx.span_text(units[k].start, min(units[k].end, units[k].start + EMBED_CHARS))
            texts.append(text if ctx.clean else sanitize(text) or text)
        out: Vectors | None = None
        for first in range(0, len(texts), self.batch_size):
            batch = texts[first : first + self.batch_size]
            matrix = self._embed_batch(ctx.doc.source, batch)
            if out is None:
                out = np.zeros((len(units), matrix.shape[1]), dtype=np.float32)
            elif matrix.shape[1] != out.shape[1]:
                raise ConfigError(
                    f"{ctx.doc.source}: the embed function changed its dimension from "
                    f"{out.shape[1]} to {matrix.shape[1]} between calls"
                )
            out[rows[first : first + len(batch)]] = matrix
        return out if out is not None else np.zeros((len(units), 1), dtype=np.float32)

    def _embed_batch(self, source: str, texts: list[str]) -> Vectors:
        if self._embed is None:
            raise ConfigError(
                "the semantic strategy needs an embed function: get_strategy('semantic', "
                "embed=...) (narezka.chunk_text and the CLI pass the default embedder's)"
            )
        matrix = np.asarray(self._embed(texts), dtype=np.float32)
        self._calls += 1
        self._texts += len(texts)
        self._chars += sum(len(t) for t in texts)
        if matrix.ndim != 2 or matrix.shape[0] != len(texts) or matrix.shape[1] < 1:
            raise ConfigError(
                f"{source}: the embed function returned shape {matrix.shape} "
                f"for {len(texts)} texts; expected one row per text"
            )
        return np.nan_to_num(matrix, copy=False)


# ---- units and sections -----------------------------------------------------------------


def _units(ctx: DocumentContext) -> list[_Unit]:
    """Sentences and whole atoms tiling the body; heading lines glued to what follows."""
    text, body = ctx.text, ctx.doc.body_start
    headings = [b for b in ctx.blocks if b.kind is BlockKind.HEADING]
    heading_starts = [h.start for h in headings]

    def inside_heading(pos: int) -> bool:
        k = bisect_right(heading_starts, pos) - 1
        return k >= 0 and headings[k].start < pos < headings[k].end

    cuts = {b.start for b in ctx.blocks if body < b.start < len(text)}
    cuts.update(ctx.sentence_cuts(body, len(text)))
    # A cut inside an atom would split it; inside a heading, its title.
    ordered = sorted(c for c in cuts if ctx.atom_at(c) is None and not inside_heading(c))
    # Keyed by where the heading's text starts: units are trimmed, an indented heading not.
    heading_end = dict(ctx.trim(h.start, h.end) for h in headings)
    units: list[_Unit] = []
    for a, b in zip([body, *ordered], [*ordered, len(text)], strict=True):
        start, end = ctx.trim(a, b)
        if start >= end:
            continue
        lead = heading_end.get(start)
        if units and units[-1].bare:
            last = units[-1]
            last.end = end
            if lead is not None and end == lead:
                last.lead_end = end
            else:
                last.bare = False
        elif lead is not None:
            units.append(_Unit(start, end, lead, end == lead))
        else:
            units.append(_Unit(start, end, start, False))
    return units


def _section_ids(ctx: DocumentContext, units: list[_Unit], levels: tuple[int, int]) -> list[int]:
    """Section number of each unit: a unit opening with a heading of ``levels`` opens one."""
    lo, hi = levels
    hard = {
        ctx.trim(b.start, b.end)[0]
        for b in ctx.blocks
        if b.kind is BlockKind.HEADING and lo <= b.level <= hi
    }
    out: list[int] = []
    current = 0
    for k, unit in enumerate(units):
        if k > 0 and unit.start in hard:
            current += 1
        out.append(current)
    return out


# ---- similarities and breakpoints -------------------------------------------------------


def _gap_similarities(vectors: Vectors, section: list[int], window: int) -> npt.NDArray[Any]:
    """Cosine across each gap ``k`` (between units k and k+1); NaN at a section boundary.

    Each side is the mean of the unit next to the gap and up to ``window`` more units on
    that side, clipped to the section: one vector per unit, so windows cost no extra calls.
    """
    n = len(section)
    sims = np.full(max(0, n - 1), np.nan)
    if n < 2:
        return sims
    ids = np.asarray(section)
    # First and one-past-last unit index of each unit's section, to clip the windows.
    change = np.flatnonzero(np.diff(ids)) + 1
    starts = np.concatenate([[0], change])
    ends = np.concatenate([change, [n]])
    sec_lo = np.repeat(starts, ends - starts)
    sec_hi = np.repeat(ends, ends - starts)
    total = np.concatenate([np.zeros((1, vectors.shape[1])), np.cumsum(vectors, axis=0)])
    k = np.arange(n - 1)
    same = ids[:-1] == ids[1:]
    left = total[k + 1] - total[np.maximum(sec_lo[k], k - window)]
    right = total[np.minimum(sec_hi[k], k + 2 + window)] - total[k + 1]
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    dots = np.einsum("ij,ij->i", left, right)
    # A side with no meaning (zero vector) is no evidence of a shift: call it similar.
    cos = np.divide(dots, norms, out=np.ones_like(dots), where=norms > 0)
    sims[same] = np.clip(cos[same], -1.0, 1.0)
    return sims


def _breakpoints(
    sims: npt.NDArray[Any], threshold: float | None, percentile: float | None
) -> npt.NDArray[np.bool_]:
    """Which gaps end a semantic group: section boundaries always, then the rules."""
    cut: npt.NDArray[np.bool_] = np.isnan(sims)
    valid = sims[~cut]
    if valid.size == 0:
        return cut
    if threshold is None and percentile is None:
        percentile = DEFAULT_PERCENTILE
    with np.errstate(invalid="ignore"):
        if threshold is not None:
            cut |= sims < threshold
        if percentile is not None:
            value = np.percentile(valid, percentile)
            # Gaps tied at the bottom are all cut (two equally sharp shifts are both shifts);
            # a document whose gaps all tie has no lowest ones and is not cut for it.
            if value < valid.max() - 1e-6:
                cut |= sims <= value
    return cut


# ---- fitting groups to the limit --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Piece:
    start: int
    end: int
    lo: int
    hi: int
    """The units ``[lo, hi)`` the piece was made of (a piece of one long unit: that unit)."""


def _fit_group(
    ctx: DocumentContext,
    units: list[_Unit],
    sims: npt.NDArray[Any],
    lo: int,
    hi: int,
    refiners: list[Refiner],
) -> list[_Piece]:
    """Units ``[lo, hi)`` as pieces that fit: whole if it fits, else cut at the weakest gap."""
    out: list[_Piece] = []
    # An explicit stack: a section of thousands of sentences would exceed Python's
    # recursion limit. Right halves go in first so pieces come out in document order.
    stack = [(lo, hi)]
    while stack:
        a, b = stack.pop()
        start, end = units[a].start, units[b - 1].end
        if ctx.cost(start, end) <= ctx.budget:
            out.append(_Piece(start, end, a, b))
            continue
        if b - a == 1:
            out.extend(_Piece(s, e, a, b) for s, e in _pack_unit(ctx, units[a], refiners))
            continue
        gap = _weakest_gap(ctx, units, sims, a, b)
        stack.append((gap + 1, b))
        stack.append((a, gap + 1))
    return out


def _weakest_gap(
    ctx: DocumentContext, units: list[_Unit], sims: npt.NDArray[Any], a: int, b: int
) -> int:
    """The gap inside units ``[a, b)`` with the lowest similarity.

    Ties mean the vectors cannot tell (a run of identical sentences): then the last tied gap
    whose left part fits, so that part is a full chunk, else the one nearest the middle, so
    the run halves instead of shedding one sentence at a time.
    """
    inner = sims[a : b - 1]
    low = np.nanmin(inner) if not np.all(np.isnan(inner)) else np.nan
    tied = (
        list(range(a, b - 1))
        if np.isnan(low)
        else (a + np.flatnonzero(np.isclose(inner, low, rtol=0.0, atol=1e-6))).tolist()
    )
    if len(tied) == 1:
        return int(tied[0])
    start = units[a].start
    lo, hi = 0, len(tied) - 1
    if ctx.cost(start, units[tied[0]].end) <= ctx.budget:
        # Binary search for the last tied gap whose left part fits (fit is monotone).
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if ctx.cost(start, units[tied[mid]].end) <= ctx.budget:
                lo = mid
            else:
                hi = mid - 1
        return int(tied[lo])
    middle = (start + units[b - 1].end) / 2
    return int(min(tied, key=lambda k: abs(units[k].end - middle)))


def _pack_unit(ctx: DocumentContext, unit: _Unit, refiners: list[Refiner]) -> list[tuple[int, int]]:
    """A single unit over the limit, through the shared packer (headings stay on top)."""
    if unit.lead_end > unit.start and unit.lead_end < unit.end:
        return pack_under_heading(ctx, refiners, unit.lead_end, unit.start, unit.end)
    return ctx.packer(refiners).pack(unit.start, unit.end)


def _merge_fragments(
    ctx: DocumentContext,
    pieces: list[_Piece],
    vectors: Vectors,
    section: list[int],
    min_chars: int,
) -> list[_Piece]:
    """Merge pieces shorter than ``min_chars`` into the more similar neighbour that fits."""
    if min_chars <= 0 or len(pieces) < 2:
        return pieces
    total = np.concatenate([np.zeros((1, vectors.shape[1])), np.cumsum(vectors, axis=0)])

    def mean(p: _Piece) -> npt.NDArray[Any]:
        v: npt.NDArray[Any] = total[p.hi] - total[p.lo]
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else v

    out = list(pieces)
    i = 0
    while i < len(out):
        piece = out[i]
        if piece.end - piece.start >= min_chars:
            i += 1
            continue
        best: tuple[float, int] | None = None
        for j in (i - 1, i + 1):
            if not 0 <= j < len(out) or section[out[j].lo] != section[piece.lo]:
                continue
            first, last = (out[j], piece) if j < i else (piece, out[j])
            if ctx.cost(first.start, last.end) > ctx.budget:
                continue
            sim = float(np.dot(mean(piece), mean(out[j])))
            if best is None or sim >= best[0]:
                best = (sim, j)
        if best is None:
            i += 1
            continue
        j = best[1]
        a, b = min(i, j), max(i, j)
        first, last = out[a], out[b]
        out[a : b + 1] = [
            _Piece(first.start, last.end, min(first.lo, last.lo), max(first.hi, last.hi))
        ]
        i = a
    return out
