"""One open store per index in a process, shared by every ``Index`` of it; and a private
copy of an index the reader cannot write.

The embedded engine admits one process per shard, and opening it costs more than a search:
every ``Index`` of one folder (or one server collection) in this process holds the same
:class:`SharedStore`, whose :class:`ReadWriteLock` lets searches read while a sync writes one
file at a time, so a search sees each file as it was before or after, never half-written.

A reader who cannot write an index folder (another user's, a read-only mount) still
searches it: the engine writes even to open a shard, so :meth:`narezka.Index.open` opens a
private copy of the live generation (:func:`private_copy`, in the temporary folder, at the
cost of copying it once per open) and removes it on close; writing commands refuse.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from narezka.diskspace import OPEN_HEADROOM, ensure_free, free_bytes, full_error, segment_files
from narezka.errors import ConfigError, DiskFullError
from narezka.index import layout
from narezka.index.layout import GENERATION_FILES
from narezka.index.records import IndexRecord
from narezka.settings import qdrant_key
from narezka.store import VectorStore, open_store
from narezka.store.lock import LOCK_NAME


class ReadWriteLock:
    """Many readers or one writer (searches read; a sync writes a few files at a time).

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
            store, self.store, self.data = self.store, None, None
            if store is not None:
                close_store(store)


RESERVE_NAME = "narezka.reserve"
RESERVE_BYTES = 16 * 2**20
"""Space a sync holds in its generation folder and gives back before the store closes: a
disk another program fills during the run still has room for the engine's last flush,
which writes through memory maps (a bus error, with no room)."""


@contextlib.contextmanager
def reserve(folder: Path | None) -> Iterator[None]:
    """Hold ``RESERVE_BYTES`` of real blocks in ``folder`` (None: a server store, nothing)
    for the block; removed when it ends, however it ends (#38 row 11). Where there is not
    that much room, nothing is held: the run's own checks of free space stop any write that
    would not fit, and a sync with nothing to write needs none."""
    path = folder / RESERVE_NAME if folder is not None else None
    try:
        if path is not None and free_bytes(path.parent) >= RESERVE_BYTES + OPEN_HEADROOM:
            try:
                _allocate(path, RESERVE_BYTES)
            except OSError:  # taken meanwhile: no reserve, as where there was no room
                path.unlink(missing_ok=True)
        yield
    finally:
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def _allocate(path: Path, size: int) -> None:
    """A file of ``size`` allocated bytes (not a hole: a full disk cannot take them back)."""
    with path.open("wb") as spare:
        try:
            os.posix_fallocate(spare.fileno(), 0, size)
            return
        except (AttributeError, OSError):  # not on this platform or file system: write them
            pass
        block = bytes(2**20)
        for _ in range(size // len(block)):
            spare.write(block)


CLOSE_NEEDS = 8 * 2**20
"""Free bytes below which a store is closed without optimizing (see :func:`close_store`)."""


def room_to_merge(store: VectorStore) -> bool:
    """Whether merging the store's segments fits in the free space: a merge writes a copy of
    what it merges through memory maps, and into a full disk that is a bus error. A store
    on a server always has room here (the server minds its own disk)."""
    path = getattr(store, "path", None)
    if path is None:
        return True
    folder = Path(path)
    segments = sum(p.stat().st_size for p in segment_files(folder) if p.is_file())
    return free_bytes(folder) >= CLOSE_NEEDS + segments


def close_store(store: VectorStore) -> None:
    """Close a store. Where merging its segments does not fit (a disk that filled up during
    a run) the engine is closed without merging, which would write through memory maps into
    no space (a bus error): its log holds every write, and a later run merges; a failure to
    flush there is a ``DiskFullError`` naming the folder, not the engine's text."""
    path = getattr(store, "path", None)
    if path is None or room_to_merge(store):
        store.close()
        return
    if hasattr(store, "optimize_on_close"):
        store.optimize_on_close = False
    try:
        store.close()
    except Exception as exc:  # the engine raises bare Exception
        raise full_error(Path(path), f"closing the index: {exc}") from None


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
        options["api_key"] = qdrant_key()
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


# ---- a reader who cannot write the index ------------------------------------------------

READONLY_PREFIX = "narezka-readonly-"


def writable(home: Path, record: IndexRecord) -> bool:
    """Whether this user can write the index folder and its live generation (the engine
    writes even to open a shard: its log, its payload storage's maps, a lock)."""
    data = record.data_dir(home)
    probes = [home, data, *(data / name for name in GENERATION_FILES)]
    return all(os.access(p, os.W_OK) for p in probes if p.exists())


def private_copy(home: Path, record: IndexRecord) -> Path:
    """A copy of ``home``'s record and live generation in a private temporary folder, for a
    reader who cannot write the index (#38 row 10): searched there, removed on close
    (:func:`drop_copy`). The embedding and conversion caches are left behind (a query
    embeds its own text; a converted file is converted again if a hit needs it)."""
    data = record.data_dir(home)
    needed = OPEN_HEADROOM + sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
    copy = Path(tempfile.mkdtemp(prefix=READONLY_PREFIX))
    try:
        ensure_free(copy, needed, f"search the read-only index {home} from a private copy")
        shutil.copy2(home / layout.INDEX_META, copy / layout.INDEX_META)
        skipped = {layout.WRITER_LOCK, LOCK_NAME, "temp_segments", *layout.HOME_FILES}
        shutil.copytree(
            data,
            record.data_dir(copy),
            ignore=lambda folder, names: [n for n in names if n in skipped or n.startswith(
                layout.DATA_PREFIX)],
            dirs_exist_ok=True,
        )  # fmt: skip
    except OSError as exc:
        drop_copy(copy)
        if isinstance(exc, DiskFullError):
            raise
        raise ConfigError(
            f"{home} is read-only for you, and a private copy to search could not be made in "
            f"{copy.parent}: {exc.strerror or exc}"
        ) from None
    except BaseException:
        drop_copy(copy)
        raise
    return copy


def drop_copy(copy: Path) -> None:
    """Remove a private copy :func:`private_copy` made (and nothing else)."""
    if copy.name.startswith(READONLY_PREFIX):
        shutil.rmtree(copy, ignore_errors=True)
