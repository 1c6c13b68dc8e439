#!/usr/bin/env python3
"""``--jobs``: chunking in worker processes, and chunking overlapped with embedding.

    python benchmarks/bench_jobs.py                              # md_corpus, both parts
    python benchmarks/bench_jobs.py --index-files 300            # index part on a subset
    python benchmarks/bench_jobs.py --out benchmarks/results/bench_jobs.md
    python benchmarks/bench_jobs.py --before /tmp/old/src        # part 1 with older code too

Part 1, ``narezka chunk`` on the whole corpus, as a user runs it (a subprocess writing JSONL),
through the console script ``narezka`` (what users run: its workers used to import it again
as ``__mp_main__``) and through ``python -m narezka``: ``--jobs 1`` against ``--jobs 2``, in
characters (the default) and in the USE embedder's tokens; wall time, CPU time of the whole
process tree, and the peak of the tree's summed resident memory and of its proportional set
size (main process plus workers, sampled every 20 ms from /proc), and the CPU time of the
main process alone (the serial part). The outputs of all runs are compared byte for byte.
``--before SRC`` runs every case of part 1 with an older narezka's ``src`` folder too (same
interpreter and packages), one after the other.

Part 2, the same files chunked in this process through the pool: serial, 2 threads and 2
processes (why processes: the GIL).

Part 3, ``index`` of a subset (fresh store and embedding cache each, default embedder):
``jobs=1`` (chunk, then embed, file by file) against the default (files chunked by workers
while the previous file is embedded): chunk / embed / store / wall seconds and wall ÷ embed
(goal ≤ 1.10), plus the peak memory of the process tree.

The machine is shared: the load average before and after each part is printed, and every
ratio compares runs made one after the other in this process.
"""

from __future__ import annotations

import argparse
import hashlib
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

from narezka.api.indexing import IndexReport, index  # noqa: E402
from narezka.runs.chunking import (  # noqa: E402
    ChunkReport,
    ChunkTask,
    _files,
    chunk_pool,
    make_params,
)
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


def _pss(pid: int) -> int:
    """Proportional set size: a page shared by n processes counts 1/n in each, so the sum
    over a tree counts the fork server's shared pages once (RSS counts them in every one)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


class TreeSampler:
    """Samples the summed RSS and PSS of a process tree (peaks) and the CPU time each member
    had when last seen (a worker's CPU counts even after it exits)."""

    def __init__(self, root: int) -> None:
        self.root, self.peak, self.peak_pss = root, 0, 0
        self.cpu: dict[int, float] = {}
        self.roles: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            time.sleep(SAMPLE_SECONDS)

    def sample(self) -> None:
        total = pss = 0
        for pid in _tree(self.root):
            rss, cpu = _rss_and_cpu(pid)
            total += rss
            pss += _pss(pid)
            if cpu:
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), cpu)
            if pid not in self.roles:
                self.roles[pid] = self._role(pid)
        self.peak = max(self.peak, total)
        self.peak_pss = max(self.peak_pss, pss)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _role(self, pid: int) -> str:
        if pid == self.root:
            return "main"
        try:
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            return "other"
        if parent != self.root:
            return "worker"  # forked by the fork server
        return "server" if b"forkserver" in command else "other"  # "other": resource tracker

    @property
    def cpu_seconds(self) -> float:
        return sum(self.cpu.values())

    def role_cpu(self, role: str) -> float:
        """CPU seconds of the members in one role: main, server, worker or other."""
        return sum(cpu for pid, cpu in self.cpu.items() if self.roles.get(pid) == role)

    @property
    def workers(self) -> int:
        return sum(1 for pid in self.cpu if self.roles.get(pid) == "worker")

    @property
    def main_cpu_seconds(self) -> float:
        """The root process alone: the serial part that bounds any speed-up (Amdahl)."""
        return self.cpu.get(self.root, 0.0)


# ---------------------------------------------------------------- part 1: the chunk command


