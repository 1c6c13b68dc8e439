"""Batching and re-splitting rejected inputs (embed_all / embed_grouped), never truncating."""

from __future__ import annotations

import numpy as np
import pytest

from narezka.embed import (
    ContextLengthError,
    Embedder,
    HashEmbedder,
    InputTooLongError,
    embed_all,
    embed_grouped,
)

LONG = " ".join(f"w{i}" for i in range(30))  # 32 tokens for the HashEmbedder's counter


def halves(index: int, text: str) -> list[str]:
    words = text.split(" ")
    mid = len(words) // 2
    return [" ".join(words[:mid]), " ".join(words[mid:])]


def test_hash_embedder_is_a_deterministic_embedder() -> None:
    emb = HashEmbedder(32)
    assert isinstance(emb, Embedder)
    a = emb.embed(["Доставка курьером", "delivery by courier", ""])
    b = HashEmbedder(32).embed(["Доставка курьером", "delivery by courier", ""])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-6)
    shared, unrelated = emb.embed(["red apple pie", "red apple tart", "quantum flux"])[[1, 2]]
    assert emb.embed(["red apple pie"])[0] @ shared > emb.embed(["red apple pie"])[0] @ unrelated


def test_embed_all_batches_and_reports_progress() -> None:
    emb = HashEmbedder(16)
    seen: list[tuple[int, int]] = []
    texts = [f"text {i}" for i in range(7)]
    out = embed_all(texts, emb, batch_size=3, on_progress=lambda d, t: seen.append((d, t)))
    np.testing.assert_array_equal(out, emb.embed(texts))
    assert emb.calls == 4  # 3 batches + the reference call
    assert seen == [(3, 7), (6, 7), (7, 7)]
    assert embed_all([], emb).shape == (0, 16)


def test_embed_all_names_the_global_index_of_a_too_long_input() -> None:
    emb = HashEmbedder(16, max_tokens=20)
    texts = ["ok"] * 5 + [LONG] + ["ok"]
    with pytest.raises(InputTooLongError) as info:
        embed_all(texts, emb, batch_size=2)
    assert info.value.index == 5 and info.value.tokens == 32 and info.value.window == 20
    assert "#5" in str(info.value) and "not truncated" in str(info.value)


def test_embed_grouped_resplits_only_rejected_inputs() -> None:
    emb = HashEmbedder(16, max_tokens=20)
    texts = ["first", LONG, "third"]
    groups = embed_grouped(texts, emb, resplit=halves, batch_size=8)
    assert [g.index for g in groups] == [0, 1, 2]
    assert [g.resplit for g in groups] == [False, True, False]
    assert groups[0].texts == ("first",) and groups[0].vectors.shape == (1, 16)
    assert " ".join(groups[1].texts) == LONG  # nothing lost
    np.testing.assert_array_equal(groups[1].vectors, emb.embed(list(groups[1].texts)))


def test_pieces_still_too_long_are_split_again_in_order() -> None:
    emb = HashEmbedder(16, max_tokens=6)  # 4 words + 2 specials
    calls: list[tuple[int, str]] = []

    def spy(index: int, text: str) -> list[str]:
        calls.append((index, text))
        return halves(index, text)

    text = " ".join(f"w{i}" for i in range(16))
    (group,) = embed_grouped([text], emb, resplit=spy)
    assert " ".join(group.texts) == text
    assert all(emb.counter.count(t) <= 6 for t in group.texts)
    assert len(group.texts) == 4 and len(calls) == 3
    assert all(index == 0 for index, _ in calls)


@pytest.mark.parametrize("bad", [[], [""], None])
def test_a_resplit_that_cannot_progress_raises(bad: list[str] | None) -> None:
    emb = HashEmbedder(16, max_tokens=20)

    def stuck(index: int, text: str) -> list[str]:
        return [text] if bad is None else bad

    with pytest.raises(InputTooLongError) as info:
        embed_grouped(["a", LONG], emb, resplit=stuck)
    assert info.value.index == 1


def test_depth_limit() -> None:
    emb = HashEmbedder(16, max_tokens=3)
    text = " ".join(f"w{i}" for i in range(64))
    with pytest.raises(InputTooLongError):
        embed_grouped([text], emb, resplit=halves, max_depth=2)


def test_invalid_indices_from_a_backend_are_an_error() -> None:
    class Broken(HashEmbedder):
        def embed(self, texts: object) -> np.ndarray:  # type: ignore[override]
            raise ContextLengthError(self.name, [99])

    with pytest.raises(Exception, match="without valid input indices"):
        embed_all(["x"], Broken(8))


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError):
        embed_all(["x"], HashEmbedder(8), batch_size=0)
