"""Strategy specs and the per-strategy evaluation: questions in, retrieved chunks scored.

This module knows nothing of indexes or models: the wiring
(:mod:`narezka.pipeline.evaluating`) chunks and indexes the corpus and hands over a
``retrieve(question) -> [Retrieved]`` callable plus the chunks it made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from narezka.errors import ConfigError
from narezka.evaluate.golden import GoldenProblem, GoldenQuestion
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

ParamValue = int | float | str


@dataclass(frozen=True, slots=True)
class StrategySpec:
    """A strategy name and its split parameters, as written on the command line."""

    name: str
    params: Mapping[str, ParamValue] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``name:key=value,...`` in the order given: the strategy's name in reports."""
        if not self.params:
            return self.name
        return self.name + ":" + ",".join(f"{k}={v}" for k, v in self.params.items())


def parse_strategy(text: str) -> StrategySpec:
    """Parse ``name`` or ``name:key=value,...``; numeric values become ints or floats."""
    name, _, rest = text.strip().partition(":")
    if not name:
        raise ConfigError(f"strategy spec {text!r} has no name")
    params: dict[str, ParamValue] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ConfigError(f"strategy spec {text!r}: expected key=value, got {item!r}")
        params[key.strip()] = _number(value.strip())
    return StrategySpec(name, params)


def _number(value: str) -> ParamValue:
    if value.lstrip("-").isdigit():
        return int(value)
    try:
        return float(value)
    except ValueError:
        return value


def parse_strategies(text: str | Sequence[str]) -> list[StrategySpec]:
    """Several specs separated by whitespace (a string) or given one per item."""
    items = text.split() if isinstance(text, str) else [t for s in text for t in s.split()]
    specs = [parse_strategy(t) for t in items]
    if not specs:
        raise ConfigError("no strategies given")
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"a strategy is given twice: {' '.join(labels)}")
    return specs


def parse_ks(text: str | Sequence[int]) -> tuple[int, ...]:
    """``"1,3,5"`` (or ints) as sorted distinct positive ks."""
    try:
        ks = [int(k) for k in text.split(",") if k.strip()] if isinstance(text, str) else text
    except ValueError:
        raise ConfigError(f"k must be comma-separated integers, got {text!r}") from None
    if not ks or min(ks) < 1:
        raise ConfigError(f"k must be positive integers, got {text!r}")
    return tuple(sorted(set(ks)))


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One retrieved chunk as the metrics see it."""

    url: str
    file_path: str
    text: str
    category: str = ""
    archived: bool = False
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class ChunkView:
    """What the metrics need of one chunk the strategy made."""

    source: str
    text: str
    chars: int
    tokens: int
    """In the embedder's own tokens."""


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """How one question fared under one strategy."""

    question: GoldenQuestion
    rank: int | None
    """1-based rank of the first retrieved chunk containing all strings, or None."""
    retrieved: tuple[Retrieved, ...]
    in_one_chunk: bool
    """Some chunk of this strategy contains all the strings (retrieved or not)."""
    absent: tuple[str, ...] = ()
    """Strings that occur nowhere in the corpus."""

    def hit(self, k: int) -> bool:
        return hit_at(self.rank, k)


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
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

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

    @property
    def headline_k(self) -> int:
        """The k the report ranks by: 3 as in the seed when measured, else the largest."""
        return 3 if 3 in self.ks else max(self.ks)

    def best(self) -> StrategyResult | None:
        """Highest hit@headline_k, then MRR, then fewer chunks."""
        k = self.headline_k
        return max(self.strategies, key=lambda s: (s.hits[k], s.mrr, -s.chunks), default=None)


def score_strategy(
    spec: StrategySpec,
    questions: Sequence[GoldenQuestion],
    chunks: Sequence[ChunkView],
    retrieve: Callable[[GoldenQuestion], Sequence[Retrieved]],
    ks: Sequence[int],
    *,
    max_tokens: int | None = None,
    absent: Mapping[GoldenQuestion, tuple[str, ...]] | None = None,
) -> StrategyResult:
    """Ask every question, find the first chunk containing its strings, and compute metrics."""
    lowered = [c.text.lower() for c in chunks]
    results = []
    for question in questions:
        retrieved = tuple(retrieve(question))
        rank = first_hit_rank([r.text for r in retrieved], question.must_contain)
        results.append(
            QuestionResult(
                question,
                rank,
                retrieved,
                answerable(question.must_contain, lowered),
                (absent or {}).get(question, ()),
            )
        )
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
    )


def compare_all(strategies: Sequence[StrategyResult], k: int) -> list[Comparison]:
    """Sign tests of every pair of strategies on hit@k, in the order given."""
    return [
        Comparison(a.label, b.label, k, sign_test(a.outcomes(k), b.outcomes(k)))
        for i, a in enumerate(strategies)
        for b in strategies[i + 1 :]
    ]


SPLIT = "answer split across chunks"
ARCHIVED = "archived page won"
SIMILAR = "similar page won"
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
    if (
        top is not None
        and question.category
        and top.category == question.category
        and top.file_path != question.source
    ):
        return SIMILAR
    return BELOW_K


def as_dict(run: EvalRun) -> dict[str, Any]:
    """The whole run as plain JSON-ready data (``--json``)."""
    return {
        "corpus": run.corpus,
        "golden": run.golden,
        "embedder": run.embedder,
        "max_tokens": run.max_tokens,
        "mode": run.mode,
        "k": list(run.ks),
        "include_archived": run.include_archived,
        "problems": [
            {"line": p.line, "problem": p.problem, "skipped": p.skipped} for p in run.problems
        ],
        "best": (best.label if (best := run.best()) else None),
        "strategies": [_strategy_dict(s, run.headline_k) for s in run.strategies],
        "comparisons": [
            {
                "a": c.a,
                "b": c.b,
                "k": c.k,
                "a_only": c.test.a_only,
                "b_only": c.test.b_only,
                "ties": c.test.ties,
                "p_value": c.test.p_value,
            }
            for c in run.comparisons
        ],
    }


def _strategy_dict(s: StrategyResult, k: int) -> dict[str, Any]:
    return {
        "strategy": s.label,
        "name": s.spec.name,
        "params": dict(s.spec.params),
        "chunks": s.chunks,
        "chars": {"mean": s.chars.mean, "p95": s.chars.p95},
        "tokens": {"mean": s.tokens.mean, "p95": s.tokens.p95},
        "over_window": s.over_window,
        "hits": {f"hit@{key}": value for key, value in s.hits.items()},
        "mrr": s.mrr,
        "ceiling": s.ceiling,
        "seconds": s.seconds,
        "warnings": s.warnings,
        "questions": [
            {
                "line": r.question.line,
                "q": r.question.q,
                "must_contain": list(r.question.must_contain),
                "rank": r.rank,
                "in_one_chunk": r.in_one_chunk,
                "absent": list(r.absent),
                "cause": None if r.hit(k) else miss_cause(r),
                "retrieved": [x.url for x in r.retrieved],
            }
            for r in s.questions
        ],
    }


__all__ = [
    "ChunkView",
    "Comparison",
    "EvalRun",
    "QuestionResult",
    "Retrieved",
    "StrategyResult",
    "StrategySpec",
    "as_dict",
    "compare_all",
    "miss_cause",
    "parse_ks",
    "parse_strategies",
    "parse_strategy",
    "score_strategy",
]
