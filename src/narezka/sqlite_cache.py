"""The sqlite file a cache lives in (embeddings, LLM-written contexts): opened once, shared
across threads, written without fsync per commit.

A cache holds nothing that cannot be made again, so a damaged file (not a database, a
malformed page) never stops a run: it is moved aside under a new name, with a warning naming
both, and an empty cache takes its place. A full disk is a clear :class:`DiskFullError`."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

from narezka.diskspace import full_error
from narezka.errors import NarezkaWarning

_DAMAGED = ("SQLITE_NOTADB", "SQLITE_CORRUPT")
"""sqlite's names for a file that is not (or no longer) a database."""
SIDE_FILES = ("-wal", "-shm", "-journal")


class CacheDamagedWarning(NarezkaWarning):
    """A damaged cache file was moved aside and the cache started empty."""


def is_damaged(exc: sqlite3.Error) -> bool:
    """Whether sqlite raised ``exc`` because the file's bytes are not a sound database."""
    return getattr(exc, "sqlite_errorname", "") in _DAMAGED


def is_full(exc: sqlite3.Error) -> bool:
    """Whether sqlite raised ``exc`` because the disk (or its quota) is full."""
    return getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL"


class SqliteCache:
    """One sqlite file with ``schema``; a context manager. Subclasses add the queries, each
    under ``self._lock``, and name in ``TABLE`` the table keyed by ``key``."""

    TABLE: ClassVar[str]

    def __init__(self, path: str | Path, schema: str) -> None:
        self.path = Path(path)
        self.touched: set[bytes] | None = None
        """When a set, every key looked up or stored is added to it (see :meth:`retain`)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = self._open(schema)
        except sqlite3.DatabaseError as exc:
            if is_full(exc):
                raise full_error(self.path, str(exc)) from exc
            if not is_damaged(exc):
                raise
            aside = self._move_aside()
            warnings.warn(
                CacheDamagedWarning(
                    f"{self.path} is damaged ({exc}): moved aside to {aside.name}; "
                    "the cache starts empty and fills again (delete that file when done)"
                ),
                stacklevel=2,
            )
            self._db = self._open(schema)

    def _open(self, schema: str) -> sqlite3.Connection:
        # One Index serves searches from many threads while its writer syncs: the connection
        # is shared across threads, each statement under one lock (sqlite3 objects are not
        # thread-safe by themselves).
        db = sqlite3.connect(self.path, check_same_thread=False)
        try:
            # WAL lets a reader (cache stats) run while an index run writes.
            db.execute("PRAGMA journal_mode=WAL")
            # No fsync per commit (WAL stays consistent; a crash may lose the last writes,
            # which a cache can afford): with fsync a cold run cost 3x the model time.
            db.execute("PRAGMA synchronous=NORMAL")
            # A deleted or replaced row is overwritten with zeros, not left in a free page:
            # a cache of texts must not keep one after it is dropped.
            db.execute("PRAGMA secure_delete=ON")
            db.execute(schema)
            db.commit()
        except BaseException:
            db.close()
            raise
        return db

    def _move_aside(self) -> Path:
        """Rename the damaged file (and its sqlite side files) out of the way."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        n = 1
        while aside.exists():  # never over an earlier damaged copy
            n += 1
            aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{n}")
        self.path.replace(aside)
        for suffix in SIDE_FILES:
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                side.replace(aside.with_name(aside.name + suffix))
        return aside

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Around a write: sqlite's "database or disk is full" becomes a ``DiskFullError``
        naming the file (the transaction is rolled back, the cache stays as it was)."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            if not is_full(exc):
                raise
            with contextlib.suppress(sqlite3.Error):
                self._db.rollback()
            raise full_error(self.path, str(exc)) from exc

    def touch(self, keys: Iterable[bytes]) -> None:
        """Note keys in use (a no-op unless :attr:`touched` is a set)."""
        if self.touched is not None:
            self.touched.update(keys)

    def retain(
        self, keys: Iterable[bytes | str], *, column: str = "key", vacuum: bool = False
    ) -> int:
        """Delete every row whose ``column`` (its key by default) is not in ``keys``, leaving
        none of its bytes in the file or its log (a cache that held a text's secret must not
        keep it in a free page); ``vacuum`` also rewrites the file at its new size. Returns
        how many rows went."""
        with self._lock:
            self._db.execute("CREATE TEMP TABLE IF NOT EXISTS kept (key PRIMARY KEY)")
            self._db.execute("DELETE FROM temp.kept")
            self._db.executemany("INSERT OR IGNORE INTO temp.kept VALUES (?)", ((k,) for k in keys))
            cur = self._db.execute(
                f"DELETE FROM {self.TABLE} WHERE {column} NOT IN (SELECT key FROM temp.kept)"
            )
            self._db.execute("DELETE FROM temp.kept")
            self._db.commit()
            self._scrub(vacuum=vacuum)
            return cur.rowcount

    def _scrub(self, *, vacuum: bool = False) -> None:
        """After a delete (under the lock): the pages it freed were zeroed (secure_delete,
        set on open); ``vacuum`` rewrites the file without them; the log, which still holds
        the pages as they were, is folded in and emptied."""
        if vacuum:
            self._db.execute("VACUUM")
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
