"""Strategy parameters and the interface every splitting strategy implements."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, runtime_checkable

import narezka.defaults as defaults
from narezka.errors import ConfigError
from narezka.formats import MARKDOWN_GLOBS
from narezka.parse.redaction import RULES_VERSION
from narezka.split.context import RAW_CHARS_PER_TOKEN, DocumentContext, Section
from narezka.split.packer import extend_back
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document, RawDocument

if TYPE_CHECKING:
    import numpy as np

SENTENCE = "<sentence>"
"""A separator that stands for "a sentence end" in the recursive strategy's list."""
DEFAULT_SEPARATORS = ("\n\n", "\n", SENTENCE, ", ", " ", "")


@dataclass(frozen=True, slots=True)
class SplitParams:
    """Validated parameters shared by all strategies; each uses the ones it needs."""

    size: int = defaults.SIZE
    unit: str = defaults.PREVIEW_UNIT
    """Characters unless told: the library's own calls need no model. The commands that
    embed default to the embedder's tokens (:func:`narezka.settings.chunk_config`)."""
    tokenizer: str = defaults.TOKENIZER
    overlap: int = defaults.OVERLAP
    levels: tuple[int, int] = defaults.LEVELS
    """Heading levels that open a section (``--levels 2-3`` splits only at H2/H3)."""
    min_chars: int = defaults.MIN_CHARS
    """Chunks shorter than this merge with a neighbour when the result fits (headings)."""
    separators: tuple[str, ...] = field(default=DEFAULT_SEPARATORS)
    breadcrumbs: bool | None = None
    """Prefix the heading path to ``embed_text``; None = the strategy's own default."""
    threshold: float | None = None
    """semantic: cut where neighbouring sentences' cosine similarity falls below this."""
    percentile: float | None = None
    """semantic: cut at the lowest ``percentile`` percent of neighbour similarities."""
    parent_size: int | None = None
    """parent-child: the parents' size limit in ``unit`` (default: four times ``size``)."""
    redact: bool = defaults.REDACT
    """Replace secrets (keys, tokens, passwords) by ``[REDACTED:<kind>]`` in everything
    embedded and stored; the pipeline finds them once per document before splitting."""

    def __post_init__(self) -> None:
        if self.unit not in ("chars", "tokens"):
            raise ConfigError(f"unit must be 'chars' or 'tokens', not {self.unit!r}")
        if self.size < 16:
            raise ConfigError(f"size must be at least 16 {self.unit}, got {self.size}")
        if self.overlap < 0 or self.overlap >= self.size // 2:
            raise ConfigError(
                f"overlap must be between 0 and half the size ({self.size // 2}), "
                f"got {self.overlap}"
            )
        lo, hi = self.levels
        if not 1 <= lo <= hi <= 6:
            raise ConfigError(f"heading levels must satisfy 1 <= from <= to <= 6, got {lo}-{hi}")
        if self.min_chars < 0:
            raise ConfigError(f"min_chars must not be negative, got {self.min_chars}")
        if self.threshold is not None and not -1.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold is a cosine similarity in [-1, 1], got {self.threshold}")
        if self.percentile is not None and not 0.0 < self.percentile < 100.0:
            raise ConfigError(f"percentile must be between 0 and 100, got {self.percentile}")
        if self.parent_size is not None and self.parent_size < self.size:
            raise ConfigError(
                f"parent_size ({self.parent_size}) must not be below size ({self.size})"
            )

    def fingerprint(self, strategy: str) -> str:
        """Stable text naming everything that changes the chunks (used in content hashes)."""
        return _fingerprint(self, strategy)


_OPTIONAL = frozenset({"threshold", "percentile", "parent_size"})


