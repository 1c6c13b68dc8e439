"""The chunk contract holds for every strategy, size and unit on generated Markdown."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import narezka
from narezka.tokens import get_counter

from contract import assert_contract
from markdown_gen import adversarial_markdown, markdown

STRUCTURED = ["overlap", "recursive", "sentences", "headings"]


@pytest.mark.parametrize("strategy", [*STRUCTURED, "fixed"])
@given(text=markdown(), size=st.sampled_from([40, 90, 250, 1000]))
def test_contract_in_chars(strategy: str, text: str, size: int) -> None:
    chunks = narezka.chunk_text(text, strategy, size=size)
    assert_contract(text, chunks, size, get_counter("chars"), atoms=strategy != "fixed")


@pytest.mark.parametrize("strategy", [*STRUCTURED, "fixed"])
@given(text=markdown(), size=st.sampled_from([24, 64, 300]))
def test_contract_in_cl100k_tokens(strategy: str, text: str, size: int) -> None:
    chunks = narezka.chunk_text(text, strategy, size=size, unit="tokens")
    counter = get_counter("tokens", "cl100k_base")
    assert_contract(text, chunks, size, counter, atoms=strategy != "fixed")


@pytest.mark.parametrize("strategy", ["overlap", "recursive", "sentences"])
@given(text=markdown(), overlap=st.sampled_from([5, 20, 60]))
def test_contract_with_overlap(strategy: str, text: str, overlap: int) -> None:
    chunks = narezka.chunk_text(text, strategy, size=200, overlap=overlap)
    assert_contract(text, chunks, 200, get_counter("chars"))


@pytest.mark.parametrize("strategy", [*STRUCTURED, "fixed"])
@given(text=st.text(max_size=600), size=st.sampled_from([16, 50, 300]))
def test_contract_on_arbitrary_text(strategy: str, text: str, size: int) -> None:
    chunks = narezka.chunk_text(text, strategy, size=size)
    assert_contract(text, chunks, size, get_counter("chars"), atoms=strategy != "fixed")


@given(text=markdown(), levels=st.sampled_from([(2, 3), (1, 1), (3, 6)]))
def test_contract_with_heading_levels(text: str, levels: tuple[int, int]) -> None:
    chunks = narezka.chunk_text(text, "headings", size=300, levels=levels)
    assert_contract(text, chunks, 300, get_counter("chars"))


# Adversarial input: long unbroken tokens in headings, cells and items, nested and unclosed
# fences of both kinds, HTML blocks swallowing lines, pipe-less tables, line separators.
# Atoms are found by CommonMark itself, not by narezka's block map. A header too wide to
# shorten may be dropped with a warning: the contract holds either way.
ADVERSARIAL = [*STRUCTURED, "parent-child", "legal", "auto"]
QUIET = pytest.mark.filterwarnings("ignore::narezka.split.atom_frame.AtomContextWarning")
# Documents of several kilobytes: fewer of them than of the plain generator keep the suite fast.
FEWER = settings(max_examples=30)


@QUIET
@FEWER
@pytest.mark.parametrize("strategy", [*ADVERSARIAL, "fixed"])
@given(text=adversarial_markdown(), size=st.sampled_from([40, 90, 250, 1000]))
def test_contract_on_adversarial_markdown_in_chars(strategy: str, text: str, size: int) -> None:
    chunks = narezka.chunk_text(text, strategy, size=size)
    counter = get_counter("chars")
    assert_contract(text, chunks, size, counter, atoms=strategy != "fixed", commonmark=True)


@QUIET
@FEWER
@pytest.mark.parametrize("strategy", [*ADVERSARIAL, "fixed"])
@given(text=adversarial_markdown(), size=st.sampled_from([24, 64, 300]))
def test_contract_on_adversarial_markdown_in_tokens(strategy: str, text: str, size: int) -> None:
    chunks = narezka.chunk_text(text, strategy, size=size, unit="tokens")
    counter = get_counter("tokens", "cl100k_base")
    assert_contract(text, chunks, size, counter, atoms=strategy != "fixed", commonmark=True)


@QUIET
@FEWER
@pytest.mark.parametrize("strategy", ["overlap", "recursive", "sentences"])
@given(text=adversarial_markdown(), overlap=st.sampled_from([5, 40, 99]))
def test_contract_on_adversarial_markdown_with_overlap(
    strategy: str, text: str, overlap: int
) -> None:
    chunks = narezka.chunk_text(text, strategy, size=200, overlap=overlap)
    assert_contract(text, chunks, 200, get_counter("chars"), commonmark=True)
