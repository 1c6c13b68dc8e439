"""Reading and chunking files in worker processes (``--jobs``), results in input order.

Chunking is pure Python, so threads share one core under the GIL; worker processes do not.
Each worker receives the strategy and the token counter once (the counter is the tokenizer
alone: a worker never loads an embedding model) and then reads and chunks one file per task.
The caller gets the outcomes in the order it submitted the files, so the output of any
``jobs`` is the output of ``jobs=1``, byte for byte.

A file that raises is an outcome with an error naming it; a worker that dies (a crash in a
C extension, the OOM killer) is restarted, and the files it may have been holding are chunked
again one at a time to find the one that kills it, which is reported by name.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import pickle
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from narezka.discover import read_document
from narezka.enrich.hashes import doc_hash
from narezka.errors import NarezkaError, SourceError
from narezka.pipeline.chunking import FileChunks, chunk_raw
from narezka.split import NEEDS_EMBEDDER, SplitParams, Strategy
from narezka.tokens import TokenCounter
from narezka.types import Chunk

PARALLEL_MIN_BYTES = 1 << 20
"""With ``jobs`` left to the default, less input than this is chunked in this process:
starting a worker (a fresh interpreter importing narezka) costs about what chunking a
megabyte of Markdown does. An explicit ``jobs`` is always honoured."""
ORPHAN_CHECK_SECONDS = 0.5
"""How often a worker checks that the process that started it is still there."""
BATCH_BYTES = 64 << 10
BATCH_FILES = 32
"""Files go to a worker in batches of about this much input (a big file alone): each task
costs the parent a round trip, which for thousands of small files added up to a sixth of
the chunking itself."""
WINDOW_PER_JOB = 3
"""Batches in flight per worker: enough to keep workers busy, few enough to bound memory."""

BACKGROUND_NICE = 10
"""How much lower a background worker's priority is (Unix ``nice``): beside embedding, the
chunk workers take the cycles the model leaves, instead of fighting its BLAS threads."""

PoolKind = Literal["process", "thread"]


def default_jobs() -> int:
    """The cores this process may run on (``--jobs`` default)."""
    counted = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counted is not None:
        return max(1, int(counted() or 1))
    with contextlib.suppress(AttributeError, OSError):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class ChunkTask:
    """One file to read and chunk."""

    root: Path
    file: Path
    params: SplitParams
    size: int = 0
    """The file's size in bytes, if known (to batch small files together)."""


@dataclass(frozen=True, slots=True)
class FileOutcome:
    """What reading and chunking one file gave: its chunks (file metadata attached), or the
    problem that skipped it, and what it cost in the worker."""

    source: str
    read_warnings: list[str] = field(default_factory=list)
    chars: int = 0
    """Characters of the decoded text (0 when it could not be read)."""
    mtime: float = 0.0
    digest: str = ""
    result: FileChunks | None = None
    """None for an empty (whitespace) file or a file with an ``error``."""
    error: SourceError | None = None
    """Why the file was skipped, naming it."""
    read_failed: bool = False
    """The error came from reading (the file does not count as read)."""
    seconds: float = 0.0

    @property
    def problem(self) -> str | None:
        """The error's text without the file name (None if there was none)."""
        return None if self.error is None else self.error.problem


def with_file_meta(
    chunks: list[Chunk], mtime: float, digest: str, *, resplit: bool = False
) -> list[Chunk]:
    """Chunks with their file's mtime and document hash (search compares the hash to tell
    whether the file still says what the index holds); ``resplit`` marks a finer re-cut."""
    extra: dict[str, Any] = {"mtime": mtime, "doc_hash": digest}
    if resplit:
        extra["resplit"] = True
    return [dataclasses.replace(c, meta={**c.meta, **extra}) for c in chunks]


_STATE: dict[str, Any] = {}
"""The worker's strategy and counter, set once by :func:`_start_worker`."""