@lru_cache(maxsize=64)
def _fingerprint(params: SplitParams, strategy: str) -> str:
    # Unset strategy-specific options are left out, so adding an option never changes the
    # fingerprint (and so the point ids) of indexes that do not use it.
    fields = {k: v for k, v in asdict(params).items() if not (v is None and k in _OPTIONAL)}
    fields["levels"] = list(params.levels)
    fields["separators"] = list(params.separators)
    # Redaction on names the rule set's version; off leaves the fingerprint of indexes built
    # before redaction existed. So their next sync re-chunks every file (stat alone no longer
    # says "unchanged") and the secrets leave the index; a new rule set does the same.
    del fields["redact"]
    if params.redact:
        fields["redact"] = RULES_VERSION
    return strategy + ":" + json.dumps(fields, sort_keys=True, ensure_ascii=False)


MARKDOWN_INCLUDE = MARKDOWN_GLOBS


class Strategy(Protocol):
    """Turns one parsed document into chunks under the chunk contract."""

    name: ClassVar[str]
    breadcrumbs: ClassVar[bool]
    markdown: ClassVar[bool]
    """Whether the document arrives with its Markdown block map (else ``blocks == ()``)."""
    include: ClassVar[tuple[str, ...]]
    """Default file globs for this strategy."""

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]: ...


class MarkdownStrategy:
    """What the strategies that read Markdown share: the document's block map, the Markdown
    globs and no breadcrumbs unless a subclass turns them on. A subclass sets ``name``."""

    name: ClassVar[str]
    breadcrumbs: ClassVar[bool] = False
    markdown: ClassVar[bool] = True
    include: ClassVar[tuple[str, ...]] = MARKDOWN_INCLUDE


@runtime_checkable
class Chooser(Protocol):
    """A strategy that picks another strategy per file (``auto``)."""

    def choose(self, raw: RawDocument) -> Strategy: ...


EmbedFunction = Callable[[list[str]], "np.ndarray[Any, Any]"]
"""Texts in, one L2-normalized row per text out: how a strategy that needs meaning
(``semantic``) reaches the embedder without the split stage importing the embed stage."""


def context_for(
    strategy: Strategy,
    doc: Document,
    params: SplitParams,
    counter: TokenCounter,
    *,
    sections: Sequence[Section] | None = None,
) -> DocumentContext:
    """The per-document context with the strategy's breadcrumb default applied, packing at
    ``size - overlap`` so that the overlap added afterwards fits.

    ``sections`` replaces the heading sections for strategies that find structure of their
    own (code's classes and functions, legal articles); each section's ``path`` then becomes
    the chunks' ``section`` and breadcrumb.
    """
    budget = params.size - params.overlap
    return context_of(DocumentContext, strategy, doc, params, counter, sections, budget)


_Context = TypeVar("_Context", bound=DocumentContext)


def context_of(
    kind: type[_Context],
    strategy: Strategy,
    doc: Document,
    params: SplitParams,
    counter: TokenCounter,
    sections: Sequence[Section] | None = None,
    pack_budget: int | None = None,
) -> _Context:
    """A context of class ``kind`` (a strategy may render what its chunks embed) as
    :func:`context_for` makes it; ``pack_budget`` None packs to the full size."""
    crumbs = strategy.breadcrumbs if params.breadcrumbs is None else params.breadcrumbs
    return kind(
        doc,
        counter,
        params.size,
        strategy=strategy.name,
        fingerprint=params.fingerprint(strategy.name),
        breadcrumbs=crumbs,
        sections=sections,
        pack_budget=pack_budget,
    )


def with_overlap(
    ctx: DocumentContext, ranges: list[tuple[int, int]], params: SplitParams
) -> list[tuple[int, int]]:
    """Extend each chunk back over its predecessor's tail, snapped to sentence or word starts.

    Strategies pack at ``size - overlap`` first, so the extension nearly always fits.
    """
    if params.overlap <= 0:
        return ranges
    text = ctx.text

    def snap(lo: int, hi: int) -> list[int]:
        return ctx.sentence_cuts(lo, hi) or ctx.word_cuts(lo, hi)

    def measure(start: int, end: int) -> int:
        return ctx.counter.count(text[start:end])

    reach = params.overlap * (1 if ctx.chars else RAW_CHARS_PER_TOKEN)
    return extend_back(
        text, ranges, params.overlap, ctx.cost, params.size, snap, measure, reach, ctx.trim
    )
