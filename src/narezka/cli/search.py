"""``narezka search`` and the ranking options it shares with ``eval``: every option of a
:class:`~narezka.search.Query` as a flag of the same name, turned into the query by
:meth:`Query.parse <narezka.search.Query.parse>` (as the HTTP API and MCP do)."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from narezka import defaults
from narezka.cli.common import EXIT_NOTHING, fail
from narezka.cli.seam import AUTO_FOLD, DEFAULT, OPTIONS, RRF_K, Fold, parse_fold, parse_fusion
from narezka.cli.terminal import plain, shown
from narezka.embed import get_embedder
from narezka.errors import ConfigError, NarezkaError
from narezka.index import Index
from narezka.search import METHODS, MODES, Fusion, Hit, Query
from narezka.store import IndexInUseError

F = TypeVar("F", bound=Callable[..., Any])

WAIT_STEP = 0.2
"""Seconds between tries while another process holds the index."""
TABLE_SNIPPET = 160
"""Characters of a hit's snippet shown in the table (JSON output carries all of it)."""


def ranking_options(command: F) -> F:
    """``--fusion``, ``--rrf-k``, ``--dense-weight`` and ``--fold``."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


_OPTIONS = [
    click.option(
        "--fusion",
        type=click.Choice(METHODS),
        default=DEFAULT.method,
        show_default=True,
        help="How hybrid search combines the dense and BM25 rankings: reciprocal-rank fusion, "
        "weighted RRF, or min-max normalized scores (measured best; --fusion rrf --fold 0 "
        "searches as narezka did before this default).",
    ),
    click.option(
        "--rrf-k",
        type=int,
        default=None,
        help=f"RRF's constant for rrf and weighted fusion  [default: {RRF_K}].",
    ),
    click.option(
        "--dense-weight",
        type=float,
        default=None,
        help="Weight of the dense ranking in [0, 1] for weighted and score fusion; BM25 gets the "
        "rest  [default: 0.3 for score, 0.5 for weighted].",
    ),
    click.option(
        "--fold",
        default=defaults.FOLD,
        show_default=True,
        help="Fold a neighbouring chunk of a hit's section into it only when it scored at least "
        "this fraction of the hit (0: every neighbour that ranked; off: no folding; auto: "
        f"{AUTO_FOLD} for hybrid score fusion, else 0).",
    ),
]


def ranking(
    mode: str, fusion: str | None, rrf_k: int | None, dense_weight: float | None, fold: str
) -> tuple[Fusion | None, Fold]:
    """The ranking options as a Query holds them (a bad value is a usage error)."""
    try:
        return parse_fusion(mode, fusion, rrf_k, dense_weight), parse_fold(fold)
    except ConfigError as exc:
        raise click.UsageError(as_flags(str(exc))) from None


_NAMES = "|".join(sorted(OPTIONS, key=len, reverse=True))
# The names a Query's error opens with ("fusion, rrf_k and dense_weight apply to mode
# hybrid"), and a mode named after them; words inside the sentence stay words.
_LEADING = re.compile(rf"^(?:(?:{_NAMES})(?:, | and |\b))+")
_MODE = re.compile(r"\bmode (hybrid|dense|bm25)\b")


def as_flags(message: str) -> str:
    """A Query's error in the words of the command line: ``fold must…`` → ``--fold must…``."""

    def flags(found: re.Match[str]) -> str:
        names = re.sub(rf"\b({_NAMES})\b", lambda m: _flag(m.group(1)), found.group(0))
        return names

    return _MODE.sub(r"--mode \1", _LEADING.sub(flags, message))


def _flag(name: str) -> str:
    return "-k" if name == "k" else "--" + name.replace("_", "-")


