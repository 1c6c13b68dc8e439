"""Counts that outlive a document: the short-text memo and SentencePiece's buffer path
answer exactly what the plain counter answers, for any text."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.tokens import SHORT_TEXT, ShortCounts, TokenCounter, get_counter, short_counts
from narezka.tokens.models import SentencePieceCounter, _buffers_agree

# Latin, Cyrillic (ё and Ё too), digits, punctuation, emoji, and whitespace runs of every kind
# a Markdown file holds: the texts the packer counts short (titles, gaps, marks, frames).
_ALPHABET = st.sampled_from(
    [*"abzXY019 Пример ёЁжщЪ.,:;!?-—>…|`#*()[]🚀", " ", "  ", "\n", "\n\n", "\t", "\u00a0"]
)
TEXTS = st.lists(_ALPHABET, max_size=40).map("".join) | st.sampled_from(
    ["", " ", "\n\n", "Доставка > Курьером", "x" * (SHORT_TEXT + 1), "ё" * SHORT_TEXT]
)


@lru_cache(maxsize=1)
def _use() -> SentencePieceCounter:
    from narezka.embed.local import UseEmbedder

    counter = UseEmbedder().counter.loaded  # the counter its lazy wrapper hands out
    assert isinstance(counter, SentencePieceCounter)
    return counter


def _counters() -> list[TokenCounter]:
    return [_use(), get_counter("tokens", "cl100k_base"), get_counter("chars")]


def _public_count(counter: SentencePieceCounter, text: str) -> int:
    ids = counter.processor.encode(text, out_type=int, add_bos=True, add_eos=True)
    return len(ids)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(TEXTS, min_size=1, max_size=12))
def test_a_shared_memo_counts_what_the_counter_counts(texts: list[str]) -> None:
    for counter in _counters():
        memo = ShortCounts(counter, limit=5)
        # Twice over: the second pass answers from the memo (as far as its bound allows).
        for text in [*texts, *texts, *reversed(texts)]:
            assert memo.count(text) == counter.count(text), (counter.name, text)
        assert memo.count_batch(texts) == counter.count_batch(texts)


@settings(max_examples=150, deadline=None)
@given(text=TEXTS)
def test_sentencepiece_buffer_counts_equal_the_public_encode(text: str) -> None:
    counter = _use()
    assert counter._buffers, "the buffer path is expected with this sentencepiece"
    assert counter.count(text) == _public_count(counter, text)
    assert counter.count_batch([text, text + " ещё"]) == [
        _public_count(counter, text),
        _public_count(counter, text + " ещё"),
    ]


def test_the_memo_is_bounded_and_forgets_the_oldest_text_first() -> None:
    calls: list[str] = []

    class Spy:
        name = "spy"

        def count(self, text: str) -> int:
            calls.append(text)
            return len(text) + 1

        def count_batch(self, texts: Sequence[str]) -> list[int]:
            return [self.count(t) for t in texts]

    memo = ShortCounts(Spy(), limit=3)
    for text in ["a", "bb", "ccc", "dddd"]:
        assert memo.count(text) == len(text) + 1
    assert len(memo._known) == 3 and "a" not in memo._known
    calls.clear()
    assert [memo.count(t) for t in ["bb", "ccc", "dddd", "a"]] == [3, 4, 5, 2]
    assert calls == ["a"]  # only the forgotten one was counted again
    long = "y" * (SHORT_TEXT + 1)
    memo.count(long), memo.count(long)
    assert calls == ["a", long, long]  # a long text is never kept


def test_one_memo_per_counter_and_a_private_one_for_an_unhashable_counter() -> None:
    use, cl100k = _use(), get_counter("tokens", "cl100k_base")
    assert short_counts(use) is short_counts(use)
    assert short_counts(use) is not short_counts(cl100k)

    class Unhashable:
        name = "unhashable"
        __hash__ = None  # type: ignore[assignment]

        def count(self, text: str) -> int:
            return 2 * len(text)

        def count_batch(self, texts: Sequence[str]) -> list[int]:
            return [self.count(t) for t in texts]

    memo = short_counts(Unhashable())
    assert memo.count("abc") == 6 and memo.count("abc") == 6
    assert memo.name == "unhashable"


class _Binding:
    """A stand-in for the compiled processor, its buffer encode off by ``shift`` pieces."""

    def __init__(self, real: Any, shift: int) -> None:
        self.real, self.shift = real, shift

    def _EncodeAsBuffer(self, text: str, *args: Any) -> array[int]:
        n = len(memoryview(self.real._EncodeAsBuffer(text, *args))) + self.shift
        return array("i", [0] * max(n, 0))


class _Processor:
    def __init__(self, real: Any, binding: object) -> None:
        self.real, self._processor = real, binding

    def encode(self, text: str, **kwargs: Any) -> list[int]:
        ids: list[int] = self.real.encode(text, **kwargs)
        return ids


@pytest.mark.parametrize("shift", [0, 1, -1])
def test_the_buffer_path_is_taken_only_where_it_counts_as_the_public_one(shift: int) -> None:
    real = _use().processor
    fake = _Processor(real, _Binding(real._processor, shift))
    assert _buffers_agree(fake, True, True) is (shift == 0)


def test_a_binding_without_the_buffer_encode_takes_the_public_path() -> None:
    real = _use().processor
    assert _buffers_agree(_Processor(real, object()), True, True) is False
    assert _buffers_agree(object(), True, True) is False
