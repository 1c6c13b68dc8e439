"""``narezka eval``: compare chunking strategies on a golden set (thin: options in, one
pipeline call, a table, JSON or RESULTS.md out)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click
from rich.console import Console

from narezka.cli_index import fail
from narezka.embed import DEFAULT_EMBEDDER
from narezka.errors import NarezkaError
from narezka.evaluate import as_dict, markdown_report, terminal_table
from narezka.pipeline.evaluating import evaluate
from narezka.pipeline.searching import MODES


@click.command("eval")
@click.argument("corpus", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--golden",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Golden set: JSONL lines {q, must_contain, category?, source?}.",
)
@click.option(
    "--strategies",
    default="headings",
    show_default=True,
    help='Space-separated specs, e.g. "fixed:size=1500 overlap:size=1500,overlap=250 headings".',
)
@click.option("-k", "ks", default="1,3,5", show_default=True, help="Comma-separated ks.")
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("--embedder", default=DEFAULT_EMBEDDER, show_default=True)
@click.option(
    "--include-archived", is_flag=True, help="Let archived pages answer (search excludes them)."
)
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Embedding cache file shared by all strategies  [default: the user cache].",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the results and miss analysis as Markdown (e.g. RESULTS.md).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the full results as JSON.")
def eval_command(
    corpus: Path,
    golden: Path,
    strategies: str,
    ks: str,
    mode: str,
    embedder: str,
    include_archived: bool,
    cache_path: Path | None,
    report_path: Path | None,
    as_json: bool,
) -> None:
    """Index CORPUS once per strategy, ask the golden questions, report hit@k, MRR, ceiling.

    Example: narezka eval examples/kb --golden examples/kb/golden.jsonl
    --strategies "fixed:size=800 overlap:size=800,overlap=150 headings" --report RESULTS.md
    """
    err = Console(stderr=True)
    try:
        run = evaluate(
            corpus,
            golden,
            strategies=strategies,
            ks=ks,
            mode=mode,
            embedder=embedder,
            cache_path=cache_path,
            include_archived=include_archived,
            exclude=_report_exclude(corpus, report_path),
            on_progress=None if as_json else lambda m: err.print(f"[dim]{m}[/dim]"),
        )
    except NarezkaError as exc:
        fail(exc)
    for problem in run.problems:
        err.print(f"[yellow]golden {problem}[/yellow]", markup=True, highlight=False)
    for strategy in run.strategies:
        for warning in strategy.warnings:
            err.print(f"[yellow]{strategy.label}: {warning}[/yellow]", highlight=False)
    if report_path is not None:
        args = [str(corpus), "--golden", str(golden), "--strategies", strategies, "-k", ks]
        args += ["--mode", mode, "--embedder", embedder, "--report", str(report_path)]
        if include_archived:
            args.append("--include-archived")
        command = "narezka eval " + " ".join(shlex.quote(a) for a in args)
        report_path.write_text(markdown_report(run, command=command), encoding="utf-8")
    if as_json:
        click.echo(json.dumps(as_dict(run), ensure_ascii=False, indent=1))
    else:
        # Piped output has no width: give the ten columns room instead of 80 columns.
        Console(width=None if sys.stdout.isatty() else 160).print(terminal_table(run))
        for c in run.comparisons:
            click.echo(
                f"sign test hit@{c.k}: {c.a} vs {c.b}: only A {c.test.a_only}, "
                f"only B {c.test.b_only}, p = {c.test.p_value:.3f}"
            )


def _report_exclude(corpus: Path, report: Path | None) -> tuple[str, ...]:
    """A report written inside the corpus must not be indexed by the next run: it quotes
    every expected string and would answer the golden set itself."""
    if report is None or not corpus.is_dir():
        return ()
    try:
        return (report.resolve().relative_to(corpus.resolve()).as_posix(),)
    except ValueError:
        return ()


__all__ = ["eval_command"]
