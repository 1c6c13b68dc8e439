"""The half every served embedder shares (narezka.embed.served): a backend that gives its
window, its label, one batch's request and one text's count gets the budget, the dispatcher,
drift and the never-truncate rule, the same as Ollama's and the OpenAI-compatible one."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from narezka.embed.base import Matrix, WordCounter, default_budget
from narezka.embed.dispatch import DispatchPolicy
from narezka.embed.errors import ContextLengthError
from narezka.embed.remote import LengthRejected
from narezka.embed.served import UNKNOWN_WINDOW, ServedEmbedder
from narezka.tokens.models import Utf8BoundCounter


class Toy(ServedEmbedder):
    """A server in a dict: three words or fewer a text, one-hot on the word count."""

    def __init__(self, window: int | None, *, exact: bool = True) -> None:
        counter = WordCounter() if exact else None
        super().__init__("toy", counter=counter, retry=None, dispatch=DispatchPolicy(2, 2))
        self.window, self.requests = window, 0

    def _window(self) -> int | None:
        return self.window

    def _label(self) -> str:
        return "toy:model"

    def _known_dim(self) -> int | None:
        return 4

    def _embed_batch(self, texts: Sequence[str], counts: Sequence[int]) -> Matrix:
        self.requests += 1
        if any(len(t.split()) > 3 for t in texts):
            raise LengthRejected("input length exceeds the context length")
        self.record_drift(counts, sum(len(t.split()) for t in texts))
        return np.eye(4, dtype=np.float32)[[len(t.split()) for t in texts]]

    def _count_alone(self, text: str) -> int | None:
        if len(text.split()) > 3:
            raise LengthRejected("too many tokens")
        return len(text.split())


def test_budget_keeps_a_margin_only_for_an_exact_counter() -> None:
    assert Toy(512).budget == default_budget(512) < 512
    assert Toy(None).budget == default_budget(UNKNOWN_WINDOW)
    bound = Toy(300, exact=False)
    assert isinstance(bound.counter, Utf8BoundCounter) and not bound.counter_exact
    assert bound.budget == 300  # an upper-bound count: the whole window is safe


def test_too_long_inputs_are_named_and_the_others_kept() -> None:
    toy = Toy(3)
    assert toy.embed([]).shape == (0, 4) and toy.requests == 0
    texts = ["a", "a b", "a b c d e", "a b c"]
    with pytest.raises(ContextLengthError) as caught:
        toy.embed(texts)
    error = caught.value
    assert error.embedder == "toy:model" and error.indices == (2,) and error.window == 3
    assert sorted(error.embedded) == [0, 1, 3]
    assert toy.embed(["a", "a b c"]).argmax(axis=1).tolist() == [1, 3]
    assert toy.drift.requests >= 1 and toy.batch_hint >= 2


def test_server_token_count_says_too_long_as_context_length() -> None:
    toy = Toy(3)
    assert toy.server_token_count("a b") == 2
    with pytest.raises(ContextLengthError, match="toy:model"):
        toy.server_token_count("a b c d")
    assert toy.embed_queries(["a"]).shape == (1, 4)
