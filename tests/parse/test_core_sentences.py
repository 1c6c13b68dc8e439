"""Differential tests: the native core's sentence boundaries are the Python finder's.

The core answers for texts whose every character is in its tables of Python's str
predicates (native/gen_chars.py); for those, every range must give the very same list.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka._native import core
from narezka.parse.sentences import sentence_ends

from markdown_gen import markdown

pytestmark = pytest.mark.skipif(core is None, reason="the native core is not built here")

SHARED = Path(os.environ.get("NAREZKA_SHARED", Path(__file__).resolve().parents[3] / "shared"))
CORPUS = SHARED / "data" / "md_corpus"

# Pieces that meet the finder's rules: punctuation runs and closers, abbreviations (Russian,
# capitalised, English), initials, ordinals and list markers, dialogue dashes, emphasis,
# characters whose case or digit-ness only Python's tables know (Ⅻ, ², Ⓐ, ǅ), emoji.
PIECES = st.sampled_from(
    [" ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u2003", ".", "..", "...", "!", "?", "?!", "…",
     "»", "«", '"', "”", "“", "„", "’", "‘", "'", ")", "(", "]", "[", "*", "**", "_", "`",
     "—", "–", "- ", "* ", "+ ", "• ", "1. ", "2) ", "1.2. ", "12.3.4.5. ", "1234. ",
     "т. е.", "др.", "См.", "см.", "Макс.", "макс.", "руб.", "Mr.", "etc.", "e.g.", "я.", "А.",
     "J. R. R.", "Привет", "мир", "Доставка", "hello", "World", "2,5", "2.5", "example.com",
     "Ⅻ", "²", "Ⓐ", "ǅ", "ſ", "😀", "✅", "→", "№", "\u0301", "x", "Y", "0", "9"]
)  # fmt: skip


def agree(text: str, start: int, end: int | None) -> bool:
    got = core.sentence_ends(text, *_clamped(text, start, end)) if core else None
    if got is not None:
        assert got == sentence_ends(text, start, end, native=False), (text, start, end)
    return got is not None


def _clamped(text: str, start: int, end: int | None) -> tuple[int, int]:
    start = max(0, min(start, len(text)))
    return start, len(text) if end is None else max(start, min(end, len(text)))


@given(st.lists(PIECES, max_size=40).map("".join), st.integers(-2, 200), st.integers(-2, 200))
@settings(max_examples=1500)
def test_pieces_any_range(text: str, start: int, end: int) -> None:
    agree(text, start, end)
    agree(text, 0, None)


@given(markdown())
@settings(max_examples=200)
def test_generated_markdown(text: str) -> None:
    agree(text, 0, None)
    agree(text, len(text) // 3, 2 * len(text) // 3)


@given(st.text(max_size=60), st.integers(0, 60), st.integers(0, 60))
@settings(max_examples=800)
def test_any_text(text: str, start: int, end: int) -> None:
    agree(text, start, end)  # outside the tables the core declines; inside, it agrees


def test_the_core_answers_russian_and_english_prose() -> None:
    text = "Привет, мир! См. рис. 2 и т. е. всё. А. С. Пушкин писал. Mr. Smith left… «Да.» 😀\n"
    assert agree(text, 0, None)
    assert sentence_ends(text) == sentence_ends(text, native=False)


def test_a_range_of_a_held_text_after_another_text() -> None:
    # The core keeps the last text's characters: a new text must not be judged by the old.
    first, second = "Один. Два. Три.", "Четыре! Пять? Шесть."
    for text in (first, second, first):
        for start in range(len(text)):
            assert agree(text, start, None)


def test_corpus() -> None:
    files = sorted(CORPUS.rglob("*.md")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip(f"{CORPUS} not found; set NAREZKA_SHARED to the shared/ folder")
    answered = 0
    for path in files[:: 1 if os.environ.get("NAREZKA_FULL") == "1" else 5]:
        text = path.read_text(encoding="utf-8", errors="replace")
        answered += agree(text, 0, None)
        answered += agree(text, len(text) // 4, len(text) // 2)
    assert answered > 0
