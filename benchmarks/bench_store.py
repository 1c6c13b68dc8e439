"""Store benchmark: upsert throughput, delete-by-file latency, query p50/p95 per mode.

Synthetic data: random normalized 512-d vectors, BM25 vectors of 40-word pseudo-documents
(Zipf-distributed vocabulary), payloads like narezka's (10 chunks per file, zone, project,
archived 0/1, category). The filtered queries ask for ``zone == "hot"`` and not archived.

EdgeStore runs at every size; ServerStore runs in qdrant-client's *local mode* at the
smallest size only — a pure-Python engine, not representative of a real Qdrant server.

    python benchmarks/bench_store.py [--sizes 10000 100000] [--queries 50]
    python benchmarks/bench_store.py --sizes 100000 300000 1000000 --hash-vectors --edge-only
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from narezka.embed.base import HashEmbedder
from narezka.search.fusion import hybrid_query
from narezka.store import Eq, Filter, SparseVector, StoredPoint, VectorStore, point_id
from narezka.tokens.bm25 import Bm25Encoder

DIM = 512
ZONES = ("hot", "warm", "warm", "cold")
FILTER = Filter(must=(Eq("zone", "hot"),), must_not=(Eq("archived", True),))


BATCH = 1000


def make_points(
    n: int, seed: int = 0, *, hash_vectors: bool = False
) -> Iterator[list[StoredPoint]]:
    """``n`` synthetic points, made and yielded a batch at a time (a million points whole
    would take gigabytes before the store holds any). Dense vectors are random unit vectors,
    or with ``hash_vectors`` the ``hash`` embedder's of each point's text."""
    rng = np.random.default_rng(seed)
    vocab = [f"term{i}" for i in range(20_000)]
    bm25 = Bm25Encoder()
    hasher = HashEmbedder(DIM)
    for start in range(0, n, BATCH):
        size = min(BATCH, n - start)
        ranks = np.minimum(rng.zipf(1.3, size=(size, 40)), len(vocab)) - 1
        texts = [" ".join(vocab[r] for r in row) for row in ranks]
        if hash_vectors:
            vectors = np.asarray(hasher.embed(texts), dtype=np.float32)
        else:
            vectors = rng.standard_normal((size, DIM)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        batch = []
        for j, text in enumerate(texts):
            i = start + j
            payload = {
                "file_path": f"docs/file{i // 10}.md",
                "chunk_index": i % 10,
                "zone": ZONES[i % 4],
                "project": f"p{i % 5}",
                "archived": i % 10 == 0,
                "category": f"c{i % 7}",
                "content_hash": f"{i:032x}",
            }
            sparse = bm25.encode_document(text)
            batch.append(StoredPoint(point_id(str(i)), vectors[j], payload, sparse))
        yield batch


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def run(
    name: str,
    opener: Callable[[], VectorStore],
    n: int,
    queries: int,
    *,
    hash_vectors: bool = False,
) -> list[str]:
    store = opener()
    store.ensure(DIM, sparse=True)
    upsert_s = 0.0
    for batch in make_points(n, hash_vectors=hash_vectors):
        started = time.perf_counter()
        store.upsert(batch)
        upsert_s += time.perf_counter() - started
    assert store.count() == n

    rng = np.random.default_rng(1)
    deletes = []
    for f in rng.choice(n // 10, size=20, replace=False):
        t = time.perf_counter()
        store.delete_where("file_path", f"docs/file{f}.md")
        deletes.append((time.perf_counter() - t) * 1000)

    bm25 = Bm25Encoder()
    qvecs = rng.standard_normal((queries, DIM)).astype(np.float32)
    qtexts = [
        " ".join(f"term{int(r)}" for r in rng.integers(0, 200, size=3)) for _ in range(queries)
    ]
    if hash_vectors:
        qvecs = np.asarray(HashEmbedder(DIM).embed(qtexts), dtype=np.float32)
    rows = [
        f"{name:<22} {n:>7} {'upsert':<16} {n / upsert_s:>10.0f} pts/s {upsert_s:>7.2f} s total",
        f"{name:<22} {n:>7} {'delete file':<16} p50 {percentile(deletes, 50):7.2f} ms"
        f"  p95 {percentile(deletes, 95):7.2f} ms",
    ]
    for mode in ("dense", "bm25", "hybrid"):
        for where in (None, FILTER):
            times = []
            for i in range(queries):
                sparse: SparseVector | None = bm25.encode_query(qtexts[i])
                t = time.perf_counter()
                if mode == "hybrid":
                    assert sparse is not None
                    hybrid_query(store, qvecs[i], sparse, filter=where, k=10)
                else:
                    store.query(qvecs[i], sparse, filter=where, k=10, mode=mode)  # type: ignore[arg-type]
                times.append((time.perf_counter() - t) * 1000)
            label = f"{mode}{' +filter' if where else ''}"
            rows.append(
                f"{name:<22} {n:>7} {label:<16} p50 {percentile(times, 50):7.2f} ms"
                f"  p95 {percentile(times, 95):7.2f} ms"
            )
    started = time.perf_counter()
    store.close()
    rows.append(f"{name:<22} {n:>7} {'close':<16} {time.perf_counter() - started:>10.2f} s"
                " (flush + optimize for edge)")  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument(
        "--hash-vectors", action="store_true", help="The hash embedder's vectors, not random."
    )
    parser.add_argument("--edge-only", action="store_true", help="No ServerStore (local) row.")
    args = parser.parse_args()
    from narezka.store.edge import EdgeStore

    print(f"{'backend':<22} {'points':>7} {'operation':<16} result")
    for n in args.sizes:
        tmp = Path(tempfile.mkdtemp(prefix="bench_store_"))
        try:
            opener = lambda t=tmp: EdgeStore(t / "edge")  # noqa: E731
            for line in run("EdgeStore", opener, n, args.queries, hash_vectors=args.hash_vectors):
                print(line, flush=True)
            if n == min(args.sizes) and not args.edge_only:
                from qdrant_client import QdrantClient

                from narezka.store.server import ServerStore

                def local() -> VectorStore:
                    return ServerStore(client=QdrantClient(":memory:"))

                for line in run("ServerStore (local)*", local, n, args.queries):
                    print(line, flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("* qdrant-client local mode: pure Python, for tests only; not a Qdrant server.")


if __name__ == "__main__":
    main()
