#!/usr/bin/env python3
"""Fusion of the dense and the BM25 ranking, ablated on one index: RRF's k, weighted RRF, and
min-max normalized score fusion, against RRF (k = 60, equal weights; the default then) — each row is
the fusion narezka ships (``narezka.search.fusion``, ``narezka search --fusion``).

    OMP_NUM_THREADS=1 python benchmarks/fusion.py ru_devset [--depth 50] [--out F]

The corpus is indexed once (``headings``, USE, Snowball BM25); every question is asked once
per ranking (top ``--depth`` dense, top ``--depth`` BM25, straight from the store, no
neighbour folding), and each fusion re-ranks those same candidates, so all rows cost the
same two queries and differ only in arithmetic. A hit is a top-k chunk containing every
expected string (the harness's rule); each row is compared with RRF 60 by a paired
two-sided sign test. Folding is left out, so the RRF 60 row is close to, not equal to, the
``hybrid`` row of ``benchmarks/ablation.py``. Output: ``benchmarks/results/fusion_<set>.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ablation import REPO, SETS
from narezka.api.evaluating import paths_inside
from narezka.api.indexing import index, read_index_meta
from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder
from narezka.embed.cache import default_cache_path
from narezka.evaluate import load_golden
from narezka.evaluate.metrics import contains_all, sign_test
from narezka.search import Fusion, fuse
from narezka.store import StoredHit, open_store
from narezka.tokens.bm25 import bm25_encoder

KS = (1, 3, 5)
Fuse = Callable[[Sequence[StoredHit], Sequence[StoredHit]], list[str]]


def library(fusion: Fusion) -> Fuse:
    """The fusion narezka ships (``narezka.search.fusion``), over all candidates."""
    return lambda dense, sparse: [
        h.id for h in fuse(dense, sparse, len(dense) + len(sparse), fusion)
    ]


FUSIONS: dict[str, Fuse] = {
    "dense only": lambda dense, sparse: [h.id for h in dense],
    "BM25 only": lambda dense, sparse: [h.id for h in sparse],
    "RRF k=60": library(Fusion("rrf")),
    **{f"RRF k={k}": library(Fusion("rrf", rrf_k=k)) for k in (1, 10, 30, 100)},
    **{
        f"RRF k=60, BM25 weight {w}": library(Fusion("weighted", dense_weight=round(1 - w, 2)))
        for w in (0.3, 0.7, 0.8)
    },
    **{
        f"normalized, BM25 weight {w}": library(Fusion("score", dense_weight=round(1 - w, 2)))
        for w in (0.3, 0.5, 0.7)
    },
}
BASE = "RRF k=60"
"""The comparison's base: the default when this study was made (score fusion with BM25 weight
0.7, a row below, is today's)."""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", choices=sorted(SETS))
    parser.add_argument("--depth", type=int, default=50)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    setup = SETS[args.set]
    golden = [q for q in load_golden(setup.golden).questions if q.must_contain]
    model = CachedEmbedder(get_embedder("use"), EmbeddingCache(default_cache_path()))
    bm25 = bm25_encoder("snowball")
    ranks: dict[str, list[int | None]] = {name: [] for name in FUSIONS}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="narezka-fusion-") as tmp:
        exclude = (*setup.exclude, *paths_inside(setup.corpus, setup.golden))
        index(setup.corpus, store_dir=tmp, embedder=model, exclude=exclude)
        # The index home holds generations; the store is the live one (index.json's data).
        store = open_store(Path(tmp) / str(read_index_meta(Path(tmp))["data"]))
        try:
            store.ensure(model.dim, sparse=True)
            for question in golden:
                dense = store.query(
                    model.embed_queries([question.q])[0], None, mode="dense", k=args.depth
                )
                sparse = store.query(None, bm25.encode_query(question.q), mode="bm25", k=args.depth)
                texts = {h.id: str(h.payload.get("text", "")) for h in [*dense, *sparse]}
                for name, fuse in FUSIONS.items():
                    top = fuse(dense, sparse)[: max(KS)]
                    hit = [contains_all(texts[pid], question.must_contain) for pid in top]
                    ranks[name].append(hit.index(True) + 1 if True in hit else None)
        finally:
            store.close()
    seconds = time.perf_counter() - started
    n = len(golden)
    base = ranks[BASE]

    def outcomes(rs: list[int | None], k: int) -> list[bool]:
        return [r is not None and r <= k for r in rs]

    lines = [
        f"# Fusion on {args.set}",
        "",
        "```",
        f"OMP_NUM_THREADS=1 python benchmarks/fusion.py {args.set} --depth {args.depth}",
        "```",
        "",
        f"{setup.note} `headings`, USE, Snowball BM25; {n} questions, top {args.depth} of each "
        f"ranking fused; {seconds:.0f} s in all on {platform.machine()} with {os.cpu_count()} "
        "cores shared with other work. `+a/−b`: questions only this row / only RRF 60 hit.",
        "",
        "| fusion | hit@1 | hit@3 | hit@5 | MRR@5 | vs RRF 60 @1 | vs RRF 60 @5 |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for name, rs in ranks.items():
        hits = [sum(outcomes(rs, k)) for k in KS]
        mrr = sum(1.0 / r for r in rs if r is not None) / n
        vs = []
        for k in (1, 5):
            if name == BASE:
                vs.append("—")
                continue
            test = sign_test(outcomes(rs, k), outcomes(base, k))
            vs.append(f"+{test.a_only}/−{test.b_only}, p={test.p_value:.3f}")
        cells = [name, *(f"{h / n:.3f} ({h})" for h in hits), f"{mrr:.3f}", *vs]
        lines.append("| " + " | ".join(cells) + " |")
    out = args.out or REPO / "benchmarks" / "results" / f"fusion_{args.set}.md"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
