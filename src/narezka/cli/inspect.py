"""``narezka inspect``: chunk with ``chunk``'s options (and optionally a second strategy) and
write the chunk inspector page (thin: options in, the chunking pipeline, one page out)."""

from __future__ import annotations

import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from narezka import environment, runs
from narezka.cli.common import file_option
from narezka.cli.options import DISPLAY_TOKENIZER, Splitting, splitting_options
from narezka.cli.progress import progress_bar
from narezka.cli.terminal import echo
from narezka.errors import ConfigError
from narezka.evaluate import parse_strategy
from narezka.inspector import InspectRun, index_convert_cache, inspector_page, read_sources
from narezka.tokens import get_counter


@click.command("inspect")
@click.argument("paths", nargs=-1, required=True)
@splitting_options
@click.option(
    "--compare",
    "compare",
    default=None,
    metavar="S2[:key=value,...]",
    help="A second strategy shown side by side over the same text, e.g. "
    "'overlap:size=400,overlap=40'; other options as for the first.",
)
@file_option(
    "--out",
    "-o",
    "out",
    required=True,
    help="The HTML file to write (self-contained: it opens from disk, offline).",
)
@click.option(
    "--open", "open_page", is_flag=True, help="Open the page in the default browser, if any."
)
@click.option("--title", default=None, help="The page title  [default: the paths].")
def inspect_command(
    paths: Sequence[str],
    compare: str | None,
    out: Path,
    open_page: bool,
    title: str | None,
    **options: Any,
) -> None:
    """Write an HTML page showing each document's chunks: boundaries, overlaps, atoms,
    breadcrumbs, sizes against the limit and the embed_text of each.

    Example: narezka inspect examples/kb --strategy headings --size 800
    --compare overlap:size=400,overlap=40 --out chunks.html --open
    """
    err = Console(stderr=True)
    first = Splitting.from_options(options, paths[0])
    sides = [first]
    if compare is not None:
        try:
            spec = parse_strategy(compare)
        except ConfigError as exc:
            raise click.BadParameter(str(exc), param_hint="--compare") from None
        sides.append(first.with_spec(spec.name, spec.params))
    # Files the corpus's index converted (a scan read by OCR…) are not converted again.
    cache = index_convert_cache(paths)
    runs = []
    for side in sides:
        report = _chunk(paths, side, err, cache)
        for problem in report.skipped:
            echo(f"skipped: {problem}", err=True)
        for warning in report.warnings:
            echo(f"warning: {warning}", err=True)
        runs.append(
            InspectRun(side.label, report, side.size, side.unit, side.tokenizer, side.strategy)
        )
    if not any(run.report.chunks for run in runs):
        raise click.ClickException(f"no chunks from {' '.join(paths)}: nothing to inspect")
    from narezka.settings import convert_options

    sources = read_sources(
        paths, runs, first.include, first.exclude, convert_cache=cache, options=convert_options()
    )
    display = get_counter("tokens", DISPLAY_TOKENIZER) if first.unit == "chars" else None
    page = inspector_page(
        runs, sources, display=display, title=title or "narezka inspect · " + " ".join(paths)
    )
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"{out}: cannot write: {exc.strerror or exc}") from None
    counts = " | ".join(f"{len(r.report.chunks)} chunks ({r.label})" for r in runs)
    echo(f"wrote {out}: {len(sources)} documents, {counts}", err=True)
    if open_page and not webbrowser.open(out.resolve().as_uri()):
        echo(f"no browser found: open {out} yourself", err=True)


def _chunk(
    paths: Sequence[str], side: Splitting, err: Console, cache: Path | None
) -> runs.ChunkReport:
    total = runs.count_files(
        paths, include=side.include, exclude=side.exclude, strategy=side.strategy
    )
    progress = progress_bar(f"chunking ({side.strategy})", err, enabled=total >= 50)
    try:
        with progress:
            task = progress.add_task("chunk", total=total)
            return runs.chunk_documents(
                paths,
                on_file=lambda _: progress.advance(task),
                convert_cache=cache,
                jobs=environment.current().jobs,  # NAREZKA_JOBS, as for chunk
                **side.kwargs(),
            )
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


__all__ = ["inspect_command"]