def _start_worker(
    strategy: Strategy,
    counter: TokenCounter,
    owner: int | None = None,
    background: bool = False,
) -> None:
    """Set up a worker; ``owner`` is the pid of the pool's process (None: threads in it)."""
    _STATE["strategy"], _STATE["counter"] = strategy, counter
    if owner is None:
        return
    # Ctrl-C reaches the whole process group: the parent alone decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if background and hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(BACKGROUND_NICE)
    _exit_when_orphaned(owner)
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_limits

        # Chunking does no linear algebra; keep BLAS from spinning threads on shared cores.
        threadpool_limits(limits=1)


def _exit_when_orphaned(owner: int) -> None:
    """A parent killed with -9 cannot stop its workers, and a worker waiting for its next
    task would wait forever (and keep the fork server alive): leave once ``owner``, the
    process that made the pool, is gone."""

    def watch() -> None:
        while _alive(owner):
            time.sleep(ORPHAN_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="narezka-orphan-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # killed but not yet reaped: a zombie answers kill(0) too
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def chunk_file(
    task: ChunkTask, strategy: Strategy | None = None, counter: TokenCounter | None = None
) -> FileOutcome:
    """Read and chunk one file (in a worker: with the strategy and counter it was given).

    Every failure becomes an outcome naming the file, a bug in a strategy included: one file
    never stops a run over many."""
    started = time.perf_counter()
    chosen = strategy or _STATE["strategy"]
    count = counter or _STATE["counter"]
    source = task.file.relative_to(task.root).as_posix()
    try:
        raw, warnings = read_document(task.root, task.file)
    except SourceError as exc:
        return FileOutcome(source, error=exc, read_failed=True)
    except OSError as exc:
        return FileOutcome(
            source, error=SourceError(source, f"cannot read: {exc}"), read_failed=True
        )
    digest = doc_hash(raw.text)
    base = FileOutcome(raw.source, warnings, len(raw.text), raw.mtime, digest)
    if not raw.text.strip():
        return dataclasses.replace(base, seconds=time.perf_counter() - started)
    try:
        result = chunk_raw(raw, chosen, task.params, count)
    except SourceError as exc:
        return dataclasses.replace(base, error=exc)
    except NarezkaError as exc:
        return dataclasses.replace(base, error=SourceError(raw.source, str(exc)))
    except Exception as exc:  # a strategy's bug must not stop the other files
        failed = f"chunking failed: {type(exc).__name__}: {exc}"
        return dataclasses.replace(base, error=SourceError(raw.source, failed))
    chunks = with_file_meta(result.chunks, raw.mtime, digest)
    # The caught warning objects stay behind: their text is in ``warnings``, and warning
    # classes with their own constructors do not survive pickling.
    shipped = dataclasses.replace(result, chunks=chunks, caught=[])
    return dataclasses.replace(base, result=shipped, seconds=time.perf_counter() - started)


def chunk_files(tasks: list[ChunkTask]) -> list[FileOutcome]:
    """:func:`chunk_file` over a batch, in a worker."""
    return [chunk_file(task) for task in tasks]


def _batches(tasks: Iterable[ChunkTask]) -> Iterator[list[ChunkTask]]:
    batch: list[ChunkTask] = []
    size = 0
    for task in tasks:
        batch.append(task)
        size += task.size
        if size >= BATCH_BYTES or len(batch) >= BATCH_FILES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


class ChunkPool:
    """Reads and chunks files on ``jobs`` workers (or in this process), in input order.

    ``jobs=None`` means :func:`default_jobs`, and in-process for less than
    :data:`PARALLEL_MIN_BYTES` of input (``work_bytes``). ``background`` workers run at a
    lower priority (beside an embedder that uses every core). ``semantic`` embeds while it
    splits, and a counter that cannot be sent to a worker (e5's engine) cannot travel: both
    run in this process. Use it as a context manager; leaving it on an exception (Ctrl-C)
    stops the workers at once.
    """

    def __init__(
        self,
        strategy: Strategy,
        counter: TokenCounter,
        jobs: int | None = None,
        *,
        work_bytes: int | None = None,
        kind: PoolKind = "process",
        background: bool = False,
    ) -> None:
        self.strategy, self.counter, self.kind = strategy, counter, kind
        self.background = background
        wanted = default_jobs() if jobs is None else max(1, jobs)
        small = jobs is None and work_bytes is not None and work_bytes < PARALLEL_MIN_BYTES
        self.jobs = 1 if small or not _can_travel(strategy, counter) else wanted
        self._executor: Executor | None = None
        if self.jobs > 1:
            self._executor = self._start()

    def _start(self) -> Executor:
        if self.kind == "thread":
            _start_worker(self.strategy, self.counter)
            return ThreadPoolExecutor(max_workers=self.jobs)
        # Not fork: the parent runs threads (the progress bar's, the store's), and a forked
        # child of a threaded process may deadlock on a lock held at the moment of fork.
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if context.get_start_method() == "forkserver":
            # The server imports narezka once; each worker is then a fork of it, not a fresh
            # interpreter importing everything again (~0.4 s of CPU a worker).
            context.set_forkserver_preload([__name__])
        return ProcessPoolExecutor(
            max_workers=self.jobs,
            mp_context=context,
            initializer=_start_worker,
            initargs=(self.strategy, self.counter, os.getpid(), self.background),
        )

    def __enter__(self) -> ChunkPool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(abort=kind is not None)

    def close(self, *, abort: bool = False) -> None:
        """Shut the workers down; ``abort`` kills them without waiting for their file."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        if abort:
            _kill_workers(executor)
        executor.shutdown(wait=True, cancel_futures=True)

    def map(self, tasks: Iterable[ChunkTask]) -> Iterator[FileOutcome]:
        """The outcome of every task, in the order of ``tasks``; a few files ahead of the
        consumer are being chunked meanwhile (that is the overlap with embedding)."""
        if self._executor is None:
            for task in tasks:
                yield chunk_file(task, self.strategy, self.counter)
            return
        pending: deque[tuple[list[ChunkTask], Future[list[FileOutcome]]]] = deque()
        batches = _batches(tasks)
        window = self.jobs * WINDOW_PER_JOB

        def fill() -> None:
            while len(pending) < window and (batch := next(batches, None)) is not None:
                pending.append((batch, self._submit(batch)))

        fill()
        while pending:
            batch, future = pending.popleft()
            try:
                outcomes = future.result()
            except BrokenProcessPool:
                # Every file in flight failed with the worker: chunk them again one at a
                # time, so the one that kills a worker is found and named.
                suspects = [*batch, *(t for b, _ in pending for t in b)]
                pending.clear()
                for suspect in suspects:
                    yield self._alone(suspect)
                fill()
                continue
            fill()
            yield from outcomes

    def _submit(self, batch: list[ChunkTask]) -> Future[list[FileOutcome]]:
        if self._executor is None:
            self._executor = self._start()
        return self._executor.submit(chunk_files, batch)

    def _alone(self, task: ChunkTask) -> FileOutcome:
        self._restart()
        try:
            return self._submit([task]).result()[0]
        except BrokenProcessPool as exc:
            self._restart()
            source = task.file.relative_to(task.root).as_posix()
            died = SourceError(source, f"a chunking worker died on this file ({exc})")
            return FileOutcome(source, error=died)

    def _restart(self) -> None:
        executor = self._executor
        if isinstance(executor, ProcessPoolExecutor) and _broken(executor):
            executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


def _broken(executor: ProcessPoolExecutor) -> bool:
    return bool(getattr(executor, "_broken", False))


def _kill_workers(executor: Executor) -> None:
    """Stop worker processes now (``ProcessPoolExecutor.terminate_workers`` from 3.14)."""
    terminate: Callable[[], None] | None = getattr(executor, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    processes: Mapping[int, Any] = getattr(executor, "_processes", None) or {}
    for process in list(processes.values()):
        with contextlib.suppress(OSError, AttributeError):
            process.terminate()


def _can_travel(strategy: Strategy, counter: TokenCounter) -> bool:
    if strategy.name in NEEDS_EMBEDDER:
        return False
    try:
        pickle.dumps((strategy, counter))
    except (pickle.PicklingError, TypeError, AttributeError, ValueError):
        return False
    return True


__all__ = [
    "PARALLEL_MIN_BYTES",
    "ChunkPool",
    "ChunkTask",
    "FileOutcome",
    "chunk_file",
    "default_jobs",
    "with_file_meta",
]
