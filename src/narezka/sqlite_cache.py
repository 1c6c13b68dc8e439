"""The sqlite file a cache lives in (embeddings, LLM-written contexts): opened once, shared
across threads, written without fsync per commit."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from types import TracebackType
from typing import Self


class SqliteCache:
    """One sqlite file with ``schema``; a context manager. Subclasses add the queries, each
    under ``self._lock``."""

    def __init__(self, path: str | Path, schema: str) -> None:
        self.path = Path(path)
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
