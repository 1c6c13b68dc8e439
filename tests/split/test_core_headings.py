"""Differential tests: the native core packs ``headings`` as the Python does, in characters
and in cl100k_base tokens.

The core re-implements the packer, the structure refiners and the character costs
(``native/src/pack.rs``), and the token costs with the estimates Python packs by
(``native/src/pack/tokens.rs``); on any Markdown the chunks must be the very same, field for
field.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import narezka
import narezka.split.headings as headings
from narezka._native import core
from narezka.tokens import get_counter
from narezka.types import Chunk

from markdown_gen import adversarial_markdown, markdown

pytestmark = pytest.mark.skipif(core is None, reason="the native core is not built here")

# Shapes the generators above rarely make: a lead-in colon before its list, a heading with
# nothing under it, letters with combining marks (a hard split steps back over them), a
# word longer than any chunk, runs of spaces, and a title the breadcrumbs repeat.
EXTRA = st.sampled_from(
    ["Как выбрать пункт выдачи:\n- первый\n- второй", "## Пусто", "### Глубже\n",
     "e\u0301" * 30, "й" * 5 + "\u0306" * 3, "x" * 150, "a  b   c\t\td", "   ", "\n\n\n",
     "> цитата: важно", "1. раз\n2. два", "---", "<div>\nhtml\n</div>", "Т. е. так.",
     "| a | b |\n|---|---|\n" + "| длинная ячейка таблицы | ещё одна |\n" * 8,
     # what sanitizing changes: the token packer asks Python for such ranges' text
     "a\u200bb\x07c soft\u00adhyphen", "x" + " " * 12 + "y", "k" * 230 + " end", "\n" * 7,
     "```python\ndef f():\n" + "    return 1  # comment\n" * 12 + "```"]
)  # fmt: skip
DOCS = st.one_of(
    markdown(),
    adversarial_markdown(),
    st.lists(st.one_of(markdown(), EXTRA), max_size=6).map("\n\n".join),
)


def chunks(
    text: str, native: bool, monkeypatch: pytest.MonkeyPatch, **kw: Any
) -> tuple[list[Chunk], list[str]]:
    """The chunks and the warnings said (a split atom's header too long: asked of Python
    by both, so said by both)."""
    with monkeypatch.context() as m, warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        if not native:
            m.setattr(headings, "core", None)
        return narezka.chunk_text(text, "headings", **kw), [str(w.message) for w in said]


UNITS = [{"unit": "chars"}, {"unit": "tokens", "tokenizer": "cl100k_base"}]


@pytest.mark.parametrize("unit", UNITS, ids=["chars", "cl100k"])
@settings(max_examples=300, deadline=None)
@example("# T\n\n" + "e\u0301" * 30, 17, 0, (1, 6), None, 0)  # a hard split among accents
@given(
    DOCS,
    st.one_of(st.integers(16, 80), st.integers(16, 400)),  # small sizes split more
    st.integers(0, 120),
    st.sampled_from([(1, 6), (2, 3), (1, 1), (3, 4)]),
    st.sampled_from([None, True, False]),
    st.integers(0, 100),
)
def test_any_markdown_packs_as_the_python_packs_it(
    unit: dict[str, str],
    text: str,
    size: int,
    min_chars: int,
    levels: tuple[int, int],
    breadcrumbs: bool | None,
    overlap_share: int,
) -> None:
    kw = {
        "size": size,
        "min_chars": min_chars,
        "levels": levels,
        "breadcrumbs": breadcrumbs,
        "overlap": (size // 2 - 1) * overlap_share // 100,
        **unit,
    }
    with pytest.MonkeyPatch.context() as mp:
        assert chunks(text, True, mp, **kw) == chunks(text, False, mp, **kw), repr(text)


@pytest.mark.parametrize("unit", UNITS, ids=["chars", "cl100k"])
def test_the_core_answers_for_markdown_it_can_read(
    unit: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison above tests the core only where it answers: here it must, in a
    document that needs sanitizing too."""
    answered: list[bool] = []
    native_ranges = headings.native_ranges

    def spy(*args: Any) -> list[tuple[int, int]] | None:
        found = native_ranges(*args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(headings, "native_ranges", spy)
    text = "# Доставка\n\n## Курьером\n\n" + "Текст о доставке. " * 40 + "\n\n```\nx = 1\n```\n"
    for body in (text, text.replace("доставке.", "доставке.\u200b", 3)):
        got = chunks(body, True, monkeypatch, size=40, **unit)
        assert answered.pop() is True
        assert len(got[0]) > 2
        assert got == chunks(body, False, monkeypatch, size=40, **unit)


def test_the_token_counts_are_the_chunks_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core hands back each chunk's count with its range: the count of its
    ``embed_text``, a breadcrumb and a split code block's fences included."""
    counter = get_counter("tokens", "cl100k_base")
    code = "```python\n" + "".join(f"value_{i} = compute({i}, 'x')\n" for i in range(60)) + "```"
    text = "# Заголовок\n\n## Раздел\n\n" + "Слова и ещё слова. " * 30 + "\n\n" + code
    got, _ = chunks(text, True, monkeypatch, size=64, unit="tokens")
    assert len(got) > 4
    assert any(c.embed_text.startswith("```python") is False and "```" in c.embed_text for c in got)
    assert [c.tokens for c in got] == [counter.count(c.embed_text) for c in got]


def test_secrets_and_other_tokens_stay_with_python(monkeypatch: pytest.MonkeyPatch) -> None:
    answered: list[bool] = []
    native_ranges = headings.native_ranges

    def spy(*args: Any) -> list[tuple[int, int]] | None:
        found = native_ranges(*args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(headings, "native_ranges", spy)
    narezka.chunk_text("# A\n\npassword = hunter2secret\n", "headings", size=100)
    narezka.chunk_text("# A\n\nплоский текст\n", "headings", size=100, unit="tokens")
    monkeypatch.setattr(get_counter("tokens", "cl100k_base"), "native", None)
    narezka.chunk_text("# A\n\nплоский текст\n", "headings", size=100, unit="tokens")
    assert answered == [False, True, False]
