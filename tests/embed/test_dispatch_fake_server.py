"""Concurrent batched embedding against the local fake servers (no real Ollama, TEI or vLLM
can run here): order, in-flight bound, Retry-After, retries that stall nobody, server limits,
nothing embedded twice, and the never-truncate rule."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fake_servers import FakeState, fake_server

from narezka.embed import (
    BackendUnavailableError,
    CachedEmbedder,
    ContextLengthError,
    EmbeddingCache,
    embed_all,
    embed_grouped,
)
from narezka.embed.base import HashEmbedder, WordCounter
from narezka.embed.dispatch import DispatchPolicy
from narezka.embed.ollama import OllamaEmbedder
from narezka.embed.openai import OpenAIEmbedder
from narezka.embed.remote import RetryPolicy

FAST = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.02, timeout=5.0)
LONG = " ".join(["word"] * 40)  # 42 fake tokens, over the fake model's window of 32


@pytest.fixture
def state() -> FakeState:
    return FakeState()


@pytest.fixture
def url(state: FakeState) -> Iterator[str]:
    with fake_server(state) as base:
        yield base


def openai(
    url: str, *, concurrency: int = 4, batch: int = 4, tokens: int | None = None
) -> OpenAIEmbedder:
    policy = DispatchPolicy(concurrency=concurrency, max_batch=batch, max_batch_tokens=tokens)
    return OpenAIEmbedder(
        "fake-embed", url + "/v1", window=32, counter=WordCounter(), retry=FAST, dispatch=policy
    )


def texts(n: int) -> list[str]:
    return [f"text number {i} about {i % 7} things" for i in range(n)]


def expected(items: list[str]) -> np.ndarray:
    return HashEmbedder(16).embed(items)


def test_rows_come_back_in_input_order_whatever_order_requests_finish(
    url: str, state: FakeState
) -> None:
    rng = random.Random(3)
    # Random latencies, and one request slow enough that, however loaded the machine, the
    # later ones finish before it (the test needs requests that really finish out of order).
    # Not the first: the dispatcher sends that one alone, to learn the server.
    state.delays = [0.0, 0.5, *(rng.uniform(0.0, 0.06) for _ in range(38))]
    items = texts(80)
    got = openai(url).embed(items)
    np.testing.assert_allclose(got, expected(items), atol=1e-6)
    finished = [inputs[0] for _, inputs in sorted(state.answered)]  # by the time answered
    assert finished != sorted(finished, key=items.index)  # they did finish out of order
    assert state.max_in_flight > 1


def test_never_more_requests_in_flight_than_the_concurrency(url: str, state: FakeState) -> None:
    state.always_delay = 0.03
    openai(url, concurrency=3, batch=2).embed(texts(40))
    assert state.max_in_flight == 3


def test_embed_all_hands_a_dispatching_embedder_enough_texts_to_fill_its_slots(
    url: str, state: FakeState
) -> None:
    state.always_delay = 0.03
    emb = openai(url, concurrency=4, batch=8)
    assert emb.batch_hint == 64
    embed_all(texts(64), emb)
    assert state.max_in_flight == 4


def test_retry_after_is_waited_before_the_retry(url: str, state: FakeState) -> None:
    state.fail_statuses = [429]
    state.retry_after = "0.4"
    got = openai(url, concurrency=1).embed(["a b", "c"])
    np.testing.assert_allclose(got, expected(["a b", "c"]), atol=1e-6)
    (failed,) = state.failed_at
    (answered, _), *_ = state.answered
    assert answered - failed >= 0.4  # the backoff alone is 0.01-0.02 s


def test_a_slow_request_does_not_stall_the_others(url: str, state: FakeState) -> None:
    state.delays = [1.0]  # the first request answers after a second
    started = time.monotonic()
    openai(url, concurrency=4, batch=2).embed(texts(40))
    elapsed = time.monotonic() - started
    (slow_done, _), *others = sorted(state.answered, reverse=True)
    # The 19 other batches ran on the 3 free slots while the slow one was out.
    assert len(others) == 19 and all(t < slow_done - 0.5 for t, _ in others)
    assert elapsed < 1.5


def test_a_failed_request_is_retried_and_nothing_is_embedded_twice(
    url: str, state: FakeState
) -> None:
    state.fail_statuses = [503, 500, 429, 503]
    state.retry_after = "0"
    items = texts(50)
    got = openai(url, concurrency=4, batch=5).embed(items)
    np.testing.assert_allclose(got, expected(items), atol=1e-6)
    assert Counter(state.embedded_texts()) == Counter(items)
    assert len(state.failed_at) == 4


def test_five_percent_failures_store_what_a_clean_run_stores(url: str, state: FakeState) -> None:
    items = texts(400)
    clean = embed_all(items, openai(url, concurrency=8, batch=8))
    state.answered.clear()
    state.fail_rate, state.retry_after = 0.05, "0"
    flaky = embed_all(items, openai(url, concurrency=8, batch=8))
    assert state.failed_at  # failures did happen
    np.testing.assert_array_equal(flaky, clean)
    assert Counter(state.embedded_texts()) == Counter(items)


def test_failure_after_retries_names_the_server_and_lets_other_requests_finish(
    url: str, state: FakeState
) -> None:
    state.fail_rate, state.fail_cycle = 1.0, (503,)
    state.always_delay = 0.02
    with pytest.raises(BackendUnavailableError, match=rf"server {url}/v1 .*fake-embed.*503"):
        openai(url, concurrency=2, batch=2).embed(texts(12))
    # Each batch started was tried FAST.attempts times; none was started after the failure.
    assert len(state.failed_at) <= 2 * FAST.attempts


def test_batch_size_is_learnt_from_the_servers_413(url: str, state: FakeState) -> None:
    state.max_batch = 5
    emb = openai(url, concurrency=2, batch=32)
    items = texts(70)
    np.testing.assert_allclose(emb.embed(items), expected(items), atol=1e-6)
    assert emb.dispatcher.max_batch == 5
    state.requests.clear()
    emb.embed(texts(20))
    assert [len(b["input"]) for b in state.embed_requests()] == [5, 5, 5, 5]
    assert Counter(state.embedded_texts()) == Counter(items + texts(20))


def test_configured_tokens_per_request_are_never_exceeded(url: str, state: FakeState) -> None:
    items = texts(60)
    openai(url, batch=32, tokens=40).embed(items)
    counter = WordCounter()
    sizes = [sum(counter.count_batch(b["input"])) for b in state.embed_requests()]
    assert max(sizes) <= 40 and sum(len(b["input"]) for b in state.embed_requests()) == 60


def test_a_too_long_input_is_resplit_and_the_others_are_embedded_once(
    url: str, state: FakeState
) -> None:
    items = texts(30)
    items[17] = LONG
    emb = openai(url, concurrency=3, batch=4)
    with pytest.raises(ContextLengthError) as info:
        emb.embed(items)
    assert info.value.indices == (17,)
    assert info.value.embedded is not None and sorted(info.value.embedded) == [
        i for i in range(30) if i != 17
    ]
    state.answered.clear()

    def halve(_: int, text: str) -> list[str]:
        words = text.split(" ")
        return [" ".join(words[:20]), " ".join(words[20:])]

    groups = embed_grouped(items, emb, resplit=halve)
    assert groups[17].resplit and groups[17].texts == tuple(halve(17, LONG))
    np.testing.assert_allclose(groups[3].vectors, expected([items[3]]), atol=1e-6)
    embedded = Counter(state.embedded_texts())
    assert all(embedded[t] == 1 for t in items if t != LONG)


def test_ollama_keeps_several_batches_in_flight_in_order(url: str, state: FakeState) -> None:
    rng = random.Random(5)
    state.delays = [0.0] + [rng.uniform(0.0, 0.05) for _ in range(20)]  # [0]: /api/show
    policy = DispatchPolicy(concurrency=3, max_batch=4)
    emb = OllamaEmbedder("fake-embed", host=url, counter=WordCounter(), retry=FAST, dispatch=policy)
    items = texts(48)
    np.testing.assert_allclose(emb.embed(items), expected(items), atol=1e-6)
    assert state.max_in_flight == 3
    assert emb.drift.ratio == pytest.approx(1.0)


def test_ollama_learns_the_batch_limit_too(url: str, state: FakeState) -> None:
    state.max_batch = 3
    policy = DispatchPolicy(concurrency=2, max_batch=8)
    emb = OllamaEmbedder("fake-embed", host=url, counter=WordCounter(), retry=FAST, dispatch=policy)
    items = texts(20)
    np.testing.assert_allclose(emb.embed(items), expected(items), atol=1e-6)
    assert emb.dispatcher.max_batch == 3


def test_vectors_come_as_base64_and_a_server_without_it_gets_floats(
    url: str, state: FakeState
) -> None:
    items = texts(6)
    emb = openai(url)
    np.testing.assert_allclose(emb.embed(items), expected(items), atol=1e-6)
    assert {b["encoding_format"] for b in state.embed_requests()} == {"base64"}
    state.base64 = False
    state.requests.clear()
    older = openai(url, concurrency=1)
    np.testing.assert_allclose(older.embed(items), expected(items), atol=1e-6)
    older.embed(items[:2])
    sent = [b["encoding_format"] for b in state.embed_requests()]
    assert sent[0] == "base64" and set(sent[1:]) == {"float"}


def test_behind_the_cache_the_kept_rows_sit_at_the_callers_positions(
    url: str, state: FakeState, tmp_path: Path
) -> None:
    items = texts(12)
    items[5] = LONG
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        emb = CachedEmbedder(openai(url), cache)
        emb.embed(items[:3])
        with pytest.raises(ContextLengthError) as info:
            emb.embed(items)
        assert info.value.indices == (5,)
        assert info.value.embedded is not None
        assert sorted(info.value.embedded) == [i for i in range(12) if i != 5]
        np.testing.assert_allclose(info.value.embedded[7], expected([items[7]])[0], atol=1e-6)
        before = len(state.embedded_texts())
        emb.embed([items[7]])  # kept rows were cached: not sent again
        assert len(state.embedded_texts()) == before
