#!/usr/bin/env python3
"""What the quality tier (``rescore = "e5"``) costs: index time per chunk, store bytes per
point, and search latency, against the same index without it, in the same run.

    OMP_NUM_THREADS=1 python benchmarks/quality_tier_cost.py [CORPUS] [--golden F] [--out F]
    OMP_NUM_THREADS=1 python benchmarks/quality_tier_cost.py --searches STORE --golden F

The corpus (default: the example KB) is indexed twice into fresh folders, each with a fresh
embedding cache (so every passage is embedded: the cost a first ``narezka index`` pays), once
without the tier and once with it. Each index is then asked every question of the golden file
once, in the same order (the first time a question is asked its query vectors are not
cached: the latency a new question pays), hybrid search, k = 5, as ``narezka search`` asks.
Store bytes: the live generation's folder after the index is closed (optimized), divided by
its points.

``--searches STORE`` measures search latency alone on an index built with the tier (say a dev
suite store): the golden file's questions asked once with ``rescore=False`` and once with the
tier, each pass with a fresh, empty embedding cache, so every query is embedded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from narezka import Index, Settings  # noqa: E402
from narezka.index.layout import data_dir, read_meta  # noqa: E402


def used_bytes(folder: Path) -> int:
    """Bytes the folder's files take on disk."""
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def measure(corpus: Path, home: Path, settings: Settings, questions: list[str]) -> dict[str, float]:
    os.environ["NAREZKA_CACHE_DIR"] = str(home.parent / f"{home.name}-cache")
    started = time.perf_counter()
    with Index.create(corpus, settings, store=home) as index:
        report = index.sync()
    seconds = time.perf_counter() - started
    points = report.chunks_embedded
    ms = []
    with Index.open(home) as index:
        index.search("warm-up: load the models", k=5)
        for q in questions:
            t = time.perf_counter()
            index.search(q, k=5)
            ms.append((time.perf_counter() - t) * 1000)
    store = used_bytes(data_dir(home, read_meta(home)))
    return {
        "points": points,
        "seconds": seconds,
        "per_chunk_ms": seconds / max(1, points) * 1000,
        "bytes_per_point": store / max(1, points),
        "p50": statistics.median(ms),
        "p95": float(np.percentile(ms, 95)),
    }


def searches(store: Path, questions: list[str]) -> list[str]:
    """Search latency with and without re-scoring on one tier index, uncached queries."""
    from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder

    out = {}
    for rescore in (False, True):
        with tempfile.TemporaryDirectory(prefix="narezka-tier-cache-") as tmp:
            model = CachedEmbedder(get_embedder("use"), EmbeddingCache(Path(tmp) / "e.sqlite"))
            with Index.open(store, embedder=model) as index:
                index.search("warm-up: load the models", k=5, rescore=rescore)
                ms = []
                for q in questions:
                    t = time.perf_counter()
                    index.search(q, k=5, rescore=rescore)
                    ms.append((time.perf_counter() - t) * 1000)
            model.cache.close()
        out[rescore] = (statistics.median(ms), float(np.percentile(ms, 95)))
    return [
        f"{store.name}: {len(questions)} questions, each embedded anew (empty cache), hybrid, "
        f"k = 5, on {platform.machine()} with {os.cpu_count()} cores shared with other work.",
        "",
        "| | rescore off | the tier | added |",
        "|---|--:|--:|--:|",
        *(
            f"| search {name}, ms | {out[False][i]:.1f} | {out[True][i]:.1f} | "
            f"+{out[True][i] - out[False][i]:.1f} |"
            for i, name in enumerate(("p50", "p95"))
        ),
    ]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, nargs="?", default=REPO / "examples" / "kb")
    ap.add_argument("--golden", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--searches", type=Path, default=None, help="A tier index: latency only.")
    args = ap.parse_args(argv)
    golden = args.golden or args.corpus / "golden.jsonl"
    lines = golden.read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["q"] for line in lines if line.strip()]
    if args.searches is not None:
        text = "\n".join(searches(args.searches, questions))
        print(text)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
        return 0
    with tempfile.TemporaryDirectory(prefix="narezka-tier-cost-") as tmp:
        plain = measure(args.corpus, Path(tmp) / "plain", Settings(), questions)
        tier = measure(args.corpus, Path(tmp) / "tier", Settings(rescore="e5"), questions)
    rows = [
        ("index time per chunk, ms", "per_chunk_ms", "{:.0f}"),
        ("store bytes per point", "bytes_per_point", "{:,.0f}"),
        ("search p50, ms", "p50", "{:.1f}"),
        ("search p95, ms", "p95", "{:.1f}"),
    ]
    out = [
        "```",
        f"OMP_NUM_THREADS=1 python benchmarks/quality_tier_cost.py {args.corpus.name}",
        "```",
        "",
        f"{args.corpus.name}: {int(plain['points'])} chunks, {len(questions)} questions asked "
        f"once each (uncached query vectors), hybrid, k = 5; {platform.machine()}, "
        f"{os.cpu_count()} cores shared with other work, OMP_NUM_THREADS="
        f"{os.environ.get('OMP_NUM_THREADS', 'unset')}.",
        "",
        '| | without the tier | with `rescore = "e5"` | ratio |',
        "|---|--:|--:|--:|",
    ]
    for label, key, fmt in rows:
        ratio = tier[key] / plain[key] if plain[key] else float("nan")
        out.append(
            f"| {label} | {fmt.format(plain[key])} | {fmt.format(tier[key])} | {ratio:.2f}× |"
        )
    text = "\n".join(out)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
