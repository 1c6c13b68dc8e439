"""EdgeStore specifics: the lock, leftover temp segments, and the engine trap it hides."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import qdrant_edge as qe

from narezka.store import IndexInUseError, StoredPoint, point_id
from narezka.store.edge import EdgeStore
from narezka.store.lock import LOCK_NAME

OPEN = "from narezka.store.edge import EdgeStore; s = EdgeStore({path!r}); s.ensure(4)"


def test_second_process_gets_index_in_use_with_pid(tmp_path: Path) -> None:
    with EdgeStore(tmp_path) as store:
        store.ensure(4)
        proc = subprocess.run(
            [sys.executable, "-c", OPEN.format(path=str(tmp_path))],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 1
    assert "IndexInUseError" in proc.stderr
    assert f"in use by PID {os.getpid()}" in proc.stderr
    assert "panic" not in proc.stderr.lower()


def test_same_process_second_open_is_refused(tmp_path: Path) -> None:
    with EdgeStore(tmp_path), pytest.raises(IndexInUseError) as info:
        EdgeStore(tmp_path)
    assert info.value.pid == os.getpid()


def test_lock_of_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    script = OPEN.format(path=str(tmp_path)) + "; print('ready', flush=True); import time; "
    script += "time.sleep(60)"
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            assert (tmp_path / LOCK_NAME).read_text().strip() == str(proc.pid)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    with EdgeStore(tmp_path) as store:  # the dead PID's lock file is still there: taken over
        assert (tmp_path / LOCK_NAME).read_text().strip() == str(os.getpid())
        store.ensure(4)
        assert store.count() == 0
    assert not (tmp_path / LOCK_NAME).exists()


def test_stale_lock_file_with_dead_pid(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    (tmp_path / LOCK_NAME).write_text(dead.stdout)
    with EdgeStore(tmp_path):
        assert (tmp_path / LOCK_NAME).read_text().strip() == str(os.getpid())


def test_temp_segments_cleaned_on_open(tmp_path: Path) -> None:
    with EdgeStore(tmp_path) as store:
        store.ensure(4)
        store.upsert([StoredPoint(point_id("a"), np.ones(4), {"file_path": "a.md"})])
    junk = tmp_path / "temp_segments" / "segment_builder_XyZ"
    junk.mkdir(parents=True)
    (junk / "vectors.dat").write_bytes(b"\0" * 4096)
    with EdgeStore(tmp_path) as store:
        assert not (tmp_path / "temp_segments").exists()
        store.ensure(4)
        assert store.count() == 1


def test_data_survives_reopen_with_optimize(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    points = [StoredPoint(point_id(str(i)), rng.standard_normal(8), {"file_path": f"{i % 7}"})
              for i in range(300)]  # fmt: skip
    with EdgeStore(tmp_path) as store:  # optimize_on_close=True by default
        store.ensure(8)
        store.upsert(points)
        store.delete_where("file_path", "3")
    started = time.perf_counter()
    with EdgeStore(tmp_path) as store:
        store.ensure(8)
        assert store.count() == 300 - len([i for i in range(300) if i % 7 == 3])
    assert time.perf_counter() - started < 10


def test_engine_still_has_the_boolean_trap(tmp_path: Path) -> None:
    """Documents why payload flags are 0/1: if this starts failing, the engine was fixed."""
    shard = qe.EdgeShard.create(
        str(tmp_path), qe.EdgeConfig(vectors={"": qe.EdgeVectorParams(4, qe.Distance.Cosine)})
    )
    shard.update(qe.UpdateOperation.upsert_points([qe.Point(1, [1.0, 0, 0, 0], {"f": True})]))
    by_bool = qe.Filter(must=[qe.FieldCondition("f", match=qe.MatchValue(True))])
    assert shard.count(qe.CountRequest(filter=by_bool)) == 0
    shard.close()
