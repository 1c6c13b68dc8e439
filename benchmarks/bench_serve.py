#!/usr/bin/env python3
"""`narezka serve` under a bounded load on localhost: the HTTP API's /search with 8
concurrent clients, idle and while a sync runs, and the MCP tool-call round trip over stdio.

    python benchmarks/bench_serve.py --out benchmarks/results/bench_serve.md
    python benchmarks/bench_serve.py --corpus ../shared/data/md_corpus/ru/fastapi

The corpus (default examples/kb) is copied to a temporary folder and indexed with the
default embedder (``use``). Measured in one run, in this order:

1. peers without a server: ``narezka search`` as a fresh process per query (what a script
   pays today: interpreter, model and engine start), and ``Index.search`` in-process (the
   floor: no HTTP);
2. ``narezka serve --http``: a fixed number of hybrid k=5 /search requests from 8 client
   threads (one keep-alive connection each); QPS and p50/p95/p99 latency; every reply is
   checked — status 200, each hit's text exactly its span of the file (of either version of
   a file being edited), no chunk twice in one reply;
3. the same load while a writer thread edits files and asks the server to sync (POST /sync)
   in a loop: errors, syncs completed, latency;
4. the peer: the same server with no cap on searches at once (``--search-threads 8``), idle;
5. MCP over stdio (the SDK's client starting ``narezka serve``): ``search`` tool-call round
   trip p50/p95, sequential.

Timings are wall-clock on whatever else the machine is doing: say so when quoting them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from narezka import Index, Settings  # noqa: E402

from serve.helpers import poll, start_http, stop  # noqa: E402

CLIENTS = 8


def queries(corpus: Path) -> list[str]:
    golden = corpus / "golden.jsonl"
    if golden.is_file():
        return [json.loads(line)["q"] for line in golden.read_text().splitlines() if line.strip()]
    heads = []
    for page in sorted(corpus.rglob("*.md"))[:200]:
        for line in page.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("## "):
                heads.append(line[3:].strip())
    return heads[:60] or ["index"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def row(name: str, lat: list[float], seconds: float | None, errors: int, bad: int) -> str:
    qps = f"{len(lat) / seconds:.1f}" if seconds else "–"
    ms = [1000 * pct(lat, q) for q in (0.5, 0.95, 0.99)]
    return (
        f"| {name} | {len(lat)} | {qps} | {ms[0]:.1f} | {ms[1]:.1f} | {ms[2]:.1f} "
        f"| {errors} | {bad} |"
    )


class Versions:
    """Every text each file has had during the run (an edit may land mid-request)."""

    def __init__(self, corpus: Path) -> None:
        self.corpus = corpus
        self.seen: dict[str, set[str]] = {}
        self.lock = threading.Lock()
        for page in corpus.rglob("*.md"):
            if ".narezka" not in page.parts:
                self.record(page)

    def record(self, page: Path) -> None:
        rel = page.relative_to(self.corpus).as_posix()
        with self.lock:
            self.seen.setdefault(rel, set()).add(page.read_text(encoding="utf-8"))

    def valid(self, hit: dict[str, Any]) -> bool:
        if hit.get("truncated") or hit.get("stale"):
            return True
        with self.lock:
            texts = self.seen.get(hit["file_path"], set())
            return any(t[hit["start"] : hit["end"]] == hit["text"] for t in texts)


def load(
    base: str, qs: list[str], total: int, versions: Versions, phase: str
) -> tuple[list[float], float, int, int]:
    lat: list[float] = []
    errors = bad = 0
    lock = threading.Lock()
    counter = iter(range(total))

    def client() -> None:
        nonlocal errors, bad
        with httpx.Client(base_url=base, timeout=60) as http:
            for i in counter:
                # Each request a new text: the embedding cache must not answer repeats.
                q = f"{qs[i % len(qs)]} {phase}{i}"
                t0 = time.perf_counter()
                try:
                    r = http.get("/search", params={"q": q, "k": 5, "mode": "hybrid"})
                except httpx.HTTPError:
                    with lock:
                        errors += 1
                    continue
                took = time.perf_counter() - t0
                ok_status = r.status_code == 200
                hits = r.json()["hits"] if ok_status else []
                ids = [h["chunk_id"] for h in hits]
                valid = len(ids) == len(set(ids)) and all(versions.valid(h) for h in hits)
                with lock:
                    lat.append(took)
                    errors += not ok_status
                    bad += ok_status and not valid

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lat, time.perf_counter() - started, errors, bad


def idle_writer(base: str) -> bool:
    writer = httpx.get(f"{base}/status", timeout=60).json()["writer"]
    return bool(writer["syncs"] >= 1 and not writer["syncing"])


def mcp_round_trips(corpus: Path, qs: list[str], n: int) -> list[float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "narezka", "serve", str(corpus), "--no-watch"]
    )
    out: list[float] = []

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await client.call_tool("search", {"query": qs[0]})  # model warm
            for i in range(n):
                t0 = time.perf_counter()
                query = f"{qs[i % len(qs)]} mcp{i}"
                result = await client.call_tool("search", {"query": query, "k": 5})
                out.append(time.perf_counter() - t0)
                assert not result.is_error

    asyncio.run(main())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "examples" / "kb")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--mcp-calls", type=int, default=60)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    corpus = work / "kb"
    shutil.copytree(args.corpus, corpus, ignore=shutil.ignore_patterns(".narezka"))
    qs = queries(corpus)
    shown = args.corpus.relative_to(REPO) if args.corpus.is_relative_to(REPO) else args.corpus
    lines = [
        "# bench_serve",
        "",
        f"Corpus: `{shown}`; embedder `use`; hybrid k=5; {CLIENTS} concurrent clients; every"
        f" request a distinct query text ({len(qs)} questions, numbered).",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, shared with other work while"
        " measured (wall-clock figures; expect noise).",
        "",
    ]
    try:
        t0 = time.perf_counter()
        with Index.create(corpus, Settings(embedder="use")) as index:
            report = index.sync()
            built = time.perf_counter() - t0
            chunks = index.stats().chunks
            index.search(qs[0], k=5)  # model loaded and warm
            inproc = []
            for i in range(100):
                t1 = time.perf_counter()
                index.search(f"{qs[i % len(qs)]} p{i}", k=5)
                inproc.append(time.perf_counter() - t1)
        lines.append(f"Index: {report.files_new} files, {chunks} chunks, built in {built:.1f} s.\n")
        cli = []
        for q in qs[: args.cli_runs]:
            t1 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "narezka", "search", q, "--store", str(corpus)],
                check=True,
                capture_output=True,
            )
            cli.append(time.perf_counter() - t1)

        proc, base = start_http(corpus, "--no-watch")
        try:
            versions = Versions(corpus)
            # Idle means idle: the server's start-up sync (nothing to do here, but it loads
            # the model and optimizes the store) is over before the load begins.
            poll(lambda: idle_writer(base), 300)
            httpx.get(f"{base}/search", params={"q": qs[0]}, timeout=120)  # warm
            idle = load(base, qs, args.requests, versions, "a")

            stop_edits = threading.Event()
            syncs = 0
            sync_seconds: list[float] = []

            def writer() -> None:
                nonlocal syncs
                pages = sorted(p for p in corpus.rglob("*.md") if ".narezka" not in p.parts)
                i = 0
                while not stop_edits.is_set():
                    page = pages[i % len(pages)]
                    page.write_text(
                        page.read_text(encoding="utf-8") + f"\n\nПравка {i}: ещё строка.\n",
                        encoding="utf-8",
                    )
                    versions.record(page)
                    t1 = time.perf_counter()
                    r = httpx.post(f"{base}/sync", timeout=600)
                    sync_seconds.append(time.perf_counter() - t1)
                    syncs += r.status_code == 200
                    i += 1

            edits = threading.Thread(target=writer)
            edits.start()
            busy = load(base, qs, args.requests, versions, "b")
            stop_edits.set()
            edits.join()
        finally:
            stop(proc)
        # The peer: the same server with as many searches at once as clients (no cap).
        proc, base = start_http(corpus, "--no-watch", "--search-threads", str(CLIENTS))
        try:
            poll(lambda: idle_writer(base), 300)
            httpx.get(f"{base}/search", params={"q": qs[0]}, timeout=120)
            uncapped = load(base, qs, args.requests, versions, "c")
        finally:
            stop(proc)
        mcp = mcp_round_trips(corpus, qs, args.mcp_calls)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines += [
        "| what | requests | QPS | p50 ms | p95 ms | p99 ms | errors | invalid replies |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        row("`narezka search` CLI, a process per query", cli, None, 0, 0),
        row("`Index.search` in-process (no HTTP)", inproc, None, 0, 0),
        row(f"serve /search, idle, searches capped at the cores ({os.cpu_count()})", *idle),
        row(f"serve /search, idle, `--search-threads {CLIENTS}` (no cap)", *uncapped),
        row(f"serve /search, while syncing ({syncs} syncs done)", *busy),
        row("POST /sync (one edited file) under that load", sync_seconds, None, 0, 0),
        row("MCP `search` over stdio, sequential", mcp, None, 0, 0),
        "",
        f"Ratios (same run): CLI p50 / serve idle p50 = "
        f"{pct(cli, 0.5) / pct(idle[0], 0.5):.0f}×; serve idle p50 / in-process p50 = "
        f"{pct(idle[0], 0.5) / pct(inproc, 0.5):.1f}×; p95 while syncing / idle = "
        f"{pct(busy[0], 0.95) / pct(idle[0], 0.95):.1f}×; p95 uncapped / capped = "
        f"{pct(uncapped[0], 0.95) / pct(idle[0], 0.95):.1f}×.",
        "",
        "Invalid reply: a status other than 200, a hit whose text is not exactly its span of "
        "the file (any version the file had during the run), or one chunk twice in a reply.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
