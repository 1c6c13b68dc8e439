"""Differential tests: the native core packs ``recursive`` as the Python does, in characters
and in cl100k_base tokens (``native/src/pack/recursive.rs``), the overlap added after it."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import narezka
import narezka.split.recursive as recursive
from narezka._native import core
from narezka.split.base import DEFAULT_SEPARATORS, SENTENCE
from narezka.types import Chunk

from markdown_gen import adversarial_markdown, markdown

pytestmark = pytest.mark.skipif(core is None, reason="the native core is not built here")

EXTRA = st.sampled_from(
    ["Как выбрать пункт выдачи:\n- первый\n- второй", "e\u0301" * 30, "x" * 150,
     "a  b   c\t\td", "\n\n\n", "1, 2, 3, 4, 5, 6, 7, 8, 9", "Т. е. так. Это всё.",
     "| a | b |\n|---|---|\n" + "| длинная ячейка таблицы | ещё одна |\n" * 8,
     "a\u200bb\x07c soft\u00adhyphen", "x" + " " * 12 + "y", "k" * 230 + " end",
     "```python\ndef f():\n" + "    return 1  # comment\n" * 12 + "```"]
)  # fmt: skip
DOCS = st.one_of(
    markdown(),
    adversarial_markdown(),
    st.lists(st.one_of(markdown(), EXTRA), max_size=6).map("\n\n".join),
)
SEPARATORS = st.sampled_from(
    [DEFAULT_SEPARATORS, ("\n\n", "\n", " ", ""), (SENTENCE, ", "), ("",), ("\n\n",),
     ("|", "\n", "ие")]
)  # fmt: skip
UNITS = [{"unit": "chars"}, {"unit": "tokens", "tokenizer": "cl100k_base"}]


def chunks(
    text: str, native: bool, monkeypatch: pytest.MonkeyPatch, **kw: Any
) -> tuple[list[Chunk], list[str]]:
    with monkeypatch.context() as m, warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        if not native:
            m.setattr(recursive, "core", None)
        return narezka.chunk_text(text, "recursive", **kw), [str(w.message) for w in said]


@pytest.mark.parametrize("unit", UNITS, ids=["chars", "cl100k"])
@settings(max_examples=300, deadline=None)
@example("# T\n\n" + "e\u0301" * 30, 17, 0, DEFAULT_SEPARATORS, None)  # accents, hard split
@given(
    DOCS,
    st.one_of(st.integers(16, 80), st.integers(16, 400)),
    st.integers(0, 100),
    SEPARATORS,
    st.sampled_from([None, True, False]),
)
def test_any_markdown_packs_as_the_python_packs_it(
    unit: dict[str, str],
    text: str,
    size: int,
    overlap_share: int,
    separators: tuple[str, ...],
    breadcrumbs: bool | None,
) -> None:
    kw = {
        "size": size,
        "overlap": (size // 2 - 1) * overlap_share // 100,
        "separators": separators,
        "breadcrumbs": breadcrumbs,
        **unit,
    }
    with pytest.MonkeyPatch.context() as mp:
        assert chunks(text, True, mp, **kw) == chunks(text, False, mp, **kw), repr(text)


@pytest.mark.parametrize("unit", UNITS, ids=["chars", "cl100k"])
def test_the_core_answers_and_secrets_stay_with_python(
    unit: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answered: list[bool] = []
    native_ranges = recursive.native_ranges

    def spy(*args: Any) -> list[tuple[int, int]] | None:
        found = native_ranges(*args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(recursive, "native_ranges", spy)
    text = "# Доставка\n\n" + "Текст о доставке, с запятыми. " * 40 + "\n\n```\nx = 1\n```\n"
    got = chunks(text, True, monkeypatch, size=60, overlap=10, **unit)
    assert answered.pop() is True
    assert len(got[0]) > 2
    assert got == chunks(text, False, monkeypatch, size=60, overlap=10, **unit)
    narezka.chunk_text("# A\n\npassword = hunter2secret\n", "recursive", size=100, **unit)
    assert answered.pop() is False
