"""One open store per index in a process, shared by every ``Index`` of it.

The embedded engine admits one process per shard, and opening it costs more than a search:
every ``Index`` of one folder (or one server collection) in this process holds the same
:class:`SharedStore`, whose :class:`ReadWriteLock` lets searches read while a sync writes one
file at a time, so a search sees each file as it was before or after, never half-written.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from narezka.errors import ConfigError
from narezka.index.records import IndexRecord
from narezka.store import VectorStore, open_store


class ReadWriteLock:
    """Many readers or one writer (searches read; a sync writes one file at a time).

    A waiting writer goes before new readers: under a steady stream of overlapping searches
    (a server's clients) the readers would otherwise never all be out at once, and a sync
    would wait forever. A thread that already reads may read again (``neighbours`` reads
    points inside its own read) without waiting, or it would wait on a writer that waits
    on it."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._waiting = 0
        self._held = threading.local()

    @contextlib.contextmanager
    def read(self) -> Iterator[None]:
        """Hold a read share (re-entrant on one thread)."""
        depth = getattr(self._held, "depth", 0)
        with self._cond:
            if depth == 0:
                self._cond.wait_for(lambda: not self._writing and self._waiting == 0)
            self._readers += 1
        self._held.depth = depth + 1
        try:
            yield
        finally:
            self._held.depth = depth
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def write(self) -> Iterator[None]:
        """Hold the lock alone, once every reader is out; new readers wait behind it."""
        with self._cond:
            self._waiting += 1
            try:
                self._cond.wait_for(lambda: not self._writing and self._readers == 0)
            finally:
                self._waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


class SharedStore:
    """One index's open store in this process, shared by every ``Index`` of it (an index
    folder, or a server collection opened by URL: ``home`` None)."""

    def __init__(self, key: str, home: Path | None) -> None:
        self.key = key
        self.home = home
        self.lock = ReadWriteLock()
        self.store: VectorStore | None = None
        self.data: str | None = None
        self.users = 0
        self.guard = threading.Lock()

    def store_for(self, record: IndexRecord) -> VectorStore:
        """The open store of the live generation (opened on first use, reopened after a
        rebuild another process swapped in)."""
        with self.guard:
            data = record.live
            if self.store is None or self.data != data:
                if self.store is not None:
                    self.store.close()
                    self.store = None
                self.store = open_data_store(self.home, record)
                self.data = data
            return self.store

    def swap(self, store: VectorStore, data: str) -> None:
        """Make a freshly built generation the live one (under the writer lock)."""
        with self.lock.write(), self.guard:
            if self.store is not None:
                self.store.close()
            self.store, self.data = store, data

    def close(self) -> None:
        """Close the open store (the last ``Index`` of it has closed)."""
        with self.guard:
            if self.store is not None:
                self.store.close()
            self.store, self.data = None, None


_OPEN: dict[str, SharedStore] = {}
_OPEN_LOCK = threading.Lock()


def acquire(key: str, home: Path | None) -> SharedStore:
    """The shared store of the index ``key`` (its folder, or URL and collection), one more user."""
    with _OPEN_LOCK:
        shared = _OPEN.get(key)
        if shared is None:
            shared = _OPEN[key] = SharedStore(key, home)
        shared.users += 1
        return shared


def release(shared: SharedStore) -> None:
    """One user fewer; the last one closes the store."""
    with _OPEN_LOCK:
        shared.users -= 1
        if shared.users > 0:
            return
        _OPEN.pop(shared.key, None)
    shared.close()


def open_data_store(home: Path | None, record: IndexRecord) -> VectorStore:
    """Open the live generation's store that ``record`` names, ready for writes."""
    url = record.url
    # A reader by URL queries the alias, which a rebuild moves atomically; the writer
    # writes into the generation's own collection (a rebuild's is not behind the alias yet).
    name = (record.alias if home is None else None) or record.collection
    options: dict[str, Any] = {"collection": name} if name else {}
    if url:
        options["cluster"] = record.cluster("applied")
    if not url and home is None:  # pragma: no cover - a URL-opened index's record has a url
        raise ConfigError("an embedded index needs its folder")
    path = record.data_dir(home) if not url and home is not None else None
    store = open_store(path, url=url, **options)
    try:
        store.ensure(record.dim, sparse=True, rescore=record.rescore_dim or 0)
    except BaseException:
        store.close()
        raise
    return store
