"""The Ollama embedder against a local fake server (no live Ollama server was available).

``fake_servers.py`` implements the documented ``/api/show`` and ``/api/embed`` contract; these
tests cover every fault path: the context-length error as 400/413/500, 404 unknown model,
5xx and timeouts retried with backoff, connection refused.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import numpy as np
import pytest
from fake_servers import FakeState, fake_server

from narezka.embed import (
    BackendUnavailableError,
    ContextLengthError,
    EmbedError,
    ModelNotFoundError,
    embed_grouped,
    get_embedder,
)
from narezka.embed.base import WordCounter
from narezka.embed.ollama import OllamaEmbedder
from narezka.embed.remote import RetryPolicy
from narezka.tokens import CharCounter

FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, timeout=2.0)
LONG = " ".join(["word"] * 40)  # 42 fake tokens, over the fake model's window of 32


@pytest.fixture
def state() -> FakeState:
    return FakeState()


@pytest.fixture
def url(state: FakeState) -> Iterator[str]:
    with fake_server(state) as base:
        yield base


def make(url: str, model: str = "fake-embed", **kw: object) -> OllamaEmbedder:
    kw.setdefault("counter", WordCounter())
    kw.setdefault("retry", FAST)
    return OllamaEmbedder(model, host=url, **kw)  # type: ignore[arg-type]


def test_batched_embed_sends_truncate_false_and_num_ctx(url: str, state: FakeState) -> None:
    emb = make(url)
    vectors = emb.embed(["first text", "second text", "third"])
    assert vectors.shape == (3, 16) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    (body,) = state.embed_requests()
    assert body["input"] == ["first text", "second text", "third"]
    assert body["truncate"] is False
    assert body["options"] == {"num_ctx": 32}


def test_window_dim_and_name_come_from_api_show(url: str) -> None:
    emb = make(url)
    assert emb.max_tokens == 32
    assert emb.dim == 16
    assert emb.budget == 24  # window minus max(8, window // 32)
    assert emb.name.startswith("ollama:fake-embed@") and len(emb.name) > len("ollama:fake-embed@")
    assert emb.offline is False


def test_host_comes_from_ollama_host_as_the_top_reads_it(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.embed.dispatch import DispatchPolicy
    from narezka.embed.ollama import DEFAULT_HOST
    from narezka.settings import servers

    monkeypatch.setenv("OLLAMA_HOST", url)
    monkeypatch.setenv("NAREZKA_EMBED_CONCURRENCY", "3")
    emb = get_embedder("ollama:fake-embed", servers=servers())
    assert isinstance(emb, OllamaEmbedder) and emb.host == url
    assert emb.dispatcher.policy.concurrency == 3
    assert emb.embed(["hello"]).shape == (1, 16)
    # The stage reads no environment: a bare call gets the defaults.
    bare = get_embedder("ollama:fake-embed")
    assert isinstance(bare, OllamaEmbedder) and bare.host == DEFAULT_HOST
    assert bare.dispatcher.policy == DispatchPolicy()


def test_prompt_eval_count_drift_is_recorded(url: str) -> None:
    exact = make(url)
    exact.embed(["one two three", "four"])
    assert exact.drift.requests == 1 and exact.drift.ratio == pytest.approx(1.0)
    rough = make(url, counter=CharCounter())
    rough.embed(["a longer sentence here"])
    assert rough.drift.ratio is not None and rough.drift.ratio < 1.0
    assert rough.drift.worst == [(22, 6)]


@pytest.mark.parametrize("status", [400, 413, 500])
def test_context_length_error_names_the_rejected_inputs(
    url: str, state: FakeState, status: int
) -> None:
    state.length_status = status
    emb = make(url)
    with pytest.raises(ContextLengthError) as info:
        emb.embed(["short", LONG, "also short", LONG + " more", "fine"])
    assert info.value.indices == (1, 3)
    assert info.value.window == 32
    assert info.value.counts == (42, 43)
    # A length error is not a transient 5xx: no sub-batch is sent twice (bisection only).
    sent = [tuple(body["input"]) for body in state.embed_requests()]
    assert len(sent) == len(set(sent))


def test_single_rejected_input(url: str) -> None:
    with pytest.raises(ContextLengthError) as info:
        make(url).embed([LONG])
    assert info.value.indices == (0,)


def test_rejected_inputs_are_resplit_not_truncated(url: str) -> None:
    texts = ["alpha beta", LONG, "gamma"]

    def halves(index: int, text: str) -> list[str]:
        words = text.split(" ")
        return [" ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2 :])]

    groups = embed_grouped(texts, make(url), resplit=halves, batch_size=8)
    assert [g.resplit for g in groups] == [False, True, False]
    assert " ".join(groups[1].texts) == LONG
    assert groups[1].vectors.shape == (2, 16)


def test_unknown_model_says_how_to_pull_it(url: str) -> None:
    with pytest.raises(ModelNotFoundError, match="ollama pull nomic-embed-text"):
        make(url, model="nomic-embed-text").embed(["x"])


def test_transient_5xx_is_retried_then_succeeds(url: str, state: FakeState) -> None:
    emb = make(url)
    emb.dim  # noqa: B018 - load /api/show first so only embed requests are counted
    state.fail_statuses = [503, 500]
    assert emb.embed(["retry me"]).shape == (1, 16)
    assert len(state.embed_requests()) == 3


def test_persistent_5xx_fails_naming_host_and_model(url: str, state: FakeState) -> None:
    emb = make(url)
    emb.dim  # noqa: B018
    state.fail_statuses = [502] * 10
    with pytest.raises(BackendUnavailableError) as info:
        emb.embed(["x"])
    message = str(info.value)
    assert url in message and "fake-embed" in message and "3 time(s)" in message
    assert len(state.embed_requests()) == 3


def test_slow_responses_time_out_and_are_retried(url: str, state: FakeState) -> None:
    emb = make(url, retry=RetryPolicy(attempts=2, base_delay=0.01, timeout=0.3))
    emb.dim  # noqa: B018
    state.delays = [1.0]  # only the first embed request is slow
    assert emb.embed(["eventually"]).shape == (1, 16)
    state.delays = [1.0, 1.0]
    with pytest.raises(BackendUnavailableError, match="Timeout"):
        emb.embed(["never"])


def test_connection_refused_is_retried_then_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    host = f"http://127.0.0.1:{port}"
    with pytest.raises(BackendUnavailableError) as info:
        make(host).embed(["x"])
    assert host in str(info.value) and "fake-embed" in str(info.value)


def test_other_client_errors_are_not_retried(url: str, state: FakeState) -> None:
    emb = make(url)
    emb.dim  # noqa: B018
    state.fail_statuses = [400]
    with pytest.raises(EmbedError, match="HTTP 400") as info:
        emb.embed(["x"])
    assert not isinstance(info.value, ContextLengthError | BackendUnavailableError)
    assert len(state.embed_requests()) == 1


def test_empty_batch_makes_no_embed_request(url: str, state: FakeState) -> None:
    assert make(url).embed([]).shape == (0, 16)
    assert state.embed_requests() == []


def test_calibration_measures_the_servers_token_density(url: str) -> None:
    from narezka.embed.calibrate import calibrate

    emb = make(url, counter=CharCounter())  # a poor local counter, as for an unknown model
    sample = ["one two three four", "Доставка курьером по России", "", LONG]
    result = calibrate(emb, sample, safety=0.9)
    assert (result.samples, result.rejected, result.window) == (2, 1, 32)
    # The fake server counts words + 2: "one two three four" is 6 tokens over 18 chars.
    assert result.tokens_per_char == pytest.approx(6 / 18)
    assert result.safe_chars == int(32 * 0.9 / (6 / 18))
    assert result.safe_local_tokens == result.safe_chars  # CharCounter counts characters
