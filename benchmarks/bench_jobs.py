#!/usr/bin/env python3
"""``--jobs``: chunking in worker processes, and chunking overlapped with embedding.

    python benchmarks/bench_jobs.py                              # md_corpus, both parts
    python benchmarks/bench_jobs.py --index-files 300            # index part on a subset
    python benchmarks/bench_jobs.py --out benchmarks/results/bench_jobs.md

Part 1, ``narezka chunk`` on the whole corpus, as a user runs it (a subprocess writing JSONL):
``--jobs 1`` against ``--jobs 2``, in characters (the default) and in the USE embedder's
tokens; wall time, CPU time of the whole process tree, and the peak of the tree's summed
resident memory (main process plus workers, sampled every 20 ms from /proc). The outputs of
both runs are compared byte for byte. Part 2, the same files chunked in this process through
the pool: serial, 2 threads and 2 processes (why processes: the GIL).

Part 3, ``index`` of a subset (fresh store and embedding cache each, default embedder):
``jobs=1`` (chunk, then embed, file by file) against the default (files chunked by workers
while the previous file is embedded): chunk / embed / store / wall seconds and wall ÷ embed
(goal ≤ 1.10), plus the peak memory of the process tree.

The machine is shared: the load average before and after each part is printed, and every
ratio compares runs made one after the other in this process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared/data/md_corpus"
SAMPLE_SECONDS = 0.02
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")

from narezka.pipeline.chunking import (  # noqa: E402
    ChunkReport,
    ChunkTask,
    _files,
    chunk_pool,
    make_params,
)
from narezka.pipeline.indexing import IndexReport, index  # noqa: E402
from narezka.split import get_strategy  # noqa: E402
from narezka.tokens import get_counter  # noqa: E402


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


# ---------------------------------------------------------------- the process tree, from /proc


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _rss_and_cpu(pid: int) -> tuple[int, float]:
    try:
        rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime
    except (OSError, IndexError, ValueError):
        return 0, 0.0
    return rss, cpu


class TreeSampler:
    """Samples the summed RSS of a process tree (peak) and the CPU time each member had
    when last seen (a worker's CPU counts even after it exits)."""

    def __init__(self, root: int) -> None:
        self.root, self.peak, self.cpu = root, 0, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            time.sleep(SAMPLE_SECONDS)

    def sample(self) -> None:
        total = 0
        for pid in _tree(self.root):
            rss, cpu = _rss_and_cpu(pid)
            total += rss
            if cpu:
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), cpu)
        self.peak = max(self.peak, total)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def cpu_seconds(self) -> float:
        return sum(self.cpu.values())


# ---------------------------------------------------------------- part 1: the chunk command


@dataclass
class CliRun:
    label: str
    jobs: int
    wall: float
    cpu: float
    peak_mb: float
    output: bytes
    code: int


def run_chunk(corpus: Path, jobs: int, extra: Sequence[str]) -> CliRun:
    command = [sys.executable, "-m", "narezka", "chunk", str(corpus), "--format", "jsonl"]
    command += ["--jobs", str(jobs), *extra]
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL)
        with TreeSampler(proc.pid) as sampler:
            code = proc.wait()
        wall = time.perf_counter() - started
        out.seek(0)
        output = out.read()
    label = " ".join(extra) or "chars (default)"
    return CliRun(label, jobs, wall, sampler.cpu_seconds, sampler.peak / 2**20, output, code)


# ---------------------------------------------------------------- part 2: the pool in-process


def pool_seconds(corpus: Path, jobs: int, kind: str) -> float:
    strategy, counter = get_strategy("headings"), get_counter("chars", "cl100k_base")
    params = make_params(size=800)
    listed = _files([corpus], strategy.include, (), ChunkReport())
    tasks = [ChunkTask(r, f, params, f.stat().st_size) for r, f in listed]
    started = time.perf_counter()
    with chunk_pool(strategy, counter, jobs, kind=kind) as pool:  # type: ignore[arg-type]
        for _ in pool.map(tasks):
            pass
    return time.perf_counter() - started


# ---------------------------------------------------------------- part 3: index, overlapped


@dataclass
class IndexRun:
    label: str
    report: IndexReport
    wall: float
    peak_mb: float


def subset(corpus: Path, limit: int | None, dest: Path) -> int:
    files = sorted(p.relative_to(corpus) for p in corpus.rglob("*.md") if p.is_file())
    if limit and limit < len(files):
        step = len(files) / limit
        files = [files[int(i * step)] for i in range(limit)]
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / rel, dest / rel)
    return len(files)


def run_index(label: str, corpus: Path, store: Path, jobs: int | None) -> IndexRun:
    with TreeSampler(os.getpid()) as sampler:
        started = time.perf_counter()
        report = index(corpus, store_dir=store, jobs=jobs)
        wall = time.perf_counter() - started
    return IndexRun(label, report, wall, sampler.peak / 2**20)


