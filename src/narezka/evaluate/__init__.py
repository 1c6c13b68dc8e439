"""Evaluation: golden sets, retrieval metrics, per-strategy scoring and reports.

``golden`` loads seed-format JSONL and checks it against the corpus text; ``metrics`` holds
hit@k, MRR, the ceiling, size statistics and the paired sign test; ``runner`` parses strategy
specs and scores one strategy's retrievals; ``report`` renders tables and RESULTS.md. The
wiring that indexes and searches lives in :mod:`narezka.pipeline.evaluating`.
"""

from narezka.evaluate.golden import (
    GoldenProblem,
    GoldenQuestion,
    GoldenSet,
    check_against_corpus,
    load_golden,
    parse_golden,
)
from narezka.evaluate.metrics import SignTest, SizeStats, ceiling, sign_test, size_stats
from narezka.evaluate.report import markdown_report, terminal_table
from narezka.evaluate.runner import (
    ChunkView,
    Comparison,
    EvalRun,
    QuestionResult,
    Retrieved,
    StrategyResult,
    StrategySpec,
    as_dict,
    compare_all,
    miss_cause,
    parse_ks,
    parse_strategies,
    parse_strategy,
    score_strategy,
)

__all__ = [
    "ChunkView",
    "Comparison",
    "EvalRun",
    "GoldenProblem",
    "GoldenQuestion",
    "GoldenSet",
    "QuestionResult",
    "Retrieved",
    "SignTest",
    "SizeStats",
    "StrategyResult",
    "StrategySpec",
    "as_dict",
    "ceiling",
    "check_against_corpus",
    "compare_all",
    "load_golden",
    "markdown_report",
    "miss_cause",
    "parse_golden",
    "parse_ks",
    "parse_strategies",
    "parse_strategy",
    "score_strategy",
    "sign_test",
    "size_stats",
    "terminal_table",
]
