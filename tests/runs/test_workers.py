"""The worker pool's order: results leave in task order, yet a slow task at the head holds up
neither the other workers (finished batches do not count against the window) nor memory
(at most ``HELD_PER_JOB`` batches a worker wait for their turn)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from narezka.runs import workers
from narezka.runs.workers import WorkerPool


def head_waits(task: tuple[int, str], goal: int, patience: float) -> str:
    """Task 0 waits until ``goal`` other tasks have finished (or ``patience`` runs out) and
    says how many it saw; every other task marks itself finished."""
    index, folder = task
    if index > 0:
        Path(folder, str(index)).touch()
        return "done"
    deadline = time.monotonic() + patience
    while len(os.listdir(folder)) < goal and time.monotonic() < deadline:
        time.sleep(0.01)
    return f"saw {len(os.listdir(folder))}"


def run(folder: Path, tasks: int, goal: int, patience: float) -> list[str]:
    pool: WorkerPool[tuple[int, str], str] = WorkerPool(
        head_waits,
        (goal, patience),
        2,
        died=lambda task, why: f"died: {why}",
        size_of=lambda task: workers.BATCH_BYTES,  # one task a batch
    )
    with pool:
        return list(pool.map([(i, str(folder)) for i in range(tasks)]))


def test_a_slow_head_does_not_hold_up_the_other_worker(tmp_path: Path) -> None:
    window = 2 * workers.WINDOW_PER_JOB
    goal = window + 4  # more than could ever be in flight if finished batches counted
    results = run(tmp_path, 2 * workers.HELD_PER_JOB, goal, patience=30)
    seen = int(results[0].removeprefix("saw "))
    assert seen >= goal
    assert results[1:] == ["done"] * (len(results) - 1)


def test_results_waiting_for_a_slow_head_are_bounded(tmp_path: Path) -> None:
    held = 2 * workers.HELD_PER_JOB
    tasks = held + 10
    results = run(tmp_path, tasks, goal=tasks, patience=5)
    # The head plus the batches behind it fill the allowance, and no more is started.
    assert results[0] == f"saw {held - 1}"
    assert results[1:] == ["done"] * (tasks - 1)


def big_result(task: int, size: int) -> bytes:
    """A result that takes a while to send back: the pool is aborted while one is on the way."""
    return bytes(size)


def test_aborting_while_a_worker_sends_its_result_returns(tmp_path: Path) -> None:
    # Ctrl-C during `index` kills the workers; one killed mid-send used to leave the pool's
    # reader waiting for the rest of its message for ever, and `close` (then exit) with it.
    size = 64 * 1024 * 1024
    for delay in (0.2, 0.5, 0.8, 1.2):
        pool: WorkerPool[int, bytes] = WorkerPool(
            big_result,
            (size,),
            2,
            died=lambda task, why: b"",
            size_of=lambda task: workers.BATCH_BYTES,
        )
        results = pool.map(range(40))
        next(results)  # the workers are up and sending
        time.sleep(delay)
        closed = threading.Event()

        def close(pool: WorkerPool[int, bytes] = pool, closed: threading.Event = closed) -> None:
            pool.close(abort=True)
            closed.set()

        threading.Thread(target=close, daemon=True).start()
        assert closed.wait(60), f"close(abort=True) hung {delay} s into sending"