# ---------------------------------------------------------------- report


def render(
    corpus: Path,
    chunk_runs: list[CliRun],
    pool_rows: list[tuple[str, float]],
    index_runs: list[IndexRun],
    files: int,
    loads: list[str],
) -> str:
    lines = [
        "# bench_jobs: `--jobs` and chunking overlapped with embedding",
        "",
        f"{datetime_now()} · {platform.machine()}, {os.cpu_count()} cores · Python "
        f"{platform.python_version()} · corpus {corpus.name} · load average "
        f"(1/5/15 min) {' → '.join(loads)}",
        "",
    ]
    if chunk_runs:
        lines += [
            "## `narezka chunk --format jsonl` (whole process tree)",
            "",
            "| unit | jobs | wall s | CPU s | cores used | peak RSS MB | speed-up | same output |",
            "|---|--:|--:|--:|--:|--:|--:|---|",
        ]
        for run in chunk_runs:
            base = next(r for r in chunk_runs if r.label == run.label and r.jobs == 1)
            same = "yes" if run.output == base.output and run.code == base.code else "NO"
            lines.append(
                f"| {run.label} | {run.jobs} | {run.wall:.2f} | {run.cpu:.2f} | "
                f"{run.cpu / run.wall:.2f} | {run.peak_mb:.0f} | {base.wall / run.wall:.2f}× | "
                f"{same} |"
            )
        lines += [
            "",
            "CPU s: user + system time of the process and its workers; cores used = CPU s ÷ "
            "wall s, the share of the machine the run got. This kernel schedules by session "
            "(sched_autogroup_enabled = 1): under load, a session gets its share however many "
            "processes it runs, which caps the speed-up of any jobs count.",
            "",
        ]
    if pool_rows:
        serial = pool_rows[0][1]
        lines += [
            "## The pool alone, in this process (headings, 800 chars)",
            "",
            "| how | wall s | speed-up |",
            "|---|--:|--:|",
            *(f"| {name} | {s:.2f} | {serial / s:.2f}× |" for name, s in pool_rows),
            "",
        ]
    if index_runs:
        lines += [
            f"## `index` of {files} files (USE, fresh store and cache each)",
            "",
            "| run | chunks | chunk s | embed s | store s | wall s | wall ÷ embed | peak RSS MB |",
            "|---|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for run in index_runs:
            sec = run.report.seconds
            ratio = run.wall / sec["embed"] if sec["embed"] else 0.0
            lines.append(
                f"| {run.label} | {run.report.chunks_embedded} | {sec['chunk']:.1f} | "
                f"{sec['embed']:.1f} | {sec['store']:.1f} | {run.wall:.1f} | {ratio:.2f} | "
                f"{run.peak_mb:.0f} |"
            )
        lines += [
            "",
            "chunk s is the workers' own time (summed over files); with workers it runs beside "
            "embed s, so wall ≈ embed + store when the overlap works.",
            "",
        ]
    return "\n".join(lines)


def datetime_now() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--index-files", type=int, default=300, help="0: skip the index part")
    ap.add_argument("--no-chunk", action="store_true", help="skip parts 1 and 2")
    ap.add_argument("--no-tokens", action="store_true", help="part 1 in characters only")
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = ap.parse_args(argv)
    loads = [load()]
    chunk_runs: list[CliRun] = []
    pool_rows: list[tuple[str, float]] = []
    if not args.no_chunk:
        units = [[], *([] if args.no_tokens else [["--unit", "tokens"]])]
        for extra in units:
            for jobs in (1, 2):
                chunk_runs.append(run_chunk(args.corpus, jobs, extra))
                print(f"chunk {extra} jobs {jobs}: {chunk_runs[-1].wall:.2f} s", file=sys.stderr)
        loads.append(load())
        for name, jobs, kind in (("serial", 1, "process"), ("2 threads", 2, "thread"),
                                 ("2 processes", 2, "process")):  # fmt: skip
            pool_rows.append((name, pool_seconds(args.corpus, jobs, kind)))
        loads.append(load())
    index_runs: list[IndexRun] = []
    files = 0
    if args.index_files:
        with tempfile.TemporaryDirectory(prefix="bench-jobs-") as tmp:
            corpus = Path(tmp, "corpus")
            files = subset(args.corpus, args.index_files, corpus)
            for label, jobs in (("jobs=1 (serial)", 1), ("jobs=2 (overlapped)", 2)):
                index_runs.append(run_index(label, corpus, Path(tmp, f"store-{jobs}"), jobs))
                print(f"index {label}: {index_runs[-1].wall:.1f} s", file=sys.stderr)
        loads.append(load())
    text = render(args.corpus, chunk_runs, pool_rows, index_runs, files, loads)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    bad = [r for r in chunk_runs if r.code != 0]
    if bad:
        print(json.dumps([(r.label, r.jobs, r.code) for r in bad]), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
