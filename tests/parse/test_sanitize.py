"""Tests for narezka.parse.sanitize: dropped characters, long runs, blank runs, invariants."""

from __future__ import annotations

import importlib
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from narezka.parse.sanitize import LONG_RUN, needs_sanitizing, removed_characters, sanitize

# The module itself: ``narezka.parse.sanitize`` names the function re-exported by the package.
sanitize_module = importlib.import_module("narezka.parse.sanitize")

C0_DROPPED = [chr(c) for c in range(0x00, 0x20) if chr(c) not in "\t\n"]
C1_AND_DEL = [chr(c) for c in range(0x7F, 0xA0)]
INVISIBLE = [
    "\u200b",  # zero width space
    "\u200c",  # zero width non-joiner
    "\u200d",  # zero width joiner
    "\u200e",  # left-to-right mark
    "\u200f",  # right-to-left mark
    "\ufeff",  # BOM / zero width no-break space
    "\u00ad",  # soft hyphen
    "\u2060",  # word joiner
]
DROPPED = [*C0_DROPPED, *C1_AND_DEL, "\ufffd", *INVISIBLE]
# Every character the module documents as dropped: the above plus the Mongolian vowel
# separator, bidi embeddings/overrides and isolates, and the invisible operators.
DROPPED_SET = frozenset(
    [
        *DROPPED,
        "\u180e",
        *map(chr, range(0x200B, 0x2010)),
        *map(chr, range(0x202A, 0x202F)),
        *map(chr, range(0x2060, 0x2065)),
        *map(chr, range(0x2066, 0x2070)),
    ]
)


def test_drop_set_is_what_we_think() -> None:
    assert len(C0_DROPPED) == 30
    assert len(C1_AND_DEL) == 33


@pytest.mark.parametrize("ch", DROPPED, ids=lambda c: f"U+{ord(c):04X}")
def test_drops_character(ch: str) -> None:
    text = f"до{ch}после {ch}"
    assert sanitize(text) == "допосле "
    assert removed_characters(text) == 2


@pytest.mark.parametrize(
    "text",
    [
        "Привет, мир! Ёлки-палки.",
        "Emoji: 👍🏽 🇷🇺 👨‍👩‍👧",  # the ZWJ inside the family emoji is dropped, checked below
        "цена\u00a0100\u00a0₽",  # NBSP kept
        "tab\there\nnew line",
        "математика: ∑ ∫ ≈ ≠",
        "日本語のテキスト",
    ],
)
def test_keeps_ordinary_text(text: str) -> None:
    expected = text.replace("\u200d", "")
    assert sanitize(text) == expected
    assert removed_characters(text) == text.count("\u200d")


def test_keeps_nbsp_cyrillic_and_emoji_exactly() -> None:
    text = "Возврат\u00a0товара 😀🚀"
    assert sanitize(text) == text
    assert removed_characters(text) == 0


def test_mixed_drops_are_counted() -> None:
    text = "\ufeffЗаголовок\u200b\x00\x07 текст\u00ad\ufffd\x85конец\x7f"
    assert sanitize(text) == "Заголовок текстконец"
    assert removed_characters(text) == 8
    assert len(text) - len(sanitize(text)) == 8


# ---- long runs ----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 150, 199, 200, 201, 202, 203])
def test_runs_up_to_limit_plus_three_unchanged(n: int) -> None:
    text = "a" * n
    assert sanitize(text) == text
    framed = f"до {'б' * n} после"
    assert sanitize(framed) == framed


@pytest.mark.parametrize("n", [204, 205, 250, 1000, 10_000])
def test_long_runs_shortened(n: int) -> None:
    run = "".join("0123456789abcdef"[i % 16] for i in range(n))
    out = sanitize(f"hash: {run} end")
    assert out == f"hash: {run[:LONG_RUN]}... end"


def test_long_run_limit_is_200() -> None:
    assert LONG_RUN == 200
    assert sanitize("x" * 204) == "x" * 200 + "..."


def test_several_long_runs_each_shortened() -> None:
    text = "A" * 300 + "\n" + "Б" * 204 + " ok " + "c" * 203
    assert sanitize(text) == "A" * 200 + "...\n" + "Б" * 200 + "... ok " + "c" * 203


def test_nbsp_breaks_a_long_run() -> None:
    text = "a" * 150 + "\u00a0" + "b" * 150
    assert sanitize(text) == text


def test_dropped_characters_join_a_long_run() -> None:
    # Invisible characters go first, so the halves become one 300-character run.
    text = "a" * 150 + "\u200b" + "a" * 150
    assert sanitize(text) == "a" * 200 + "..."


def test_huge_run_without_spaces() -> None:
    out = sanitize("q" * 300_000)
    assert len(out) == 203
    assert out == "q" * 200 + "..."


# ---- blank runs ---------------------------------------------------------------------------


def test_ten_spaces_collapse_nine_stay() -> None:
    assert sanitize("a" + " " * 10 + "b") == "a b"
    assert sanitize("a" + " " * 25 + "b") == "a b"
    nine = "a" + " " * 9 + "b"
    assert sanitize(nine) == nine


def test_nine_tabs_stay() -> None:
    nine = "a" + "\t" * 9 + "b"
    assert sanitize(nine) == nine


def test_mixed_space_tab_run_with_double_space_collapses() -> None:
    assert sanitize("a  \t\t\t\t\t\t\t\tb") == "a b"


@pytest.mark.parametrize("run", ["\t" * 10, " \t" * 5, "\t " * 8])
def test_tab_runs_collapse(run: str) -> None:
    assert sanitize(f"a{run}b") == "a b"