@click.command("search")
@click.argument("query")
@click.option(
    "--store",
    default=".",
    show_default=True,
    help="Index directory, the corpus folder that holds .narezka/, or the URL of the Qdrant "
    "server holding the index (read-only; see --collection).",
)
@click.option(
    "--collection",
    default="narezka",
    show_default=True,
    help="With a server URL as --store: which index there (its --collection name).",
)
@click.option("--mode", type=click.Choice(MODES), default=defaults.MODE, show_default=True)
@click.option("-k", "k", type=int, default=defaults.K, show_default=True)
@click.option("--zone", default=None)
@click.option("--project", default=None)
@click.option("--category", default=None)
@click.option(
    "--path",
    default=None,
    help="Only files matching this glob (.gitignore-style: '*.md' at any depth).",
)
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
@click.option(
    "--wait",
    type=float,
    default=5.0,
    show_default=True,
    help="Seconds to wait for another process that holds the index (a running sync).",
)
@click.option(
    "--min-relevance",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Drop hits whose relevance (the calibrated chance of answering) is below this; "
    "none left: exit 1, 'no relevant passage'  [default: the index's min_relevance setting, "
    f"else {defaults.MIN_RELEVANCE}].",
)
@click.option(
    "--rescore",
    type=click.Choice(["on", "off"]),
    default=None,
    help="off: search an index built with the quality tier (index --rescore e5) without "
    "re-scoring by its e5 vectors  [default: on; no effect on other indexes].",
)
@ranking_options
def search_command(
    query: str,
    store: str,
    collection: str,
    fmt: str,
    embedder: str | None,
    wait: float,
    **options: Any,
) -> None:
    """Search an index: dense, BM25 or hybrid (min-max score fusion, or as --fusion says).

    Exits 1 when nothing is found or nothing reaches --min-relevance, whatever the --format.

    Example: narezka search "гарантия на лампу Свет мини" --store examples/kb -k 3
    """
    try:
        asked = Query.parse(query, options)
    except ConfigError as exc:
        raise click.UsageError(as_flags(str(exc))) from None
    deadline = time.monotonic() + max(wait, 0.0)
    while True:
        try:
            model = get_embedder(embedder) if embedder else None
            with Index.open(store, embedder=model, collection=collection) as index:
                if asked.min_relevance is None:
                    asked = asked.replace(min_relevance=index.settings.relevance_floor)
                hits = index.search(asked)
            break
        except IndexInUseError as exc:
            # A cron sync holds the index for seconds: wait for it rather than fail at once.
            if time.monotonic() >= deadline:
                fail(exc)
            time.sleep(WAIT_STEP)
        except NarezkaError as exc:
            fail(exc)
    if fmt == "json":
        click.echo(json.dumps([h.to_json() for h in hits], ensure_ascii=False, indent=1))
    elif fmt == "jsonl":
        for h in hits:
            click.echo(json.dumps(h.to_json(), ensure_ascii=False))
    else:
        _print_hits(hits, query, asked.mode)
    if not hits:
        if hits.best_relevance is not None:
            click.echo(f"no relevant passage (best relevance {hits.best_relevance:.2f})", err=True)
        sys.exit(EXIT_NOTHING)


STALE_MARK = " [stale: file changed since the last sync]"


def _print_hits(hits: Sequence[Hit], query: str, mode: str) -> None:
    # Every cell is the corpus's text or the query: plain Text, never markup (terminal.py).
    table = Table(title=plain(f"{shown(repr(query))} — {mode}"))
    for column in ("#", "relevance", "score", "url", "section", "snippet"):
        table.add_column(column, overflow="fold")
    for rank, h in enumerate(hits, 1):
        table.add_row(
            str(rank),
            f"{h.relevance:.2f}",
            f"{h.score:.3f}",
            plain(h.url + (f" {h.where}" if h.where else "") + (STALE_MARK if h.stale else "")),
            plain(" > ".join(h.section)),
            _highlight(h.snippet[:TABLE_SNIPPET], query),
        )
    Console().print(table)


def _highlight(text: str, query: str) -> Text:
    """The snippet with the first letters of each longer query word in bold yellow."""
    out = plain(text)
    out.highlight_words({shown(w[:5]) for w in query.split() if len(w) > 3}, "bold yellow")
    return out
