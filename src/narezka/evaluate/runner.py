"""Strategy specs, size sweeps and the per-strategy evaluation: questions in, retrieved chunks
scored.

This module knows nothing of indexes or models: the wiring
(:mod:`narezka.api.evaluating`) chunks and indexes the corpus and hands over a
``retrieve(question) -> [Retrieved]`` callable plus the chunks it made.

A question of a **strings** golden set is hit at rank r when the r-th retrieved chunk contains
every expected string. A question of a **span** golden set is hit at rank r when the r-th
retrieved chunk's range overlaps one of its reference excerpts by at least one character (same
document); the stricter ``hit_full`` asks that every excerpt lie wholly inside some retrieved
chunk. hit@k, MRR and the sign tests use the rank; span recall, precision and IoU (Chroma's
definitions, :mod:`narezka.evaluate.spans`) score the top-k ranges.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from narezka.evaluate.golden import SPANS, STRINGS, GoldenProblem, GoldenQuestion
from narezka.evaluate.metrics import (
    SignTest,
    SizeStats,
    answerable,
    first_hit_rank,
    hit_at,
    hit_rate,
    mean_reciprocal_rank,
    sign_test,
    size_stats,
)
from narezka.evaluate.spans import (
    Span,
    SpanScores,
    SpanSummary,
    overlaps,
    span_metrics,
    span_metrics_tokens,
    summarize,
)
from narezka.evaluate.specs import StrategySpec


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One retrieved chunk (or expanded hit) as the metrics see it."""

    url: str
    file_path: str
    text: str
    category: str = ""
    archived: bool = False
    score: float = 0.0
    start: int = 0
    end: int = 0
    """Its character range in the document's normalized text."""
    tokens: int = 0
    """Length of ``text`` in the embedder's tokens: what a reader of the hit pays."""
    relevance: float | None = None
    """The hit's calibrated relevance (``Hit.relevance``); None where none was computed."""

    @property
    def span(self) -> Span:
        return Span(self.file_path, self.start, self.end)


@dataclass(frozen=True, slots=True)
class ChunkView:
    """What the metrics need of one chunk the strategy made."""

    source: str
    text: str
    chars: int
    tokens: int
    """In the embedder's own tokens."""
    start: int = 0
    end: int = 0


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """How one question fared under one strategy."""

    question: GoldenQuestion
    rank: int | None
    """1-based rank of the first retrieved chunk that hits (see the module docstring)."""
    retrieved: tuple[Retrieved, ...]
    in_one_chunk: bool
    """Some chunk of this strategy holds the answer: all the strings, or each excerpt whole."""
    absent: tuple[str, ...] = ()
    """Strings that occur nowhere in the corpus."""
    spans: Mapping[int, SpanScores] = field(default_factory=dict)
    """Span golden sets: character-range scores of the top k, per k."""
    token_spans: Mapping[int, SpanScores] = field(default_factory=dict)
    """The same on cl100k token ranges, when computed."""

    def hit(self, k: int) -> bool:
        return hit_at(self.rank, k)

    def tokens_at(self, k: int) -> int:
        """Tokens of the top ``k`` retrieved texts together."""
        return sum(r.tokens for r in self.retrieved[:k])


@dataclass(slots=True)
class StrategyResult:
    """Every metric of one strategy, and its per-question results."""

    spec: StrategySpec
    chunks: int
    chars: SizeStats
    tokens: SizeStats
    over_window: int
    """Chunks over the embedder's hard window (``max_tokens``); 0 when it has none."""
    hits: dict[int, float]
    mrr: float
    ceiling: float
    questions: list[QuestionResult]
    """The answerable questions: every hit@k, MRR, span and size figure is over these."""
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    span: dict[int, SpanSummary] = field(default_factory=dict)
    """Span golden sets: Chroma's metrics on character ranges, per k (the headline)."""
    span_tokens: dict[int, SpanSummary] = field(default_factory=dict)
    """The same on cl100k token ranges."""
    retrieved_tokens: dict[int, float] = field(default_factory=dict)
    """Mean tokens of the top k retrieved texts per question, per k."""
    cached: int = 0
    """Texts (chunks and queries) whose vectors came from the embedding cache."""
    embedded: int = 0
    """Texts the model had to embed."""
    unanswerable: list[QuestionResult] = field(default_factory=list)
    """Questions the corpus does not answer (never hit): what a search should refuse."""

    @property
    def label(self) -> str:
        return self.spec.label

    def outcomes(self, k: int) -> list[bool]:
        return [r.hit(k) for r in self.questions]


