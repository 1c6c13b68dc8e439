"""Answer a query from an index in one call: :meth:`narezka.Index.open` then
:meth:`~narezka.Index.search` (the search stage itself is :mod:`narezka.search`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from narezka.embed import Embedder
from narezka.errors import ConfigError
from narezka.index import Index, resolve_home
from narezka.search import (
    EXPANSIONS,
    MODES,
    Hit,
    Hits,
    Query,
    fold_neighbours,
    snippet,
    to_parents,
)

__all__ = [
    "EXPANSIONS",
    "MODES",
    "Hit",
    "fold_neighbours",
    "resolve_store",
    "search",
    "snippet",
    "to_parents",
]


def resolve_store(location: str | Path) -> Path:
    """An index directory, or a corpus folder holding one in ``.narezka/``."""
    return resolve_home(location)


def search(
    query: str | Query,
    store: str | Path = ".",
    *,
    embedder: Embedder | None = None,
    **options: Any,
) -> Hits:
    """The best hits for ``query`` from the index in ``store`` (opened and closed for this one
    query; hold an :class:`narezka.Index` to search many times). ``options`` are a query's
    flat options (:data:`narezka.search.OPTIONS`, the table in :mod:`narezka.search.options`:
    ``k=3``, ``mode="bm25"``, ``path="docs/**"``…). As everywhere, hits below the index's
    ``min_relevance`` are left out unless ``min_relevance`` says otherwise (0: every hit)."""
    if isinstance(query, str):
        query = Query.parse(query, options)
    elif options:
        raise ConfigError("give the options inside the Query, or a text with options")
    with Index.open(store, embedder=embedder) as index:
        return index.search(query)
