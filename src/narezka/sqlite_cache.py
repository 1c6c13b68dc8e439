"""The sqlite file a cache lives in (embeddings, LLM-written contexts): opened once, shared
across threads, written without fsync per commit."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self


class SqliteCache:
    """One sqlite file with ``schema``; a context manager. Subclasses add the queries, each
    under ``self._lock``, and name in ``TABLE`` the table keyed by ``key``."""

    TABLE: ClassVar[str]

    def __init__(self, path: str | Path, schema: str) -> None:
        self.path = Path(path)
        self.touched: set[bytes] | None = None
        """When a set, every key looked up or stored is added to it (see :meth:`retain`)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One Index serves searches from many threads while its writer syncs: the connection
        # is shared across threads, each statement under one lock (sqlite3 objects are not
        # thread-safe by themselves).
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._lock = threading.Lock()
        # WAL lets a reader (cache stats) run while an index run writes.
        self._db.execute("PRAGMA journal_mode=WAL")
        # No fsync per commit (WAL stays consistent; a crash may lose the last writes, which
        # a cache can afford): with fsync a cold run cost 3x the model time.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(schema)
        self._db.commit()

    def touch(self, keys: Iterable[bytes]) -> None:
        """Note keys in use (a no-op unless :attr:`touched` is a set)."""
        if self.touched is not None:
            self.touched.update(keys)

    def retain(self, keys: Iterable[bytes]) -> int:
        """Delete every row whose key is not in ``keys``, leaving none of its bytes in the
        file or its log (a cache that held a text's secret must not keep it in a free page);
        returns how many rows went."""
        with self._lock:
            self._db.execute("CREATE TEMP TABLE IF NOT EXISTS kept (key BLOB PRIMARY KEY)")
            self._db.execute("DELETE FROM temp.kept")
            self._db.executemany("INSERT OR IGNORE INTO temp.kept VALUES (?)", ((k,) for k in keys))
            self._db.execute("PRAGMA secure_delete=ON")  # deleted content is zeroed
            cur = self._db.execute(
                f"DELETE FROM {self.TABLE} WHERE key NOT IN (SELECT key FROM temp.kept)"
            )
            self._db.execute("DELETE FROM temp.kept")
            self._db.commit()
            # The log still holds the pages as they were: fold it in and empty it.
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return cur.rowcount

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
