"""Evaluation: golden sets, retrieval metrics, per-strategy scoring and reports.

``golden`` loads golden sets (seed strings or reference spans, JSONL or Chroma's CSV) and
checks them against the corpus text; ``metrics`` holds hit@k, MRR, the ceiling, size statistics
and the paired sign test; ``spans`` Chroma's span metrics; ``specs`` parses strategy specs and
size sweeps; ``runner`` scores one strategy's retrievals; ``normalize`` the size-normalized
view; ``report``, ``export`` and ``plot`` render tables, RESULTS.md, JSON and a PNG. The wiring
that indexes and searches lives in :mod:`narezka.api.evaluating`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_face
from narezka.evaluate.export import as_dict
from narezka.evaluate.golden import (
    GoldenProblem,
    GoldenQuestion,
    GoldenSet,
    Reference,
    check_against_corpus,
    load_golden,
    parse_chroma_csv,
    parse_golden,
)
from narezka.evaluate.metrics import SignTest, SizeStats, ceiling, sign_test, size_stats
from narezka.evaluate.normalize import SizeView, size_view
from narezka.evaluate.plot import plot_run, require_matplotlib
from narezka.evaluate.report import markdown_report, size_tables, terminal_table
from narezka.evaluate.runner import (
    ChunkView,
    Comparison,
    EvalRun,
    QuestionResult,
    Retrieved,
    StrategyResult,
    best_comparisons,
    compare_all,
    miss_cause,
    score_strategy,
)
from narezka.evaluate.specs import (
    StrategySpec,
    parse_ks,
    parse_sizes,
    parse_strategies,
    parse_strategy,
    sweep,
)

if TYPE_CHECKING:
    from narezka.evaluate.html import html_report
    from narezka.evaluate.report import refusal_table

__getattr__, __dir__ = lazy_face(globals(), html="html_report", report="refusal_table")

__all__ = [
    "ChunkView",
    "Comparison",
    "EvalRun",
    "GoldenProblem",
    "GoldenQuestion",
    "GoldenSet",
    "QuestionResult",
    "Reference",
    "Retrieved",
    "SignTest",
    "SizeStats",
    "SizeView",
    "StrategyResult",
    "StrategySpec",
    "as_dict",
    "best_comparisons",
    "ceiling",
    "check_against_corpus",
    "compare_all",
    "html_report",
    "load_golden",
    "markdown_report",
    "miss_cause",
    "parse_chroma_csv",
    "parse_golden",
    "parse_ks",
    "parse_sizes",
    "parse_strategies",
    "parse_strategy",
    "plot_run",
    "refusal_table",
    "require_matplotlib",
    "score_strategy",
    "sign_test",
    "size_stats",
    "size_tables",
    "size_view",
    "sweep",
    "terminal_table",
]
