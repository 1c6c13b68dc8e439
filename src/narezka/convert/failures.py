"""Files whose conversion broke a limit, remembered by their bytes' hash so that the next sync
names them again at once instead of spending the limit on them again.

The record lives beside the conversion cache under the index folder (``failed.sqlite``) and
holds hashes and reasons only, never a document's text. An entry is keyed by the bytes, the
suffix, the converter version and the limits it broke: a file is tried again once its bytes
change, narezka's converters change, or the user raises the limits.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from narezka.convert import CONVERTER_VERSION
from narezka.convert.limits import Limits
from narezka.convert.options import ConvertOptions
from narezka.sqlite_cache import SqliteCache

__all__ = ["FAILED_NAME", "FailedConversions", "failure_key"]

FAILED_NAME = "failed.sqlite"
"""The record's file name, in the folder of the conversion cache."""
_SCHEMA = "CREATE TABLE IF NOT EXISTS failed (key TEXT PRIMARY KEY, reason TEXT)"
REMEMBERED = " (remembered from an earlier run: not converted again until the file changes)"


def failure_key(data: bytes, suffix: str, options: ConvertOptions) -> str:
    """The key of one file under the run's limits (``options``)."""
    limits = Limits.for_size(len(data), options).key()
    return f"{hashlib.sha256(data).hexdigest()}:{suffix.lower()}:{CONVERTER_VERSION}:{limits}"


class FailedConversions(SqliteCache):
    """The failure record beside the conversion cache file ``cache``."""

    TABLE = "failed"

    def __init__(self, cache: str | Path) -> None:
        super().__init__(Path(cache).with_name(FAILED_NAME), _SCHEMA)

    def reason(self, key: str) -> str | None:
        """Why the conversion of the file with ``key`` was stopped before, or None."""
        with self._lock:
            row = self._db.execute("SELECT reason FROM failed WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def remember(self, key: str, reason: str) -> None:
        """Note that the file with ``key`` broke a limit, and how."""
        with self._lock:
            try:
                self._db.execute("INSERT OR REPLACE INTO failed VALUES (?, ?)", (key, reason))
                self._db.commit()
            except sqlite3.Error:  # a record not kept costs one more try, never the run
                self._db.rollback()
