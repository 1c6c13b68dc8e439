"""``narezka chunk``: split files and print the chunks (JSONL/JSON for scripts, previews for
people), with ``--jobs`` worker processes.

rich (consoles, progress bars, tables) is imported only once the ``--jobs`` fork server has
been started: the server's own imports then run beside it, on the other core, instead of
after it. The rest is loaded by the chunking stage anyway.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from narezka import runs
from narezka.cli.common import EXIT_NOTHING, format_option, jobs_option
from narezka.cli.options import DISPLAY_TOKENIZER, Splitting, splitting_options, strict_option
from narezka.cli.terminal import echo, plain, shown
from narezka.discover import describe_unread
from narezka.errors import ConfigError
from narezka.parse import redacted_text
from narezka.runs import chunk_stats
from narezka.tokens import get_counter

if TYPE_CHECKING:
    from rich.console import Console

    from narezka.types import Chunk

PREVIEW_CHARS = 200


@click.command("chunk")
@click.argument("paths", nargs=-1, required=True)
@splitting_options
@format_option(
    "text", "jsonl", "json", help="text: previews for people; jsonl/json: the contract fields."
)
@click.option("--stats", is_flag=True, help="Print a summary (to stderr unless --format text).")
@strict_option
@jobs_option
def chunk(
    paths: Sequence[str], fmt: str, stats: bool, strict: bool, jobs: int | None, **options: Any
) -> None:
    """Split Markdown files into retrieval-ready chunks.

    Example: narezka chunk examples/kb --strategy headings --size 800 --format jsonl
    """
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        raise click.UsageError(f"{', '.join(missing)}: no such file or directory")
    run = Splitting.from_options(options, paths[0])
    strategy, unit = run.strategy, run.unit
    if jobs is not None:
        # The server imports the chunking stage (and loads the counter's tokenizer) while
        # this process loads rich and lists the files: it is what the first worker waits for.
        runs.start_workers_early(strategy, jobs, run.config.counter)
    # rich loads now, beside the server's own imports (the module docstring says why).
    from rich.console import Console

    from narezka.cli.progress import progress_bar

    err = Console(stderr=True)
    out = sys.stdout
    # JSONL and JSON go out file by file as the workers finish (nothing is held); a bar
    # redrawn on the terminal the lines go to would be torn by them.
    document = JsonDocument(out.buffer.write) if fmt == "json" else None
    stream = out.buffer.write if fmt == "jsonl" else document.add_lines if document else None
    bar = err.is_terminal and not (stream is not None and out.isatty())
    # The bar's total is a walk of its own: not worth it where no bar is drawn.
    total = runs.count_files(paths, run.include, run.exclude, strategy) if bar else 0
    progress = progress_bar("chunking", err, enabled=total >= 50)
    try:
        with progress:
            task = progress.add_task("chunk", total=total)
            report = runs.chunk_documents(
                paths,
                on_file=lambda _: progress.advance(task),
                jobs=jobs,
                write=stream,
                **run.kwargs(),
            )
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    _tell_problems(report)
    summary = chunk_stats(report)
    if document is not None:
        document.finish(summary)
    elif fmt == "text":  # jsonl went out while the files were chunked
        _print_previews(report.chunks, unit, out)
    if stats:
        _print_stats(summary, Console(stderr=fmt != "text"), per_file=strategy == "auto")
    if strict and (report.skipped or report.not_read):
        sys.exit(EXIT_NOTHING)


def _tell_problems(report: runs.ChunkReport) -> None:
    """The files skipped or not read and the run's warnings, on stderr."""
    for problem in report.skipped:
        echo(f"skipped: {problem}", err=True)
    for warning in report.warnings:
        echo(f"warning: {warning}", err=True)
    for name in report.empty_files:  # read, but nothing to chunk: said, not silently dropped
        echo(f"warning: {name}: no text to chunk (empty, blank or front matter only)", err=True)
    if report.not_read:
        echo(f"warning: {describe_unread(report.not_read)}", err=True)


def _print_previews(chunks: Sequence[Chunk], unit: str, out: TextIO) -> None:
    """Each chunk's head line (file, section, size) and the start of its text, for people."""
    # People read sizes in tokens too; in chars mode count them with cl100k for display.
    display = None if unit == "tokens" else get_counter("tokens", DISPLAY_TOKENIZER)
    for c in chunks:
        where = " > ".join(c.section) or "(no section)"
        tokens = c.tokens if display is None else display.count(c.embed_text)
        head = f"--- {c.source} | {where} | {c.chars} chars, {tokens} tokens ---"
        out.write(shown(head) + "\n")
        text = redacted_text(c)  # a terminal or a pasted log is no place for a key
        preview = text[:PREVIEW_CHARS] + ("…" if len(text) > PREVIEW_CHARS else "")
        # A chunk keeps its lines; each is escaped (a \r or an escape sequence in it too).
        out.write("\n".join(shown(line) for line in preview.split("\n")) + "\n\n")


class JsonDocument:
    """``{"chunks": [...], "stats": {...}}`` written as ``json.dumps(doc, indent=1)`` would
    write it, one file's JSONL lines at a time, so no chunk is held until the end."""

    def __init__(self, write: Callable[[bytes], object]) -> None:
        self._write = write
        self._chunks = 0

    def add_lines(self, lines: bytes) -> None:
        """Append the chunks of one file, given as the JSONL that ``chunk`` streams."""
        for line in lines.split(b"\n"):
            if not line:
                continue
            # Inside the list the chunk's lines sit two levels deep; a JSON string holds no
            # raw line break, so indenting the lines cannot touch a value.
            item = json.dumps(json.loads(line), ensure_ascii=False, indent=1)
            lead = b",\n  " if self._chunks else b'{\n "chunks": [\n  '
            self._write(lead + item.replace("\n", "\n  ").encode())
            self._chunks += 1

    def finish(self, stats: dict[str, Any]) -> None:
        """Close the list and write the run's statistics."""
        stats_text = json.dumps(stats, ensure_ascii=False, indent=1).replace("\n", "\n ")
        head = b'\n ],\n "stats": ' if self._chunks else b'{\n "chunks": [],\n "stats": '
        self._write(head + stats_text.encode() + b"\n}\n")


PER_FILE_LINES = 200
"""With ``auto``, --stats lists each file's strategy; JSON output always holds them all."""


def _print_stats(summary: dict[str, Any], console: Console, *, per_file: bool = False) -> None:
    from rich.table import Table

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
        "not_read_files": "Not read (unsupported type)",
        "removed_chars": "Removed characters",
        "secrets_redacted": "Secrets redacted",
    }
    for key, label in labels.items():
        table.add_row(label, plain(summary[key]))
    counts = summary["strategy_counts"]
    if per_file or len(counts) > 1:
        table.add_row("Strategies", plain(", ".join(f"{n} {c}" for n, c in counts.items())))
    spent = summary["embedding"]
    if spent:
        table.add_row("Embedding calls", f"{spent.get('calls', 0)} ({spent.get('texts', 0)} texts)")
    console.print(table)
    if per_file:
        chosen = summary["strategies"]
        listed = list(chosen.items())[:PER_FILE_LINES]
        for source, name in listed:
            console.print(plain(f"  {name:<10} {source}"), highlight=False)
        if len(chosen) > len(listed):
            console.print(f"  … {len(chosen) - len(listed)} more files (all in --format json)")


__all__ = ["JsonDocument", "chunk"]
