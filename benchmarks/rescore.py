#!/usr/bin/env python3
"""Second-stage re-scoring: fast hybrid candidates (USE + BM25), re-ranked by e5's vectors.

    OMP_NUM_THREADS=1 python benchmarks/rescore.py kb|ru_devset [--depth 20] [--out F]

A study, not a store feature: it measures what a second named vector (e5) stored beside the
first (USE) would buy. The corpus is chunked once, as an e5 index cuts it (``headings`` at
e5's budget; the e5 vectors come from the embedding cache when an earlier e5 run made them),
and the same chunks get USE vectors and BM25 sparse vectors in a second store. Per question:

* the first stage is a hybrid search on the USE store (both rankings, RRF 60), top
  ``--depth`` candidates;
* ``e5 re-scored`` orders those candidates by e5 cosine alone;
* ``e5 ⊕ first stage`` fuses the first-stage rank and the e5 rank by RRF 60;
* reference rows: each store on its own (dense, hybrid), so the table says how much of e5's
  full-index gain the second stage recovers.

A hit is a top-k chunk containing every expected string (the harness's rule); no folding.
Each row is compared with the first stage by a paired sign test. Cost: the e5 query embedding
per question (timed, uncached, in this run) is what the second stage adds to a search; the
index cost is e5 embedding of every chunk (``bench_embed.md``: 4.2 against USE's 134.6
Russian chunks/s) and one more 384-d vector per point.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ablation import REPO, SETS
from narezka.api.evaluating import paths_inside
from narezka.api.indexing import index, read_index_meta
from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder
from narezka.embed.cache import default_cache_path
from narezka.evaluate import load_golden
from narezka.evaluate.metrics import contains_all, sign_test
from narezka.search.fusion import Fusion, fuse, hybrid_query
from narezka.store import StoredHit, StoredPoint, open_store
from narezka.tokens.bm25 import bm25_encoder

KS = (1, 3, 5)

RRF = Fusion("rrf")
"""This study's fusion, RRF 60 (the default was until score fusion replaced it): given
explicitly, so that the rows keep meaning what the text above says."""


def ranked(ids: Sequence[str]) -> list[StoredHit]:
    return [StoredHit(pid, 0.0, {}) for pid in ids]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("set", choices=sorted(SETS))
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    setup = SETS[args.set]
    golden = [q for q in load_golden(setup.golden).questions if q.must_contain]
    cache = EmbeddingCache(default_cache_path())
    e5, use = CachedEmbedder(get_embedder("e5"), cache), CachedEmbedder(get_embedder("use"), cache)
    texts: list[str] = []
    embed = e5.embed

    def recording(batch: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        texts.extend(batch)
        return embed(batch)  # type: ignore[return-value]

    e5.embed = recording  # type: ignore[method-assign]
    bm25 = bm25_encoder()
    tops: dict[str, list[list[str]]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="narezka-rescore-") as tmp:
        exclude = (*setup.exclude, *paths_inside(setup.corpus, setup.golden))
        index(setup.corpus, store_dir=Path(tmp) / "e5", embedder=e5, exclude=exclude)
        e5_seconds = time.perf_counter() - started
        e5_misses = e5.misses
        home = Path(tmp) / "e5"
        e5_store = open_store(home / str(read_index_meta(home)["data"]))
        use_store = open_store(Path(tmp) / "use")
        try:
            e5_store.ensure(e5.dim, sparse=True)
            use_store.ensure(use.dim, sparse=True)
            ids = [h.id for h in e5_store.query(np.ones(e5.dim), k=100_000)]
            points = e5_store.get(ids, with_vectors=True)
            e5_vectors = {p.id: np.asarray(p.dense, dtype=np.float32) for p in points}
            embed_texts = _embed_texts(points, texts, e5)
            use_vectors = use.embed([embed_texts[p.id] for p in points])
            use_store.upsert(
                [
                    StoredPoint(p.id, use_vectors[i], p.payload, p.sparse)
                    for i, p in enumerate(points)
                ]
            )
            payload_text = {p.id: str(p.payload.get("text", "")) for p in points}
            query_ms: list[float] = []
            for name in ("USE dense", "e5 dense", "e5 hybrid (e5 index)", "first stage: USE "
                         "hybrid", "e5 re-scored", "e5 ⊕ first stage (RRF)"):  # fmt: skip
                tops[name] = []
            raw_e5 = e5.inner
            for question in golden:
                u = use.embed_queries([question.q])[0]
                t = time.perf_counter()
                raw_e5.embed_queries([question.q])  # uncached: what the second stage costs
                query_ms.append((time.perf_counter() - t) * 1000)
                v = e5.embed_queries([question.q])[0]
                s = bm25.encode_query(question.q)
                first = [h.id for h in hybrid_query(use_store, u, s, k=args.depth, fusion=RRF)]
                sims = {pid: float(np.dot(v, e5_vectors[pid])) for pid in first}
                rescored = sorted(first, key=lambda pid: -sims[pid])
                tops["USE dense"].append([h.id for h in use_store.query(u, k=5)])
                tops["e5 dense"].append([h.id for h in e5_store.query(v, k=5)])
                tops["e5 hybrid (e5 index)"].append(
                    [h.id for h in hybrid_query(e5_store, v, s, k=5, fusion=RRF)]
                )
                tops["first stage: USE hybrid"].append(first[:5])
                tops["e5 re-scored"].append(rescored[:5])
                tops["e5 ⊕ first stage (RRF)"].append(
                    [h.id for h in fuse(ranked(first), ranked(rescored), 5, RRF)]
                )
        finally:
            e5_store.close()
            use_store.close()
    seconds = time.perf_counter() - started
    n = len(golden)

    def outcome(name: str, k: int) -> list[bool]:
        return [
            any(contains_all(payload_text[pid], q.must_contain) for pid in top[:k])
            for q, top in zip(golden, tops[name], strict=True)
        ]

    base = "first stage: USE hybrid"
    lines = [
        f"# Second-stage re-scoring on {args.set}",
        "",
        "```",
        f"OMP_NUM_THREADS=1 python benchmarks/rescore.py {args.set} --depth {args.depth}",
        "```",
        "",
        f"{setup.note} `headings` at e5's budget ({len(payload_text)} chunks), Snowball BM25; "
        f"{n} questions; the first stage's top {args.depth} re-scored. {seconds:.0f} s in all "
        f"(e5 index {e5_seconds:.0f} s, {e5_misses} chunks embedded by e5, the rest cached) "
        f"on {platform.machine()} with {os.cpu_count()} cores shared with other work. `+a/−b`: "
        "questions only this row / only the first stage hit.",
        "",
        "| ranking | hit@1 | hit@3 | hit@5 | vs first stage @1 | vs first stage @5 |",
        "|---|---:|---:|---:|---|---|",
    ]
    for name in tops:
        cells = [name, *(f"{sum(outcome(name, k)) / n:.3f} ({sum(outcome(name, k))})" for k in KS)]
        for k in (1, 5):
            if name == base:
                cells.append("—")
                continue
            test = sign_test(outcome(name, k), outcome(base, k))
            cells.append(f"+{test.a_only}/−{test.b_only}, p={test.p_value:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Cost per search of the second stage: one e5 query embedding, median "
        f"{statistics.median(query_ms):.1f} ms (p95 {np.percentile(query_ms, 95):.1f} ms, "
        f"uncached, this run), plus {args.depth} dot products; per point, one more 384-d vector.",
    ]
    out = args.out or REPO / "benchmarks" / "results" / f"rescore_{args.set}.md"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


def _embed_texts(
    points: Sequence[StoredPoint], texts: Sequence[str], e5: CachedEmbedder
) -> dict[str, str]:
    """Each point's embed_text: every chunk's text passed through ``e5.embed`` while it was
    indexed; the one whose vector is the point's (cosine ≈ 1) is its text."""
    recorded = np.asarray(e5.embed(list(texts)), dtype=np.float32)
    stored = np.stack([np.asarray(p.dense, dtype=np.float32) for p in points])
    best = (stored @ recorded.T).argmax(axis=1)
    out = {}
    for p, i in zip(points, best, strict=True):
        if float(np.dot(stored[len(out)], recorded[i])) < 0.999:
            raise SystemExit(f"no recorded embed_text for point {p.id}")
        out[p.id] = texts[i]
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
