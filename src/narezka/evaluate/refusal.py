"""How ``min_relevance`` trades answers kept against questions refused.

A search drops every hit whose relevance is below ``min_relevance`` and says "nothing
relevant" when none is left. On a golden set that holds unanswerable questions (``"answerable":
false``) that trade can be measured per threshold t:

* **unanswerable refused**: unanswerable questions whose best hit is below t (the search
  answers "nothing relevant", as it should);
* **correct dropped**: answerable questions answered at rank 1 whose top hit is below t (the
  right answer is lost; it may come back lower in the list, but the first one an agent reads
  is gone);
* **correct kept**: the rest of those answered at rank 1;
* **answerable refused**: answerable questions left with no hit at all.

AUROC: the chance that a question answered at rank 1 has a higher top-hit relevance than an
unanswerable one (ties count half), the threshold-free view of the same trade. The definitions
are those of ``benchmarks/calibrate_relevance.py``, which chose the default threshold.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from narezka import defaults
from narezka.evaluate.runner import EvalRun, QuestionResult, StrategyResult

THRESHOLDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
"""The thresholds every table shows, with the run's ``min_relevance`` added."""


@dataclass(frozen=True, slots=True)
class RefusalRow:
    """The trade at one threshold (counts; shares are of the totals of :class:`Refusal`)."""

    threshold: float
    unanswerable_refused: int
    correct_dropped: int
    correct_kept: int
    answerable_refused: int


@dataclass(frozen=True, slots=True)
class Refusal:
    """One strategy's trade between answering and refusing, threshold by threshold."""

    strategy: str
    min_relevance: float
    """The threshold in force (the run's ``min_relevance``, else the measured default)."""
    answerable: int
    correct: int
    """Answerable questions answered at rank 1."""
    unanswerable: int
    auroc: float | None
    """None when either side is empty."""
    rows: tuple[RefusalRow, ...]

    def at(self, threshold: float) -> RefusalRow:
        """The row of one of the table's thresholds."""
        return next(r for r in self.rows if r.threshold == threshold)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (shares beside the counts)."""
        rows = []
        for row in self.rows:
            data: dict[str, Any] = asdict(row)
            data["unanswerable_refused_share"] = _share(row.unanswerable_refused, self.unanswerable)
            data["correct_dropped_share"] = _share(row.correct_dropped, self.correct)
            rows.append(data)
        return {
            "min_relevance": self.min_relevance,
            "answerable": self.answerable,
            "correct_at_1": self.correct,
            "unanswerable": self.unanswerable,
            "auroc": self.auroc,
            "thresholds": rows,
        }


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def top_relevance(result: QuestionResult) -> float:
    """The rank-1 hit's relevance (0 without hits)."""
    first = result.retrieved[0].relevance if result.retrieved else None
    return first if first is not None else 0.0


def best_relevance(result: QuestionResult) -> float:
    """The highest relevance among the hits (0 without hits): what a search compares with
    ``min_relevance`` to say "nothing relevant"."""
    return max((r.relevance for r in result.retrieved if r.relevance is not None), default=0.0)


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """P(a positive scores above a negative), ties counting half; None when a side is empty."""
    if not positives or not negatives:
        return None
    # Sorted once, then each positive counts the negatives below and equal to it: O(n log n).
    ordered = sorted(negatives)
    wins = 0.0
    for p in positives:
        below = bisect_left(ordered, p)
        wins += below + 0.5 * (bisect_right(ordered, p) - below)
    return wins / (len(positives) * len(negatives))


def default_threshold(run: EvalRun) -> float:
    """The run's ``min_relevance``, else the measured default."""
    return defaults.MIN_RELEVANCE if run.min_relevance is None else run.min_relevance


def refusal(
    result: StrategyResult, min_relevance: float, thresholds: Sequence[float] = THRESHOLDS
) -> Refusal | None:
    """The strategy's trade at each threshold (and ``min_relevance``); None when its hits
    carry no relevance (none was computed) or it asked no question."""
    asked = [*result.questions, *result.unanswerable]
    if not any(r.relevance is not None for q in asked for r in q.retrieved):
        return None
    correct = [r for r in result.questions if r.rank == 1]
    rows = []
    for t in sorted({*thresholds, min_relevance}):
        dropped = sum(top_relevance(r) < t for r in correct)
        rows.append(
            RefusalRow(
                threshold=t,
                unanswerable_refused=sum(best_relevance(r) < t for r in result.unanswerable),
                correct_dropped=dropped,
                correct_kept=len(correct) - dropped,
                answerable_refused=sum(best_relevance(r) < t for r in result.questions),
            )
        )
    return Refusal(
        strategy=result.label,
        min_relevance=min_relevance,
        answerable=len(result.questions),
        correct=len(correct),
        unanswerable=len(result.unanswerable),
        auroc=auroc(
            [top_relevance(r) for r in correct], [top_relevance(r) for r in result.unanswerable]
        ),
        rows=tuple(rows),
    )


def run_refusal(run: EvalRun, result: StrategyResult | None = None) -> Refusal | None:
    """:func:`refusal` of one strategy of the run (its best by default) at its threshold."""
    chosen = result or run.best()
    return refusal(chosen, default_threshold(run)) if chosen is not None else None


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "—"


def refusal_markdown(view: Refusal) -> list[str]:
    """The Markdown section: the table, the AUROC and how to read it."""
    auroc_text = f"{view.auroc:.3f}" if view.auroc is not None else "— (needs both kinds)"
    out = [
        f"## Nothing relevant: min_relevance against unanswerable questions ({view.strategy})",
        "",
        f"{view.unanswerable} unanswerable questions; {view.correct} of {view.answerable} "
        "answerable ones answered at rank 1. A question is refused when no hit reaches the "
        "threshold; a correct answer is dropped when its rank-1 hit falls below it. AUROC "
        f"(top-hit relevance, answered at rank 1 against unanswerable): {auroc_text}.",
        "",
        "| min_relevance | unanswerable refused | correct dropped | correct kept "
        "| answerable refused |",
        "|---:|---:|---:|---:|---:|",
    ]
    for row in view.rows:
        mark = " (in force)" if row.threshold == view.min_relevance else ""
        name = f"**{row.threshold:g}{mark}**" if mark else f"{row.threshold:g}"
        out.append(
            f"| {name} | {_pct(row.unanswerable_refused, view.unanswerable)} "
            f"| {_pct(row.correct_dropped, view.correct)} "
            f"| {_pct(row.correct_kept, view.correct)} "
            f"| {_pct(row.answerable_refused, view.answerable)} |"
        )
    return [*out, ""]


__all__ = [
    "THRESHOLDS",
    "Refusal",
    "RefusalRow",
    "auroc",
    "best_relevance",
    "default_threshold",
    "refusal",
    "refusal_markdown",
    "run_refusal",
    "top_relevance",
]
