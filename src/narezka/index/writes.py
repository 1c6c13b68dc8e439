"""A sync's writes, a few files at a time: one manifest transaction records every point the
held files may touch, one upsert and one delete write them, one transaction commits them.

The manifest's write-ahead protocol (:mod:`narezka.store.manifest`) is the same for a batch as
for one file: every id a write may touch is pending before the store sees it, and a file's new
state replaces its pending ids only once its points are written; a kill in between leaves
pending rows that the next open repairs. Per file, the engine call, the two transactions and
the hand-off cost about what embedding ten chunks with the ``hash`` model does; a batch pays
them once. A batch is written when it holds :data:`WRITE_POINTS` points or
:data:`WRITE_FILES` files, or has waited :data:`WRITE_SECONDS` (a slow model still shows
its files to searches soon), and before the sync deletes anything or ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path

from narezka.diskspace import ensure_free, write_needs
from narezka.errors import DiskFullError, NarezkaError, SourceError
from narezka.index.reports import IndexReport
from narezka.store import FileEntry, FilePlan, Manifest, StoredPoint, VectorStore
from narezka.store.errors import IndexDamagedError, StoreUnavailableError

WRITE_POINTS = 1024
WRITE_FILES = 64
WRITE_SECONDS = 1.0
"""A batch is written once it holds this many points or files, or is this old (see above)."""
CLOSE_HEADROOM = 8 * 2**20
"""Free bytes kept after a batch's points: what closing the store still writes (its
flush, the manifest's last commit) when a run stops for want of space."""
STOPS = (DiskFullError, IndexDamagedError, StoreUnavailableError)
"""Failures every later write would share: the sync stops on them."""


@dataclass(frozen=True, slots=True)
class FileWrite:
    """One file's share of a batch: its plan, the points it upserts and the manifest row
    that records it once they are written."""

    plan: FilePlan
    points: list[StoredPoint]
    entry: FileEntry

    @property
    def source(self) -> str:
        return self.entry.path


class WriteBatch:
    """The files a sync has embedded and not written yet (see the module docstring)."""

    def __init__(
        self,
        store: VectorStore,
        manifest: Manifest,
        report: IndexReport,
        dim: int,
        writing: Callable[[], AbstractContextManager[object]] | None = None,
    ) -> None:
        self.store, self.manifest, self.report, self.dim = store, manifest, report, dim
        # Searches in this process take the other side: they see a batch before or after.
        self.writing = writing or nullcontext
        self._held: list[FileWrite] = []
        self._points = 0
        self._since = 0.0

    def add(self, write: FileWrite) -> None:
        """Hold one file's write; write the batch when it is full or old enough."""
        if not self._held:
            self._since = time.monotonic()
        self._held.append(write)
        self._points += len(write.points)
        if (
            self._points >= WRITE_POINTS
            or len(self._held) >= WRITE_FILES
            or time.monotonic() - self._since >= WRITE_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        """Write every held file. A failure that is no :data:`STOPS` is tried file by file,
        so only the file it belongs to is skipped (named in the report)."""
        held, self._held, self._points = self._held, [], 0
        if not held:
            return
        started = time.perf_counter()
        try:
            self._write(held)
        except STOPS:
            raise
        except NarezkaError:
            if len(held) == 1:
                raise
            for write in held:
                try:
                    self._write([write])
                except STOPS:
                    raise
                except NarezkaError as exc:
                    self.report.skipped.append(SourceError(write.source, str(exc)))
        finally:
            self.report.seconds["store"] += time.perf_counter() - started

    @contextmanager
    def kept_on_stop(self) -> Iterator[None]:
        """Around a sync's loop: when it stops (a failure every later file would share, a
        Ctrl-C, a callback's exception), the files already embedded are written first if the
        store still takes them, so what was done before the stop stays indexed, as it did
        when every file was written by itself. A failure of that write leaves them to the
        next sync (nothing of theirs was begun, or recovery repairs it)."""
        try:
            yield
        except BaseException:
            with suppress(NarezkaError, OSError):
                self.flush()
            self._held, self._points = [], 0
            raise

    def _write(self, held: Sequence[FileWrite]) -> None:
        points = [p for w in held for p in w.points]
        deleted = [pid for w in held for pid in w.plan.delete]
        if points:
            self._room_for(held, points)
        with self.writing():
            self.manifest.begin_many([(w.source, w.plan.touched) for w in held])
            if points:
                self.store.upsert(points)
            if deleted:
                self.store.delete(deleted)
            self.manifest.commit_many([w.entry for w in held])

    def _room_for(self, held: Sequence[FileWrite], points: Sequence[StoredPoint]) -> None:
        """Stop with a ``DiskFullError`` naming the folder before points are written where
        they do not fit: the engine writes its log and segments through memory maps, and a
        write into a full disk is a bus error that kills the run without a word. The whole
        run's need was checked at its start; this catches a disk that another program fills
        meanwhile (#38 row 11)."""
        folder = getattr(self.store, "path", None)
        if folder is None:
            return
        text = sum(len(str(p.payload.get("text", ""))) for p in points)
        needed = write_needs(2 * text, self.dim) + CLOSE_HEADROOM  # UTF-8: ≤ 2 bytes/char
        files = held[0].source if len(held) == 1 else f"{len(held)} files, {held[0].source}…"
        what = f"store {files} ({len(points)} chunks; the files before it are indexed)"
        ensure_free(Path(folder), needed, what)
