"""Index a corpus in one call: :meth:`narezka.Index.create` then :meth:`~narezka.Index.sync`
(the machinery is :mod:`narezka.index.syncing`, the object :class:`narezka.Index`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from narezka.defaults import EMBEDDER, STRATEGY
from narezka.embed import Embedder
from narezka.index import Index
from narezka.index.syncing import (
    INDEX_META,
    INDEX_VERSION,
    STORE_DIRNAME,
    IndexReport,
    Progress,
    default_store_dir,
    open_embedder,
    read_index_meta,
)
from narezka.settings import Settings

__all__ = [
    "INDEX_META",
    "INDEX_VERSION",
    "STORE_DIRNAME",
    "IndexReport",
    "default_store_dir",
    "index",
    "open_embedder",
    "read_index_meta",
]


def index(
    corpus: str | Path,
    *,
    store_dir: str | Path | None = None,
    url: str | None = None,
    strategy: str = STRATEGY,
    embedder: str | Embedder = EMBEDDER,
    rebuild: bool = False,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    on_file: Callable[[str], None] | None = None,
    on_bytes: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    jobs: int | None = None,
    **params: Any,
) -> IndexReport:
    """Sync ``corpus`` into the index (embedded in ``store_dir``, or a Qdrant server at
    ``url``) in one call: :meth:`narezka.Index.create` then :meth:`~narezka.Index.sync`.

    ``params`` are split parameters; by default chunks are sized in the embedder's own
    tokens, to its budget. Progress: ``on_total(bytes)`` once the files are listed, then
    ``on_bytes(n)`` as they are chunked and embedded, and ``on_file(source)`` after each file.
    ``jobs`` worker processes chunk while this one embeds (default: the machine's cores).
    Everything that can be refused (the store folder, the embedder, the parameters) is checked
    before anything is written."""
    named = embedder if isinstance(embedder, str) else None
    settings = Settings().replace(
        strategy=strategy,
        embedder=named,
        include=tuple(include) if include else None,
        exclude=tuple(exclude),
        **params,
    )
    model = None if isinstance(embedder, str) else embedder
    with Index.create(corpus, settings, store=store_dir, url=url, embedder=model) as ix:
        return ix.sync(rebuild=rebuild, progress=Progress(on_file, on_bytes, on_total), jobs=jobs)
