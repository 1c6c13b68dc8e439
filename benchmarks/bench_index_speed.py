#!/usr/bin/env python3
"""``narezka index`` speed end to end: this tree against an older commit, and a served model.

    python benchmarks/bench_index_speed.py                  # md_corpus/ru/fastapi, best of 3
    python benchmarks/bench_index_speed.py --repeat 5 --out benchmarks/results/bench_index_speed.md

Every run is ``python -m narezka index CORPUS --store FRESH --json`` in a subprocess, into a
fresh index folder (so a cold embedding cache too), as a user runs it. The older commit
(``--base``, default 68ba517, the figure issue #39 measures against) is unpacked with ``git
archive`` and run with the same interpreter and packages; it has no native core, as it had
none. Runs of the two trees alternate, so a change of the machine's load hits both alike.

Table 1, the ``hash`` embedder (no model: what chunking, the pipeline and the store cost):
wall seconds and chunks/s (best of ``--repeat``), and the CPU seconds of the whole process
tree (main process, fork server and workers, read from /proc while it runs), for ``--jobs``
left to its default and ``--jobs 1``; then the same command on a one-file corpus: the fixed
cost of a run (interpreter, imports, creating and closing the store) that no corpus avoids.

Table 2, a served model: the OpenAI-compatible fake of ``tests/embed/fake_servers.py`` in its
own process, answering any batch of up to 32 texts in 100 ms, with 8 requests in flight
(``NAREZKA_EMBED_CONCURRENCY``) and with 1; the chunks/s of the whole ``index`` as a multiple
of the one-request bound (32 ÷ 0.1 s = 320 chunks/s).

Table 3, where the time of this tree's ``index`` goes, in this process with ``jobs=1`` and the
stages' functions wrapped in timers (wall and CPU seconds, calls).

The machine may be shared: the load average is printed beside every figure.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NAREZKA_SHARED", REPO_ROOT.parent / "shared"))
DEFAULT_CORPUS = SHARED / "data/md_corpus/ru/fastapi"
BASE = "68ba517"
NAREZKA = (sys.executable, "-m", "narezka")
LATENCY, BATCH, IN_FLIGHT = 0.1, 32, 8
ONE_REQUEST_BOUND = BATCH / LATENCY


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    chunks: int
    load: str
    sync: float
    """The sync's own seconds, as its report gives them (no start-up, no store creation)."""


def index_once(
    corpus: Path, src: Path, embedder: str, jobs: int | None, env: dict[str, str] | None = None
) -> Run:
    """One ``narezka index`` of ``corpus`` (code from ``src``) into a fresh folder."""
    from bench_jobs import TreeSampler  # imports narezka: not before table 3's child counts it

    with tempfile.TemporaryDirectory() as tmp:
        environ = dict(os.environ, PYTHONPATH=str(src), NAREZKA_CACHE_DIR=tmp, **(env or {}))
        environ.pop("NAREZKA_JOBS", None)
        # A tree run without its bytecode compiles every module at start-up (0.13 CPU s
        # here): the first run of each tree writes it, as an installed package has it.
        environ.pop("PYTHONDONTWRITEBYTECODE", None)
        command = [*NAREZKA, "index", str(corpus), "--store", f"{tmp}/store"]
        command += ["--embedder", embedder, "--json", *(["-j", str(jobs)] if jobs else [])]
        started = time.perf_counter()
        proc = subprocess.Popen(
            command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        with TreeSampler(proc.pid) as tree:
            out, err = proc.communicate()
            tree.sample()
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"narezka index failed ({proc.returncode}): {err[-2000:]}")
        report = json.loads(out)
        chunks, sync = int(report["chunks_embedded"]), float(report["seconds"]["total"])
        return Run(wall, tree.cpu_seconds, chunks, load(), sync)


