"""Differential tests: the native core's secret prefilter leads ``_candidates`` to the very
candidates the Python prefilter does (rules whose hints occur, keyword positions)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.parse import redaction

from test_redaction import _ALPHABET, _FORMS, _HINTS, _KEYS, _TRICKY, SHAPES

pytestmark = pytest.mark.skipif(
    redaction._PREFILTER is None, reason="the native core is not built here"
)

_LINES = [line.replace("«", "").replace("»", "") for _, line in SHAPES]
_SEPARATORS = ["=", ":", ":=", "=>", " = ", '"', "'", " ", "\t", "\n", "ключ=", "Ǆ:", "😀="]


def agree(text: str) -> bool:
    assert redaction._PREFILTER is not None
    answered = redaction._PREFILTER.scan(text) is not None
    assert sorted(redaction._candidates(text)) == sorted(
        redaction._candidates(text, native=False)
    ), text
    return answered


@given(
    st.lists(
        st.one_of(
            st.sampled_from(_LINES),
            st.sampled_from(_HINTS + _KEYS + _FORMS + _TRICKY + _SEPARATORS),
            st.text(_ALPHABET + "ЯяÅß", max_size=12),
        ),
        max_size=20,
    ).map("".join)
)
@settings(max_examples=1500)
def test_candidates_agree(text: str) -> None:
    agree(text)


@given(st.text(max_size=80))
@settings(max_examples=500)
def test_any_text(text: str) -> None:
    agree(text)


@pytest.mark.parametrize("line", _LINES)
def test_the_core_answers_every_shape(line: str) -> None:
    assert agree(f"Пароль от базы:\n{line}\nи всё.")


@pytest.mark.parametrize("folded", ["\u0130", "\u0131", "\u017f", "\u212a"])
def test_characters_that_fold_to_ascii_are_left_to_python(folded: str) -> None:
    assert redaction._PREFILTER is not None
    text = f"api_{folded}ey=a1b2c3d4e5f6g7h8 password=Fk9dsQ2mzL"
    assert redaction._PREFILTER.scan(text) is None
    agree(text)