@dataclass(frozen=True, slots=True)
class Comparison:
    """A paired sign test of strategy ``a`` against ``b`` on hit@k."""

    a: str
    b: str
    k: int
    test: SignTest


@dataclass(slots=True)
class EvalRun:
    """A whole evaluation: settings, golden-set problems, per-strategy results, comparisons."""

    corpus: str
    golden: str
    embedder: str
    max_tokens: int | None
    mode: str
    ks: tuple[int, ...]
    include_archived: bool
    problems: list[GoldenProblem]
    strategies: list[StrategyResult] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    format: str = STRINGS
    """``strings`` (must_contain) or ``spans`` (reference excerpts)."""
    sizes: tuple[int, ...] = ()
    """The ``--sizes`` sweep, empty without one."""
    expand: str | None = None
    ranking: str = ""
    """How hybrid hits were fused and folded (``score dense=0.5, fold auto``)."""
    cache_hits: int = 0
    cache_misses: int = 0
    min_relevance: float | None = None
    """The ``min_relevance`` in force (None: the measured default), the refusal table's
    marked threshold (:mod:`narezka.evaluate.refusal`)."""

    @property
    def headline_k(self) -> int:
        """The k the report ranks by: 3 as in the seed when measured, else the largest."""
        return 3 if 3 in self.ks else max(self.ks)

    @property
    def spans(self) -> bool:
        return self.format == SPANS

    def best(self) -> StrategyResult | None:
        """Highest hit@headline_k, then MRR, then fewer chunks."""
        k = self.headline_k
        return max(self.strategies, key=lambda s: (s.hits[k], s.mrr, -s.chunks), default=None)


class _Containers:
    """Answers "does some chunk contain this span?" in O(log n) per span."""

    def __init__(self, chunks: Sequence[ChunkView]) -> None:
        by_doc: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for c in chunks:
            by_doc[c.source].append((c.start, c.end))
        self.starts: dict[str, list[int]] = {}
        self.reach: dict[str, list[int]] = {}
        for doc, ranges in by_doc.items():
            ranges.sort()
            self.starts[doc] = [s for s, _ in ranges]
            # reach[i]: the furthest end among chunks starting at or before starts[i]; a chunk
            # holds [s, e) exactly when one starting at or before s reaches e.
            self.reach[doc] = list(accumulate((e for _, e in ranges), max))

    def contains(self, span: Span) -> bool:
        starts = self.starts.get(span.doc)
        if not starts:
            return False
        i = bisect_right(starts, span.start) - 1
        return i >= 0 and self.reach[span.doc][i] >= span.end


def first_overlap_rank(retrieved: Sequence[Span], references: Sequence[Span]) -> int | None:
    """1-based rank of the first retrieved range overlapping some reference, or None."""
    for rank, span in enumerate(retrieved, start=1):
        if any(overlaps(span, ref) for ref in references):
            return rank
    return None


def score_strategy(
    spec: StrategySpec,
    questions: Sequence[GoldenQuestion],
    chunks: Sequence[ChunkView],
    retrieve: Callable[[GoldenQuestion], Sequence[Retrieved]],
    ks: Sequence[int],
    *,
    max_tokens: int | None = None,
    absent: Mapping[GoldenQuestion, tuple[str, ...]] | None = None,
    token_ends: Mapping[str, Sequence[int]] | None = None,
) -> StrategyResult:
    """Ask every question, find its first hit, and compute the metrics; unanswerable
    questions are asked too and kept apart (``unanswerable``), out of every hit figure.

    ``token_ends`` (document → token end offsets, see
    :func:`narezka.evaluate.chroma.token_ends`) adds the token variant of the span metrics.
    """
    results, refused = _ask(questions, chunks, retrieve, ks, absent or {}, token_ends)
    ranks = [r.rank for r in results]
    n = len(results)
    return StrategyResult(
        spec=spec,
        chunks=len(chunks),
        chars=size_stats([c.chars for c in chunks]),
        tokens=size_stats([c.tokens for c in chunks]),
        over_window=sum(1 for c in chunks if max_tokens is not None and c.tokens > max_tokens),
        hits={k: hit_rate(ranks, k) for k in ks},
        mrr=mean_reciprocal_rank(ranks),
        ceiling=sum(r.in_one_chunk for r in results) / n if n else 0.0,
        questions=results,
        span=_span_summaries(results, ks, tokens=False),
        span_tokens=_span_summaries(results, ks, tokens=True),
        retrieved_tokens={k: sum(r.tokens_at(k) for r in results) / n if n else 0.0 for k in ks},
        unanswerable=refused,
    )


