"""Commands around an index: ``models``, ``cache stats|clear``, ``calibrate``, ``compact``,
``check``.

``cache clear`` drops the embedding cache and the conversion cache (converted PDF, Word,
HTML… files) by default: neither can be read back once gone (the conversions' file is
rewritten and its log emptied), and both fill again on the next sync.

Thin like the others: options in, one library call, a table or JSON out.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from narezka._native import implementation
from narezka.api import calibrate_corpus
from narezka.cli.common import EXIT_NOTHING, fail
from narezka.cli.options import json_option
from narezka.cli.terminal import echo, plain
from narezka.convert import ConvertCache
from narezka.embed import CacheStats, EmbeddingCache, embedder_specs
from narezka.enrich import ContextCache, context_cache_file
from narezka.errors import NarezkaError
from narezka.index import CONVERT_CACHE_NAME, Index, cache_file


@click.command("models")
@json_option
def models_command(as_json: bool) -> None:
    """List embedders: dimension, window, tokenizer, and whether they run offline here.

    Example: narezka models --json
    """
    specs = embedder_specs()
    if as_json:
        click.echo(json.dumps([vars_of(s) for s in specs], ensure_ascii=False, indent=1))
        return
    table = Table(title="narezka embedders")
    for column in ("spec", "model", "dim", "window", "tokenizer", "extra", "offline here"):
        table.add_column(column)
    for s in specs:
        table.add_row(
            *map(plain, (s.spec, s.model, s.dim, s.window, s.tokenizer, s.extra)),
            "yes" if s.usable_offline_here else "no",
        )
    Console().print(table)
    # Said once, here and in --version: what chunks, counts and analyses text on this machine.
    echo(f"hot path: {implementation()}")


def vars_of(obj: Any) -> dict[str, Any]:
    return {k: getattr(obj, k) for k in obj.__dataclass_fields__}


@click.group("cache")
def cache_group() -> None:
    """The embedding cache kept beside an index, and the LLM-written contexts beside it.

    Also the converted files (PDF, Word, HTML… as Markdown, secrets redacted).

    Example: narezka cache stats --store examples/kb
    """


_store_option = click.option("--store", type=click.Path(path_type=Path), default=Path("."))
"""The cache commands' index folder (or the corpus that holds it)."""


@cache_group.command("stats")
@_store_option
def cache_stats(store: Path) -> None:
    """Entries and size per embedder, LLM-written contexts per model, and converted files
    (creates nothing when there is no cache yet).

    Example: narezka cache stats --store examples/kb
    """
    path = _cache_path(store)
    if not path.is_file():
        stats: dict[str, Any] = vars_of(CacheStats(path, 0, 0, {}))
    else:
        with EmbeddingCache(path) as cache:
            stats = vars_of(cache.stats())
    contexts = context_cache_file(path)
    by_model: dict[str, int] = {}
    if contexts.is_file():
        with ContextCache(contexts) as cache:
            by_model = cache.by_model()
    stats["contexts"] = {
        "path": str(contexts),
        "entries": sum(by_model.values()),
        "by_model": by_model,
    }
    conversions = _conversions_path(store)
    count = 0
    if conversions.is_file():
        with ConvertCache(conversions) as cache:
            count = cache.count()
    stats["conversions"] = {"path": str(conversions), "entries": count}
    click.echo(json.dumps(stats, ensure_ascii=False, indent=1, default=str))


