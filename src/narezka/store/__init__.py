"""Vector storage: the ``VectorStore`` protocol, the embedded and server backends, BM25
sparse vectors and the crash-safe sync manifest.

Backends import their engines, so they are loaded on first use (``open_store`` or importing
``narezka.store.edge`` / ``narezka.store.server``), not by importing this package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from narezka._lazy import lazy_exports
from narezka.store.errors import (
    DimensionMismatchError,
    IndexDamagedError,
    IndexInUseError,
    StoreConfigError,
    StoreError,
    StoreUnavailableError,
)

if TYPE_CHECKING:
    from narezka.store.base import (
        AnyOf,
        Eq,
        Filter,
        Range,
        Rankings,
        StoredHit,
        StoredPoint,
        VectorStore,
        chunk_point_id,
        point_id,
    )
    from narezka.store.cluster import ClusterParams
    from narezka.store.manifest import ChunkEntry, FileEntry, FilePlan, Manifest
    from narezka.types import SparseVector

# The protocol and ids need numpy and the manifest sqlite: loaded when first asked for, so a
# process that only takes the store's lock (a chunk worker's orphan watch) does not pay.
_HOMES = {
    "narezka.store.base": (
        "AnyOf Eq Filter Range Rankings StoredHit StoredPoint VectorStore chunk_point_id point_id"
    ),
    "narezka.store.manifest": "ChunkEntry FileEntry FilePlan Manifest",
    "narezka.types": "SparseVector",
    "narezka.store.cluster": "ClusterParams",
}
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)


def open_store(
    path: str | Path | None = None, *, url: str | None = None, **options: Any
) -> VectorStore:
    """An ``EdgeStore`` in directory ``path``, or a ``ServerStore`` for ``url``."""
    if url:
        from narezka.store.server import ServerStore

        return ServerStore(url, **options)
    if path is None:
        raise StoreConfigError("give an index directory or a Qdrant server URL")
    from narezka.errors import MissingDependencyError

    try:
        from narezka.store.edge import EdgeStore
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise MissingDependencyError("qdrant-edge-py", "index") from exc
    return EdgeStore(path, **options)


__all__ = [
    "AnyOf",
    "ChunkEntry",
    "ClusterParams",
    "DimensionMismatchError",
    "Eq",
    "FileEntry",
    "FilePlan",
    "Filter",
    "IndexDamagedError",
    "IndexInUseError",
    "Manifest",
    "Range",
    "Rankings",
    "SparseVector",
    "StoreConfigError",
    "StoreError",
    "StoreUnavailableError",
    "StoredHit",
    "StoredPoint",
    "VectorStore",
    "chunk_point_id",
    "open_store",
    "point_id",
]
