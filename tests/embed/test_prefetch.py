"""Prefetching across files: a served model's request slots stay busy while the pipeline
embeds file after file, every text is embedded once, and errors still surface where the
file is handled. Against the local fake server (no real embedding server runs here)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fake_servers import FakeState, fake_server

from narezka.api.indexing import index
from narezka.embed import BackendUnavailableError, CachedEmbedder, EmbeddingCache, HashEmbedder
from narezka.embed.base import WordCounter
from narezka.embed.cache import prefetching
from narezka.embed.dispatch import DispatchPolicy
from narezka.embed.openai import OpenAIEmbedder
from narezka.embed.remote import RetryPolicy

from conftest import store_count

FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02, timeout=5.0)


@pytest.fixture
def state() -> FakeState:
    return FakeState(models={"fake-embed": (4096, 16)})


@pytest.fixture
def url(state: FakeState) -> Iterator[str]:
    with fake_server(state) as base:
        yield base + "/v1"


def served(url: str, concurrency: int = 3, batch: int = 4) -> OpenAIEmbedder:
    policy = DispatchPolicy(concurrency=concurrency, max_batch=batch)
    return OpenAIEmbedder(
        "fake-embed", url, window=4096, counter=WordCounter(), retry=FAST, dispatch=policy
    )


def test_prefetched_passages_are_not_asked_for_again(
    url: str, state: FakeState, tmp_path: Path
) -> None:
    state.always_delay = 0.02
    texts = [f"passage {i}" for i in range(30)]
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        emb = CachedEmbedder(served(url), cache)
        emb.prefetch(texts)
        emb.prefetch(texts[:10])  # already on its way: not queued twice
        got = np.concatenate([emb.embed(texts[:10]), emb.embed(texts[10:])])
        assert (emb.hits, emb.misses) == (0, 30)
    np.testing.assert_allclose(got, HashEmbedder(16).embed(texts), atol=1e-6)
    assert Counter(state.embedded_texts()) == Counter(texts)
    assert 1 < state.max_in_flight <= 3


def test_a_failed_prefetch_is_retried_by_embed_and_its_error_named_there(
    url: str, state: FakeState, tmp_path: Path
) -> None:
    state.fail_rate, state.fail_cycle = 1.0, (503,)
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        emb = CachedEmbedder(served(url), cache)
        emb.prefetch(["a", "b"])
        with pytest.raises(BackendUnavailableError, match=rf"server {url} "):
            emb.embed(["a", "b"])
        state.fail_rate = 0.0
        np.testing.assert_allclose(
            emb.embed(["a", "b"]), HashEmbedder(16).embed(["a", "b"]), atol=1e-6
        )


def test_prefetching_reads_ahead_only_for_a_dispatching_cached_embedder(
    url: str, tmp_path: Path
) -> None:
    items = [[f"f{i} c{k}" for k in range(5)] for i in range(40)]
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        emb = CachedEmbedder(served(url, concurrency=2, batch=4), cache)  # batch_hint 16
        seen: list[int] = []

        def texts_of(item: list[str]) -> list[str]:
            seen.append(len(seen))
            return item

        out = []
        for n, item in enumerate(prefetching(iter(items), texts_of, emb)):
            out.append(item)
            # Handed over only once 16 texts of the files after it are on their way.
            assert len(seen) == min(len(items), n + 1 + 4)
            emb.embed(item)
        assert out == items
        local = CachedEmbedder(HashEmbedder(8), cache)
        assert list(prefetching(iter(items), texts_of, local)) == items


def write_corpus(folder: Path, files: int) -> None:
    for f in range(files):
        sections = "\n\n".join(
            f"## Part {s}\n\nFile {f} part {s} says {' '.join(['word'] * (5 + s))}."
            for s in range(3)
        )
        (folder / f"doc{f:03d}.md").write_text(f"# Doc {f}\n\n{sections}\n", encoding="utf-8")


def test_index_keeps_requests_in_flight_across_files_and_embeds_each_chunk_once(
    url: str, state: FakeState, tmp_path: Path
) -> None:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    write_corpus(corpus, 24)
    state.always_delay = 0.03
    emb = served(url, concurrency=3, batch=4)
    report = index(corpus, embedder=emb, jobs=1)
    assert not report.skipped and report.chunks_embedded >= 24
    # File by file, one small request at a time, would never have two in flight.
    assert state.max_in_flight == 3
    embedded = Counter(state.embedded_texts())
    assert sum(embedded.values()) == report.chunks_embedded + 1  # + the dimension probe
    assert max(embedded.values()) == 1
    assert store_count(corpus, 16) == report.chunks_embedded


def test_sync_reports_the_embedding_rate_and_the_bar_shows_it(
    url: str, state: FakeState, tmp_path: Path
) -> None:
    from rich.progress import Progress as Bar

    from narezka.cli.progress import _ChunkRate
    from narezka.index import Index
    from narezka.index.syncing import Progress
    from narezka.settings import Settings

    corpus = tmp_path / "kb"
    corpus.mkdir()
    write_corpus(corpus, 12)
    state.always_delay = 0.02
    rates: list[float] = []
    started = time.perf_counter()
    with Index.create(corpus, Settings(), store=tmp_path / "store", embedder=served(url)) as ix:
        report = ix.sync(progress=Progress(on_rate=rates.append), jobs=1)
    elapsed = time.perf_counter() - started
    assert len(rates) == report.files_new == 12
    assert report.chunks_embedded / elapsed <= rates[-1] <= 1000
    bar = Bar()
    task = bar.add_task("", total=None)
    assert str(_ChunkRate().render(bar.tasks[task])) == ""
    bar.update(task, rate=rates[-1])
    assert str(_ChunkRate().render(bar.tasks[task])) == f"{rates[-1]:.0f} chunks/s"
