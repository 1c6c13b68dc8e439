"""``narezka eval``: compare chunking strategies on a golden set (thin: options in, one
pipeline call, tables, JSON, RESULTS.md or a plot out)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from narezka.api import evaluate, paths_inside
from narezka.cli.common import fail, file_option, jobs_option, settings_for, split_options
from narezka.cli.search import parse_query, query_options
from narezka.cli.terminal import echo, plain
from narezka.embed import DEFAULT_EMBEDDER
from narezka.errors import NarezkaError
from narezka.evaluate import (
    EvalRun,
    as_dict,
    best_comparisons,
    html_report,
    markdown_report,
    plot_run,
    refusal_table,
    require_matplotlib,
    size_tables,
    terminal_table,
)
from narezka.search import shown_at

EVAL_OPTIONS = tuple(o.name for o in shown_at("eval"))
"""The search options ``eval`` takes (the table's ``eval`` front): how hits rank."""


@click.command("eval")
@click.argument("corpus", type=click.Path(path_type=Path, exists=True))
@file_option(
    "--golden",
    required=True,
    help="Golden set: JSONL lines {q, must_contain, category?, source?} or "
    "{q, references: [{doc, start, end, content?}]} (character offsets), or Chroma's "
    "questions CSV (question, references, corpus_id; corpus x is the file x.md).",
)
@click.option(
    "--strategies",
    default="headings",
    show_default=True,
    help="Space-separated specs NAME[:key=value,...], e.g. "
    '"fixed:unit=chars,size=800 overlap:size=300,overlap=50 headings". size is in unit: '
    "the embedder's own tokens by default, characters with unit=chars; without size a "
    "strategy gets the embedder's budget (or each --sizes value).",
)
@click.option(
    "--sizes",
    default=None,
    help="Sweep: run every spec at each size, e.g. 128,256,512 (in the spec's unit, by "
    "default the embedder's tokens); a spec that sets size runs once.",
)
@click.option("-k", "ks", default="1,3,5", show_default=True, help="Comma-separated ks.")
@click.option(
    "--embedder",
    default=None,
    help=f"Embedder spec  [default: narezka.toml's, else {DEFAULT_EMBEDDER}].",
)
@file_option(
    "--cache",
    "cache_path",
    help="Embedding cache file shared by all strategies  [default: the user cache].",
)
@file_option(
    "--report",
    "report_path",
    help="Write the results and miss analysis as Markdown (e.g. RESULTS.md).",
)
@file_option(
    "--plot",
    "plot_path",
    help="Write hit@k (and IoU for span sets) against mean chunk tokens as a PNG; needs "
    "pip install 'narezka[plot]'.",
)
@file_option(
    "--html",
    "html_path",
    help="Write the results, plots, sign tests and a per-question drill-down as one "
    "self-contained HTML page.",
)
@click.option(
    "--min-relevance",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="The threshold marked in the report's min_relevance table (unanswerable questions "
    'refused against correct answers dropped; golden lines {q, "answerable": false})  '
    "[default: narezka.toml's min_relevance, else the measured default].",
)
@query_options("eval")
@split_options(strategy=False)
@jobs_option
@click.option("--json", "as_json", is_flag=True, help="Print the full results as JSON.")
def eval_command(
    corpus: Path,
    golden: Path,
    strategies: str,
    sizes: str | None,
    ks: str,
    embedder: str | None,
    cache_path: Path | None,
    report_path: Path | None,
    plot_path: Path | None,
    html_path: Path | None,
    as_json: bool,
    jobs: int | None,
    min_relevance: float | None,
    **options: Any,
) -> None:
    """Index CORPUS once per strategy, ask the golden questions, report hit@k, MRR, ceiling
    (and span recall, precision, IoU for span golden sets) plus a size-normalized view.

    Example: narezka eval examples/kb --golden examples/kb/golden.jsonl
    --strategies "fixed:unit=chars,size=800 recursive headings" --sizes 128,256,384
    --report RESULTS.md --plot results.png
    """
    err = Console(stderr=True)
    # The ranking options as one Query, checked as search checks them (eval asks its own
    # questions: the text is a stand-in).
    asked = parse_query("eval", {name: options.pop(name) for name in EVAL_OPTIONS})
    mode, expand = asked.mode, asked.expand
    include_archived = asked.filters.include_archived
    # The embedder goes through the settings like every other choice: narezka.toml's
    # embedder counts when no flag is given (it was bypassed by the flag's own default).
    settings = settings_for(corpus, {**options, "embedder": embedder})
    embedder = settings.embedder
    try:
        if plot_path is not None:
            require_matplotlib()  # before the long run, not after it
        run = evaluate(
            corpus,
            golden,
            strategies=strategies,
            sizes=sizes,
            ks=ks,
            mode=mode,
            embedder=embedder,
            cache_path=cache_path,
            include_archived=include_archived,
            expand=expand,
            include=settings.include,
            # A report inside the corpus quotes every expected string: never index it.
            exclude=(
                *settings.exclude,
                *paths_inside(corpus, report_path, plot_path, html_path),
            ),
            params=settings.split_values(),
            jobs=jobs,
            context_llm=settings.context_llm,
            fusion=asked.fusion,
            fold=asked.fold,
            on_progress=None if as_json else lambda m: err.print(plain(m, "dim")),
        )
        run.min_relevance = settings.relevance_floor if min_relevance is None else min_relevance
        if plot_path is not None:
            plot_run(run, plot_path)
    except NarezkaError as exc:
        fail(exc)
    for problem in run.problems:
        err.print(plain(f"golden {problem}", "yellow"), highlight=False)
    for strategy in run.strategies:
        for warning in strategy.warnings:
            err.print(plain(f"{strategy.label}: {warning}", "yellow"), highlight=False)
    err.print(
        f"embedding cache: {run.cache_hits} texts from the cache, {run.cache_misses} embedded",
        highlight=False,
    )
    if report_path is not None:
        command = _command(corpus, golden, strategies, sizes, ks, mode, embedder, expand)
        command += " --report " + shlex.quote(str(report_path))
        if include_archived:
            command += " --include-archived"
        report_path.write_text(markdown_report(run, command=command), encoding="utf-8")
    if html_path is not None:
        command = _command(corpus, golden, strategies, sizes, ks, mode, embedder, expand)
        page = html_report(
            run, command=command + " --html " + shlex.quote(str(html_path)), plot=plot_path
        )
        html_path.write_text(page, encoding="utf-8")
    if as_json:
        click.echo(json.dumps(as_dict(run), ensure_ascii=False, indent=1))
    else:
        _print_tables(run)


def _command(
    corpus: Path,
    golden: Path,
    strategies: str,
    sizes: str | None,
    ks: str,
    mode: str,
    embedder: str,
    expand: str | None,
) -> str:
    args = [str(corpus), "--golden", str(golden), "--strategies", strategies]
    args += ["--sizes", sizes] if sizes else []
    args += ["-k", ks, "--mode", mode, "--embedder", embedder]
    args += ["--expand", expand] if expand else []
    return "narezka eval " + " ".join(shlex.quote(a) for a in args)


def _print_tables(run: EvalRun) -> None:
    # Piped output has no width: give the many columns room instead of 80 columns.
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(terminal_table(run))
    for table in size_tables(run):
        console.print(table)
    if (refused := refusal_table(run)) is not None:
        console.print(refused)
    comparisons = best_comparisons(run) if len(run.comparisons) > 10 else run.comparisons
    for c in comparisons:
        echo(
            f"sign test hit@{c.k}: {c.a} vs {c.b}: only A {c.test.a_only}, "
            f"only B {c.test.b_only}, p = {c.test.p_value:.3f}"
        )
    if len(comparisons) < len(run.comparisons):
        click.echo(
            f"(best against the others; all {len(run.comparisons)} pairs in --report/--json)"
        )


__all__ = ["eval_command"]