def _ask(
    questions: Sequence[GoldenQuestion],
    chunks: Sequence[ChunkView],
    retrieve: Callable[[GoldenQuestion], Sequence[Retrieved]],
    ks: Sequence[int],
    absent: Mapping[GoldenQuestion, tuple[str, ...]],
    token_ends: Mapping[str, Sequence[int]] | None,
) -> tuple[list[QuestionResult], list[QuestionResult]]:
    """Each question's result: the answerable ones, and the unanswerable ones apart."""
    lowered = [c.text.lower() for c in chunks]
    containers = _Containers(chunks)
    results = []
    refused = []
    for question in questions:
        retrieved = tuple(retrieve(question))
        if not question.answerable:
            refused.append(QuestionResult(question, None, retrieved, False))
        elif question.references:
            results.append(_span_result(question, retrieved, ks, containers, token_ends))
        else:
            rank = first_hit_rank([r.text for r in retrieved], question.must_contain)
            in_one = answerable(question.must_contain, lowered)
            results.append(
                QuestionResult(question, rank, retrieved, in_one, absent.get(question, ()))
            )
    return results, refused


def _span_summaries(
    results: Sequence[QuestionResult], ks: Sequence[int], *, tokens: bool
) -> dict[int, SpanSummary]:
    """The span metrics at each k over the questions that have them (in characters, or in
    tokens), or ``{}`` where none does."""
    scored = [r.token_spans if tokens else r.spans for r in results]
    scored = [s for s in scored if s]
    return {k: summarize([s[k] for s in scored]) for k in ks} if scored else {}


def _span_result(
    question: GoldenQuestion,
    retrieved: tuple[Retrieved, ...],
    ks: Sequence[int],
    containers: _Containers,
    token_ends: Mapping[str, Sequence[int]] | None,
) -> QuestionResult:
    refs = [r.span for r in question.references]
    spans = [r.span for r in retrieved]
    tokens: dict[int, SpanScores] = {}
    if token_ends is not None and all(s.doc in token_ends for s in spans):
        tokens = {k: span_metrics_tokens(spans[:k], refs, token_ends) for k in ks}
    return QuestionResult(
        question,
        first_overlap_rank(spans, refs),
        retrieved,
        all(containers.contains(ref) for ref in refs),
        spans={k: span_metrics(spans[:k], refs) for k in ks},
        token_spans=tokens,
    )


def compare_all(strategies: Sequence[StrategyResult], k: int) -> list[Comparison]:
    """Sign tests of every pair of strategies on hit@k, in the order given."""
    return [
        Comparison(a.label, b.label, k, sign_test(a.outcomes(k), b.outcomes(k)))
        for i, a in enumerate(strategies)
        for b in strategies[i + 1 :]
    ]


def best_comparisons(run: EvalRun) -> list[Comparison]:
    """The run's headline-k sign tests that involve its best strategy, best as ``a``."""
    best = run.best()
    if best is None:
        return []
    out = []
    for c in run.comparisons:
        if c.k != run.headline_k or best.label not in (c.a, c.b):
            continue
        if c.b == best.label:
            flipped = SignTest(c.test.b_only, c.test.a_only, c.test.ties, c.test.p_value)
            c = Comparison(c.b, c.a, c.k, flipped)
        out.append(c)
    return out


SPLIT = "answer split across chunks"
ARCHIVED = "archived page won"
SIMILAR = "similar page won"
OTHER_PASSAGE = "another passage of the page won"
NOT_IN_CORPUS = "answer not in corpus"
BELOW_K = "ranked below k"


def miss_cause(result: QuestionResult) -> str:
    """The probable cause of a miss, most fundamental first."""
    if result.absent:
        return NOT_IN_CORPUS
    if not result.in_one_chunk:
        return SPLIT
    top = result.retrieved[0] if result.retrieved else None
    if top is not None and top.archived:
        return ARCHIVED
    question = result.question
    if question.references:
        if result.rank is not None:
            return BELOW_K  # hit, but deeper than the k that was asked
        if top is not None and top.file_path not in {r.doc for r in question.references}:
            return SIMILAR
        return OTHER_PASSAGE if top is not None else BELOW_K
    if (
        top is not None
        and question.category
        and top.category == question.category
        and top.file_path != question.source
    ):
        return SIMILAR
    return BELOW_K


__all__ = [
    "ChunkView",
    "Comparison",
    "EvalRun",
    "QuestionResult",
    "Retrieved",
    "StrategyResult",
    "best_comparisons",
    "compare_all",
    "first_overlap_rank",
    "miss_cause",
    "score_strategy",
]