def best(runs: Sequence[Run]) -> Run:
    """The fastest run by wall time, with the least CPU any run took."""
    fastest = min(runs, key=lambda r: r.wall)
    sync = min(r.sync for r in runs)
    return Run(fastest.wall, min(r.cpu for r in runs), fastest.chunks, fastest.load, sync)


def hash_table(corpus: Path, base_src: Path, repeat: int, base: str = BASE) -> list[str]:
    this_src = REPO_ROOT / "src"
    one = Path(tempfile.mkdtemp()) / "one"
    one.mkdir()
    first = min(p for p in corpus.rglob("*.md"))
    (one / first.name).write_bytes(first.read_bytes())
    cases = [
        (name, src, folder, jobs)
        for folder in (corpus, one)
        for jobs in ((None, 1) if folder == corpus else (1,))
        for name, src in ((f"{base} (base)", base_src), ("this tree", this_src))
    ]
    runs: dict[int, list[Run]] = defaultdict(list)
    for _ in range(repeat):  # one of each in turn: load changes hit every case alike
        for i, (_, src, folder, jobs) in enumerate(cases):
            runs[i].append(index_once(folder, src, "hash", jobs))
    lines = [
        f"### 1. `narezka index {corpus.name} --embedder hash`, best of {repeat}",
        "",
        "| code | corpus | --jobs | chunks | wall s | chunks/s | CPU s (tree) | × base chunks/s "
        "| × base CPU | sync s (report) | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, (name, _, folder, jobs) in enumerate(cases):
        run = best(runs[i])
        base = best(runs[i - 1]) if name == "this tree" else run
        lines.append(
            f"| {name} | {folder.name} | {jobs or 'default'} | {run.chunks} | {run.wall:.2f} "
            f"| {run.chunks / run.wall:.0f} | {run.cpu:.2f} "
            f"| {base.wall / run.wall:.2f} | {base.cpu / run.cpu:.2f} | {run.sync:.2f} "
            f"| {run.load} |"
        )
    return lines


def served_table(corpus: Path, repeat: int) -> list[str]:
    from bench_remote_embed import MODEL, server

    lines = [
        f"### 2. `narezka index {corpus.name}` with a served model (fake: {BATCH} texts a "
        f"batch, {LATENCY * 1000:.0f} ms each), best of {repeat}",
        "",
        f"One-request bound: {ONE_REQUEST_BOUND:.0f} chunks/s.",
        "",
        "| in flight | chunks | wall s | chunks/s | × one-request bound | sync s (report) "
        "| its chunks/s | × bound | most in flight seen | load |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for flight in (1, IN_FLIGHT):
        with server(latency=LATENCY, batch=BATCH, dim=64) as srv:
            spec = f"openai:{MODEL}@{srv.url}/v1"
            env = {"NAREZKA_EMBED_CONCURRENCY": str(flight)}
            run = best(
                [index_once(corpus, REPO_ROOT / "src", spec, None, env) for _ in range(repeat)]
            )
            seen = srv.stats()["max_in_flight"]
        rate, own = run.chunks / run.wall, run.chunks / run.sync
        lines.append(
            f"| {flight} | {run.chunks} | {run.wall:.2f} | {rate:.0f} "
            f"| {rate / ONE_REQUEST_BOUND:.2f} | {run.sync:.2f} | {own:.0f} "
            f"| {own / ONE_REQUEST_BOUND:.2f} | {seen} | {run.load} |"
        )
    return lines


# ------------------------------------------------------------------ table 3: stages, in process

STAGES: tuple[tuple[str, str, str], ...] = (
    ("narezka.index.changes", "_survey", "discover (walk, stat, manifest)"),
    ("narezka.runs.file_chunks", "chunk_file", "read + parse + chunk"),
    ("narezka.embed.base:HashEmbedder", "embed", "embed (the hash model)"),
    ("narezka.embed.cache:EmbeddingCache", "get_many", "embedding cache"),
    ("narezka.embed.cache:EmbeddingCache", "put_many", "embedding cache"),
    ("narezka.tokens.bm25:Bm25Encoder", "encode_document", "BM25 vectors"),
    ("narezka.index.syncing", "chunk_payload", "payload build"),
    ("narezka.store.edge:EdgeStore", "_point", "payload → engine point"),
    ("narezka.store.edge:EdgeStore", "upsert", "upsert (with the line above)"),
    ("narezka.store.manifest:Manifest", "plan", "manifest"),
    ("narezka.store.manifest:Manifest", "begin", "manifest"),
    ("narezka.store.manifest:Manifest", "commit", "manifest"),
    ("narezka.store.manifest:Manifest", "commit_many", "manifest"),
    ("narezka.store.edge:EdgeStore", "ensure", "store create + payload indexes"),
    ("narezka.store.edge:EdgeStore", "close", "store flush + close"),
    ("narezka.index.sync_steps", "fill", "fill (the whole sync)"),
)


def stages(corpus: Path) -> list[str]:
    """Table 3: run in a child process (``--stages``) so its imports are counted cold."""
    proc = subprocess.run(
        [sys.executable, __file__, "--stages-of", str(corpus)],
        capture_output=True,
        text=True,
        check=True,
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "NAREZKA_CACHE_DIR": tempfile.mkdtemp(),
            "PYTHONPATH": str(REPO_ROOT / "src"),
        },
    )
    return [
        f"### 3. Where this tree's time goes: `index` of {corpus.name}, jobs=1, in process",
        "",
        "| stage | calls | wall s | CPU s |",
        "|---|---|---|---|",
        *proc.stdout.splitlines(),
        "",
        f"Load average after: {load()}.",
    ]


def _timed(owner: Any, name: str, into: list[float]) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            into[0] += time.perf_counter() - wall
            into[1] += time.process_time() - cpu
            into[2] += 1

    setattr(owner, name, timed)


def stages_of(corpus: Path) -> None:
    import importlib

    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    wall, cpu = time.perf_counter(), time.process_time()
    import narezka.api.indexing
    import narezka.cli.index  # what the command imports

    totals["imports (the CLI's)"] = [time.perf_counter() - wall, time.process_time() - cpu, 1]
    for where, name, stage in STAGES:
        module, _, cls = where.partition(":")
        owner = importlib.import_module(module)
        owner = getattr(owner, cls) if cls else owner
        if hasattr(owner, name):
            _timed(owner, name, totals[stage])
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu = time.perf_counter(), time.process_time()
        report = narezka.api.indexing.index(
            corpus, store_dir=Path(tmp) / "s", embedder="hash", jobs=1
        )
        totals["index() in all"] = [time.perf_counter() - wall, time.process_time() - cpu, 1]
    for stage, (w, c, n) in totals.items():
        print(f"| {stage} | {int(n)} | {w:.3f} | {c:.3f} |")
    print(f"| chunks | {report.chunks_embedded} | | |")


@contextmanager
def base_tree(spec: str) -> Iterator[Path]:
    """The base's ``src``: a folder given as it is, else the commit unpacked."""
    from bench_remote_embed import old_tree

    if Path(spec).is_dir():
        yield Path(spec)
        return
    with old_tree(spec) as src:
        if src is None:
            raise SystemExit(f"git cannot give {spec}")
        yield src


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--base", default=BASE, help="a commit, or a folder holding its src")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-served", action="store_true")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--stages-of", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.stages_of:
        stages_of(args.stages_of)
        return 0
    cores = len(os.sched_getaffinity(0))
    lines = [
        f"## bench_index_speed — {platform.machine()}, {cores} cores, Python "
        f"{platform.python_version()}, load average at the start {load()}",
        "",
    ]
    with base_tree(args.base) as base_src:
        lines += [*hash_table(args.corpus, base_src, args.repeat, args.base), ""]
    if not args.skip_served:
        lines += [*served_table(args.corpus, args.repeat), ""]
    lines += stages(args.corpus)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
