"""JSONL streamed out file by file (rendered by the workers): the same bytes, sizes and
statistics as chunks kept in the report, for any ``jobs``; nothing held; a reader that
leaves mid-run stops the workers too. The fork server starts early only for a run that
will use workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_jobs import _gone, _wait_for_workers, real_corpus

from narezka import runs
from narezka.cli import cli
from narezka.runs import chunk_documents, chunking
from narezka.runs.chunking import ChunkReport, render_jsonl
from narezka.runs.stats import chunk_stats


def _what_it_said(report: ChunkReport) -> tuple[object, ...]:
    skipped = [(type(e), str(e)) for e in report.skipped]
    return report.files, report.empty_files, skipped, report.warnings, report.strategies


@pytest.mark.parametrize("jobs", [1, 2])
def test_streamed_jsonl_is_what_the_kept_chunks_render(tmp_path: Path, jobs: int) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=8)
    kept = chunk_documents([corpus], size=300, jobs=1)
    assert len(kept.chunks) > 100
    pieces: list[bytes] = []
    report = chunk_documents([corpus], size=300, jobs=jobs, write=pieces.append)
    assert b"".join(pieces) == render_jsonl(kept.chunks)
    assert report.chunks == []  # written, not held
    assert report.written == [(c.chars, c.tokens) for c in kept.chunks]
    assert chunk_stats(report) == chunk_stats(kept)
    assert _what_it_said(report) == _what_it_said(kept)
    # One write per chunked file, in file order: lines leave as each file is done.
    firsts = [json.loads(p.split(b"\n", 1)[0])["source"] for p in pieces if p]
    assert firsts == list(dict.fromkeys(c.source for c in kept.chunks))


def test_rendered_lines_are_the_json_of_each_chunk(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=2)
    chunks = chunk_documents([corpus], size=300, jobs=1).chunks
    lines = render_jsonl(chunks).decode("utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [c.to_json() for c in chunks]
    assert any(not line.isascii() for line in lines)  # Russian stays Russian, not \\u escapes


def test_chunk_without_a_bar_walks_the_files_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=30)

    def no_second_walk(*args: object, **kwargs: object) -> int:
        raise AssertionError("counted the files for a bar that is not drawn")

    monkeypatch.setattr(runs, "count_files", no_second_walk)
    result = CliRunner().invoke(cli, ["chunk", str(corpus), "--format", "jsonl", "--stats"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") > 100
    assert "Files" in result.stderr


def test_a_reader_that_leaves_mid_run_stops_the_workers(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=60)
    proc = subprocess.Popen(
        [sys.executable, "-m", "narezka", "chunk", str(corpus), "--format", "jsonl",
         "--size", "200", "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    assert _wait_for_workers(proc.pid), "the workers never started"
    proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does, while the workers are still chunking
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert _gone(proc.pid)


def test_ctrl_c_while_jsonl_streams_exits_130_and_leaves_no_process(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=60)
    proc = subprocess.Popen(
        [sys.executable, "-m", "narezka", "chunk", str(corpus), "--format", "jsonl",
         "--size", "200", "--jobs", "2"],
        stdout=subprocess.PIPE,  # never read: the run blocks on a full pipe, mid-stream
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    assert _wait_for_workers(proc.pid), "the workers never started"
    assert proc.stdout.read(1)  # it has begun writing
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert b"Traceback" not in err
    assert _gone(proc.pid)


SERVER_PROBE = """
import os, sys, time
from pathlib import Path
from narezka.runs import start_workers_early
from narezka.tokens import CharCounter
start_workers_early(sys.argv[1], int(sys.argv[2]), CharCounter())
def read(p, name):
    try:  # any process on the machine may exit while the scan reads it
        return (p / name).read_bytes()
    except OSError:
        return b""
def parent(p):
    return read(p, "stat").rsplit(b")", 1)[-1].split()[1:2]
me = [str(os.getpid()).encode()]
own = read(Path("/proc/self"), "cmdline")
def children():
    return [p for p in Path("/proc").iterdir() if p.name.isdigit() and parent(p) == me]
# Between its fork and its exec a child still shows this process's command line: on a busy
# machine the server may not have reached its exec yet when the scan runs.
for _ in range(100):
    if not any(read(p, "cmdline") == own for p in children()):
        break
    time.sleep(0.1)
print(any(b"forkserver" in read(p, "cmdline") for p in children()))
"""


@pytest.mark.parametrize(
    ("strategy", "jobs", "started"),
    [("headings", 2, True), ("headings", 1, False), ("semantic", 2, False)],
)
def test_the_fork_server_starts_early_only_for_a_run_with_workers(
    strategy: str, jobs: int, started: bool
) -> None:
    probe = [sys.executable, "-c", SERVER_PROBE, strategy, str(jobs)]
    out = subprocess.run(probe, capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.strip() == str(started)


@pytest.mark.parametrize(("threshold", "calls"), [(1000, 1), (1 << 30, 0)])
def test_the_default_jobs_starts_the_server_once_enough_input_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int, calls: int
) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=4)
    started: list[tuple[str, int | None]] = []
    monkeypatch.setattr(chunking, "PARALLEL_MIN_BYTES", threshold)
    monkeypatch.setattr(chunking, "start_workers_early", lambda *a: started.append(a[:2]))
    report = chunk_documents([corpus], size=300)  # under a megabyte: chunked in this process
    assert report.chunks
    assert started == [("headings", None)] * calls
