"""Reports of an evaluation run: rich tables for the terminal and Markdown for RESULTS.md (the
seed's table, span metrics, sizes, the sweep, the size-normalized view, sign tests, and a miss
analysis of the best strategy)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from narezka.evaluate.golden import shorten
from narezka.evaluate.normalize import SizeView, groups, size_view
from narezka.evaluate.refusal import Refusal, refusal_markdown, run_refusal
from narezka.evaluate.runner import (
    Comparison,
    EvalRun,
    QuestionResult,
    Retrieved,
    StrategyResult,
    best_comparisons,
    miss_cause,
)

MAX_MISSES = 60
MAX_PAIRS = 10


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _of(value: float, n: int) -> str:
    return f"{round(value * n)}/{n}"


def _n(run: EvalRun) -> int:
    best = run.best()
    return len(best.questions) if best else 0


def _span_cells(s: StrategyResult, k: int) -> list[str]:
    span = s.span.get(k)
    if span is None:
        return ["—"] * 4
    return [_pct(span.hit_full), _pct(span.recall), _pct(span.precision), _pct(span.iou)]


def terminal_table(run: EvalRun) -> Table:
    """One row per strategy with every metric; the best strategy's name is bold.

    Span golden sets add full@k, recall, precision and IoU at the headline k (character
    ranges, as Chroma's code computes them).
    """
    best = run.best()
    k = run.headline_k
    table = Table(
        title=Text(
            f"{run.embedder} · {run.mode} · {_n(run)} questions"
            + (f" · expand={run.expand}" if run.expand else "")
        ),
        title_justify="left",
    )
    for name in ("strategy", "chunks", "chars mean/p95", "tokens mean/p95", "over window"):
        table.add_column(name, justify="left" if name == "strategy" else "right")
    for hk in run.ks:
        table.add_column(f"hit@{hk}", justify="right")
    for name in ("MRR", "ceiling"):
        table.add_column(name, justify="right")
    if run.spans:
        for name in (f"full@{k}", f"recall@{k}", f"prec@{k}", f"IoU@{k}"):
            table.add_column(name, justify="right")
    for s in run.strategies:
        # Labels are the user's own specs: shown as written, never read as Rich markup.
        table.add_row(
            Text(s.label, style="bold" if s is best else ""),
            str(s.chunks),
            f"{s.chars.mean:.0f} / {s.chars.p95:.0f}",
            f"{s.tokens.mean:.0f} / {s.tokens.p95:.0f}",
            str(s.over_window) if run.max_tokens is not None else "—",
            *(_of(s.hits[hk], len(s.questions)) for hk in run.ks),
            f"{s.mrr:.3f}",
            _pct(s.ceiling),
            *(_span_cells(s, k) if run.spans else []),
        )
    return table


def size_tables(run: EvalRun, view: SizeView | None = None) -> list[Table]:
    """The size-normalized view for the terminal: the budget table, then the interpolated
    tables of a sweep."""
    view = view or size_view(run)
    k = view.k
    budget = Table(
        title=f"Equal context budget: {view.budget} retrieved tokens",
        caption="a hit counts when its chunk and every chunk ranked above it fit the budget",
        title_justify="left",
        caption_justify="left",
    )
    for name in ("strategy", "mean tokens", f"tokens retrieved@{k}", f"hit@{k}"):
        budget.add_column(name, justify="left" if name == "strategy" else "right")
    budget.add_column(f"hit ≤{view.budget} tok", justify="right")
    for row in view.rows:
        budget.add_row(
            Text(row.label),
            f"{row.mean_tokens:.0f}",
            f"{row.retrieved_tokens:.0f}",
            _pct(row.hit),
            _pct(row.hit_within),
        )
    tables = [budget]
    for t in view.interpolated:
        table = Table(
            title=f"{t.metric} at equal mean chunk size",
            caption="interpolated between each strategy's sweep points; sizes in tokens",
            title_justify="left",
            caption_justify="left",
        )
        table.add_column("strategy")
        for size in t.sizes:
            table.add_column(f"{size} tok", justify="right")
        for name, values in t.values.items():
            table.add_row(Text(name), *(_pct(v) if v is not None else "—" for v in values))
        tables.append(table)
    return tables


def refusal_table(run: EvalRun, view: Refusal | None = None) -> Table | None:
    """The trade of ``min_relevance`` for the terminal (best strategy), or None when the hits
    carry no relevance (:mod:`narezka.evaluate.refusal`)."""
    view = view or run_refusal(run)
    if view is None:
        return None
    auroc = f"{view.auroc:.3f}" if view.auroc is not None else "—"
    table = Table(
        title=Text(
            f"min_relevance: {view.unanswerable} unanswerable, {view.correct} answered at "
            f"rank 1 ({view.strategy}); AUROC {auroc}"
        ),
        caption="refused: no hit reaches the threshold; dropped: the rank-1 answer falls below it",
        title_justify="left",
        caption_justify="left",
    )
    for name in ("min_relevance", "unanswerable refused", "correct dropped", "correct kept"):
        table.add_column(name, justify="right")
    for row in view.rows:
        mark = " ◀ in force" if row.threshold == view.min_relevance else ""
        table.add_row(
            f"{row.threshold:g}{mark}",
            _count(row.unanswerable_refused, view.unanswerable),
            _count(row.correct_dropped, view.correct),
            _count(row.correct_kept, view.correct),
        )
    return table


def _count(part: int, whole: int) -> str:
    return f"{part}/{whole} ({_pct(part / whole)})" if whole else "—"


def markdown_report(run: EvalRun, *, command: str = "") -> str:
    """RESULTS.md: settings, the seed's table, span metrics, sizes, the sweep, the
    size-normalized view, sign tests, the ``min_relevance`` trade, golden-set problems and
    the best one's misses."""
    k = run.headline_k
    best = run.best()
    n = _n(run)
    view = size_view(run)
    out = ["# Retrieval results", ""]
    if command:
        out += ["```", command, "```", ""]
    out += [_intro(run, n), ""]
    header = f"| strategy | chunks | mean size (chars) | hit@{k} of {n} | hit@1 | MRR | ceiling |"
    rule = "|---|---:|---:|---:|---:|---:|---:|"
    if run.spans:
        header += f" full@{k} | recall@{k} | precision@{k} | IoU@{k} |"
        rule += "---:|---:|---:|---:|"
    out += [header, rule]
    for s in run.strategies:
        name = f"**{s.label}**" if s is best else s.label
        hit1 = _of(s.hits[1], n) if 1 in s.hits else "—"
        row = (
            f"| {name} | {s.chunks} | {s.chars.mean:.0f} | {_of(s.hits[k], n)} | {hit1} "
            f"| {s.mrr:.3f} | {_pct(s.ceiling)} |"
        )
        if run.spans:
            row += " " + " | ".join(_span_cells(s, k)) + " |"
        out.append(row)
    out.append("")
    if run.spans:
        out += _span_section(run)
    out += ["## Sizes", "", _sizes_table(run), ""]
    if run.sizes:
        out += _sweep_section(run)
    out += _size_section(view)
    out += _sign_tests(run)
    refusal = run_refusal(run)
    if refusal is not None and (refusal.unanswerable or refusal.correct):
        out += refusal_markdown(refusal)
    if run.problems:
        out += ["## Golden set problems", ""]
        out += [f"- {p}" for p in run.problems]
        out.append("")
    if run.cache_hits or run.cache_misses:
        out += [
            f"Embedding cache: {run.cache_hits} texts (chunks and questions) came from the "
            f"cache, {run.cache_misses} were embedded.",
            "",
        ]
    if best is not None:
        out += _misses(best, k)
    return "\n".join(out).rstrip() + "\n"


def _intro(run: EvalRun, n: int) -> str:
    window = run.max_tokens if run.max_tokens is not None else "none"
    head = (
        f"Embedder `{run.embedder}` (window: {window}), mode `{run.mode}`"
        + (f" ({run.ranking})" if run.ranking else "")
        + ", "
        f"{n} questions from `{run.golden}`, archived pages "
        f"{'included' if run.include_archived else 'excluded'}"
        + (f", hits expanded to their {run.expand}" if run.expand else "")
        + ". "
    )
    if not run.spans:
        return head + (
            "A hit is one retrieved chunk containing every expected string (case-insensitive); "
            "the ceiling is the share of questions whose strings lie inside some single chunk "
            "at all."
        )
    return head + (
        "The golden set gives reference excerpts (character ranges). A hit at rank r: the "
        "r-th retrieved chunk overlaps some excerpt by at least one character; full@k: every "
        "excerpt lies wholly inside some top-k chunk; the ceiling is the share of questions "
        "whose every excerpt lies inside some single chunk at all (it bounds full@k, not "
        "hit@k). Recall, precision and IoU are Chroma's, on character ranges of the top k: "
        "overlap / excerpt length, overlap / summed retrieved length, overlap / (summed "
        "retrieved length + excerpt not retrieved)."
    )


def _span_section(run: EvalRun) -> list[str]:
    k = run.headline_k
    out = [
        f"## Span metrics at k={k}",
        "",
        "Characters are the headline unit (Chroma's reference code and published numbers use "
        "character offsets); the cl100k columns map every range onto the cl100k tokens it "
        "touches and score those instead.",
        "",
        "| strategy | recall | precision | IoU | full | recall (cl100k) | precision (cl100k) "
        "| IoU (cl100k) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in run.strategies:
        c, t = s.span.get(k), s.span_tokens.get(k)
        chars = [_pct(c.recall), _pct(c.precision), _pct(c.iou), _pct(c.hit_full)] if c else []
        tokens = [_pct(t.recall), _pct(t.precision), _pct(t.iou)] if t else ["—"] * 3
        out.append(f"| {s.label} | " + " | ".join([*(chars or ["—"] * 4), *tokens]) + " |")
    return [*out, ""]


def _sizes_table(run: EvalRun) -> str:
    k = run.headline_k
    rows = [
        "| strategy | chars mean | chars p95 | tokens mean | tokens p95 | over window "
        f"| tokens retrieved@{k} |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in run.strategies:
        over = str(s.over_window) if run.max_tokens is not None else "—"
        rows.append(
            f"| {s.label} | {s.chars.mean:.0f} | {s.chars.p95:.0f} | {s.tokens.mean:.0f} "
            f"| {s.tokens.p95:.0f} | {over} | {s.retrieved_tokens.get(k, 0.0):.0f} |"
        )
    return "\n".join(rows)


def _sweep_section(run: EvalRun) -> list[str]:
    k = run.headline_k
    sizes = run.sizes
    out = [
        f"## Sweep over sizes {', '.join(map(str, sizes))}",
        "",
        f"hit@{k}" + (f" / IoU@{k}" if run.spans else "") + " (mean chunk tokens) per size "
        'limit; a spec that sets its own size runs once, under "own size".',
        "",
        "| strategy | " + " | ".join(f"size {size}" for size in sizes) + " | own size |",
        "|---|" + "---:|" * (len(sizes) + 1),
    ]

    def cell(s: StrategyResult | None) -> str:
        if s is None:
            return "—"
        iou = f" / {_pct(s.span[k].iou)}" if run.spans and k in s.span else ""
        return f"{_pct(s.hits[k])}{iou} ({s.tokens.mean:.0f})"

    for name, results in groups(run).items():
        swept = {s.spec.params.get("size"): s for s in results if s.spec.family}
        own = next((s for s in results if not s.spec.family), None)
        cells = [cell(swept.get(size)) for size in sizes] + [cell(own)]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return [*out, ""]


def _size_section(view: SizeView) -> list[str]:
    k, budget = view.k, view.budget
    out = [
        "## Size-normalized view",
        "",
        "Bigger chunks contain answers more often, so hit@k alone rewards size. "
        f"**Equal context budget**: every strategy gets the same {budget} retrieved tokens "
        "(the embedder's tokens; the least any strategy retrieves on average at the deepest "
        "k); a question counts when its first hitting chunk, with every chunk ranked above "
        "it, fits in the budget. Chunks come from the whole retrieved depth (the deepest k), "
        "so small chunks can score above their own hit@k.",
        "",
        f"| strategy | mean tokens | tokens retrieved@{k} | hit@{k} | hit ≤{budget} tokens |",
        "|---|---:|---:|---:|---:|",
    ]
    out += [
        f"| {r.label} | {r.mean_tokens:.0f} | {r.retrieved_tokens:.0f} | {_pct(r.hit)} "
        f"| {_pct(r.hit_within)} |"
        for r in view.rows
    ]
    out.append("")
    if view.interpolated:
        out += [
            "**Equal mean chunk size**: each swept strategy's metric, interpolated linearly "
            "between its sweep points at mean chunk sizes (tokens) inside the range every "
            "swept strategy covers."
            + (f" Not swept (one point each): {', '.join(view.unswept)}." if view.unswept else ""),
            "",
        ]
        for t in view.interpolated:
            out += [
                f"| {t.metric} at mean tokens | " + " | ".join(map(str, t.sizes)) + " |",
                "|---|" + "---:|" * len(t.sizes),
            ]
            out += [
                f"| {name} | " + " | ".join(_pct(v) if v is not None else "—" for v in vals) + " |"
                for name, vals in t.values.items()
            ]
            out.append("")
    return out


def _sign_tests(run: EvalRun) -> list[str]:
    k = run.headline_k
    pairs = [c for c in run.comparisons if c.k == k]
    if not pairs:
        return []
    head = ["| A | B | only A hit | only B hit | p (two-sided) |", "|---|---|---:|---:|---:|"]

    def table(items: Sequence[Comparison]) -> list[str]:
        return head + [
            f"| {c.a} | {c.b} | {c.test.a_only} | {c.test.b_only} | {c.test.p_value:.3f} |"
            for c in items
        ]

    out = [f"## Paired sign tests (hit@{k})", ""]
    if len(pairs) <= MAX_PAIRS:
        return [*out, *table(pairs), ""]
    out += ["The best strategy against each other one:", "", *table(best_comparisons(run)), ""]
    out += [
        f"<details><summary>All {len(pairs)} pairs</summary>",
        "",
        *table(pairs),
        "",
        "</details>",
        "",
    ]
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _where(r: Retrieved) -> str:
    return f"`{r.file_path}` [{r.start}–{r.end})"


def _misses(best: StrategyResult, k: int) -> list[str]:
    missed = [r for r in best.questions if not r.hit(k)]
    out = [f"## Misses of {best.label} at k={k} ({len(missed)})", ""]
    if not missed:
        return [*out, "None.", ""]
    spans = any(r.question.references for r in missed)
    if spans:
        out += [
            "| line | question | expected excerpt | retrieved instead (top) | probable cause |",
            "|---:|---|---|---|---|",
        ]
    else:
        out += [
            "| line | question | expected | top retrieved | probable cause |",
            "|---:|---|---|---|---|",
        ]
    for r in missed[:MAX_MISSES]:
        out.append(_miss_row(r) if spans else _string_miss_row(r))
    if len(missed) > MAX_MISSES:
        out += ["", f"… and {len(missed) - MAX_MISSES} more (all of them are in `--json`)."]
    return [*out, ""]


def _string_miss_row(r: QuestionResult) -> str:
    expected = "; ".join(f"«{s}»" for s in r.question.must_contain)
    top = f"`{r.retrieved[0].url}`" if r.retrieved else "—"
    return (
        f"| {r.question.line} | {_cell(r.question.q)} | {_cell(expected)} | {top} "
        f"| {miss_cause(r)} |"
    )


def _miss_row(r: QuestionResult) -> str:
    expected = "; ".join(
        f"`{ref.doc}` [{ref.start}–{ref.end}) «{shorten(ref.content or '')}»"
        for ref in r.question.references
    )
    top = r.retrieved[0] if r.retrieved else None
    instead = f"{_where(top)} «{shorten(top.text)}»" if top else "—"
    return (
        f"| {r.question.line} | {_cell(shorten(r.question.q, 100))} | {_cell(expected)} "
        f"| {_cell(instead)} | {miss_cause(r)} |"
    )


__all__ = ["markdown_report", "refusal_table", "size_tables", "terminal_table"]
