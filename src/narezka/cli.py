"""Command-line interface: parse options, call one pipeline function, format the result.

Exit codes: 0 success; 1 some input file was skipped and ``--strict`` was given; 2 usage
or configuration error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from narezka import pipeline
from narezka.cli_eval import eval_command
from narezka.cli_index import COMMANDS, progress_bar
from narezka.embed import DEFAULT_EMBEDDER, cached_signal_embedder, get_embedder
from narezka.enrich.redaction import redacted_text
from narezka.errors import ConfigError, NarezkaError
from narezka.split import NEEDS_EMBEDDER, SENTENCE, strategy_names
from narezka.stats import chunk_stats
from narezka.tokens import get_counter

PREVIEW_CHARS = 200


def _unescape(separator: str) -> str:
    """Shells make typing a newline awkward: accept backslash escapes like ``\\n``."""
    return separator.encode("latin-1", "backslashreplace").decode("unicode_escape")


def _levels(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    lo, _, hi = value.partition("-")
    try:
        return int(lo), int(hi or lo)
    except ValueError:
        raise click.BadParameter(f"expected FROM-TO like 2-3, got {value!r}") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="narezka")
def cli() -> None:
    """narezka: Markdown-aware chunking for retrieval (RAG)."""


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--strategy",
    "-s",
    type=click.Choice(strategy_names()),
    default="headings",
    show_default=True,
    help="How to split.",
)
@click.option(
    "--size",
    type=int,
    default=None,
    help="Maximum size of each chunk's embed_text, in --unit  [default: 800 chars, or the "
    "embedder's budget in tokens].",
)
@click.option(
    "--overlap",
    type=int,
    default=0,
    show_default=True,
    help="Units each chunk repeats from the previous one (overlap, recursive, sentences).",
)
@click.option("--unit", type=click.Choice(["chars", "tokens"]), default="chars", show_default=True)
@click.option(
    "--tokenizer",
    default=None,
    help="With --unit tokens: a tiktoken encoding (cl100k_base) or a tokenizer.json path; "
    "default: the embedder's own tokenizer.",
)
@click.option(
    "--embedder",
    default=None,
    help="Size --unit tokens in this embedder's tokens (use, e5, minilm, ollama:MODEL, …); "
    "default: use. With --size omitted, its budget is the size.",
)
@click.option("--levels", default=None, help="Heading levels that open sections, e.g. 2-3.")
@click.option(
    "--min-chars",
    type=int,
    default=None,
    help="Merge chunks shorter than this into a neighbour when they fit (headings).",
)
@click.option(
    "--breadcrumbs/--no-breadcrumbs",
    default=None,
    help="Prefix the section path to embed_text (default: the strategy's own: on for "
    "headings, parent-child, semantic, code and legal).",
)
@click.option(
    "--threshold",
    type=float,
    default=None,
    help="semantic: cut where neighbouring sentences' cosine similarity drops below this.",
)
@click.option(
    "--percentile",
    type=float,
    default=None,
    help="semantic: cut at the lowest PERCENTILE percent of neighbour similarities.",
)
@click.option(
    "--parent-size",
    type=int,
    default=None,
    help="parent-child: the parents' size limit, in --unit  [default: 4 × --size].",
)
@click.option(
    "--include",
    multiple=True,
    help="Glob of files to read (repeatable)  [default: the strategy's: Markdown and text; "
    "code reads source files, chat JSON/JSONL/text, auto all of them].",
)
@click.option("--exclude", multiple=True, help="Glob of files to skip (repeatable).")
@click.option(
    "--separator",
    "separators",
    multiple=True,
    help="recursive: a separator, coarsest first (repeatable; '\\n' escapes work; "
    f"'{SENTENCE}' means sentence ends).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "jsonl", "json"]),
    default="text",
    show_default=True,
    help="text: previews for people; jsonl/json: the contract fields.",
)
@click.option(
    "--no-redact",
    is_flag=True,
    help="Keep secrets (keys, tokens, passwords) in embed_text instead of [REDACTED:kind].",
)
@click.option("--stats", is_flag=True, help="Print a summary (to stderr unless --format text).")
@click.option("--strict", is_flag=True, help="Exit 1 if any file was skipped.")
def chunk(
    paths: Sequence[str],
    strategy: str,
    size: int | None,
    overlap: int,
    unit: str,
    tokenizer: str | None,
    embedder: str | None,
    levels: str | None,
    min_chars: int | None,
    breadcrumbs: bool | None,
    threshold: float | None,
    percentile: float | None,
    parent_size: int | None,
    include: Sequence[str],
    exclude: Sequence[str],
    separators: Sequence[str],
    fmt: str,
    no_redact: bool,
    stats: bool,
    strict: bool,
) -> None:
    """Split Markdown files into retrieval-ready chunks.

    Example: narezka chunk examples/kb --strategy headings --size 800 --format jsonl
    """
    err = Console(stderr=True)
    counter = None
    embed = None
    try:
        needs_tokens = unit == "tokens" and tokenizer is None
        # One model serves both the token counts and semantic's signal: loading is the cost.
        model = get_embedder(embedder or DEFAULT_EMBEDDER) if needs_tokens else None
        if model is not None:
            counter, size = model.counter, model.budget if size is None else size
        if strategy in NEEDS_EMBEDDER:
            embed = cached_signal_embedder(model or embedder or DEFAULT_EMBEDDER)
    except NarezkaError as exc:
        raise click.UsageError(str(exc)) from None
    params: dict[str, Any] = {
        "size": 800 if size is None else size,
        "overlap": overlap,
        "unit": unit,
        "tokenizer": tokenizer or "cl100k_base",
        "levels": _levels(levels),
        "min_chars": min_chars,
        "breadcrumbs": breadcrumbs,
        "separators": tuple(_unescape(s) for s in separators) or None,
        "threshold": threshold,
        "percentile": percentile,
        "parent_size": parent_size,
        "redact": not no_redact,
    }
    globs: dict[str, Any] = {"include": tuple(include) or None, "exclude": tuple(exclude)}
    total = pipeline.count_files(paths, strategy=strategy, **globs)
    progress = progress_bar("chunking", err, enabled=total >= 50)
    try:
        with progress:
            task = progress.add_task("chunk", total=total)
            report = pipeline.chunk_documents(
                paths,
                strategy,
                on_file=lambda _: progress.advance(task),
                counter=counter,
                embed=embed,
                **globs,
                **params,
            )
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    for problem in report.skipped:
        click.echo(f"skipped: {problem}", err=True)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)

    out = sys.stdout
    summary = chunk_stats(report)
    if fmt == "jsonl":
        for c in report.chunks:
            out.write(json.dumps(c.to_json(), ensure_ascii=False) + "\n")
    elif fmt == "json":
        doc = {"chunks": [c.to_json() for c in report.chunks], "stats": summary}
        out.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    else:
        # People read sizes in tokens too; in chars mode count them with cl100k for display.
        display = None if unit == "tokens" else get_counter("tokens", "cl100k_base")
        for c in report.chunks:
            where = " > ".join(c.section) or "(no section)"
            tokens = c.tokens if display is None else display.count(c.embed_text)
            out.write(f"--- {c.source} | {where} | {c.chars} chars, {tokens} tokens ---\n")
            shown = redacted_text(c)  # a terminal or a pasted log is no place for a key
            out.write(shown[:PREVIEW_CHARS] + ("…" if len(shown) > PREVIEW_CHARS else "") + "\n\n")
    if stats:
        _print_stats(summary, Console(stderr=fmt != "text"), per_file=strategy == "auto")
    if strict and report.skipped:
        sys.exit(1)


PER_FILE_LINES = 200
"""With ``auto``, --stats lists each file's strategy; JSON output always holds them all."""


