"""``narezka eval --html``: the evaluation as one self-contained page — the results table, a
plot drawn as inline SVG (and the ``--plot`` PNG, embedded, when one was made), the sign
tests, and a drill-down per question: what was expected, each strategy's top-k chunks with
the answer marked inside them, and the probable cause of each miss.

The page is assembled by :mod:`narezka.pages` (the inspector's shell, stylesheet and
helpers); the retrieved texts of each question sit in their own JSON block, parsed when the
question is opened.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

from narezka.evaluate.golden import GoldenQuestion
from narezka.evaluate.metrics import contains_all
from narezka.evaluate.refusal import run_refusal
from narezka.evaluate.runner import (
    Comparison,
    EvalRun,
    QuestionResult,
    Retrieved,
    best_comparisons,
    miss_cause,
)
from narezka.evaluate.spans import overlaps
from narezka.pages import render_page

Range = tuple[int, int]


def answer_ranges(question: GoldenQuestion, hit: Retrieved) -> list[Range]:
    """Where the answer lies inside a retrieved text, as sorted, merged offsets of
    ``hit.text``: every occurrence of each expected string (case-insensitive), or the part
    of each reference excerpt the hit covers."""
    found: list[Range] = []
    if question.references:
        for ref in question.references:
            if not overlaps(hit.span, ref.span):
                continue
            start = max(ref.start, hit.start) - hit.start
            end = min(ref.end, hit.end) - hit.start
            found.append((max(0, start), min(len(hit.text), end)))
    else:
        for s in question.must_contain:
            if s:
                found += [m.span() for m in re.finditer(re.escape(s), hit.text, re.IGNORECASE)]
    merged: list[Range] = []
    for start, end in sorted(r for r in found if r[0] < r[1]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _answers(question: GoldenQuestion, hit: Retrieved) -> bool:
    if question.references:
        return any(overlaps(hit.span, ref.span) for ref in question.references)
    return contains_all(hit.text, question.must_contain)


def _outcome(r: QuestionResult, k: int) -> dict[str, Any]:
    return {
        "rank": r.rank,
        "hit": r.hit(k),
        "cause": None if r.hit(k) else miss_cause(r),
        "inOne": r.in_one_chunk,
    }


def _retrieved(r: QuestionResult, depth: int) -> list[dict[str, Any]]:
    return [
        {
            "url": x.url,
            "file": x.file_path,
            "start": x.start,
            "end": x.end,
            "score": round(x.score, 4),
            "tokens": x.tokens,
            "archived": x.archived,
            "text": x.text,
            "marks": [list(m) for m in answer_ranges(r.question, x)],
            "answers": _answers(r.question, x),
        }
        for x in r.retrieved[:depth]
    ]


def _comparison(c: Comparison) -> dict[str, Any]:
    return {
        "a": c.a,
        "b": c.b,
        "k": c.k,
        "aOnly": c.test.a_only,
        "bOnly": c.test.b_only,
        "ties": c.test.ties,
        "p": c.test.p_value,
    }


def _strategy(run: EvalRun, label: str) -> dict[str, Any]:
    s = next(s for s in run.strategies if s.label == label)
    return {
        "label": s.label,
        "group": s.spec.group,
        "chunks": s.chunks,
        "chars": {"mean": s.chars.mean, "p95": s.chars.p95},
        "tokens": {"mean": s.tokens.mean, "p95": s.tokens.p95},
        "over": s.over_window,
        "hits": {str(k): v for k, v in s.hits.items()},
        "mrr": s.mrr,
        "ceiling": s.ceiling,
        "span": {
            str(k): {"recall": v.recall, "precision": v.precision, "iou": v.iou, "full": v.hit_full}
            for k, v in s.span.items()
        },
        "retrievedTokens": {str(k): v for k, v in s.retrieved_tokens.items()},
    }


def eval_page_data(
    run: EvalRun, *, command: str = "", plot_png: bytes | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The report page's index (settings, strategies, sign tests, per-question outcomes) and
    one record per question holding each strategy's top-k retrieved chunks."""
    k = run.headline_k
    depth = max(run.ks)
    best = run.best()
    questions = best.questions if best is not None else []
    trade = run_refusal(run)
    index: dict[str, Any] = {
        "title": "narezka eval · " + run.corpus,
        "command": command,
        "settings": {
            "corpus": run.corpus,
            "golden": run.golden,
            "embedder": run.embedder,
            "window": run.max_tokens,
            "mode": run.mode,
            "ks": list(run.ks),
            "k": k,
            "expand": run.expand,
            "archived": run.include_archived,
            "format": run.format,
            "sizes": list(run.sizes),
            "cacheHits": run.cache_hits,
            "cacheMisses": run.cache_misses,
        },
        "best": best.label if best is not None else None,
        "strategies": [_strategy(run, s.label) for s in run.strategies],
        "comparisons": [_comparison(c) for c in run.comparisons],
        "bestComparisons": [_comparison(c) for c in best_comparisons(run)],
        "problems": [str(p) for p in run.problems],
        "refusal": trade.to_json() | {"strategy": trade.strategy} if trade is not None else None,
        "plot": base64.b64encode(plot_png).decode("ascii") if plot_png else None,
        "questions": [
            {
                "line": q.question.line,
                "q": q.question.q,
                "category": q.question.category,
                "source": q.question.source,
                "expected": list(q.question.must_contain),
                "refs": [
                    {"doc": r.doc, "start": r.start, "end": r.end, "content": r.content}
                    for r in q.question.references
                ],
                "results": [_outcome(s.questions[n], k) for s in run.strategies],
            }
            for n, q in enumerate(questions)
        ],
    }
    parts = [
        {"retrieved": [_retrieved(s.questions[n], depth) for s in run.strategies]}
        for n in range(len(questions))
    ]
    return index, parts


def html_report(run: EvalRun, *, command: str = "", plot: str | Path | None = None) -> str:
    """The evaluation report page; ``plot`` is a PNG written by ``--plot`` to embed."""
    png = Path(plot).read_bytes() if plot is not None else None
    index, parts = eval_page_data(run, command=command, plot_png=png)
    return render_page("eval", index["title"], index, parts, scripts=["eval.js"])


__all__ = ["answer_ranges", "eval_page_data", "html_report"]
