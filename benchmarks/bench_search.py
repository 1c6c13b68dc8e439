#!/usr/bin/env python3
"""In-process search latency: ``narezka.Index.search`` on an index held open, against the
one-call ``search()`` that opens and closes the index each time (what a program without an
``Index`` object, or the CLI, pays).

    python benchmarks/bench_search.py                           # examples/kb and md_corpus
    python benchmarks/bench_search.py --skip-corpus             # examples/kb only (fast)
    python benchmarks/bench_search.py --out benchmarks/results/bench_search.md

The md_corpus index is built once into ``--work`` (default: a folder in the system temp dir,
kept between runs so a re-run only measures); the shared corpus is only read. Queries are
seeded picks of H2/H3 headings, half Russian and half English (``--queries`` in all); every
query is asked in dense, bm25 and hybrid mode, k = 5, after 10 untimed warm-up queries per
mode. Open cost (store open, and the model's
one-off load) is reported apart from the per-query figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import narezka  # noqa: E402
from bench_sync import heading_queries  # noqa: E402
from narezka.api.searching import search as one_call_search  # noqa: E402

DEFAULT_CORPUS = Path(os.environ.get("NAREZKA_SHARED", REPO_ROOT.parent / "shared"))
MODES = ("dense", "bm25", "hybrid")
GOAL_P50_MS, GOAL_P95_MS = 30.0, 60.0
WARM_UP = 10


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(call: Callable[[], object], repeat: int = 1) -> list[float]:
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        out.append((time.perf_counter() - started) * 1000)
    return out


def build(corpus: Path, store: Path) -> tuple[float, int]:
    """Index ``corpus`` into ``store`` (a no-op re-sync when it is already there)."""
    started = time.perf_counter()
    with narezka.Index.create(corpus, narezka.Settings(), store=store) as index:
        report = index.sync()
    return time.perf_counter() - started, report.chunks_embedded


def measure(store: Path, queries: Sequence[str], one_call_sample: int) -> list[str]:
    rows = []
    started = time.perf_counter()
    index = narezka.Index.open(store)
    index.search("warm up", mode="bm25")  # opens the store
    open_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    index.search("warm up", mode="dense")  # loads the model
    model_ms = (time.perf_counter() - started) * 1000
    stats = index.stats()
    try:
        for mode in MODES:
            for q in queries[:WARM_UP]:  # first calls of a shape pay numpy/allocator warm-up
                index.search(q, mode=mode)
            held = [t for q in queries for t in timed(lambda q=q, m=mode: index.search(q, mode=m))]
            rows.append((mode, held))
        # The one-call path reopens the index every time; a sample is enough to see it.
        index.close()
        sample = queries[:one_call_sample]
        calls = [
            t for q in sample for t in timed(lambda q=q: one_call_search(q, store, mode="hybrid"))
        ]
    finally:
        index.close()
    lines = [
        f"- index: {stats.files} files, {stats.chunks} chunks, embedder {stats.embedder}",
        f"- open: store {open_ms:.0f} ms; model load + first dense query {model_ms:.0f} ms "
        "(once per process)",
        "",
        "| path | mode | queries | p50 ms | p95 ms | max ms |",
        "|---|---|--:|--:|--:|--:|",
    ]
    for mode, values in rows:
        lines.append(
            f"| `Index.search`, held open | {mode} | {len(values)} | "
            f"{statistics.median(values):.1f} | {percentile(values, 0.95):.1f} | "
            f"{max(values):.1f} |"
        )
    hybrid = dict(rows)["hybrid"]
    lines.append(
        f"| `search()`, opens the index per call | hybrid | {len(calls)} | "
        f"{statistics.median(calls):.1f} | {percentile(calls, 0.95):.1f} | {max(calls):.1f} |"
    )
    ratio = statistics.median(calls) / statistics.median(hybrid)
    lines += [
        "",
        f"Held open, hybrid p50 is {ratio:.1f}× faster than opening per call; goal p50 ≤ "
        f"{GOAL_P50_MS:.0f} ms and p95 ≤ {GOAL_P95_MS:.0f} ms: "
        f"p50 {statistics.median(hybrid):.1f}, p95 {percentile(hybrid, 0.95):.1f} — "
        + (
            "**met**"
            if statistics.median(hybrid) <= GOAL_P50_MS and percentile(hybrid, 0.95) <= GOAL_P95_MS
            else "**not met**"
        ),
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "narezka-bench")
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument("--one-call-sample", type=int, default=20)
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    load = os.getloadavg()
    out = [
        f"## bench_search — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average at start {load[0]:.2f}/{load[1]:.2f}",
        "- k = 5; every query in every mode; times are wall-clock per call in one process",
        "",
    ]
    kb = REPO_ROOT / "examples" / "kb"
    kb_store = args.work / "kb-index"
    seconds, embedded = build(kb, kb_store)
    kb_files = sorted(p.relative_to(kb) for p in kb.rglob("*.md"))
    kb_queries = [line.split(" ", 1)[1] for line in _kb_headings(kb, kb_files)][: args.queries]
    out += [f"### examples/kb ({len(kb_queries)} heading queries, Russian)", ""]
    out += [f"- built in {seconds:.1f} s ({embedded} chunks embedded)"]
    out += measure(kb_store, kb_queries, args.one_call_sample)
    corpus = args.shared / "data" / "md_corpus"
    if not args.skip_corpus and corpus.is_dir():
        store = args.work / "md_corpus-index"
        seconds, embedded = build(corpus, store)
        files = sorted(p.relative_to(corpus) for p in corpus.rglob("*.md"))
        queries = heading_queries(corpus, files, args.queries // 2)
        out += ["", f"### md_corpus ({len(queries)} heading queries, half Russian)", ""]
        out += [f"- built or re-synced in {seconds:.1f} s ({embedded} chunks embedded now)"]
        out += measure(store, queries, args.one_call_sample)
    load = os.getloadavg()
    out += ["", f"- load average at end {load[0]:.2f}/{load[1]:.2f}"]
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


def _kb_headings(kb: Path, files: Sequence[Path]) -> list[str]:
    lines = []
    for rel in files:
        for line in (kb / rel).read_text(encoding="utf-8").splitlines():
            if line.startswith(("## ", "### ")):
                lines.append(line.lstrip("#").strip())
    return [f"q {text}" for text in lines if len(text) >= 6]


if __name__ == "__main__":
    main()