@dataclass
class CliRun:
    label: str
    jobs: int
    wall: float
    cpu: float
    main_cpu: float
    peak_mb: float
    peak_pss_mb: float
    output: bytes
    """A SHA-256 of what the command wrote: a round's JSONL is some 20 MB, and holding every
    round's would count in part 3's memory figures (it samples this process)."""
    code: int
    server_cpu: float = 0.0
    worker_cpu: float = 0.0
    first_output: float = 0.0
    """Seconds from the start until the first byte of JSONL was written."""
    entry: str = "python -m narezka"
    """How the command was started: ``python -m narezka`` or the console script ``narezka``."""


BYTECODE: dict[str, str] = {}
"""Environment for the commands: with ``--bytecode`` (the default), compiled modules kept in a
temporary folder, as an installed narezka has them."""


def use_bytecode(folder: Path, sources: Sequence[Path]) -> None:
    """Run the commands with compiled modules, as pip installs them: a harness that sets
    PYTHONDONTWRITEBYTECODE makes every process compile narezka's sources again (about
    0.2 s in the main process, and again in the fork server). They are compiled here once,
    into ``folder``, before anything is timed."""
    BYTECODE.update(PYTHONPYCACHEPREFIX=str(folder), PYTHONDONTWRITEBYTECODE="")
    env = {**os.environ, **BYTECODE}
    for source in sources:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], env=env, check=True)


MODULE = "python -m narezka"
SCRIPT = "narezka"


def console_script() -> Path | None:
    """The ``narezka`` console script of this interpreter's environment (pip writes it beside
    the interpreter), if there is one."""
    beside = Path(sys.executable).parent / "narezka"
    if beside.is_file():
        return beside
    found = shutil.which("narezka")
    return Path(found) if found else None


def run_chunk(
    corpus: Path, jobs: int, extra: Sequence[str], src: Path | None = None, entry: str = MODULE
) -> CliRun:
    # The console script imports narezka from PYTHONPATH first too, so --before works for it.
    script = console_script()
    head = [str(script)] if entry == SCRIPT and script else [sys.executable, "-m", "narezka"]
    command = [*head, "chunk", str(corpus), "--format", "jsonl", "--jobs", str(jobs), *extra]
    env = {**os.environ, **BYTECODE, **({"PYTHONPATH": str(src)} if src else {})}
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        first: list[float] = []

        def watch_output() -> None:
            while not first and proc.poll() is None:
                if os.fstat(out.fileno()).st_size:
                    first.append(time.perf_counter() - started)
                time.sleep(SAMPLE_SECONDS / 4)

        watcher = threading.Thread(target=watch_output, daemon=True)
        watcher.start()
        with TreeSampler(proc.pid) as sampler:
            # Wait for the exit without reaping: the zombie's /proc entry still holds its
            # final CPU times, which the last sample then reads.
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
            sampler.sample()
            code = proc.wait()
        wall = time.perf_counter() - started
        watcher.join()
        out.seek(0)
        output = hashlib.sha256(out.read()).digest()
    label = (" ".join(extra) or "chars (default)") + (" · before" if src else "")
    return CliRun(
        label, jobs, wall, sampler.cpu_seconds, sampler.main_cpu_seconds,
        sampler.peak / 2**20, sampler.peak_pss / 2**20, output, code,
        sampler.role_cpu("server"), sampler.role_cpu("worker"), first[0] if first else wall,
        entry,
    )  # fmt: skip


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
    peak_pss_mb: float


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
    return IndexRun(label, report, wall, sampler.peak / 2**20, sampler.peak_pss / 2**20)


# ---------------------------------------------------------------- report


