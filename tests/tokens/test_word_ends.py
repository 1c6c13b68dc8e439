"""Word ends: cl100k_base counts split exactly there (narezka.tokens.word_ends), and only there
is the packer allowed to rely on it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.tokens import counts_split_at_word_ends, get_counter
from narezka.tokens.word_ends import (
    WINDOW,
    first_word_end,
    last_word_end,
    line_start,
    splits_at_word_ends,
)

from conftest import SHARED

CL100K = get_counter("tokens", "cl100k_base")

# Letters the rule trusts, letters it does not (CJK, Arabic, Devanagari with its marks),
# digits, apostrophes of contractions, punctuation, every kind of blank, emoji.
PIECES = st.sampled_from(
    [
        *"abcxyzABCЖжёЁωΩéßʼ",
        *"中文ع\u0928\u093f",
        *"0123456789",
        "'s",
        "'ll",
        "'T",
        "'",
        *'.,;:!?-()[]{}<>/\\|`*_#=+"',
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\r\n",
        "\u00a0",
        "\u3000",
        "🙂",
        "x\u0301",
        "The",
        " quick",
        "Привет",
        "мир",
        "don't",
        "I'm",
        "...",
        "1,000",
        "v1.2",
    ]
)


def all_word_ends(text: str) -> list[int]:
    """Every position the rule names: a trusted letter before it, an ASCII non-letter after."""
    return [p for p in range(1, len(text)) if first_word_end(text, p - 1, p) == p]


@given(st.lists(PIECES, max_size=40).map("".join))
def test_a_cl100k_count_splits_exactly_at_every_word_end(text: str) -> None:
    whole = CL100K.count(text)
    for p in all_word_ends(text):
        assert CL100K.count(text[:p]) + CL100K.count(text[p:]) == whole, (text, p)


@given(st.lists(PIECES, max_size=40).map("".join))
def test_word_ends_are_a_trusted_letter_then_an_ascii_non_letter(text: str) -> None:
    for p in all_word_ends(text):
        assert text[p - 1].isalpha() and text[p - 1] < "\u0500"
        assert text[p].isascii() and not text[p].isalpha()
    # And every such position is found: the first and last ones by the searches.
    ends = [
        p
        for p in range(1, len(text))
        if text[p - 1].isalpha()
        and text[p - 1] < "\u0500"
        and text[p].isascii()
        and not text[p].isalpha()
    ]
    assert all_word_ends(text) == ends
    if ends and ends[0] <= WINDOW:
        assert first_word_end(text, 0, len(text)) == ends[0]
    if ends and ends[-1] > len(text) - WINDOW:
        assert last_word_end(text, 0, len(text)) == ends[-1]


def test_elsewhere_a_split_moves_the_count() -> None:
    # What the rule keeps out: a full stop takes the line breaks after it, and a space
    # joins the next word, so a split right after a letter's neighbour is not exact.
    for text, p in [("end.\n\nNext", 4), ("one two", 4), ("中文 text", 1)]:
        assert first_word_end(text, p - 1, p) is None
    assert CL100K.count("end.") + CL100K.count("\n\nNext") != CL100K.count("end.\n\nNext")
    assert CL100K.count("one ") + CL100K.count("two") != CL100K.count("one two")


def test_a_word_end_at_the_range_end_needs_the_next_character() -> None:
    text = "alpha beta"
    assert first_word_end(text, 0, 5) == 5  # the space after "alpha" is there to see
    assert first_word_end("alpha", 0, 5) is None  # past the text nothing says what follows
    assert last_word_end(text, 0, 4) is None  # "alph|a": a letter follows
    assert last_word_end(text, 0, len(text)) == 5


def test_the_searches_look_a_window_from_the_edge_only() -> None:
    text = "x" * (WINDOW + 10) + " tail"
    assert first_word_end(text, 0, len(text)) is None
    assert last_word_end(text, 0, len(text) - 5) == WINDOW + 10
    assert last_word_end("head " + "y" * (WINDOW + 10), 0, WINDOW + 15) is None


def test_only_the_pre_tokenizer_the_rule_was_worked_out_for_splits_at_word_ends() -> None:
    class Other:
        _pat_str = r"\p{L}+|\s+|."

    assert counts_split_at_word_ends(CL100K)
    assert not splits_at_word_ends(Other())
    assert not splits_at_word_ends(object())
    assert not counts_split_at_word_ends(get_counter("chars"))


def test_md_corpus_counts_split_at_word_ends() -> None:
    corpus = SHARED / "data" / "md_corpus"
    if not corpus.is_dir():
        pytest.skip(f"no md_corpus at {corpus}")
    files = sorted(corpus.rglob("*.md"))[::20]
    rng = random.Random(15)
    checked = 0
    for path in files:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        ends = [p for p in range(1, len(text)) if first_word_end(text, p - 1, p) == p]
        whole = CL100K.count(text)
        for p in rng.sample(ends, min(3, len(ends))):
            assert CL100K.count(text[:p]) + CL100K.count(text[p:]) == whole, (path, p)
            checked += 1
    assert checked > 100


def all_line_starts(text: str) -> list[int]:
    return [p for p in range(1, len(text)) if line_start(text[p - 1], text[p])]


@given(st.lists(PIECES, max_size=40).map("".join))
def test_a_cl100k_count_splits_exactly_at_every_line_start(text: str) -> None:
    whole = CL100K.count(text)
    for p in all_line_starts(text):
        assert text[p - 1] == "\n" and text[p].isalpha() and text[p] < "\u0500"
        assert CL100K.count(text[:p]) + CL100K.count(text[p:]) == whole, (text, p)


def test_a_line_start_needs_a_line_feed_then_a_trusted_letter() -> None:
    # A carriage return, a space or a digit first, or a letter the rule does not trust:
    # not a line start (the count may or may not split there). Inside a run of line feeds
    # it does not.
    assert [line_start(a, b) for a, b in ["\na", "\nЖ", "\r\n"[::-1], " a", "\n1", "\n中"]] == [
        True,
        True,
        False,
        False,
        False,
        False,
    ]
    assert CL100K.count("x\n") + CL100K.count("\ny") != CL100K.count("x\n\ny")
    assert CL100K.count("end.\n\n") + CL100K.count("Next") == CL100K.count("end.\n\nNext")


def test_md_corpus_counts_split_at_line_starts() -> None:
    corpus = SHARED / "data" / "md_corpus"
    if not corpus.is_dir():
        pytest.skip(f"no md_corpus at {corpus}")
    rng = random.Random(16)
    checked = 0
    for path in sorted(corpus.rglob("*.md"))[::20]:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        whole = CL100K.count(text)
        starts = all_line_starts(text)
        for p in rng.sample(starts, min(3, len(starts))):
            assert CL100K.count(text[:p]) + CL100K.count(text[p:]) == whole, (path, p)
            checked += 1
    assert checked > 100
