"""The whole run as plain JSON-ready data (``narezka eval --json``)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from narezka.evaluate.normalize import size_view
from narezka.evaluate.refusal import best_relevance, default_threshold, refusal, top_relevance
from narezka.evaluate.runner import EvalRun, QuestionResult, StrategyResult, miss_cause
from narezka.evaluate.spans import SpanSummary

CHAR_UNIT = "chars"
TOKEN_UNIT = "cl100k tokens"


def as_dict(run: EvalRun) -> dict[str, Any]:
    """Settings, problems, per-strategy and per-question results, comparisons, size view."""
    view = size_view(run)
    return {
        "corpus": run.corpus,
        "golden": run.golden,
        "format": run.format,
        "embedder": run.embedder,
        "max_tokens": run.max_tokens,
        "mode": run.mode,
        "k": list(run.ks),
        "sizes": list(run.sizes),
        "expand": run.expand,
        "include_archived": run.include_archived,
        "cache": {"hits": run.cache_hits, "misses": run.cache_misses},
        "problems": [
            {"line": p.line, "problem": p.problem, "skipped": p.skipped} for p in run.problems
        ],
        "best": (best.label if (best := run.best()) else None),
        "min_relevance": default_threshold(run),
        "strategies": [_strategy_dict(s, run.headline_k, run) for s in run.strategies],
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
        "size_normalized": {
            "k": view.k,
            "budget_tokens": view.budget,
            "strategies": [asdict(row) for row in view.rows],
            "interpolated": [
                {"metric": t.metric, "mean_tokens": list(t.sizes), "values": t.values}
                for t in view.interpolated
            ],
            "not_swept": view.unswept,
        },
    }


def _summary(summary: SpanSummary) -> dict[str, float]:
    return asdict(summary)


def _strategy_dict(s: StrategyResult, k: int, run: EvalRun) -> dict[str, Any]:
    out: dict[str, Any] = {
        "strategy": s.label,
        "name": s.spec.name,
        "params": dict(s.spec.params),
        "group": s.spec.group,
        "chunks": s.chunks,
        "chars": {"mean": s.chars.mean, "p95": s.chars.p95},
        "tokens": {"mean": s.tokens.mean, "p95": s.tokens.p95},
        "over_window": s.over_window,
        "hits": {f"hit@{key}": value for key, value in s.hits.items()},
        "mrr": s.mrr,
        "ceiling": s.ceiling,
        "retrieved_tokens": {f"@{key}": value for key, value in s.retrieved_tokens.items()},
        "cache": {"hits": s.cached, "embedded": s.embedded},
        "seconds": s.seconds,
        "warnings": s.warnings,
    }
    if s.span:
        out["span"] = {
            CHAR_UNIT: {f"@{key}": _summary(v) for key, v in s.span.items()},
            TOKEN_UNIT: {f"@{key}": _summary(v) for key, v in s.span_tokens.items()},
        }
    trade = refusal(s, default_threshold(run))
    out["refusal"] = trade.to_json() if trade is not None else None
    out["questions"] = [_question_dict(r, k) for r in s.questions]
    out["unanswerable"] = [
        {
            "line": r.question.line,
            "q": r.question.q,
            "source": r.question.source,
            "top_relevance": top_relevance(r),
            "best_relevance": best_relevance(r),
            "retrieved": [x.url for x in r.retrieved],
        }
        for r in s.unanswerable
    ]
    return out


def _question_dict(r: QuestionResult, k: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "line": r.question.line,
        "q": r.question.q,
        "rank": r.rank,
        "in_one_chunk": r.in_one_chunk,
        "cause": None if r.hit(k) else miss_cause(r),
        "retrieved": [x.url for x in r.retrieved],
        "relevance": [x.relevance for x in r.retrieved],
    }
    if r.question.references:
        out["references"] = [
            {"doc": ref.doc, "start": ref.start, "end": ref.end} for ref in r.question.references
        ]
        out["retrieved_spans"] = [[x.file_path, x.start, x.end] for x in r.retrieved]
        out["span"] = {f"@{key}": asdict(v) for key, v in r.spans.items()}
    else:
        out["must_contain"] = list(r.question.must_contain)
        out["absent"] = list(r.absent)
    return out


__all__ = ["as_dict"]
