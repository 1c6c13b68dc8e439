"""Differential tests: the core's one-pass body check answers what ``needs_sanitizing`` and
``removed_characters`` answer, and the body functions answer it with the core or without."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from narezka._native import core
from narezka.parse.sanitize import (
    body_needs_sanitizing,
    body_removed_characters,
    needs_sanitizing,
    removed_characters,
)

SHARED = Path(os.environ.get("NAREZKA_SHARED", Path(__file__).resolve().parents[3] / "shared"))
CORPUS = SHARED / "data" / "md_corpus"

needs_core = pytest.mark.skipif(core is None, reason="the native core is not built here")

_PIECES = st.one_of(
    st.text(st.sampled_from(["a", "я", "😀", "-", "\ufffd", " ", "\t", "\n", "\x1c", "\x85"])),
    st.text(st.sampled_from(["\u00a0", "\u2028", "\u3000", "\u200b", "\u00ad", "\x00", "\x7f"])),
    st.sampled_from([" " * 10, " \t" * 5, "\t" * 9, "\n" * 5, "\n" * 4, "x" * 203]),
    st.integers(200, 210).map(lambda n: "ы" * n),
    st.text(max_size=12),
)


def _plain(text: str) -> tuple[bool, int]:
    return needs_sanitizing(text), removed_characters(text)


@needs_core
@given(st.lists(_PIECES, max_size=8).map("".join), st.integers(0, 30))
@settings(max_examples=1500, deadline=None)
@example("x" * 204, 0)  # a run at the very start has no blank before it
@example(" " + "x" * 204, 1)
@example("\n\n\n\n\n\x00", 0)  # the count goes on after the answer is known
def test_the_core_answers_what_python_answers(text: str, start: int) -> None:
    assert core is not None
    assert core.body_scan(text, start) == _plain(text[start:])


@needs_core
def test_every_code_point_is_dropped_or_kept_alike() -> None:
    assert core is not None
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert core.body_scan(everything, 0) == (True, removed_characters(everything))
    for c in everything:  # one character at a time: the long-run rule stays out of it
        assert core.body_scan(c, 0) == _plain(c), hex(ord(c))


def test_the_body_functions_answer_for_the_slice() -> None:
    text = "---\ntitle: x\n---\nbody\u200b\x00 text"
    for start in (0, 17, 19, len(text), len(text) + 3):
        assert body_needs_sanitizing(text, start) == needs_sanitizing(text[start:])
        assert body_removed_characters(text, start) == removed_characters(text[start:])


def test_a_lone_surrogate_is_left_to_python() -> None:
    text = "a\udc80b\u200b" + " " * 10
    if core is not None:
        assert core.body_scan(text, 0) is None
    assert body_needs_sanitizing(text, 0) is True
    assert body_removed_characters(text, 0) == 1
    assert body_removed_characters(text, 4) == 0


def test_the_answer_is_held_for_one_text_and_offset() -> None:
    text = "x\u200b" * 3
    assert body_removed_characters(text, 0) == 3
    assert body_removed_characters(text, 2) == 2  # same text, another offset: asked again
    assert body_removed_characters("y" * 6, 0) == 0
    assert body_needs_sanitizing(text, 0) is True


@needs_core
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"{CORPUS} not found; set NAREZKA_SHARED")
def test_md_corpus_alike() -> None:
    assert core is not None
    for path in sorted(CORPUS.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert core.body_scan(text, 0) == _plain(text), path