def render(
    corpus: Path,
    chunk_runs: list[CliRun],
    pool_rows: list[tuple[str, float]],
    index_runs: list[IndexRun],
    files: int,
    loads: list[str],
    rounds: int = 1,
) -> str:
    lines = [
        "# bench_jobs: `--jobs` and chunking overlapped with embedding",
        "",
        f"{datetime_now()} · {platform.machine()}, {os.cpu_count()} cores · Python "
        f"{platform.python_version()} · corpus {corpus.name} · load average "
        f"(1/5/15 min) {' → '.join(loads)} · "
        + ("bytecode compiled beforehand" if BYTECODE else "each process compiles its sources")
        + (" (PYTHONDONTWRITEBYTECODE set)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else ""),
        "",
    ]
    if chunk_runs:
        lines += [
            "## `narezka chunk --format jsonl` (whole process tree)",
            "",
            *(
                [f"Each row: the run of median wall time of {rounds} rounds.", ""]
                if rounds > 1
                else []
            ),
            "| unit | command | jobs | wall s | CPU s | main CPU s | other CPU s | cores used "
            "| peak RSS MB | peak PSS MB | speed-up | same output |",
            "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
        ]
        for run in chunk_runs:
            base = _jobs_1(chunk_runs, run)
            unit = run.label.removesuffix(" · before")
            first = next(r for r in chunk_runs if r.label.startswith(unit))  # this code, jobs 1
            same = all(r.output == first.output and r.code == first.code for r in (run, base))
            same_text = "yes" if same else "NO"
            lines.append(
                f"| {run.label} | `{run.entry}` | {run.jobs} | {run.wall:.2f} | {run.cpu:.2f} | "
                f"{run.main_cpu:.2f} | {run.cpu - run.main_cpu:.2f} | {run.cpu / run.wall:.2f} | "
                f"{run.peak_mb:.0f} | {run.peak_pss_mb:.0f} | {base.wall / run.wall:.2f}× | "
                f"{same_text} |"
            )
        lines += [
            "",
            "CPU s: user + system time of the process and its workers; main CPU s: the "
            "`narezka` process alone (the serial part: with n workers the wall time is at "
            "least main CPU s, and at best max(main, other ÷ n)); other CPU s: fork server, "
            "resource tracker and workers. Cores used = CPU s ÷ wall s, the share of the "
            "machine the run got. Peak RSS sums each process's resident memory (pages the "
            "workers share with the fork server count in every process); peak PSS counts a "
            "shared page once, split between its processes, so its sum is the tree's real "
            "footprint. This kernel schedules by session "
            "(sched_autogroup_enabled = 1): under load, a session gets its share however many "
            "processes it runs, which caps the speed-up of any jobs count.",
            "",
            "### Where the CPU goes",
            "",
            "| unit | command | jobs | main CPU s | fork server CPU s | workers CPU s "
            "| chunking CPU s | ÷ jobs 1 | first output s |",
            "|---|---|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for run in chunk_runs:
            base = _jobs_1(chunk_runs, run)
            # The chunking itself: the workers, or the one process at jobs 1.
            chunking = run.worker_cpu if run.jobs > 1 else run.main_cpu
            lines.append(
                f"| {run.label} | `{run.entry}` | {run.jobs} | {run.main_cpu:.2f} | "
                f"{run.server_cpu:.2f} | "
                f"{run.worker_cpu:.2f} | {chunking:.2f} | {chunking / base.main_cpu:.2f}× | "
                f"{run.first_output:.2f} |"
            )
        lines += [
            "",
            "chunking CPU s: the workers' summed CPU at jobs 2, the one process's at jobs 1 "
            "(which also starts up, lists and writes); ÷ jobs 1 is that against the jobs-1 "
            "process, so what it exceeds 1.00× by is what running in workers costs on top. "
            "The fork server imports the chunking stage and, for a model tokenizer, loads "
            "it once for every worker. first output s: from the start of the command to its "
            "first JSONL byte.",
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
            "| run | chunks | chunk s | embed s | store s | wall s | wall ÷ embed | peak RSS MB "
            "| peak PSS MB |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for run in index_runs:
            sec = run.report.seconds
            ratio = run.wall / sec["embed"] if sec["embed"] else 0.0
            lines.append(
                f"| {run.label} | {run.report.chunks_embedded} | {sec['chunk']:.1f} | "
                f"{sec['embed']:.1f} | {sec['store']:.1f} | {run.wall:.1f} | {ratio:.2f} | "
                f"{run.peak_mb:.0f} | {run.peak_pss_mb:.0f} |"
            )
        lines += [
            "",
            "chunk s is the workers' own time (summed over files); with workers it runs beside "
            "embed s, so wall ≈ embed + store when the overlap works.",
            "",
        ]
    return "\n".join(lines)


def _jobs_1(runs: list[CliRun], run: CliRun) -> CliRun:
    """The jobs-1 run of the same case (unit, tree and command) as ``run``."""
    return next(r for r in runs if (r.label, r.entry, r.jobs) == (run.label, run.entry, 1))


def datetime_now() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--index-files", type=int, default=300, help="0: skip the index part")
    ap.add_argument("--no-chunk", action="store_true", help="skip parts 1 and 2")
    ap.add_argument("--no-tokens", action="store_true", help="part 1 in characters only")
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    ap.add_argument("--before", type=Path, default=None, help="an older src folder to compare")
    ap.add_argument(
        "--repeat", type=int, default=1, help="rounds of part 1; each case's median is shown"
    )
    ap.add_argument(
        "--entry",
        choices=["both", "script", "module"],
        default="both",
        help="part 1 through the console script narezka, python -m narezka, or both",
    )
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="let each command compile narezka's sources itself if the environment says not "
        "to keep bytecode (PYTHONDONTWRITEBYTECODE)",
    )
    args = ap.parse_args(argv)
    loads = [load()]
    pyc = tempfile.TemporaryDirectory(prefix="bench-jobs-pyc-")
    if not args.no_bytecode:
        here = Path(__import__("narezka").__file__).resolve().parent
        use_bytecode(Path(pyc.name), [here, *([args.before] if args.before else [])])
    chunk_runs: list[CliRun] = []
    pool_rows: list[tuple[str, float]] = []
    if not args.no_chunk:
        units = [[], *([] if args.no_tokens else [["--unit", "tokens"]])]
        sources = [None, *([args.before] if args.before else [])]
        entries = {"both": [SCRIPT, MODULE], "script": [SCRIPT], "module": [MODULE]}[args.entry]
        if SCRIPT in entries and console_script() is None:
            print("no narezka console script here: python -m narezka only", file=sys.stderr)
            entries = [MODULE]
        cases = [
            (extra, src, entry, jobs)
            for extra in units
            for src in sources
            for entry in entries
            for jobs in (1, 2)
        ]
        # Round by round, every case once a round: a spell of load elsewhere on the machine
        # then falls on all cases alike, and the median of each drops it.
        rounds: list[list[CliRun]] = []
        for _ in range(args.repeat):
            rounds.append(
                [run_chunk(args.corpus, jobs, e, src, entry) for e, src, entry, jobs in cases]
            )
            print(" · ".join(f"{r.label} {r.entry} jobs {r.jobs}: {r.wall:.2f} s"
                             for r in rounds[-1]), file=sys.stderr)  # fmt: skip
        for i in range(len(cases)):
            runs = sorted((r[i] for r in rounds), key=lambda r: r.wall)
            if any(r.output != runs[0].output or r.code != runs[0].code for r in runs):
                runs[len(runs) // 2].code = -1  # outputs differ between rounds: say so
            chunk_runs.append(runs[len(runs) // 2])
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
    pyc.cleanup()
    text = render(args.corpus, chunk_runs, pool_rows, index_runs, files, loads, args.repeat)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    bad = [r for r in chunk_runs if r.code != 0]
    if bad:
        print(json.dumps([(r.label, r.jobs, r.code) for r in bad]), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
