"""Commands that write an index: ``index``, ``sync`` and ``watch`` (``search`` reads one:
:mod:`narezka.cli.search`).

Thin like :mod:`narezka.cli.chunk`: options in, one pipeline call, output formatted for people
(tables) or scripts (``--format json``/``jsonl``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from narezka import environment
from narezka.api import sync, watch
from narezka.cli.common import (
    EXIT_NOTHING,
    F,
    fail,
    jobs_option,
    resolved_for,
    split_options,
)
from narezka.cli.options import (
    cluster_for,
    cluster_options,
    debounce_option,
    follow_symlinks_option,
    json_option,
    strict_option,
)
from narezka.cli.progress import byte_progress
from narezka.cli.reports import print_index_report, report_problems, summary, sync_progress
from narezka.cli.terminal import echo
from narezka.discover import special_kind
from narezka.errors import ConfigError, NarezkaError
from narezka.index import Index
from narezka.sources import Source, is_source_spec, open_source
from narezka.tokens import ANALYZERS

prune_option = click.option(
    "--prune",
    is_flag=True,
    help="Remove from the index the files still in the corpus that the include/exclude "
    "patterns no longer match (without it they are kept and named in a warning).",
)


def _qdrant_url_option(help: str, *, required: bool = False) -> Callable[[F], F]:
    """``--qdrant-url``, also read from ``NAREZKA_QDRANT_URL``."""
    return click.option(
        "--qdrant-url", default=None, required=required, envvar="NAREZKA_QDRANT_URL", help=help
    )


@click.command("index")
@click.argument("corpus")
@click.option(
    "--store",
    "store_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Index directory  [default: CORPUS/.narezka]; a new or empty folder, never the corpus.",
)
@_qdrant_url_option(
    "A Qdrant server or cluster instead of the embedded engine (API key from QDRANT_API_KEY)."
)
@click.option(
    "--collection",
    default=None,
    help="With --qdrant-url: the index's name on the server (the alias NAME readers query, "
    "collections NAME_gN and NAME-record)  [default: narezka]; one name per index.",
)
@cluster_options
@click.option(
    "--embedder",
    default=None,
    help="use, e5, minilm, st:PATH, ollama:MODEL, openai:MODEL@URL  [default: use, or "
    "narezka.toml / NAREZKA_EMBEDDER].",
)
@split_options()
@click.option(
    "--bm25",
    type=click.Choice(ANALYZERS),
    default=None,
    help="BM25 analyzer (lemma needs narezka[ru])  [default: the index's own, else snowball]; "
    "another one for an existing index needs --rebuild.",
)
@click.option(
    "--rescore",
    default=None,
    metavar="MODEL",
    help="The quality tier: e5 stores every chunk's e5 vector too, and searches re-score their "
    "candidates with it (measured: 3× the index time, +80–120 ms a new query; needs narezka[e5]), "
    "or off  [default: off, or narezka.toml / NAREZKA_RESCORE]; switching it rebuilds.",
)
@click.option(
    "--rebuild",
    is_flag=True,
    help="Build the index anew beside the old one and swap it in when complete (search keeps "
    "answering from the old one meanwhile; the embedding cache is kept).",
)
@click.option(
    "--link-template",
    default=None,
    metavar="TEMPLATE",
    help="For a git source on a host narezka does not know: the URL of a file at a commit, "
    "e.g. https://git.example.org/org/repo/src/{commit}/{path}#L{first}-L{last}  [default: "
    "GitHub, GitLab, Bitbucket, Codeberg links; none for others].",
)
@prune_option
@strict_option
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@jobs_option
def index_command(
    corpus: str,
    store_dir: Path | None,
    qdrant_url: str | None,
    collection: str | None,
    rebuild: bool,
    prune: bool,
    strict: bool,
    as_json: bool,
    jobs: int | None,
    link_template: str | None,
    **options: Any,
) -> None:
    """Chunk, embed and store a corpus; re-runs only touch what changed.

    CORPUS is a folder; a git repository (git+https://host/org/repo@branch, git+file:///path,
    git+PATH: read at the branch's commit); a site (https://host/docs/: the pages under it);
    a Confluence space (confluence+https://site.atlassian.net/wiki/spaces/KEY, token in
    CONFLUENCE_TOKEN) or Notion database or page (notion://ID, token in NOTION_TOKEN); or a
    narezka.toml naming several in [[sources]]. A source is staged in narezka's cache,
    its index beside it unless --store says otherwise; a later sync reads only what changed.

    Settings come from the defaults, your own config file, the corpus's narezka.toml
    [settings], NAREZKA_* variables and these flags, in that order; the corpus's file may not
    lower its safety unless you confirm it (--trust-corpus-config).

    Example: narezka index examples/kb && narezka search "вернуть вскрытый чай" --store examples/kb
    """
    err = Console(stderr=True)
    target: Path | Source
    if is_source_spec(corpus):
        try:
            target = open_source(corpus, link_template=link_template, env=environment.current())
        except NarezkaError as exc:
            fail(exc)
        # A repository's or a site's own narezka.toml sets nothing; a narezka.toml naming
        # several sources is the user's own, and its [settings] apply.
        folder = Path(corpus).parent if Path(corpus).name == "narezka.toml" else None
    else:
        if link_template is not None:
            fail(ConfigError("--link-template is for a git source (git+URL)"))
        target = folder = Path(corpus)
        if not folder.exists():
            fail(ConfigError(f"{corpus}: no such file or directory"))
        if (kind := special_kind(folder.stat().st_mode)) is not None:
            fail(ConfigError(f"{corpus}: {kind}, not a regular file or folder: never opened"))
    resolved = resolved_for(folder, options)
    settings = resolved.settings
    cluster = cluster_for(folder, options, qdrant_url)
    progress = byte_progress("indexing", err)
    try:
        with (
            progress,
            Index.create(
                target,
                settings,
                store=store_dir,
                url=qdrant_url,
                collection=collection,
                cluster=cluster,
            ) as ix,  # fmt: skip
        ):
            report = ix.sync(
                rebuild=rebuild, prune=prune, progress=sync_progress(progress, err), jobs=jobs
            )
    except NarezkaError as exc:
        fail(exc)
    report_problems(report)
    if as_json:
        data = {**report.as_dict(), "settings_from": dict(resolved.origins)}
        click.echo(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        print_index_report(report, settings_from=resolved.describe())
    if strict and (report.skipped or report.not_read):
        sys.exit(EXIT_NOTHING)


@click.command("sync")
@click.argument("store", default=".")
@click.option(
    "--corpus",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where the corpus is now, if it moved away from its index (recorded for later runs).",
)
@click.option(
    "--context-llm",
    default=None,
    metavar="SPEC",
    help="Change the LLM that writes chunk context (ollama:MODEL[@HOST], openai:MODEL@URL, or "
    "off)  [default: the one the index records].",
)
@follow_symlinks_option
@prune_option
@strict_option
@json_option
@jobs_option
def sync_command(
    store: str,
    corpus: Path | None,
    context_llm: str | None,
    follow_symlinks: bool | None,
    prune: bool,
    strict: bool,
    as_json: bool,
    jobs: int | None,
) -> None:
    """Bring an index up to date with its corpus, with the settings it was built with.

    For cron or a systemd timer (see examples/systemd/). Example: narezka sync examples/kb
    """
    err = Console(stderr=True)
    progress = byte_progress("syncing", err)
    try:
        with progress:
            report = sync(
                store,
                corpus=corpus,
                context_llm=context_llm,
                follow_symlinks=follow_symlinks,
                prune=prune,
                jobs=jobs,
                progress=sync_progress(progress, err),
            )
    except NarezkaError as exc:
        fail(exc)
    report_problems(report)
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False))
    else:
        echo(summary(report))
    if strict and (report.skipped or report.not_read):
        sys.exit(EXIT_NOTHING)


@click.command("watch")
@click.argument("store", default=".")
@debounce_option
@follow_symlinks_option
def watch_command(store: str, debounce_ms: int, follow_symlinks: bool | None) -> None:
    """Sync now, then again whenever files in the corpus change (Ctrl-C stops cleanly).

    Example: narezka watch examples/kb --debounce-ms 2000
    """
    try:
        for report in watch(store, debounce_ms=debounce_ms, follow_symlinks=follow_symlinks):
            echo(summary(report), err=True)
    except NarezkaError as exc:
        fail(exc)
    except KeyboardInterrupt:
        click.echo("stopped; the next sync resumes where this one stopped", err=True)


@click.command("push")
@click.argument("store", default=".")
@_qdrant_url_option("The Qdrant server or cluster (API key from QDRANT_API_KEY).", required=True)
@click.option(
    "--collection",
    default="narezka",
    show_default=True,
    help="The copy's name there: `search --store URL --collection NAME` reads it.",
)
@cluster_options
def push_command(store: str, qdrant_url: str, collection: str, **options: Any) -> None:
    """Copy an index to a Qdrant server: same ids, vectors and payloads, readable there by
    URL. A re-push updates the copy (points of deleted files go).

    Example: narezka push examples/kb --qdrant-url http://localhost:6333
    """
    try:
        with Index.open(store) as index:
            cluster = cluster_for(index.corpus, options, qdrant_url)
            copied = index.push(qdrant_url, collection=collection, cluster=cluster)
    except NarezkaError as exc:
        fail(exc)
    echo(f"copied {copied} points to {qdrant_url} ({collection})")
