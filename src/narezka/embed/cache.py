"""A content-addressed embedding cache in one sqlite file, and an embedder that uses it.

A vector's key is the sha256 of (embedder id — which names the model revision or weights
hash —, its max length, the normalization flag, passage or query, and the text), so a new
model revision, window or role never reuses old vectors. Vectors are float32 blobs.

``CachedEmbedder.prefetch`` and :func:`prefetching` let a pipeline that embeds file after file
start on the next files' passages, so a served model's request slots stay busy across files.
"""

from __future__ import annotations

import hashlib
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from narezka._forward import Forward
from narezka.embed.base import Embedder, Matrix, empty_matrix
from narezka.embed.errors import ContextLengthError
from narezka.environment import Environment
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


def default_cache_path(env: Environment) -> Path:
    """``$NAREZKA_CACHE_DIR``, else the user cache dir (platformdirs, or ``$XDG_CACHE_HOME``
    / ``~/.cache``), then ``narezka/embeddings.sqlite``; as ``env`` says (the top's, handed
    down; ``Environment()``: the user cache dir)."""
    if env.cache_dir is not None:
        return env.cache_dir / "embeddings.sqlite"
    try:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("narezka"))
    except ImportError:
        base = (env.xdg_cache_home or Path.home() / ".cache") / "narezka"
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

    TABLE = "vectors"

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, _SCHEMA)

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``keys``."""
        found: dict[bytes, np.ndarray] = {}
        self.touch(keys)
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
        self.touch(row[0] for row in rows)
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
            self._scrub(vacuum=True)
        return cur.rowcount


class CachedEmbedder:
    """Wraps an embedder: vectors come from the cache when present, else from the model.

    ``hits`` and ``misses`` count texts (not calls) since construction; identical texts in
    one batch are embedded once. ``prefetch`` starts passages a caller will ask for soon.
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.inner = embedder
        self.cache = cache
        self.hits = 0
        self.misses = 0
        self._ahead: dict[bytes, Future[np.ndarray]] = {}
        self._queue: list[tuple[str, Future[np.ndarray]]] = []
        self._feeders = 0
        self._ahead_lock = threading.Lock()

    name = Forward[str]("inner")
    dim = Forward[int]("inner")
    max_tokens = Forward[int | None]("inner")
    budget = Forward[int]("inner")
    counter = Forward[TokenCounter]("inner")
    offline = Forward[bool]("inner")

    @property
    def batch_hint(self) -> int | None:
        """The wrapped embedder's preferred texts per call, if it has one."""
        hint = getattr(self.inner, "batch_hint", None)
        return hint if isinstance(hint, int) else None

    def _keys(self, texts: Sequence[str], role: str) -> list[bytes]:
        name, window = self.inner.name, self.inner.max_tokens
        return [cache_key(name, window, True, role, t) for t in texts]

    def _embed(self, texts: Sequence[str], role: str) -> Matrix:
        if not texts:
            return empty_matrix(self.inner.dim)
        keys = self._keys(texts, role)
        found = self.cache.get_many(keys)
        missed = sum(1 for k in keys if k not in found)
        self.hits += len(keys) - missed
        self.misses += missed
        new = self._prefetched(k for k in keys if k not in found) if role == "passage" else {}
        found.update(new)
        todo: dict[bytes, str] = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if todo:
            embed = self.inner.embed_queries if role == "query" else self.inner.embed
            try:
                fresh = embed(list(todo.values()))
            except ContextLengthError as exc:
                raise self._in_batch(exc, list(todo), keys, found, new) from None
            new.update(zip(todo, fresh, strict=True))
            found.update(new)
        if new:
            try:
                self.cache.put_many(self.inner.name, new.items())
            except DiskFullError:
                # A search needs no free space: its query vector is simply not cached.
                if role != "query":
                    raise
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _in_batch(
        self,
        exc: ContextLengthError,
        sent: list[bytes],
        keys: list[bytes],
        found: dict[bytes, np.ndarray],
        new: dict[bytes, np.ndarray],
    ) -> ContextLengthError:
        """``exc`` about the texts sent (cache misses, each once) restated for the caller's
        batch: its positions, and the rows of every other text, which are cached meanwhile."""
        rejected = {sent[i] for i in exc.indices}
        new.update((sent[i], row) for i, row in (exc.embedded or {}).items())
        if new:
            self.cache.put_many(self.inner.name, new.items())
        rows = found | new
        counts = dict(zip((sent[i] for i in exc.indices), exc.counts or (), strict=False))
        indices = [i for i, k in enumerate(keys) if k in rejected]
        embedded = None
        if exc.embedded is not None:
            embedded = {i: rows[k] for i, k in enumerate(keys) if k not in rejected and k in rows}
        return ContextLengthError(
            exc.embedder,
            indices,
            window=exc.window,
            counts=[counts[keys[i]] for i in indices] if exc.counts is not None else None,
            detail=exc.detail,
            embedded=embedded,
        )

    def prefetch(self, texts: Sequence[str]) -> None:
        """Start embedding the passages among ``texts`` that are not cached, on a background
        thread, when the wrapped embedder keeps several requests in flight (a served model;
        for a local one this does nothing). ``embed`` of them then waits for those vectors
        instead of asking again; one that failed here is embedded there, where its error is
        handled. Every prefetched passage must be asked for: its vector is held until then."""
        hint = getattr(self.inner, "batch_hint", None)
        if not texts or not isinstance(hint, int):
            return
        keys = self._keys(texts, "passage")
        found = self.cache.get_many(keys)
        with self._ahead_lock:
            for key, text in zip(keys, texts, strict=True):
                if key not in found and key not in self._ahead:
                    future: Future[np.ndarray] = Future()
                    self._ahead[key] = future
                    self._queue.append((text, future))
            # Two feeders: one's next call starts while the other's last requests finish.
            if self._queue and self._feeders < 2:
                self._feeders += 1
                threading.Thread(target=self._feed, args=(hint,), daemon=True).start()

    def _feed(self, hint: int) -> None:
        """Embed the prefetch queue, ``hint`` texts per call, until it is empty."""
        while True:
            with self._ahead_lock:
                if not self._queue:
                    self._feeders -= 1
                    return
                batch, self._queue = self._queue[:hint], self._queue[hint:]
            futures = [future for _, future in batch]
            try:
                rows = list(self.inner.embed([text for text, _ in batch]))
            except ContextLengthError as exc:
                kept = exc.embedded or {}
                for i, future in enumerate(futures):
                    if i in kept:
                        future.set_result(kept[i])
                    else:
                        future.set_exception(exc)
            except Exception as exc:  # embed() meets it again, on the caller's thread
                for future in futures:
                    future.set_exception(exc)
            else:
                for future, row in zip(futures, rows, strict=True):
                    future.set_result(row)

    def _prefetched(self, keys: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The prefetched rows among ``keys`` (waiting for those in flight), taken out."""
        with self._ahead_lock:
            futures = {k: f for k in keys if (f := self._ahead.pop(k, None)) is not None}
        rows: dict[bytes, np.ndarray] = {}
        for key, future in futures.items():
            if future.exception() is None:
                rows[key] = future.result()
        return rows

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "passage")

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "query")


T = TypeVar("T")


def prefetching(
    items: Iterable[T], texts_of: Callable[[T], Sequence[str]], embedder: Embedder
) -> Iterator[T]:
    """``items`` as they come, each handed over once the passages of the items after it —
    up to the embedder's ``batch_hint`` texts — are prefetched (see
    ``CachedEmbedder.prefetch``). A pipeline that embeds file after file then keeps a served
    model's request slots busy across files; with any other embedder nothing is read ahead."""
    hint = getattr(embedder, "batch_hint", None)
    if not isinstance(embedder, CachedEmbedder) or not isinstance(hint, int):
        yield from items
        return
    ahead: deque[tuple[T, int]] = deque()
    queued = 0
    for item in items:
        texts = texts_of(item)
        embedder.prefetch(texts)
        ahead.append((item, len(texts)))
        queued += len(texts)
        while ahead and queued - ahead[0][1] >= hint:
            first, count = ahead.popleft()
            queued -= count
            yield first
    while ahead:
        yield ahead.popleft()[0]


__all__ = [
    "CacheStats",
    "CachedEmbedder",
    "EmbeddingCache",
    "cache_key",
    "default_cache_path",
    "prefetching",
]
