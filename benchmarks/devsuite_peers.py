#!/usr/bin/env python3
"""narezka's default search against LangChain's and LlamaIndex's hybrid retrievers on the dev
suite, the same embedder (USE, narezka's embedding cache) and documents, in one run.

    # peers in a venv of their own (never narezka's install), see benchmarks/requirements.txt
    OMP_NUM_THREADS=1 python benchmarks/devsuite_peers.py [--corpora a,b] \
        [--out benchmarks/results/devsuite_peers.md]

Per corpus of ``benchmarks/devsuite/suite.json`` (the runner's cached store must exist:
``python benchmarks/devsuite.py run`` builds it):

* **narezka**: ``Index.search(k=5)`` on the runner's store, the default configuration
  (``headings``, hybrid score fusion, fold auto), as ``devsuite.py run`` asks it;
* **LangChain**: ``RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200,
  add_start_index=True)`` (the values of LangChain's RAG tutorial) and an ``EnsembleRetriever``
  of ``BM25Retriever`` (rank_bm25, LangChain's default whitespace tokenizer) and an
  ``InMemoryVectorStore`` retriever, weights 0.5 / 0.5 (weighted RRF, c = 60), k = 5 each,
  the top 5 of the fused list;
* **LlamaIndex**: ``SentenceSplitter()`` (its defaults: 1,024 tokens, overlap 200) and a
  ``QueryFusionRetriever`` of a ``VectorStoreIndex`` retriever and ``BM25Retriever`` (bm25s,
  Snowball stemmer of the corpus's language), ``mode="reciprocal_rerank"``, ``num_queries=1``
  (no LLM-generated queries), top 5; and again with ``SentenceSplitter(chunk_size=256,
  chunk_overlap=50)``, chunks about as long as LangChain's and narezka's hits.

The peers get the documents narezka searches: the files of narezka's index of the corpus
(held-out files left out), minus archived pages (narezka's search excludes them; the peers
have no such notion), read as narezka reads them (normalized text, so Chroma's character
offsets hold). Dense vectors come from narezka's own USE embedder through its embedding cache.
Scoring is the runner's: a string question is hit when a retrieved chunk contains all its
strings, a Chroma question when a chunk's range overlaps a reference range. Only answerable
questions are asked. The table gives hit@1, hit@5, the mean characters returned per question
(the five hits together: bigger chunks contain answers more often) and paired sign tests of
narezka against each peer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "benchmarks" / "devsuite"))

from manifest import MANIFEST, Corpus, load_suite  # noqa: E402

from devsuite import DEFAULT_CACHE, K, Question, answerable, rank_of, store_for  # noqa: E402
from narezka import Index  # noqa: E402
from narezka.discover import read_document  # noqa: E402
from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder  # noqa: E402
from narezka.embed.cache import default_cache_path  # noqa: E402
from narezka.evaluate.metrics import sign_test  # noqa: E402
from narezka.search import Filter  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)
LANGUAGES = {"ru": "russian", "en": "english"}


@dataclass(frozen=True, slots=True)
class Found:
    """One retrieved chunk as the runner's scoring reads it."""

    file_path: str
    start: int
    end: int
    text: str


Retriever = Callable[[str], list[Found]]
Rows = list[tuple[int | None, int]]
"""Per question: the first hit's rank (None: missed) and the characters returned."""


def documents(index: Index, corpus: Corpus) -> list[tuple[str, str]]:
    """(corpus path, normalized text) of every non-archived file narezka's index holds."""
    archived = {h.file_path for h in index.chunks() if h.payload.get("archived")}
    out = []
    for source in index.sources():
        if source.path in archived:
            continue
        raw = read_document(corpus.root, corpus.root / source.path)[0]
        out.append((source.path, raw.text))
    return out


