"""Worker processes for ``--jobs``: one function over many tasks, results in input order.

Chunking is pure Python, so threads share one core under the GIL; worker processes do not.
Each worker receives the function's fixed arguments once (for chunking: the strategy and the
token counter, which is the tokenizer alone: a worker never loads an embedding model), then
runs the function on batches of tasks. The caller gets the results in the order it gave the
tasks, so the output of any ``jobs`` is the output of ``jobs=1``, byte for byte.

A worker that dies (a crash in a C extension, the OOM killer) is restarted, and the tasks it
may have been holding are run again one at a time to find the one that kills it, whose result
is then the caller's ``died`` answer. (The per-file work itself is
:func:`narezka.runs.file_chunks.chunk_file`.)
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import (
    FIRST_COMPLETED,
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, Literal, TypeVar

from narezka import environment
from narezka.store.lock import pid_alive

PARALLEL_MIN_BYTES = 2 << 20
"""With ``jobs`` left to the default, less input than this is chunked in this process, and
above it one more worker for each time as much, up to the cores (see :func:`auto_jobs`).
Measured on 2 cores (``index --embedder hash``, CPU seconds of the process tree): with the
native core, chunking is about a seventh of an ``index``, and the fork server and a worker
cost ~0.8 CPU s to start. At 1.1 MB of Markdown ``--jobs 2`` took 0.11 s off the main
process for 0.74 s more in all (and was slower in wall time); at 3.0 MB it took 0.65 s off
the main process for 0.72 s more, which spare cores turn into a shorter run. The break-even,
where what the main process saves pays for the start, lies near 2 MB.
An explicit ``jobs`` is always honoured."""
ORPHAN_CHECK_SECONDS = 0.5
"""How often a worker checks that the process that started it is still there."""
BATCH_BYTES = 64 << 10
BATCH_FILES = 32
"""Files go to a worker in batches of about this much input (a big file alone): each task
costs the parent a round trip, which for thousands of small files added up to a sixth of
the chunking itself."""
WINDOW_PER_JOB = 3
"""Batches queued or running per worker: enough to keep workers busy between round trips."""
HELD_PER_JOB = 12
"""Batches per worker whose results may wait for an earlier, slower one (results leave in
task order): a big file at the head then holds up neither worker, and memory stays bounded."""

BACKGROUND_NICE = 10
"""How much lower a background worker's priority is (Unix ``nice``): beside embedding, the
chunk workers take the cycles the model leaves, instead of fighting its BLAS threads."""

PoolKind = Literal["process", "thread"]
Prepare = tuple[Callable[..., Any], tuple[Any, ...]]
"""A function and its arguments, for a fork server to run before it forks workers."""
T = TypeVar("T")
R = TypeVar("R")


def auto_jobs(work_bytes: int | None, cores: int) -> int:
    """How many processes chunk when ``--jobs`` is left to its default: one for less than
    :data:`PARALLEL_MIN_BYTES` of input, else one more for each time as much, up to
    ``cores`` (all of them when the size is not known)."""
    if work_bytes is None:
        return max(1, cores)
    return max(1, min(cores, 1 + work_bytes // PARALLEL_MIN_BYTES))


def default_jobs() -> int:
    """The cores this process may run on (``--jobs`` default)."""
    counted = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counted is not None:
        return max(1, int(counted() or 1))
    with contextlib.suppress(AttributeError, OSError):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


PREPARE_ENV = "NAREZKA_FORKSERVER_PREPARE"
"""Carries ``start_server``'s ``prepare`` to the fork server (pickled, hex): before it forks
anything, a fork server only imports modules, and reads no other input."""
PREPARE_MAX_CHARS = 32 << 10
"""A longer ``prepare`` is not sent: Linux refuses to start a program with an environment
string over 128 KiB. (A counter pickles as its model's path: some 200 bytes.)"""
MAIN_ENV = "NAREZKA_FORKSERVER_MAIN"
"""The script this process runs as ``__main__`` (the ``narezka`` console script), for the
fork server to import once (:mod:`narezka.runs.server_prepare` says why)."""


def start_server(work: Callable[..., Any], prepare: Prepare | None = None) -> None:
    """Start the fork server that ``work``'s worker processes will be forked from, now: it
    imports what ``work`` needs while the caller goes on listing files, instead of while the
    caller waits for its first worker. ``prepare`` is a function and its arguments that the
    server runs once before it forks any worker (:mod:`narezka.runs.server_prepare`):
    what it loads (a tokenizer's model) every worker then has, shared, instead of loading
    it itself. A main module run from a file is imported there once too. Once per process
    (a later ``prepare`` is not run; workers then load what they need themselves); nothing
    where there is no fork server (the pool then spawns its workers)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    # The server imports once; each worker is then a fork of it, not a fresh interpreter
    # importing everything again (~0.4 s of CPU a worker).
    preload = [__name__, work.__module__]
    sent: dict[str, str] = {}
    if prepare is not None:
        with contextlib.suppress(pickle.PicklingError, TypeError, AttributeError, ValueError):
            sent[PREPARE_ENV] = pickle.dumps(prepare).hex()
        if len(sent.get(PREPARE_ENV, "")) > PREPARE_MAX_CHARS:
            del sent[PREPARE_ENV]  # the workers load it themselves
    main_path = _main_path()
    if main_path is not None:
        sent[MAIN_ENV] = main_path
    if sent:
        preload.append("narezka.runs.server_prepare")
    multiprocessing.get_context("forkserver").set_forkserver_preload(preload)
    # Only the server reads them: the variables are gone again before any other child starts.
    with environment.lend(sent):
        forkserver.ensure_running()


def _main_path() -> str | None:
    """The file a worker would run as ``__mp_main__`` before its first task (None for
    ``python -m`` and ``-c``): what the workers are told, from the same function."""
    with contextlib.suppress(Exception):  # multiprocessing's own helper, not a public API
        from multiprocessing import spawn

        path = spawn.get_preparation_data("narezka").get("init_main_from_path")
        return path if isinstance(path, str) else None
    return None


_STATE: dict[str, Any] = {}
"""The worker's function and its fixed arguments, set once by :func:`_start_worker`."""


def _start_worker(
    work: Callable[..., Any],
    fixed: tuple[Any, ...],
    owner: int | None = None,
    background: bool = False,
) -> None:
    """Set up a worker; ``owner`` is the pid of the pool's process (None: threads in it)."""
    _STATE["work"], _STATE["fixed"] = work, fixed
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
    if not pid_alive(pid):
        return False
    try:  # killed but not yet reaped: a zombie answers kill(0) too
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _run_batch(tasks: list[Any]) -> list[Any]:
    """The worker's function over a batch, in a worker."""
    work, fixed = _STATE["work"], _STATE["fixed"]
    return [work(task, *fixed) for task in tasks]


def _batches(tasks: Iterable[T], size_of: Callable[[T], int]) -> Iterator[list[T]]:
    batch: list[T] = []
    size = 0
    for task in tasks:
        batch.append(task)
        size += size_of(task)
        if size >= BATCH_BYTES or len(batch) >= BATCH_FILES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


class WorkerPool(Generic[T, R]):
    """Runs ``work(task, *fixed)`` for every task on ``jobs`` workers (or in this process),
    results in task order; ``died(task, why)`` answers for a task that kills its worker, and
    ``size_of(task)`` (bytes) groups small tasks into one round trip.

    ``jobs=None`` means :func:`auto_jobs` of ``work_bytes`` (in-process for less than
    :data:`PARALLEL_MIN_BYTES` of input; the top hands ``NAREZKA_JOBS`` down as ``jobs``);
    anything ``fixed`` that cannot be sent to a worker stays in-process too. ``background``
    workers run at a lower priority (beside an embedder that uses every core). ``prepare``, a
    function and its arguments, runs once in the fork server before it forks a worker (see
    :func:`start_server`). Use it as a context manager; leaving it on an exception (Ctrl-C)
    stops the workers at once.
    """

    def __init__(
        self,
        work: Callable[..., R],
        fixed: tuple[Any, ...],
        jobs: int | None = None,
        *,
        died: Callable[[T, str], R],
        size_of: Callable[[T], int],
        work_bytes: int | None = None,
        kind: PoolKind = "process",
        background: bool = False,
        prepare: Prepare | None = None,
    ) -> None:
        self.work, self.fixed, self.kind, self.prepare = work, fixed, kind, prepare
        self.died, self.size_of, self.background = died, size_of, background
        wanted = auto_jobs(work_bytes, default_jobs()) if jobs is None else max(1, jobs)
        self.jobs = wanted if _can_travel(work, fixed) else 1
        self._executor: Executor | None = None
        if self.jobs > 1:
            self._executor = self._start()

    def _start(self) -> Executor:
        if self.kind == "thread":
            _start_worker(self.work, self.fixed)
            return ThreadPoolExecutor(max_workers=self.jobs)
        # Not fork: the parent runs threads (the progress bar's, the store's), and a forked
        # child of a threaded process may deadlock on a lock held at the moment of fork.
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        start_server(self.work, self.prepare)
        return ProcessPoolExecutor(
            max_workers=self.jobs,
            mp_context=context,
            initializer=_start_worker,
            initargs=(self.work, self.fixed, os.getpid(), self.background),
        )

    def __enter__(self) -> WorkerPool[T, R]:
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

    def map(self, tasks: Iterable[T]) -> Iterator[R]:
        """The result of every task, in the order of ``tasks``; a few tasks ahead of the
        consumer are being worked on meanwhile (that is the overlap with embedding)."""
        if self._executor is None:
            for task in tasks:
                yield self.work(task, *self.fixed)
            return
        pending: deque[tuple[list[T], Future[list[R]]]] = deque()
        batches = _batches(tasks, self.size_of)
        window, held = self.jobs * WINDOW_PER_JOB, self.jobs * HELD_PER_JOB

        def unfinished() -> list[Future[list[R]]]:
            return [f for _, f in pending if not f.done()]

        def fill() -> None:
            # Finished batches waiting for their turn do not count against the window.
            while (
                len(pending) < held
                and len(unfinished()) < window
                and not self._broken()
                and (batch := next(batches, None)) is not None
            ):
                pending.append((batch, self._submit(batch)))

        fill()
        while pending:
            batch, future = pending[0]
            while not future.done():  # meanwhile, refill for every batch that finishes
                wait(unfinished(), return_when=FIRST_COMPLETED)
                fill()
            pending.popleft()
            try:
                outcomes = future.result()
            except BrokenProcessPool:
                # Every file in flight failed with the worker: chunk them again one at a
                # time, so the one that kills a worker is found and named. Batches that
                # had finished before keep their results.
                later = list(pending)
                pending.clear()
                for suspect in batch:
                    yield self._alone(suspect)
                for held_batch, held_future in later:
                    if held_future.exception() is None:
                        yield from held_future.result()
                    else:
                        for suspect in held_batch:
                            yield self._alone(suspect)
                fill()
                continue
            fill()
            yield from outcomes

    def _submit(self, batch: list[T]) -> Future[list[R]]:
        if self._executor is None:
            self._executor = self._start()
        return self._executor.submit(_run_batch, batch)

    def _alone(self, task: T) -> R:
        self._restart()
        try:
            result: R = self._submit([task]).result()[0]
        except BrokenProcessPool as exc:
            self._restart()
            return self.died(task, str(exc))
        return result

    def _broken(self) -> bool:
        executor = self._executor
        return isinstance(executor, ProcessPoolExecutor) and _broken(executor)

    def _restart(self) -> None:
        executor = self._executor
        if isinstance(executor, ProcessPoolExecutor) and _broken(executor):
            executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


def _broken(executor: ProcessPoolExecutor) -> bool:
    return bool(getattr(executor, "_broken", False))


KILL_WAIT = 5.0
"""Seconds to wait for a terminated worker to be gone before the pool is torn down."""


def _kill_workers(executor: Executor) -> None:
    """Stop worker processes now (``ProcessPoolExecutor.terminate_workers`` from 3.14).

    A worker killed halfway through sending its result leaves the executor's reader thread
    waiting for the rest of the message for ever: this process holds the pipe's other end
    too, so no end of file comes, and ``shutdown`` (or interpreter exit) waits on that
    thread. A Ctrl-C in ``index`` hung so. Once the workers are gone, closing this process's
    end makes the read fail; the executor then takes the pool for broken and stops."""
    processes: Mapping[int, Any] = getattr(executor, "_processes", None) or {}
    alive = list(processes.values())
    terminate: Callable[[], None] | None = getattr(executor, "terminate_workers", None)
    if terminate is not None:
        terminate()
    else:
        for process in alive:
            with contextlib.suppress(OSError, AttributeError):
                process.terminate()
    for process in alive:
        with contextlib.suppress(OSError, AttributeError, ValueError, AssertionError):
            process.join(KILL_WAIT)
    writer = getattr(getattr(executor, "_result_queue", None), "_writer", None)
    if writer is not None:
        with contextlib.suppress(OSError):
            writer.close()


def _can_travel(work: Callable[..., Any], fixed: tuple[Any, ...]) -> bool:
    try:
        pickle.dumps((work, fixed))
    except (pickle.PicklingError, TypeError, AttributeError, ValueError):
        return False
    return True


__all__ = [
    "MAIN_ENV",
    "PARALLEL_MIN_BYTES",
    "PREPARE_ENV",
    "PoolKind",
    "Prepare",
    "WorkerPool",
    "auto_jobs",
    "default_jobs",
    "start_server",
]