def test_five_newlines_collapse_four_stay() -> None:
    assert sanitize("a\n\n\n\n\nb") == "a\n\nb"
    assert sanitize("a" + "\n" * 12 + "b") == "a\n\nb"
    four = "a\n\n\n\nb"
    assert sanitize(four) == four


def test_newlines_joined_by_dropped_chars_collapse() -> None:
    assert sanitize("a\n\n\x0c\n\n\u200b\nb") == "a\n\nb"


def test_empty_text() -> None:
    assert sanitize("") == ""
    assert removed_characters("") == 0


# ---- properties ---------------------------------------------------------------------------

ALPHABET = st.sampled_from(
    [
        "a",
        "я",
        "Ё",
        "1",
        ".",
        "😀",
        " ",
        " ",
        "\t",
        "\n",
        "\n",
        "\u00a0",
        "\r",
        "\x00",
        "\x1b",
        "\x7f",
        "\x85",
        "\ufffd",
        "\u200b",
        "\u200d",
        "\u200e",
        "\ufeff",
        "\u00ad",
        "\u2060",
        "\u202e",
        "\u2066",
    ]
)


@st.composite
def messy_text(draw: st.DrawFn) -> str:
    chunks = draw(
        st.lists(
            st.one_of(
                st.text(ALPHABET, max_size=20),
                st.tuples(ALPHABET, st.integers(1, 260)).map(lambda t: t[0] * t[1]),
                st.text(max_size=10),
            ),
            max_size=8,
        )
    )
    return "".join(chunks)


@settings(max_examples=200, deadline=None)
@given(messy_text())
def test_sanitize_is_idempotent(text: str) -> None:
    once = sanitize(text)
    assert sanitize(once) == once


@settings(max_examples=200, deadline=None)
@given(messy_text())
def test_sanitize_never_longer_and_drops_all(text: str) -> None:
    out = sanitize(text)
    assert len(out) <= len(text)
    assert not DROPPED_SET.intersection(out)
    assert removed_characters(out) == 0
    assert re.search(r"\n{5,}", out) is None
    assert re.search(r" {10,}", out) is None
    assert re.search(rf"\S{{{LONG_RUN + 4},}}", out) is None


@settings(max_examples=200, deadline=None)
@given(messy_text())
def test_removed_characters_counts_dropped(text: str) -> None:
    expected = sum(ch in DROPPED_SET for ch in text)
    assert removed_characters(text) == expected
    # Dropping alone accounts for exactly that many characters.
    without = "".join(ch for ch in text if ch not in DROPPED_SET)
    assert len(text) - len(without) == removed_characters(text)
    assert sanitize(text) == sanitize(without)


def _needs_sanitizing_plainly(text: str) -> bool:
    """The check as one regex pass per rule (what needs_sanitizing answers, quickly)."""
    return (
        sanitize_module._DROP.search(text) is not None
        or sanitize_module._NEWLINE_RUN.search(text) is not None
        or sanitize_module._SPACE_RUN.search(text) is not None
        or sanitize_module._LONG_RUN.search(text) is not None
    )


_SPACES = " \t\n\r\x0b\x0c\x1c\x1f\x85\u00a0\u2028\u3000"


@given(
    st.lists(
        st.one_of(
            st.text(st.sampled_from(["a", "я", "😀", "-", "\ufffd", *_SPACES])),
            st.sampled_from([*DROPPED, " " * 10, "\t" * 10, "\n" * 5, "x" * 203]),
            st.integers(200, 210).map(lambda n: "ы" * n),
        ),
        max_size=8,
    ).map("".join)
)
@example("\ufffd")  # printable, yet dropped
@example("x" * 204)  # a run at the very start has no blank before it
def test_quick_checks_answer_what_the_plain_regexes_answer(text: str) -> None:
    assert needs_sanitizing(text) == _needs_sanitizing_plainly(text)
    assert removed_characters(text) == len(text) - len(sanitize_module._DROP.sub("", text))
    assert needs_sanitizing(text) == (sanitize(text) != text)


def test_every_dropped_character_fails_the_printable_test() -> None:
    # The quick scan relies on this; a new Unicode version in Python could break it.
    everything = "".join(map(chr, range(0x110000)))
    dropped = set(sanitize_module._DROP.findall(everything.replace("\ud800", "")))
    dropped = {c for run in dropped for c in run}
    assert dropped >= DROPPED_SET
    assert {c for c in dropped if c.isprintable()} == {"\ufffd"}


def test_an_equal_text_reuses_the_scan_and_a_different_one_does_not() -> None:
    assert removed_characters("ab\x00") == 1
    assert removed_characters("ab" + "\x00") == 1  # an equal text, another object
    assert removed_characters("abc") == 0  # same length, no dropped character
    assert not needs_sanitizing("abc")


@pytest.mark.parametrize("blank", [" ", "\n", "\u3000"])
def test_long_run_probes_find_every_run_the_pattern_finds(blank: str) -> None:
    # The probes sit a step apart: a run's length and offset decide whether one lands in
    # it, so every length near the limit is tried at every offset within two steps.
    step = sanitize_module._PROBE_STEP
    for length in [*range(step - 2, step + 3), *range(LONG_RUN, LONG_RUN + 8), 3 * step]:
        for offset in range(0, 2 * step + 3):
            # A run that a probe holds in but too short goes before it or after it.
            for lead, tail in (("", ""), ("c" * (step + 5) + blank, ""), ("", blank + "b" * 150)):
                head = lead + ("a" + blank) * (offset // 2) + blank * (offset % 2)
                text = head + "ж" * length + tail
                expected = sanitize_module._LONG_RUN.search(text) is not None
                assert sanitize_module._has_long_run(text) is expected, (length, offset)
