"""A size-normalized view of a run: does a strategy win at equal size, or only by size?

Bigger chunks hold more text, so they contain an answer more often and hit@k alone rewards
cutting big. Two views take size out (both in the embedder's tokens):

* **Equal context budget** (every run): each strategy gets the same budget of B retrieved
  tokens, as a prompt would. A question counts when its first hitting chunk, together with
  every chunk ranked above it, fits in B tokens. B is the smallest mean number of tokens any
  strategy retrieves at the deepest k, rounded down, so on average no strategy runs out of
  retrieved chunks before the budget does.
* **Equal mean chunk size** (with a ``--sizes`` sweep): each swept strategy's metric is
  linearly interpolated between its sweep points at common mean chunk sizes, spread over the
  range that every swept strategy covers. Strategies with one point are left out of it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from narezka.evaluate.runner import EvalRun, StrategyResult

Metric = Callable[[StrategyResult], float]


@dataclass(frozen=True, slots=True)
class BudgetRow:
    """One strategy at the common context budget."""

    label: str
    mean_tokens: float
    retrieved_tokens: float
    """Mean tokens of its top-k retrieved texts (headline k)."""
    hit: float
    """hit@k (headline k), for comparison."""
    hit_within: float
    """Share of questions hit within the budget."""


@dataclass(frozen=True, slots=True)
class Interpolated:
    """One metric of each swept strategy at common mean chunk sizes (None outside its range)."""

    metric: str
    sizes: tuple[int, ...]
    values: dict[str, tuple[float | None, ...]]


@dataclass(frozen=True, slots=True)
class SizeView:
    """Everything the reports show about size: budget rows and interpolated sweep tables."""

    k: int
    budget: int
    rows: list[BudgetRow]
    interpolated: list[Interpolated]
    unswept: list[str]
    """Groups without a sweep (one point): not interpolated."""


def budget_for(run: EvalRun) -> int:
    """The common context budget B in tokens (see the module docstring); at least 1."""
    deepest = max(run.ks)
    least = min((s.retrieved_tokens.get(deepest, 0.0) for s in run.strategies), default=0.0)
    if least >= 100:
        return int(least // 10 * 10)  # a round number reads as a chosen budget, not noise
    return max(1, int(least))


def hit_within_budget(result: StrategyResult, budget: int) -> float:
    """Share of questions whose first hit, with the chunks ranked above it, fits ``budget``."""
    if not result.questions:
        return 0.0
    hits = sum(1 for r in result.questions if r.rank is not None and r.tokens_at(r.rank) <= budget)
    return hits / len(result.questions)


def interpolate(points: Sequence[tuple[float, float]], x: float) -> float | None:
    """Piecewise-linear value at ``x`` through ``(x, y)`` points; None outside their range.

    Points sharing an x are averaged first.
    """
    merged: dict[float, list[float]] = defaultdict(list)
    for px, py in points:
        merged[px].append(py)
    line = sorted((px, sum(ys) / len(ys)) for px, ys in merged.items())
    if not line or not line[0][0] <= x <= line[-1][0]:
        return None
    for (x0, y0), (x1, y1) in pairwise(line):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return line[0][1]  # a single point, hit exactly


def common_sizes(
    ranges: Sequence[tuple[float, float]], n: int = 4, gap: int = 10
) -> tuple[int, ...]:
    """Up to ``n`` whole sizes, at least ``gap`` apart, spread evenly over the intersection of
    the ``(lo, hi)`` ranges (its midpoint when it is narrower than ``gap``)."""
    if not ranges:
        return ()
    lo = math.ceil(max(r[0] for r in ranges))
    hi = math.floor(min(r[1] for r in ranges))
    if lo > hi:
        return ()
    count = max(1, min(n, 1 + (hi - lo) // gap))
    if count == 1:
        return ((lo + hi) // 2,)
    return tuple(sorted({round(lo + i * (hi - lo) / (count - 1)) for i in range(count)}))


def metrics_for(run: EvalRun) -> dict[str, Metric]:
    """The metrics worth comparing at equal size: hit@k, and recall and IoU for span sets."""
    k = run.headline_k
    out: dict[str, Metric] = {f"hit@{k}": lambda s: s.hits[k]}
    if run.spans:
        out[f"recall@{k}"] = lambda s: s.span[k].recall if k in s.span else 0.0
        out[f"IoU@{k}"] = lambda s: s.span[k].iou if k in s.span else 0.0
    return out


def groups(run: EvalRun) -> dict[str, list[StrategyResult]]:
    """Results by group (a swept spec's family, else the label), in run order."""
    out: dict[str, list[StrategyResult]] = {}
    for s in run.strategies:
        out.setdefault(s.spec.group, []).append(s)
    return out


def size_view(run: EvalRun) -> SizeView:
    """The budget table and, with a sweep, the interpolated tables."""
    k = run.headline_k
    budget = budget_for(run)
    rows = [
        BudgetRow(
            s.label,
            s.tokens.mean,
            s.retrieved_tokens.get(k, 0.0),
            s.hits[k],
            hit_within_budget(s, budget),
        )
        for s in run.strategies
    ]
    swept = {
        name: results
        for name, results in groups(run).items()
        if len({s.tokens.mean for s in results}) > 1
    }
    unswept = [name for name in groups(run) if name not in swept]
    sizes = common_sizes(
        [(min(s.tokens.mean for s in rs), max(s.tokens.mean for s in rs)) for rs in swept.values()]
    )
    tables = []
    if sizes:
        for metric, value in metrics_for(run).items():
            values = {
                name: tuple(
                    interpolate([(s.tokens.mean, value(s)) for s in results], x) for x in sizes
                )
                for name, results in swept.items()
            }
            tables.append(Interpolated(metric, sizes, values))
    return SizeView(k, budget, rows, tables, unswept)


__all__ = [
    "BudgetRow",
    "Interpolated",
    "SizeView",
    "budget_for",
    "common_sizes",
    "groups",
    "hit_within_budget",
    "interpolate",
    "metrics_for",
    "size_view",
]
