"""The OpenAI-compatible embedder against the local fake server (no live server available)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fake_servers import FakeState, fake_server

from narezka.embed import (
    BackendUnavailableError,
    ContextLengthError,
    ModelNotFoundError,
    get_embedder,
)
from narezka.embed.base import WordCounter
from narezka.embed.openai import OpenAIEmbedder
from narezka.embed.remote import RetryPolicy
from narezka.errors import ConfigError

FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, timeout=0.5)
LONG = " ".join(["word"] * 40)


@pytest.fixture
def state() -> FakeState:
    return FakeState()


@pytest.fixture
def url(state: FakeState) -> Iterator[str]:
    with fake_server(state) as base:
        yield base + "/v1"


def make(url: str, model: str = "fake-embed") -> OpenAIEmbedder:
    return OpenAIEmbedder(model, url, window=32, counter=WordCounter(), retry=FAST)


def test_embeds_in_input_order_and_records_usage(url: str, state: FakeState) -> None:
    emb = make(url)
    v = emb.embed(["one", "two three"])
    assert v.shape == (2, 16) and emb.dim == 16
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert state.embed_requests()[0]["input"] == ["one", "two three"]
    assert emb.drift.ratio == pytest.approx(1.0)
    assert emb.name == f"openai:fake-embed@{url}"


def test_length_error_names_inputs(url: str) -> None:
    with pytest.raises(ContextLengthError) as info:
        make(url).embed(["ok", LONG, "ok"])
    assert info.value.indices == (1,)


def test_unknown_model_and_retries(url: str, state: FakeState) -> None:
    with pytest.raises(ModelNotFoundError):
        make(url, "missing").embed(["x"])
    state.fail_statuses = [500, 503]
    assert make(url).embed(["x"]).shape == (1, 16)
    state.fail_statuses = [500] * 3
    with pytest.raises(BackendUnavailableError, match="fake-embed"):
        make(url).embed(["x"])
    state.delays = [1.0] * 3
    with pytest.raises(BackendUnavailableError, match="Timeout"):
        make(url).embed(["x"])


def test_spec_parsing(url: str) -> None:
    emb = get_embedder(f"openai:fake-embed@{url}")
    assert isinstance(emb, OpenAIEmbedder) and emb.url == url
    with pytest.raises(ConfigError):
        get_embedder("openai:no-url")


def test_server_token_count_reads_usage(url: str) -> None:
    emb = make(url)
    assert emb.server_token_count("one two three") == 5
    with pytest.raises(ContextLengthError):
        emb.server_token_count(LONG)
