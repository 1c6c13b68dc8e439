"""Commands over an index: ``index``, ``search``, ``models``, ``cache``.

Thin like :mod:`narezka.cli`: options in, one pipeline call, output formatted for people
(tables) or scripts (``--format json``/``jsonl``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, NoReturn, cast

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from narezka.embed import DEFAULT_EMBEDDER, EmbeddingCache, embedder_specs, get_embedder
from narezka.embed.calibrate import ServerCounted, calibrate, save_calibration
from narezka.errors import ConfigError, NarezkaError
from narezka.pipeline import chunk_documents, count_files
from narezka.pipeline.indexing import IndexReport, default_store_dir, index, open_embedder
from narezka.pipeline.maintenance import push, sync, watch
from narezka.pipeline.searching import MODES, search
from narezka.split import strategy_names
from narezka.store import open_store
from narezka.store.sparse import ANALYZERS

TABLE_SNIPPET = 160
"""Characters of a hit's snippet shown in the table (JSON output carries all of it)."""


def progress_bar(label: str, console: Console, *, enabled: bool = True) -> Progress:
    """The stderr progress bar every long command shows (only on a terminal)."""
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not (enabled and console.is_terminal),
    )


def fail(exc: Exception) -> NoReturn:
    """Report a library error the way every command does: one line, exit status 2."""
    click.echo(f"Error: {exc}", err=True)
    sys.exit(2)


@click.command("index")
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option(
    "--store",
    "store_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Index directory  [default: CORPUS/.narezka].",
)
@click.option(
    "--qdrant-url",
    default=None,
    envvar="NAREZKA_QDRANT_URL",
    help="A Qdrant server or cluster instead of the embedded engine (API key from QDRANT_API_KEY).",
)
@click.option("--embedder", default=DEFAULT_EMBEDDER, show_default=True)
@click.option(
    "--strategy", "-s", type=click.Choice(strategy_names()), default="headings", show_default=True
)
@click.option(
    "--size",
    type=int,
    default=None,
    help="Chunk size  [default: the embedder's budget, in its tokens].",
)
@click.option("--unit", type=click.Choice(["chars", "tokens"]), default=None)
@click.option("--overlap", type=int, default=None)
@click.option(
    "--parent-size",
    type=int,
    default=None,
    help="parent-child: the parents' size limit  [default: 4 × --size].",
)
@click.option("--threshold", type=float, default=None, help="semantic: similarity threshold.")
@click.option("--percentile", type=float, default=None, help="semantic: breakpoint percentile.")
@click.option(
    "--include",
    multiple=True,
    help="Glob of files to read (repeatable)  [default: the strategy's own].",
)
@click.option("--exclude", multiple=True, help="Glob of files to skip (repeatable).")
@click.option(
    "--bm25",
    type=click.Choice(ANALYZERS),
    default=None,
    help="BM25 analyzer (lemma needs narezka[ru])  [default: the index's own, else snowball].",
)
@click.option("--rebuild", is_flag=True, help="Drop the index and build it anew.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def index_command(
    corpus: Path,
    store_dir: Path | None,
    qdrant_url: str | None,
    embedder: str,
    strategy: str,
    size: int | None,
    unit: str | None,
    overlap: int | None,
    parent_size: int | None,
    threshold: float | None,
    percentile: float | None,
    include: Sequence[str],
    exclude: Sequence[str],
    bm25: str | None,
    rebuild: bool,
    as_json: bool,
) -> None:
    """Chunk, embed and store a corpus; re-runs only touch what changed.

    Example: narezka index examples/kb && narezka search "вернуть вскрытый чай" --store examples/kb
    """
    err = Console(stderr=True)
    globs = tuple(include) or None
    total = count_files([corpus], globs, exclude, strategy) if corpus.exists() else 0
    progress = progress_bar("indexing", err)
    try:
        with progress:
            task = progress.add_task("index", total=total)
            report = index(
                corpus,
                store_dir=store_dir,
                url=qdrant_url,
                strategy=strategy,
                embedder=embedder,
                rebuild=rebuild,
                on_file=lambda _: progress.advance(task),
                size=size,
                unit=unit,
                overlap=overlap,
                parent_size=parent_size,
                threshold=threshold,
                percentile=percentile,
                include=globs,
                exclude=tuple(exclude),
                bm25=bm25,
            )
    except NarezkaError as exc:
        fail(exc)
    for problem in report.skipped:
        click.echo(f"skipped: {problem}", err=True)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False, indent=1))
        return
    table = Table(title=f"narezka index → {report.store}", show_header=False, box=None)
    rows = [
        (
            "Files",
            f"{report.files_new} new, {report.files_changed} changed, "
            f"{report.files_unchanged} unchanged, {report.files_deleted} deleted",
        ),
        (
            "Chunks",
            f"{report.chunks_embedded} embedded, {report.chunks_reused} reused, "
            f"{report.chunks_kept} kept, {report.chunks_deleted} deleted",
        ),
        ("Embedding cache", f"{report.cache_hits} hits, {report.cache_misses} misses"),
        ("Seconds", ", ".join(f"{k} {v:.2f}" for k, v in report.seconds.items())),
        ("Embedder", report.embedder),
        ("Skipped files", str(len(report.skipped))),
    ]
    if report.recovered:
        rows.append(("Repaired", ", ".join(report.recovered)))
    for label, value in rows:
        table.add_row(label, value)
    Console().print(table)


