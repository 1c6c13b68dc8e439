"""The dispatcher without HTTP: how batches are cut, limits learnt and errors recognised,
Retry-After parsed and obeyed, settings read."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.embed import BackendUnavailableError, embed_all
from narezka.embed.base import HashEmbedder, Matrix
from narezka.embed.dispatch import (
    BatchTooLarge,
    Dispatcher,
    DispatchPolicy,
    PartlyRejected,
    batch_limit_error,
)
from narezka.embed.remote import (
    LengthRejected,
    RetryPolicy,
    TransientError,
    retry_after_seconds,
    with_retries,
)
from narezka.embed.resilient import preferred_batch
from narezka.errors import ConfigError

HASH = HashEmbedder(8)


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(1, 30), min_size=1, max_size=60),
    max_batch=st.integers(1, 9),
    max_tokens=st.one_of(st.none(), st.integers(30, 80)),
    server_batch=st.one_of(st.none(), st.integers(1, 9)),
    concurrency=st.integers(1, 4),
)
def test_every_text_is_sent_once_within_the_limits_and_rows_stay_in_order(
    counts: list[int],
    max_batch: int,
    max_tokens: int | None,
    server_batch: int | None,
    concurrency: int,
) -> None:
    texts = [f"t{i}" for i in range(len(counts))]
    sent: list[list[str]] = []
    lock = threading.Lock()

    def send(batch: Sequence[str], batch_counts: Sequence[int]) -> Matrix:
        if server_batch is not None and len(batch) > server_batch:
            raise BatchTooLarge("too big", max_batch=server_batch, max_tokens=None)
        assert len(batch) <= max_batch
        assert max_tokens is None or len(batch) == 1 or sum(batch_counts) <= max_tokens
        with lock:
            sent.append(list(batch))
        return HASH.embed(batch)

    policy = DispatchPolicy(
        concurrency=concurrency, max_batch=max_batch, max_batch_tokens=max_tokens
    )
    rows = Dispatcher(policy).run(texts, counts, send)
    np.testing.assert_array_equal(rows, HASH.embed(texts))
    assert sorted(t for batch in sent for t in batch) == sorted(texts)


def test_too_long_inputs_are_found_and_the_rest_kept() -> None:
    texts = [f"t{i}" for i in range(10)]
    calls: list[list[str]] = []

    def send(batch: Sequence[str], _: Sequence[int]) -> Matrix:
        calls.append(list(batch))
        if "t3" in batch or "t8" in batch:
            raise LengthRejected("input is too large")
        return HASH.embed(batch)

    with pytest.raises(PartlyRejected) as info:
        Dispatcher(DispatchPolicy(concurrency=2, max_batch=5)).run(texts, [1] * 10, send)
    assert info.value.rejected == [3, 8]
    assert sorted(info.value.rows) == [0, 1, 2, 4, 5, 6, 7, 9]
    np.testing.assert_array_equal(info.value.rows[9], HASH.embed(["t9"])[0])
    accepted = [t for batch in calls for t in batch if "t3" not in batch and "t8" not in batch]
    assert sorted(accepted) == sorted(t for t in texts if t not in ("t3", "t8"))


def test_an_unnamed_size_refusal_halves_the_batch() -> None:
    def send(batch: Sequence[str], _: Sequence[int]) -> Matrix:
        if len(batch) > 3:
            raise BatchTooLarge("payload too large", max_batch=None, max_tokens=None)
        return HASH.embed(batch)

    dispatcher = Dispatcher(DispatchPolicy(concurrency=1, max_batch=16))
    dispatcher.run([f"t{i}" for i in range(16)], [2] * 16, send)
    assert dispatcher.max_batch <= 3


def test_a_single_text_refused_for_size_is_an_error() -> None:
    def send(batch: Sequence[str], _: Sequence[int]) -> Matrix:
        raise BatchTooLarge("too big", max_batch=None, max_tokens=None)

    with pytest.raises(BatchTooLarge):
        Dispatcher(DispatchPolicy(concurrency=1, max_batch=4)).run(["a"], [1], send)


@pytest.mark.parametrize(
    ("status", "message", "batch", "limit", "tokens"),
    [
        (413, "batch size 64 > maximum allowed batch size 32", 64, 32, None),
        (400, "Too many inputs. The max number of inputs is 2048.", 3000, 2048, None),
        (400, "Requested 320000 tokens, max 300000 tokens per request", 500, None, 300000),
        (413, "Request Entity Too Large", 8, None, None),
    ],
)
def test_size_refusals_are_recognised(
    status: int, message: str, batch: int, limit: int | None, tokens: int | None
) -> None:
    found = batch_limit_error(status, message, batch)
    assert found is not None and (found.max_batch, found.max_tokens) == (limit, tokens)


@pytest.mark.parametrize(
    ("status", "message", "batch"),
    [
        (413, "batch size 64 > maximum allowed batch size 32", 1),  # one text: not the batch
        (400, "the input length exceeds the context length", 8),
        (413, "the input length exceeds the context length", 8),
        (500, "batch size 64 > maximum allowed batch size 32", 64),
        (400, "bad request", 8),
    ],
)
def test_other_errors_are_not_size_refusals(status: int, message: str, batch: int) -> None:
    assert batch_limit_error(status, message, batch) is None


def test_retry_after_is_obeyed_when_longer_than_the_backoff_and_capped() -> None:
    slept: list[float] = []
    answers = iter([TransientError("429", retry_after=3.0), TransientError("503", retry_after=900)])

    def request() -> str:
        if (exc := next(answers, None)) is not None:
            raise exc
        return "ok"

    policy = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, max_retry_after=10.0)
    assert with_retries(request, policy=policy, host="h", model="m", sleep=slept.append) == "ok"
    assert slept == [3.0, 10.0]


def test_retries_exhausted_name_the_server() -> None:
    def request() -> str:
        raise TransientError("HTTP 503: busy", retry_after=0)

    policy = RetryPolicy(attempts=2, base_delay=0.0, max_delay=0.0)
    with pytest.raises(BackendUnavailableError, match=r"server http://gpu:8080 .*503: busy"):
        with_retries(
            request, policy=policy, host="http://gpu:8080", model="m", sleep=lambda _: None
        )


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds(later, now=now.timestamp()) == pytest.approx(30.0)
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_policy_comes_from_the_environment_and_is_checked() -> None:
    env = {"NAREZKA_EMBED_CONCURRENCY": "3", "NAREZKA_EMBED_BATCH": "16"}
    assert DispatchPolicy.from_env(env) == DispatchPolicy(3, 16, None)
    assert DispatchPolicy.from_env({}) == DispatchPolicy()
    with pytest.raises(ConfigError, match="NAREZKA_EMBED_CONCURRENCY must be an integer"):
        DispatchPolicy.from_env({"NAREZKA_EMBED_CONCURRENCY": "many"})
    with pytest.raises(ConfigError, match="at least 1"):
        DispatchPolicy(concurrency=0)
    with pytest.raises(ConfigError, match="positive"):
        DispatchPolicy(max_batch_tokens=0)


def test_embed_all_sends_batch_hint_texts_per_call() -> None:
    class Hinted(HashEmbedder):
        batch_hint = 50

        def __init__(self) -> None:
            super().__init__(8)
            self.sizes: list[int] = []

        def embed(self, texts: Sequence[str]) -> Matrix:
            self.sizes.append(len(texts))
            return super().embed(texts)

    emb = Hinted()
    embed_all([f"t{i}" for i in range(120)], emb)
    assert emb.sizes == [50, 50, 20]
    assert preferred_batch(HashEmbedder(8)) == 32


def test_one_failed_batch_fails_the_call_after_the_others_settle() -> None:
    finished: list[int] = []
    rng = random.Random(1)

    def send(batch: Sequence[str], _: Sequence[int]) -> Matrix:
        if batch[0] == "t4":
            raise BackendUnavailableError("http://gpu", "m", 4, "HTTP 503")
        threading.Event().wait(rng.uniform(0, 0.01))
        finished.append(int(batch[0][1:]))
        return HASH.embed(batch)

    with pytest.raises(BackendUnavailableError, match="http://gpu"):
        Dispatcher(DispatchPolicy(concurrency=3, max_batch=2)).run(
            [f"t{i}" for i in range(20)], [1] * 20, send
        )
    # No batch is started after the failure is seen: at most the ones already in flight.
    assert len(finished) < 10
