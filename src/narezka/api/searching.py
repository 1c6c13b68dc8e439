"""Answer a query from an index in one call: :meth:`narezka.Index.open` then
:meth:`~narezka.Index.search` (the search stage itself is :mod:`narezka.search`)."""

from __future__ import annotations

from pathlib import Path

from narezka.embed import Embedder
from narezka.index import Index, resolve_home
from narezka.search import (
    EXPANSIONS,
    MODES,
    Filter,
    Fusion,
    Hit,
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
    query: str,
    store: str | Path = ".",
    *,
    mode: str = "hybrid",
    k: int = 5,
    zone: str | None = None,
    project: str | None = None,
    category: str | None = None,
    path: str | None = None,
    include_archived: bool = False,
    expand: str | None = None,
    embedder: Embedder | None = None,
    fusion: Fusion | None = None,
) -> list[Hit]:
    """The ``k`` best hits for ``query`` from the index in ``store`` (opened and closed for
    this one query; hold an :class:`narezka.Index` to search many times)."""
    filters = Filter(
        zone=zone, project=project, category=category, path=path, include_archived=include_archived
    )
    with Index.open(store, embedder=embedder) as index:
        return index.search(query, k=k, mode=mode, filters=filters, expand=expand, fusion=fusion)
