"""Errors raised by the storage stage, all under ``narezka.errors.NarezkaError``.

::

    NarezkaError
    └── StoreError                 the vector index cannot be used as asked
        ├── IndexInUseError        another live process holds the index directory
        ├── DimensionMismatchError the index was built with another dimension (use --rebuild)
        ├── StoreConfigError       a call the index was not set up for (e.g. bm25 without sparse)
        ├── StoreUnavailableError  a Qdrant server cannot be reached (names the URL and reason)
        └── IndexDamagedError      files of the index are damaged (names them; `narezka check`)
"""

from __future__ import annotations

from narezka.errors import ConfigError, NarezkaError


class StoreError(NarezkaError):
    """The vector index cannot be used as asked."""


class IndexInUseError(StoreError):
    """Another live process holds the index; ``pid`` is its process id (0 when unknown)."""

    def __init__(self, path: str, pid: int) -> None:
        who = f"PID {pid}" if pid else "another process"
        super().__init__(
            f"index {path} is in use by {who}; wait for it to finish or stop it "
            "(one process per index)"
        )
        self.path = path
        self.pid = pid


class DimensionMismatchError(StoreError):
    """The existing index stores vectors of another size than the embedder produces."""

    def __init__(self, where: str, expected: int, found: int) -> None:
        super().__init__(
            f"index {where} holds {found}-d vectors but the embedder makes {expected}-d ones "
            "(built by another embedder or narezka version); re-create it with --rebuild"
        )
        self.where = where
        self.expected = expected
        self.found = found


class StoreConfigError(StoreError, ConfigError):
    """A call the index was not set up for, or a store used before ``ensure()``."""


class StoreUnavailableError(StoreError):
    """A Qdrant server did not answer; the message names the URL and the reason."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"Qdrant server at {url} is unavailable: {reason}")
        self.url = url
        self.reason = reason


class IndexDamagedError(StoreError):
    """Files of an index cannot be read as narezka wrote them: the message names the file or
    the index, what is wrong, and the command that repairs it."""


__all__ = [
    "DimensionMismatchError",
    "IndexDamagedError",
    "IndexInUseError",
    "StoreConfigError",
    "StoreError",
    "StoreUnavailableError",
]
