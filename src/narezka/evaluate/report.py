"""Reports of an evaluation run: a rich table for the terminal and Markdown for RESULTS.md
(the seed's table, sizes, sign tests, and a miss analysis of the best strategy)."""

from __future__ import annotations

from rich.table import Table

from narezka.evaluate.runner import EvalRun, StrategyResult, miss_cause


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _of(value: float, n: int) -> str:
    return f"{round(value * n)}/{n}"


def terminal_table(run: EvalRun) -> Table:
    """One row per strategy with every metric; the best strategy's name is bold."""
    best = run.best()
    n = len(best.questions) if best else 0
    table = Table(
        title=f"{run.embedder} · {run.mode} · {n} questions",
        title_justify="left",
    )
    for name in ("strategy", "chunks", "chars mean/p95", "tokens mean/p95", "over window"):
        table.add_column(name, justify="left" if name == "strategy" else "right")
    for k in run.ks:
        table.add_column(f"hit@{k}", justify="right")
    for name in ("MRR", "ceiling"):
        table.add_column(name, justify="right")
    for s in run.strategies:
        label = f"[bold]{s.label}[/bold]" if s is best else s.label
        table.add_row(
            label,
            str(s.chunks),
            f"{s.chars.mean:.0f} / {s.chars.p95:.0f}",
            f"{s.tokens.mean:.0f} / {s.tokens.p95:.0f}",
            str(s.over_window) if run.max_tokens is not None else "—",
            *(_of(s.hits[k], len(s.questions)) for k in run.ks),
            f"{s.mrr:.3f}",
            _pct(s.ceiling),
        )
    return table


def markdown_report(run: EvalRun, *, command: str = "") -> str:
    """RESULTS.md: settings, the seed's table, sizes, sign tests, and the best one's misses."""
    k = run.headline_k
    best = run.best()
    n = len(best.questions) if best else 0
    out = ["# Retrieval results", ""]
    if command:
        out += ["```", command, "```", ""]
    window = run.max_tokens if run.max_tokens is not None else "none"
    out += [
        f"Embedder `{run.embedder}` (window: {window}), mode `{run.mode}`, "
        f"{n} questions from `{run.golden}`, archived pages "
        f"{'included' if run.include_archived else 'excluded'}. A hit is one retrieved chunk "
        "containing every expected string (case-insensitive); the ceiling is the share of "
        "questions whose strings lie inside some single chunk at all.",
        "",
        f"| strategy | chunks | mean size (chars) | hit@{k} of {n} | hit@1 | MRR | ceiling |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in run.strategies:
        name = f"**{s.label}**" if s is best else s.label
        hit1 = _of(s.hits[1], n) if 1 in s.hits else "—"
        out.append(
            f"| {name} | {s.chunks} | {s.chars.mean:.0f} | {_of(s.hits[k], n)} | {hit1} "
            f"| {s.mrr:.3f} | {_pct(s.ceiling)} |"
        )
    out += ["", "## Sizes", "", _sizes_table(run), ""]
    if run.comparisons:
        out += [
            f"## Paired sign tests (hit@{k})",
            "",
            "| A | B | only A hit | only B hit | p (two-sided) |",
            "|---|---|---:|---:|---:|",
        ]
        out += [
            f"| {c.a} | {c.b} | {c.test.a_only} | {c.test.b_only} | {c.test.p_value:.3f} |"
            for c in run.comparisons
            if c.k == k
        ]
        out.append("")
    if run.problems:
        out += ["## Golden set problems", ""]
        out += [f"- {p}" for p in run.problems]
        out.append("")
    if best is not None:
        out += _misses(best, k)
    return "\n".join(out).rstrip() + "\n"


def _sizes_table(run: EvalRun) -> str:
    rows = [
        "| strategy | chars mean | chars p95 | tokens mean | tokens p95 | over window |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for s in run.strategies:
        over = str(s.over_window) if run.max_tokens is not None else "—"
        rows.append(
            f"| {s.label} | {s.chars.mean:.0f} | {s.chars.p95:.0f} | {s.tokens.mean:.0f} "
            f"| {s.tokens.p95:.0f} | {over} |"
        )
    return "\n".join(rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _misses(best: StrategyResult, k: int) -> list[str]:
    missed = [r for r in best.questions if not r.hit(k)]
    out = [f"## Misses of {best.label} at k={k} ({len(missed)})", ""]
    if not missed:
        return [*out, "None.", ""]
    out += [
        "| line | question | expected | top retrieved | probable cause |",
        "|---:|---|---|---|---|",
    ]
    for r in missed:
        expected = "; ".join(f"«{s}»" for s in r.question.must_contain)
        top = f"`{r.retrieved[0].url}`" if r.retrieved else "—"
        out.append(
            f"| {r.question.line} | {_cell(r.question.q)} | {_cell(expected)} | {top} "
            f"| {miss_cause(r)} |"
        )
    return [*out, ""]


__all__ = ["markdown_report", "terminal_table"]
