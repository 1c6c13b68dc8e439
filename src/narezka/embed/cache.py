"""A content-addressed embedding cache in one sqlite file, and an embedder that uses it.

A vector's key is the sha256 of (embedder id — which names the model revision or weights
hash —, its max length, the normalization flag, passage or query, and the text), so a new
model revision, window or role never reuses old vectors. Vectors are float32 blobs.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from narezka.embed.base import Embedder, Matrix, empty_matrix
from narezka.errors import DiskFullError
from narezka.sqlite_cache import SIDE_FILES, SqliteCache
from narezka.tokens import TokenCounter

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key      BLOB PRIMARY KEY,
    embedder TEXT NOT NULL,
    dim      INTEGER NOT NULL,
    vector   BLOB NOT NULL
) WITHOUT ROWID
"""
# Stay well under SQLite's bound-parameter limit (999 on old builds).
_LOOKUP_CHUNK = 500


def default_cache_path() -> Path:
    """``$NAREZKA_CACHE_DIR``, else the user cache dir (platformdirs, or ``$XDG_CACHE_HOME``
    / ``~/.cache``), then ``narezka/embeddings.sqlite``."""
    if env := os.environ.get("NAREZKA_CACHE_DIR"):
        return Path(env) / "embeddings.sqlite"
    try:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("narezka"))
    except ImportError:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "narezka"
    return base / "embeddings.sqlite"


def cache_key(
    embedder: str, max_tokens: int | None, normalized: bool, role: str, text: str
) -> bytes:
    """The sha256 digest identifying one vector."""
    h = hashlib.sha256()
    for part in (embedder, str(max_tokens), "norm" if normalized else "raw", role):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")  # a separator no part contains, so fields cannot run together
    h.update(text.encode("utf-8"))
    return h.digest()


@dataclass(frozen=True, slots=True)
class CacheStats:
    """What ``narezka cache stats`` prints."""

    path: Path
    entries: int
    size_bytes: int
    by_embedder: dict[str, int]


class EmbeddingCache(SqliteCache):
    """The sqlite file of cached vectors; usable as a context manager."""

    def __init__(self, path: str | Path | None = None) -> None:
        super().__init__(path if path is not None else default_cache_path(), _SCHEMA)

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``keys``."""
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            self._lookup(keys, found)
        return found

    def _lookup(self, keys: Sequence[bytes], found: dict[bytes, np.ndarray]) -> None:
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            part = list(keys[start : start + _LOOKUP_CHUNK])
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT key, dim, vector FROM vectors WHERE key IN ({marks})", part
            )
            for key, dim, blob in rows:
                found[bytes(key)] = np.frombuffer(blob, dtype=np.float32, count=dim)

    def put_many(self, embedder: str, items: Iterable[tuple[bytes, np.ndarray]]) -> None:
        """Store vectors (as float32) under their keys; existing keys are kept."""
        rows = [
            (key, embedder, int(vec.shape[0]), np.asarray(vec, dtype=np.float32).tobytes())
            for key, vec in items
        ]
        with self._lock, self.writing():
            self._db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?)", rows)
            self._db.commit()

    def stats(self) -> CacheStats:
        by = dict(
            self._db.execute("SELECT embedder, COUNT(*) FROM vectors GROUP BY embedder ORDER BY 1")
        )
        files = [self.path, *(self.path.with_name(self.path.name + s) for s in SIDE_FILES)]
        size = sum(p.stat().st_size for p in files if p.exists())
        return CacheStats(self.path, sum(by.values()), size, by)

    def clear(self, embedder: str | None = None) -> int:
        """Delete every vector, or only one embedder's; returns how many were deleted."""
        with self._lock, self.writing():
            if embedder is None:
                cur = self._db.execute("DELETE FROM vectors")
            else:
                cur = self._db.execute("DELETE FROM vectors WHERE embedder = ?", (embedder,))
            self._db.commit()
            self._db.execute("VACUUM")
        return cur.rowcount


class CachedEmbedder:
    """Wraps an embedder: vectors come from the cache when present, else from the model.

    ``hits`` and ``misses`` count texts (not calls) since construction; identical texts in
    one batch are embedded once.
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.inner = embedder
        self.cache = cache
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def max_tokens(self) -> int | None:
        return self.inner.max_tokens

    @property
    def budget(self) -> int:
        return self.inner.budget

    @property
    def counter(self) -> TokenCounter:
        return self.inner.counter

    @property
    def offline(self) -> bool:
        return self.inner.offline

    def _embed(self, texts: Sequence[str], role: str) -> Matrix:
        if not texts:
            return empty_matrix(self.inner.dim)
        name, window = self.inner.name, self.inner.max_tokens
        keys = [cache_key(name, window, True, role, t) for t in texts]
        found = self.cache.get_many(keys)
        todo: dict[bytes, str] = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        missed = sum(1 for k in keys if k not in found)
        self.hits += len(keys) - missed
        self.misses += missed
        if todo:
            embed = self.inner.embed_queries if role == "query" else self.inner.embed
            fresh = embed(list(todo.values()))
            new = dict(zip(todo, fresh, strict=True))
            try:
                self.cache.put_many(name, new.items())
            except DiskFullError:
                # A search needs no free space: its query vector is simply not cached.
                if role != "query":
                    raise
            found.update(new)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "passage")

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "query")


__all__ = ["CacheStats", "CachedEmbedder", "EmbeddingCache", "cache_key", "default_cache_path"]