@cache_group.command("clear")
@_store_option
@click.option("--embedder", default=None, help="Only this embedder's vectors.")
@click.option(
    "--contexts",
    "context_model",
    default=None,
    metavar="MODEL|all",
    help="Drop LLM-written contexts instead (one model's, as `cache stats` names it, or all).",
)
@click.option(
    "--conversions",
    "only_conversions",
    is_flag=True,
    help="Drop only the converted files (PDF, Word, HTML… as Markdown), not the vectors.",
)
def cache_clear(
    store: Path, embedder: str | None, context_model: str | None, only_conversions: bool
) -> None:
    """Drop cached vectors and converted files (or one embedder's vectors with --embedder,
    the conversions alone with --conversions), or with --contexts the LLM-written chunk
    contexts. What is dropped leaves no bytes behind in the cache files.

    Example: narezka cache clear --store examples/kb --embedder use
    """
    if context_model is not None:
        contexts = context_cache_file(_cache_path(store))
        if not contexts.is_file():
            click.echo("removed 0 contexts")
            return
        with ContextCache(contexts) as cache:
            removed = cache.clear(None if context_model == "all" else context_model)
        click.echo(f"removed {removed} contexts")
        return
    converted = 0
    if (only_conversions or embedder is None) and _conversions_path(store).is_file():
        with ConvertCache(_conversions_path(store)) as conversions:
            converted = conversions.clear()
    if only_conversions:
        click.echo(f"removed {converted} conversions")
        return
    removed = 0
    if _cache_path(store).is_file():
        with EmbeddingCache(_cache_path(store)) as cache:
            removed = cache.clear(embedder)
    click.echo(f"removed {removed} vectors" + (f", {converted} conversions" if converted else ""))


def _cache_path(store: Path) -> Path:
    return cache_file(store)


def _conversions_path(store: Path) -> Path:
    return _cache_path(store).with_name(CONVERT_CACHE_NAME)


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
@json_option
def calibrate_command(
    corpus: Path, embedder: str, sample: int, safety: float, as_json: bool
) -> None:
    """Measure a served model's real token density on a corpus and store a safe budget.

    For models narezka cannot tokenize exactly: later `index` runs size chunks to the stored
    budget. Example: narezka calibrate docs/ --embedder ollama:bge-m3
    """
    try:
        result, path = calibrate_corpus(corpus, embedder, sample=sample, safety=safety)
    except NarezkaError as exc:
        fail(exc)
    if as_json:
        click.echo(
            json.dumps({**asdict(result), "stored": str(path)}, ensure_ascii=False, indent=1)
        )
        return
    table = Table(title=plain(f"calibrated {result.embedder}"), show_header=False, box=None)
    for key, value in asdict(result).items():
        table.add_row(key, plain(value))
    table.add_row("stored in", plain(path))
    Console().print(table)


@click.command("compact")
@click.argument("store", default=".")
@json_option
def compact_command(store: str, as_json: bool) -> None:
    """Rewrite an index with only its live points, so text deleted from the corpus leaves
    no trace in the index folder (the engine keeps deleted payloads on disk until then).
    Nothing is embedded again; searches go on meanwhile.

    Example: narezka compact examples/kb
    """
    try:
        with Index.open(store) as index:
            report = index.compact()
    except NarezkaError as exc:
        fail(exc)
    for warning in report.warnings:
        echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False))
        return
    echo(
        f"compacted {report.files} files, {report.points} points into {report.generation}: "
        f"{_mb(report.bytes_before)} → {_mb(report.bytes_after)} in {report.seconds:.1f} s"
    )


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


@click.command("check")
@click.argument("store", default=".")
@click.option(
    "--repair", is_flag=True, help="Repair what is found (re-index from the embedding cache)."
)
@json_option
def check_command(store: str, repair: bool, as_json: bool) -> None:
    """Check an index's files against its manifest: chunks the store lost, cannot read, or
    holds unknown; --repair re-indexes the damaged files from the embedding cache, or
    rebuilds when only that repairs it.

    Exits 0 when the index is sound or was repaired, 1 when damage was found and not
    repaired (run it again with --repair).

    Example: narezka check examples/kb --repair
    """
    try:
        with Index.open(store) as index:
            report = index.check(repair=repair)
    except NarezkaError as exc:
        fail(exc)
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        points = "cannot be opened" if report.points is None else f"{report.points} points"
        echo(f"{report.index}: {report.chunks} chunks in the manifest, {points} in the store")
        for line in report.findings():
            echo(f"damage: {line}")
        for line in report.repaired:
            echo(f"repaired: {line}")
        if report.ok:
            click.echo("ok")
        elif not report.repaired:
            echo(f"run `narezka check {store} --repair` to repair it")
    if not report.ok and not report.repaired:
        sys.exit(EXIT_NOTHING)
