"""A per-directory lock file holding the owner's PID: one process per index.

qdrant-edge itself refuses a second opener with an opaque ``failed to open WAL … WouldBlock``;
this lock turns that into ``IndexInUseError`` naming the PID, before the engine is touched.

On POSIX the lock is an ``flock`` on the file, which the kernel drops when the owner dies, so a
stale file from a killed process is simply taken over (and PID reuse cannot fool it). Where
``fcntl`` is missing, the file is created exclusively and a stale one is detected by asking
whether its PID is still alive.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import IO

from narezka.store.errors import IndexInUseError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "narezka.lock"


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (a PID we may not signal still exists)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:  # pragma: no cover - platform quirks
        return False
    return True


def _read_pid(path: Path) -> int:
    try:
        return int(path.read_text(encoding="ascii").strip() or 0)
    except (OSError, ValueError):
        return 0


class DirectoryLock:
    """Holds ``<directory>/narezka.lock`` (or another ``name``) until ``release()``."""

    def __init__(self, directory: Path, name: str = LOCK_NAME) -> None:
        self.path = directory / name
        self._file: IO[str] | None = None
        self._acquire()

    def _acquire(self) -> None:
        if fcntl is not None:
            while True:
                handle = open(self.path, "a+", encoding="ascii")  # noqa: SIM115 - held open
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    handle.close()
                    raise IndexInUseError(str(self.path.parent), _read_pid(self.path)) from None
                # The owner unlinks the file on release: if we locked an unlinked inode, the
                # lock means nothing and a newcomer could lock the new file; try again.
                try:
                    same = os.path.samestat(os.fstat(handle.fileno()), os.stat(self.path))
                except FileNotFoundError:
                    same = False
                if same:
                    break
                handle.close()
            handle.seek(0)
            handle.truncate()
            # Unbuffered: on a full disk the PID (a courtesy for the message above) is left
            # out, and the lock, which needs no space, still holds.
            with contextlib.suppress(OSError):
                os.write(handle.fileno(), f"{os.getpid()}\n".encode("ascii"))
            self._file = handle
            return
        for _ in range(3):  # pragma: no cover - exercised only without fcntl
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pid = _read_pid(self.path)
                if pid_alive(pid):
                    raise IndexInUseError(str(self.path.parent), pid) from None
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
                continue
            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(f"{os.getpid()}\n")
            return
        raise IndexInUseError(str(self.path.parent), _read_pid(self.path))  # pragma: no cover

    def release(self) -> None:
        """Drop the lock; the file is removed so a listing shows the index is free."""
        if self._file is not None:
            # Unlink while still holding the lock, so no newcomer locks a file we then delete.
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            self._file.close()
            self._file = None
        elif fcntl is None:  # pragma: no cover
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
