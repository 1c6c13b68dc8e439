"""The cache of LLM-written chunk contexts: one sqlite file beside the embedding cache.

A context's key is the sha256 of (prompt version, model spec, the document excerpt sent, the
chunk's ``embed_text``): another prompt, model, document or chunk never reuses an old context.
Each context is committed as soon as it is written, so an interrupted run keeps what it paid for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from narezka.sqlite_cache import SqliteCache

CONTEXT_CACHE_NAME = "contexts.sqlite"


def context_cache_file(embedding_cache: Path) -> Path:
    """The LLM context cache that goes with an embedding cache file: beside it."""
    return embedding_cache.with_name(CONTEXT_CACHE_NAME)


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


class ContextCache(SqliteCache):
    """Generated contexts in one sqlite file (beside the embedding cache); a context manager."""

    TABLE = "contexts"

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, _SCHEMA)

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, str]:
        """The cached contexts among ``keys``."""
        found: dict[bytes, str] = {}
        self.touch(keys)
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
        self.touch((key,))
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

    def by_model(self) -> dict[str, int]:
        """How many contexts each model wrote."""
        with self._lock:
            rows = self._db.execute("SELECT model, COUNT(*) FROM contexts GROUP BY 1 ORDER BY 1")
            return {str(m): int(n) for m, n in rows}

    def clear(self, model: str | None = None) -> int:
        """Delete every context, or one model's; returns how many were deleted."""
        with self._lock:
            if model is None:
                cur = self._db.execute("DELETE FROM contexts")
            else:
                cur = self._db.execute("DELETE FROM contexts WHERE model = ?", (model,))
            self._db.commit()
            self._db.execute("VACUUM")
            return cur.rowcount


__all__ = ["PROMPT_VERSION", "ContextCache", "context_key"]
