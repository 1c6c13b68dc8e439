"""The cache of LLM-written chunk contexts: one sqlite file beside the embedding cache.

A context's key is the sha256 of (prompt version, model spec, the document excerpt sent, the
chunk's ``embed_text``): another prompt, model, document or chunk never reuses an old context.
Each context is committed as soon as it is written, so an interrupted run keeps what it paid for.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

PROMPT_VERSION = "1"
"""Part of every cache key and of the index fingerprint: a new prompt regenerates everything."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS contexts (
    key     BLOB PRIMARY KEY,
    model   TEXT NOT NULL,
    context TEXT NOT NULL,
    prompt_tokens INTEGER
) WITHOUT ROWID
"""


def context_key(model: str, excerpt: str, chunk_text: str) -> bytes:
    """The sha256 digest one context is cached under."""
    h = hashlib.sha256()
    for part in (PROMPT_VERSION, model, hashlib.sha256(excerpt.encode()).hexdigest()):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    h.update(chunk_text.encode("utf-8"))
    return h.digest()


class ContextCache:
    """Generated contexts in one sqlite file (beside the embedding cache); a context manager."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, str]:
        """The cached contexts among ``keys``."""
        found: dict[bytes, str] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = list(keys[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT key, context FROM contexts WHERE key IN ({marks})", part
                )
                found.update((bytes(k), str(c)) for k, c in rows)
        return found

    def put(self, key: bytes, model: str, context: str, prompt_tokens: int | None) -> None:
        """Store one context (committed at once)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO contexts VALUES (?, ?, ?, ?)",
                (key, model, context, prompt_tokens),
            )
            self._db.commit()

    def count(self) -> int:
        """How many contexts are cached."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM contexts").fetchone()[0])

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> ContextCache:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


__all__ = ["PROMPT_VERSION", "ContextCache", "context_key"]
