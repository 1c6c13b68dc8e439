"""The shortcuts of the characters path change no chunk: sizes are arithmetic on cached
lookups, and a merge whose groups all cost their length plus one breadcrumb grows by bisection
instead of asking for each extension."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.parse.markdown import parse_document
from narezka.parse.redaction import find_secrets
from narezka.split import SplitParams, get_strategy
from narezka.split.base import context_for
from narezka.split.context import DocumentContext
from narezka.tokens import get_counter
from narezka.types import Chunk, Document, RawDocument

from markdown_gen import adversarial_markdown, markdown

SECRET_LINE = "password = hunter2secret\n\n"


def parsed(text: str, *, redact: bool = True) -> Document:
    doc, _ = parse_document(RawDocument(source="t.md", text=text))
    return dataclasses.replace(doc, secrets=find_secrets(doc.text)) if redact else doc


def documents() -> st.SearchStrategy[str]:
    """Generated Markdown, sometimes with a secret line (its marker changes sizes)."""
    body = st.one_of(markdown(), adversarial_markdown())
    return st.tuples(body, st.booleans()).map(lambda t: SECRET_LINE + t[0] if t[1] else t[0])


@pytest.mark.filterwarnings("ignore::narezka.split.atom_frame.AtomContextWarning")
@settings(max_examples=150, deadline=None)
@given(text=documents(), budget=st.sampled_from([40, 120, 800]), data=st.data())
def test_a_chars_cost_is_the_length_of_the_embed_text_or_bounds_it(
    text: str, budget: int, data: st.DataObject
) -> None:
    doc = parsed(text)
    ctx = context_for(get_strategy("headings"), doc, SplitParams(size=budget), get_counter("chars"))
    n = len(doc.text)
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    start, end = ctx.trim(start, end)
    if start >= end:
        return
    cost, embed = ctx.cost(start, end), ctx.embed_text(start, end)
    # Sanitizing only shortens: exact when the document needs none.
    assert cost >= len(embed)
    if ctx.clean:
        assert cost == len(embed)


def split(text: str, strategy: str, size: int) -> list[Chunk]:
    return get_strategy(strategy).split(parsed(text), SplitParams(size=size), get_counter("chars"))


# At size 40 a split table's header may not fit beside a marker: dropped with a warning,
# alike on both paths (what this test compares).
@pytest.mark.filterwarnings("ignore::narezka.split.atom_frame.AtomContextWarning")
@pytest.mark.parametrize("strategy", ["headings", "recursive", "sentences", "parent-child"])
@settings(max_examples=60, deadline=None)
@given(text=documents(), size=st.sampled_from([40, 90, 250, 1000]))
def test_growing_groups_by_bisection_gives_the_chunks_of_one_cost_per_extension(
    strategy: str, text: str, size: int
) -> None:
    fast = split(text, strategy, size)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DocumentContext, "flat_cost", lambda self, pieces: None)
        slow = split(text, strategy, size)
    assert fast == slow


def test_a_merge_touching_an_atom_a_secret_or_two_sections_has_no_flat_cost() -> None:
    text = (
        "# One\n\nalpha beta.\n\ngamma delta.\n\n## Two\n\nepsilon.\n\n"
        "```\ncode line\n```\n\n" + SECRET_LINE + "tail words.\n"
    )
    doc = parsed(text)
    ctx = context_for(get_strategy("headings"), doc, SplitParams(size=800), get_counter("chars"))

    def at(snippet: str) -> tuple[int, int]:
        pos = text.index(snippet)
        return pos, pos + len(snippet)

    alpha, gamma = at("alpha beta."), at("gamma delta.")
    assert ctx.flat_cost([alpha, gamma]) == len(ctx.crumb(*alpha))
    assert ctx.flat_cost([alpha, at("epsilon.")]) is None  # two sections
    code = at("```\ncode line\n```")
    inside = (code[0] + 4, code[1] - 4)
    assert ctx.flat_cost([at("epsilon."), code]) == len(ctx.crumb(*code))
    assert ctx.flat_cost([at("epsilon."), inside]) is None  # an edge inside the atom
    assert ctx.flat_cost([code, at("password = hunter2secret")]) is None  # a secret


def test_no_flat_cost_in_tokens() -> None:
    doc = parsed("# One\n\nalpha beta.\n\ngamma delta.\n")
    counter = get_counter("tokens", "cl100k_base")
    ctx = context_for(get_strategy("headings"), doc, SplitParams(size=100, unit="tokens"), counter)
    assert ctx.packer([]).flat is None