def _print_stats(summary: dict[str, Any], console: Console, *, per_file: bool = False) -> None:
    table = Table(title="narezka chunk", show_header=False, box=None)
    labels = {
        "files": "Files",
        "chunks": "Chunks",
        "avg_chars": "Avg chars/chunk",
        "total_chars": "Total chars",
        "p50_chars": "p50 chars",
        "p95_chars": "p95 chars",
        "max_chars": "Max chars",
        "max_tokens": "Max size (unit)",
        "empty_files": "Empty files",
        "skipped_files": "Skipped files",
        "removed_chars": "Removed characters",
        "secrets_redacted": "Secrets redacted",
    }
    for key, label in labels.items():
        table.add_row(label, str(summary[key]))
    counts = summary["strategy_counts"]
    if per_file or len(counts) > 1:
        table.add_row("Strategies", ", ".join(f"{n} {c}" for n, c in counts.items()))
    spent = summary["embedding"]
    if spent:
        table.add_row("Embedding calls", f"{spent.get('calls', 0)} ({spent.get('texts', 0)} texts)")
    console.print(table)
    if per_file:
        chosen = summary["strategies"]
        shown = list(chosen.items())[:PER_FILE_LINES]
        for source, name in shown:
            console.print(f"  {name:<10} {source}", highlight=False, markup=False)
        if len(chosen) > len(shown):
            console.print(f"  … {len(chosen) - len(shown)} more files (all in --format json)")


@cli.command()
def strategies() -> None:
    """List the splitting strategies."""
    for name in strategy_names():
        click.echo(name)


for _command in [*COMMANDS, eval_command]:
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``narezka`` console script."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="narezka")
