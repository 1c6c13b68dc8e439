#!/usr/bin/env python3
"""Query latency per embedder on a golden set's questions: one question per call, no cache.

    OMP_NUM_THREADS=1 python benchmarks/query_latency.py [--embedders use,e5] [--set ru_devset]

Prints the model load time and the median / p95 milliseconds to embed one question, with the
ratio to the first embedder measured in the same run (the BM25 side costs microseconds: see
``benchmarks/results/ablation_*.md``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ablation import SETS
from narezka.embed import get_embedder
from narezka.evaluate import load_golden


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="use,e5")
    parser.add_argument("--set", default="ru_devset", choices=sorted(SETS))
    args = parser.parse_args(argv)
    questions = [q.q for q in load_golden(SETS[args.set].golden).questions]
    rows = []
    for spec in args.embedders.split(","):
        started = time.perf_counter()
        model = get_embedder(spec)
        model.embed_queries(["прогрев"])  # weights load lazily on the first call
        load = time.perf_counter() - started
        times = []
        for q in questions:
            started = time.perf_counter()
            model.embed_queries([q])
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        rows.append((model.name, load, statistics.median(times), times[int(len(times) * 0.95)]))
    print(f"| embedder | load s | median ms/query | p95 ms | ratio ({len(questions)} questions) |")
    print("|---|---:|---:|---:|---:|")
    for name, load, median, p95 in rows:
        print(f"| `{name}` | {load:.1f} | {median:.1f} | {p95:.1f} | {median / rows[0][2]:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