@click.command("search")
@click.argument("query")
@click.option(
    "--store",
    default=".",
    show_default=True,
    help="Index directory, or the corpus folder that holds .narezka/.",
)
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("-k", "k", type=int, default=5, show_default=True)
@click.option("--zone", default=None)
@click.option("--project", default=None)
@click.option("--category", default=None)
@click.option("--path", "path_glob", default=None, help="Only files matching this glob.")
@click.option("--include-archived", is_flag=True, help="Archived pages are left out by default.")
@click.option(
    "--expand",
    type=click.Choice(["section", "parent"]),
    default=None,
    help="Return each hit's whole heading section, or its parent (an index built with "
    "--strategy parent-child): small-to-big.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "jsonl"]),
    default="table",
    show_default=True,
)
@click.option(
    "--embedder",
    default=None,
    help="Default: the one the index was built with (a different one is an error).",
)
def search_command(
    query: str,
    store: str,
    mode: str,
    k: int,
    zone: str | None,
    project: str | None,
    category: str | None,
    path_glob: str | None,
    include_archived: bool,
    expand: str | None,
    fmt: str,
    embedder: str | None,
) -> None:
    """Search an index: dense, BM25 or hybrid (reciprocal-rank fusion).

    Example: narezka search "гарантия на лампу Свет мини" --store examples/kb -k 3
    """
    try:
        model = open_embedder(embedder, None) if embedder else None
        hits = search(
            query,
            store,
            mode=mode,
            k=k,
            zone=zone,
            project=project,
            category=category,
            path=path_glob,
            include_archived=include_archived,
            expand=expand,
            embedder=model,
        )
    except NarezkaError as exc:
        fail(exc)
    if fmt == "json":
        click.echo(json.dumps([h.to_json() for h in hits], ensure_ascii=False, indent=1))
        return
    if fmt == "jsonl":
        for h in hits:
            click.echo(json.dumps(h.to_json(), ensure_ascii=False))
        return
    table = Table(title=f"{query!r} — {mode}")
    for column in ("#", "score", "url", "section", "snippet"):
        table.add_column(column, overflow="fold")
    for rank, h in enumerate(hits, 1):
        table.add_row(
            str(rank),
            f"{h.score:.3f}",
            h.url,
            " > ".join(h.section),
            _highlight(h.snippet[:TABLE_SNIPPET], query),
        )
    Console().print(table)
    if not hits:
        sys.exit(1)


def _highlight(text: str, query: str) -> str:
    from rich.markup import escape

    out = escape(text)
    for word in {w for w in query.split() if len(w) > 3}:
        stem = escape(word[:5])
        out = out.replace(stem, f"[bold yellow]{stem}[/]")
    return out


@click.command("models")
@click.option("--json", "as_json", is_flag=True)
def models_command(as_json: bool) -> None:
    """List embedders: dimension, window, tokenizer, and whether they run offline here."""
    specs = embedder_specs()
    if as_json:
        click.echo(json.dumps([vars_of(s) for s in specs], ensure_ascii=False, indent=1))
        return
    table = Table(title="narezka embedders")
    for column in ("spec", "model", "dim", "window", "tokenizer", "extra", "offline here"):
        table.add_column(column)
    for s in specs:
        table.add_row(
            s.spec,
            s.model,
            s.dim,
            s.window,
            s.tokenizer,
            s.extra,
            "yes" if s.usable_offline_here else "no",
        )
    Console().print(table)


def vars_of(obj: Any) -> dict[str, Any]:
    return {k: getattr(obj, k) for k in obj.__dataclass_fields__}


@click.group("cache")
def cache_group() -> None:
    """The embedding cache kept beside an index."""


@cache_group.command("stats")
@click.option("--store", type=click.Path(path_type=Path), default=Path("."))
def cache_stats(store: Path) -> None:
    """Entries and size per embedder."""
    with EmbeddingCache(_cache_path(store)) as cache:
        click.echo(json.dumps(vars_of(cache.stats()), ensure_ascii=False, indent=1, default=str))