def langchain(docs: Sequence[tuple[str, str]], model: CachedEmbedder) -> Retriever:
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    class Use(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [list(map(float, v)) for v in model.embed(texts)]

        def embed_query(self, text: str) -> list[float]:
            return list(map(float, model.embed_queries([text])[0]))

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=1000, chunk_overlap=200, add_start_index=True
    )
    chunks = splitter.create_documents(
        [text for _, text in docs], metadatas=[{"source": path} for path, _ in docs]
    )
    store = InMemoryVectorStore(Use())
    store.add_documents(chunks)
    bm25 = BM25Retriever.from_documents(chunks, k=K)
    dense = store.as_retriever(search_kwargs={"k": K})
    ensemble = EnsembleRetriever(retrievers=[bm25, dense], weights=[0.5, 0.5])

    def retrieve(query: str) -> list[Found]:
        out = []
        for d in ensemble.invoke(query)[:K]:
            start = int(d.metadata["start_index"])
            out.append(
                Found(d.metadata["source"], start, start + len(d.page_content), d.page_content)
            )
        return out

    print(f"  langchain: {len(chunks)} chunks", file=sys.stderr, flush=True)
    return retrieve


def llamaindex(
    docs: Sequence[tuple[str, str]],
    model: CachedEmbedder,
    language: str,
    chunk_size: int | None = None,
) -> Retriever:
    import Stemmer
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.retrievers.bm25 import BM25Retriever

    class Use(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return list(map(float, model.embed_queries([query])[0]))

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return list(map(float, model.embed([text])[0]))

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return [list(map(float, v)) for v in model.embed(texts)]

    splitter = (
        SentenceSplitter()
        if chunk_size is None
        else SentenceSplitter(chunk_size=chunk_size, chunk_overlap=50)
    )
    nodes = splitter.get_nodes_from_documents(
        [Document(text=text, metadata={"source": path}) for path, text in docs]
    )
    index = VectorStoreIndex(nodes, embed_model=Use(embed_batch_size=64))
    bm25 = BM25Retriever.from_defaults(
        nodes=nodes, similarity_top_k=K, stemmer=Stemmer.Stemmer(LANGUAGES[language])
    )
    fusion = QueryFusionRetriever(
        [index.as_retriever(similarity_top_k=K), bm25],
        llm=MockLLM(),
        mode="reciprocal_rerank",
        similarity_top_k=K,
        num_queries=1,
        use_async=False,
    )

    def retrieve(query: str) -> list[Found]:
        out = []
        for hit in fusion.retrieve(query)[:K]:
            node = hit.node
            start, end = int(node.start_char_idx or 0), int(node.end_char_idx or 0)
            out.append(Found(node.metadata["source"], start, end, node.get_content()))
        return out

    print(f"  llamaindex: {len(nodes)} chunks", file=sys.stderr, flush=True)
    return retrieve


def narezka(index: Index) -> Retriever:
    def retrieve(query: str) -> list[Found]:
        hits = index.search(
            query, k=K, mode="hybrid", filters=Filter(include_archived=False), min_relevance=0.0
        )
        return [Found(h.file_path, h.start, h.end, h.text) for h in hits]

    return retrieve


SYSTEMS = ("narezka", "LangChain", "LlamaIndex", "LlamaIndex 256")
"""LlamaIndex 256: SentenceSplitter(chunk_size=256, chunk_overlap=50), chunks about as long
as LangChain's 1,000 characters and narezka's hits, so size does not decide."""


def run(args: argparse.Namespace) -> int:
    suite = load_suite(MANIFEST)
    chosen = [suite.get(n) for n in args.corpora.split(",")] if args.corpora else suite.corpora
    model = CachedEmbedder(get_embedder("use"), EmbeddingCache(default_cache_path()))
    results: dict[str, dict[str, Rows]] = {}
    for corpus in chosen:
        store = store_for(args.cache, corpus, "headings", "use")
        if not store.is_dir():
            print(f"{corpus.name}: no store (run devsuite.py run first)", file=sys.stderr)
            return 2
        questions: list[Question] = answerable(corpus)
        started = time.perf_counter()
        with Index.open(store, embedder=model) as index:
            docs = documents(index, corpus)
            print(f"{corpus.name}: {len(docs)} documents", file=sys.stderr, flush=True)
            systems = {
                "narezka": narezka(index),
                "LangChain": langchain(docs, model),
                "LlamaIndex": llamaindex(docs, model, corpus.language),
                "LlamaIndex 256": llamaindex(docs, model, corpus.language, 256),
            }
            per: dict[str, Rows] = {}
            for name, retrieve in systems.items():
                rows = []
                for q in questions:
                    assert q.golden is not None
                    found = retrieve(q.q)
                    rows.append((rank_of(q.golden, found), sum(len(f.text) for f in found)))
                per[name] = rows
        results[corpus.name] = per
        print(
            f"{corpus.name}: {len(questions)} questions in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    model.cache.close()
    text = "\n".join(table(results))
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def _hit(rank: int | None, k: int) -> bool:
    return rank is not None and rank <= k


def table(results: dict[str, dict[str, Rows]]) -> list[str]:
    """The summary over corpora, then every corpus, every system against narezka."""
    packages = (
        "langchain-classic",
        "langchain-community",
        "langchain-text-splitters",
        "rank-bm25",
        "llama-index-core",
        "llama-index-retrievers-bm25",
        "bm25s",
    )
    lines = [
        "Peers: " + ", ".join(f"{p} {version(p)}" for p in packages) + ". Embedder: USE "
        "(narezka's `use`, its embedding cache) for every system.",
        "",
        "| system | mean hit@1 | mean hit@5 | mean chars per answer | narezka better (p < 0.05) "
        "| narezka worse (p < 0.05) |",
        "|---|--:|--:|--:|---|---|",
    ]
    detail = [
        "| corpus | n | system | hit@1 | hit@5 | chars per answer | narezka vs it @1 "
        "| narezka vs it @5 |",
        "|---|--:|---|--:|--:|--:|---|---|",
    ]
    for system in SYSTEMS:
        hits1, hits5, chars = [], [], []
        better, worse = [], []
        for corpus, per in results.items():
            rows, ours = per[system], per["narezka"]
            n = max(1, len(rows))
            h1 = sum(_hit(r, 1) for r, _ in rows) / n
            h5 = sum(_hit(r, K) for r, _ in rows) / n
            c = statistics.fmean(c for _, c in rows) if rows else 0.0
            hits1.append(h1)
            hits5.append(h5)
            chars.append(c)
            cells = [corpus, str(len(rows)), system, f"{h1:.3f}", f"{h5:.3f}", f"{c:,.0f}"]
            for k in (1, K):
                if system == "narezka":
                    cells.append("—")
                    continue
                test = sign_test([_hit(r, k) for r, _ in ours], [_hit(r, k) for r, _ in rows])
                cell = f"+{test.a_only}/−{test.b_only}, p={test.p_value:.3f}"
                if test.p_value < 0.05:
                    (better if test.a_only > test.b_only else worse).append(f"{corpus} @{k}")
                    cell = f"**{cell}**"
                cells.append(cell)
            detail.append("| " + " | ".join(cells) + " |")
        lines.append(
            f"| {system} | {statistics.fmean(hits1):.3f} | {statistics.fmean(hits5):.3f} "
            f"| {statistics.fmean(chars):,.0f} | {', '.join(better) or '—'} "
            f"| {', '.join(worse) or '—'} |"
        )
    return [
        *lines,
        "",
        *detail,
        "",
        "Sign tests: paired, two-sided, over the corpus's answerable questions; +questions only "
        "narezka hit / −only the other system hit; bold where p < 0.05. Chars per answer: the "
        "five hits' text together, mean over questions.",
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default=None)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=None)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
