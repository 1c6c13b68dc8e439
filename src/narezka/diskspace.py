"""Free space where an index writes, checked before writing rather than discovered by a bus
error.

The embedded engine memory-maps its files and writes them through the mapping: a write into a
file hole on a full disk is a SIGBUS, which kills the process without a word. It also writes
while it merely opens a shard (deletion flags it creates, its write-ahead log), and on a
memory-backed file system (tmpfs) every hole of a mapped file that it touches, even to read,
takes memory from the file system's quota. So narezka checks ``shutil.disk_usage`` first and
stops with a :class:`~narezka.errors.DiskFullError` naming the folder, the device and the
space needed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from narezka.errors import DiskFullError

MIB = 2**20
OPEN_HEADROOM = 4 * MIB
"""What the engine writes to open a shard on a disk-backed file system (flag files it creates,
its log's header), with room to spare."""
WAL_SEGMENT = 32 * MIB
"""One segment of the engine's write-ahead log: preallocated, filled as points are written."""
NEW_SEGMENT = 48 * MIB
"""What a new shard's memory-mapped segment files take once touched on a memory-backed file
system (measured: 59 MiB populated on opening a 133-point shard on tmpfs)."""
MEMORY_FILE_SYSTEMS = frozenset({"tmpfs", "ramfs", "shmfs"})
"""File systems where touching a hole of a mapped file allocates it, even to read."""


class Mount(NamedTuple):
    """The file system holding a path."""

    device: str
    point: Path
    kind: str

    def describe(self) -> str:
        """``/dev/sda1 (ext4, mounted on /home)``."""
        return f"{self.device} ({self.kind}, mounted on {self.point})"


def existing(path: Path) -> Path:
    """``path``, or its nearest existing parent (what a not-yet-created folder will be on)."""
    probe = path.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def mount_of(path: Path) -> Mount:
    """The file system ``path`` is on (from ``/proc/self/mounts``; a plain guess elsewhere)."""
    probe = existing(path).resolve()
    point = probe
    while not os.path.ismount(point) and point != point.parent:
        point = point.parent
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) > 2 and parts[1] == str(point):
                return Mount(parts[0], point, parts[2])
    return Mount(f"the device of {point}", point, "unknown")


def free_bytes(path: Path) -> int:
    """Bytes free for this user on the file system holding ``path``."""
    return shutil.disk_usage(existing(path)).free


def holes(files: Iterable[Path]) -> int:
    """Bytes of ``files`` that are holes (size beyond the blocks allocated): what mapping
    them may allocate."""
    total = 0
    for file in files:
        with contextlib.suppress(OSError):
            st = file.stat()
            total += max(0, st.st_size - st.st_blocks * 512)
    return total


def segment_files(folder: Path) -> list[Path]:
    """The engine's segment files in a generation folder (what it maps when it opens)."""
    return [p for p in (folder / "segments").rglob("*") if p.is_file()]


def open_needs(folder: Path) -> int:
    """Free bytes the engine needs to open the shard in ``folder``: on a memory-backed file
    system, half the holes of its segment files (measured on tmpfs: opening populated 59 of
    their 125 MiB of holes; the log's preallocated segments were not touched)."""
    if mount_of(folder).kind in MEMORY_FILE_SYSTEMS:
        return OPEN_HEADROOM + holes(segment_files(folder)) // 2
    return OPEN_HEADROOM


def create_needs(folder: Path) -> int:
    """Free bytes the engine needs to create a new shard in ``folder``."""
    if mount_of(folder).kind in MEMORY_FILE_SYSTEMS:
        return OPEN_HEADROOM + 2 * WAL_SEGMENT + NEW_SEGMENT
    return OPEN_HEADROOM


def write_needs(source_bytes: int, dim: int) -> int:
    """Free bytes a sync needs to store ``source_bytes`` of text as ``dim``-d points: the text
    twice in the payload (text and embed_text), each payload and vector once in the engine's
    log and once in its segments, a chunk per ~512 bytes of text at worst."""
    chunks = source_bytes // 512 + 1
    return OPEN_HEADROOM + 4 * source_bytes + chunks * (2 * 4 * dim + 1024)


def ensure_free(path: Path, needed: int, what: str) -> None:
    """Raise ``DiskFullError`` unless ``needed`` bytes are free where ``path`` is."""
    free = free_bytes(path)
    if free < needed:
        raise DiskFullError(
            path, f"to {what}", needed=needed, free=free, device=mount_of(path).describe()
        )


def full_error(path: Path, problem: str) -> DiskFullError:
    """The error for a write that failed because the disk filled up meanwhile."""
    return DiskFullError(path, problem, device=mount_of(path).describe())