@cache_group.command("clear")
@click.option("--store", type=click.Path(path_type=Path), default=Path("."))
@click.option("--embedder", default=None, help="Only this embedder's vectors.")
def cache_clear(store: Path, embedder: str | None) -> None:
    """Drop cached vectors."""
    with EmbeddingCache(_cache_path(store)) as cache:
        click.echo(f"removed {cache.clear(embedder)} vectors")


def _cache_path(store: Path) -> Path:
    home = store if (store / "embeddings.sqlite").exists() else default_store_dir(store)
    return home / "embeddings.sqlite"


@click.command("calibrate")
@click.argument("corpus", type=click.Path(exists=True, path_type=Path))
@click.option("--embedder", required=True, help="A served model: ollama:MODEL or openai:MODEL@URL.")
@click.option(
    "--sample",
    type=int,
    default=40,
    show_default=True,
    help="How many of the corpus's largest chunks to send.",
)
@click.option("--safety", type=float, default=0.9, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def calibrate_command(
    corpus: Path, embedder: str, sample: int, safety: float, as_json: bool
) -> None:
    """Measure a served model's real token density on a corpus and store a safe budget.

    For models narezka cannot tokenize exactly: later `index` runs size chunks to the stored
    budget. Example: narezka calibrate docs/ --embedder ollama:bge-m3
    """
    try:
        model = get_embedder(embedder)
        if not hasattr(model, "server_token_count"):
            raise ConfigError(f"{embedder} is counted exactly by narezka: nothing to calibrate")
        report = chunk_documents([corpus], "headings", counter=model.counter, size=model.budget)
        texts = sorted((c.embed_text for c in report.chunks), key=len, reverse=True)[:sample]
        result = calibrate(cast(ServerCounted, model), texts, safety=safety)
        path = save_calibration(result)
    except NarezkaError as exc:
        fail(exc)
    if as_json:
        click.echo(
            json.dumps({**asdict(result), "stored": str(path)}, ensure_ascii=False, indent=1)
        )
        return
    table = Table(title=f"calibrated {result.embedder}", show_header=False, box=None)
    for key, value in asdict(result).items():
        table.add_row(key, str(value))
    table.add_row("stored in", str(path))
    Console().print(table)


def _summary(report: IndexReport) -> str:
    return (
        f"{report.files_new} new, {report.files_changed} changed, "
        f"{report.files_unchanged} unchanged, {report.files_deleted} deleted files; "
        f"{report.chunks_embedded} chunks embedded, {report.chunks_deleted} deleted; "
        f"{len(report.skipped)} skipped; {report.seconds['total']:.2f} s"
    )


@click.command("sync")
@click.argument("store", default=".")
@click.option("--json", "as_json", is_flag=True)
def sync_command(store: str, as_json: bool) -> None:
    """Bring an index up to date with its corpus, with the settings it was built with.

    For cron or a systemd timer (see examples/systemd/). Example: narezka sync examples/kb
    """
    try:
        report = sync(store)
    except NarezkaError as exc:
        fail(exc)
    for problem in report.skipped:
        click.echo(f"skipped: {problem}", err=True)
    click.echo(json.dumps(report.as_dict(), ensure_ascii=False) if as_json else _summary(report))


@click.command("watch")
@click.argument("store", default=".")
@click.option("--debounce-ms", type=int, default=1600, show_default=True)
def watch_command(store: str, debounce_ms: int) -> None:
    """Sync now, then again whenever files in the corpus change (Ctrl-C stops cleanly)."""
    try:
        for report in watch(store, debounce_ms=debounce_ms):
            click.echo(_summary(report), err=True)
    except NarezkaError as exc:
        fail(exc)
    except KeyboardInterrupt:
        click.echo("stopped; the next sync resumes where this one stopped", err=True)


@click.command("push")
@click.argument("store", default=".")
@click.option(
    "--qdrant-url",
    required=True,
    envvar="NAREZKA_QDRANT_URL",
    help="The Qdrant server or cluster (API key from QDRANT_API_KEY).",
)
@click.option("--collection", default="narezka", show_default=True)
def push_command(store: str, qdrant_url: str, collection: str) -> None:
    """Copy an embedded index to a Qdrant server: same ids, vectors and payloads."""
    try:
        copied = push(store, open_store(url=qdrant_url, collection=collection))
    except NarezkaError as exc:
        fail(exc)
    click.echo(f"copied {copied} points to {qdrant_url} ({collection})")


COMMANDS = [
    index_command,
    search_command,
    models_command,
    cache_group,
    calibrate_command,
    sync_command,
    watch_command,
    push_command,
]
