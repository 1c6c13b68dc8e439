"""The sqlite embedding cache and CachedEmbedder, with the deterministic HashEmbedder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from narezka.embed import CachedEmbedder, EmbeddingCache, HashEmbedder, default_cache_path
from narezka.embed.cache import cache_key


def test_hits_and_misses_are_counted(tmp_path: Path) -> None:
    inner = HashEmbedder(32)
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        emb = CachedEmbedder(inner, cache)
        first = emb.embed(["a b", "c d", "a b"])
        assert (emb.hits, emb.misses) == (0, 3)
        assert inner.texts_embedded == 2  # the duplicate text is embedded once
        again = emb.embed(["c d", "a b", "new text"])
        assert (emb.hits, emb.misses) == (2, 4)
        assert inner.texts_embedded == 3
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[1], first[0])
    assert again.dtype == np.float32 and again.shape == (3, 32)


def test_vectors_persist_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        expected = CachedEmbedder(HashEmbedder(16), cache).embed(["Привет, мир", "hello"])
    inner = HashEmbedder(16)
    with EmbeddingCache(path) as cache:
        emb = CachedEmbedder(inner, cache)
        got = emb.embed(["Привет, мир", "hello"])
    assert inner.calls == 0 and emb.hits == 2
    np.testing.assert_array_equal(got, expected)


def test_queries_and_passages_are_cached_apart(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        emb = CachedEmbedder(HashEmbedder(16), cache)
        emb.embed(["same"])
        emb.embed_queries(["same"])
        assert emb.misses == 2 and cache.stats().entries == 2


def test_key_covers_model_window_normalization_role_and_text() -> None:
    base = cache_key("use:x@1", 512, True, "passage", "text")
    variants = [
        cache_key("use:x@2", 512, True, "passage", "text"),
        cache_key("use:x@1", 256, True, "passage", "text"),
        cache_key("use:x@1", 512, False, "passage", "text"),
        cache_key("use:x@1", 512, True, "query", "text"),
        cache_key("use:x@1", 512, True, "passage", "text "),
    ]
    assert base not in variants and len(set(variants)) == len(variants)
    assert base == cache_key("use:x@1", 512, True, "passage", "text")


def test_stats_and_clear(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        CachedEmbedder(HashEmbedder(16), cache).embed(["a", "b", "c"])
        CachedEmbedder(HashEmbedder(8), cache).embed(["a"])
        stats = cache.stats()
        assert stats.entries == 4
        assert stats.by_embedder == {"hash:d16:v1": 3, "hash:d8:v1": 1}
        assert stats.size_bytes > 0 and stats.path == tmp_path / "c.sqlite"
        assert cache.clear("hash:d8:v1") == 1
        assert cache.stats().by_embedder == {"hash:d16:v1": 3}
        assert cache.clear() == 3
        assert cache.stats().entries == 0


def test_wrapper_exposes_the_inner_embedder() -> None:
    inner = HashEmbedder(16, max_tokens=100)
    with EmbeddingCache(":memory:") as cache:
        emb = CachedEmbedder(inner, cache)
        assert (emb.name, emb.dim, emb.max_tokens, emb.budget) == (
            inner.name,
            16,
            100,
            inner.budget,
        )
        assert emb.counter is inner.counter and emb.offline
        assert emb.embed([]).shape == (0, 16)


def test_default_path_honours_the_environment_it_is_handed(tmp_path: Path) -> None:
    from narezka.environment import Environment

    given = Environment.read({"NAREZKA_CACHE_DIR": str(tmp_path)})
    assert default_cache_path(given) == tmp_path / "embeddings.sqlite"
    assert default_cache_path(Environment()).name == "embeddings.sqlite"
    assert "narezka" in str(default_cache_path(Environment()))


def test_a_rejection_names_positions_in_the_callers_batch_not_among_cache_misses(
    tmp_path: Path,
) -> None:
    from narezka.embed import ContextLengthError

    long = " ".join(["word"] * 20)
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        emb = CachedEmbedder(HashEmbedder(16, max_tokens=10), cache)
        emb.embed(["cached one", "cached two"])
        with pytest.raises(ContextLengthError) as info:
            emb.embed(["cached one", "fresh", long, "cached two", long])
    # Only "fresh" and one copy of the long text went to the model: index 1 there.
    assert info.value.indices == (2, 4)
    assert info.value.counts == (22, 22)  # words + 2
