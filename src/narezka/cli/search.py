"""``narezka search``, and the flags it shares with ``eval``: made from the table of search
options (:mod:`narezka.search.options`), each a flag of the option's name, turned into the
query by :meth:`Query.parse <narezka.search.Query.parse>` (as the HTTP API and MCP do)."""

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

from narezka.cli.common import EXIT_NOTHING, fail, format_option
from narezka.cli.terminal import plain, shown
from narezka.embed import get_embedder
from narezka.errors import ConfigError, NarezkaError
from narezka.index import Index
from narezka.search import OPTIONS, Front, Hit, IndexSetting, Option, Query, shown_at
from narezka.settings import servers
from narezka.store import IndexInUseError

F = TypeVar("F", bound=Callable[..., Any])

WAIT_STEP = 0.2
"""Seconds between tries while another process holds the index."""
TABLE_SNIPPET = 160
"""Characters of a hit's snippet shown in the table (JSON output carries all of it)."""


def query_options(front: Front) -> Callable[[F], F]:
    """Every option of the table (:mod:`narezka.search.options`) that ``front`` (``search``
    or ``eval``) shows, as a flag of the same name."""

    def decorate(command: F) -> F:
        for option in reversed(shown_at(front)):
            command = click_option(option)(command)
        return command

    return decorate


def click_option(option: Option) -> Callable[[F], F]:
    """One option of the table as a click flag. Only the type is checked here: bounds and
    choices are the Query's to check (its error is turned into the flags' words)."""
    extra: dict[str, Any] = {}
    default = None if isinstance(option.default, IndexSetting) else option.default
    if option.kind == "flag" and option.default is False:
        extra["is_flag"] = True
    elif option.kind == "flag":
        extra["type"] = click.Choice(["on", "off"])
        default = "on" if option.default else "off"
    elif option.kind == "choice":
        extra["type"] = click.Choice(option.choices)
    elif option.kind in ("whole", "number"):
        extra["type"] = int if option.kind == "whole" else float
    help_text = option.help
    if option.shown is not None:
        help_text += f"  [default: {option.shown}]"
    else:
        extra["show_default"] = default is not None and default is not False
    decorator: Callable[[F], F] = click.option(
        option.flag, option.name, default=default, help=help_text, **extra
    )
    return decorator


def parse_query(text: str, options: dict[str, Any]) -> Query:
    """The Query of a command's flags; a bad value is a usage error in the flags' words."""
    try:
        return Query.parse(text, options)
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
        return re.sub(rf"\b({_NAMES})\b", lambda m: OPTIONS[m.group(1)].flag, found.group(0))

    return _MODE.sub(r"--mode \1", _LEADING.sub(flags, message))


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
@format_option("table", "json", "jsonl")
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
@query_options("search")
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
    asked = parse_query(query, options)
    deadline = time.monotonic() + max(wait, 0.0)
    while True:
        try:
            model = get_embedder(embedder, servers=servers()) if embedder else None
            with Index.open(store, embedder=model, collection=collection) as index:
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
