"""parent-child: children obey the contract and nest in heading-section parents; search can
return the parents."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import narezka
from narezka.api.indexing import index, read_index_meta
from narezka.api.maintenance import sync
from narezka.api.searching import search
from narezka.discover.walk import read_document
from narezka.embed import HashEmbedder
from narezka.errors import ConfigError
from narezka.tokens import get_counter

from conftest import copy_examples
from contract import assert_contract
from markdown_gen import markdown


def parents_of(chunks: list[narezka.Chunk]) -> dict[int, dict[str, object]]:
    return {c.meta["parent"]["index"]: c.meta["parent"] for c in chunks}


@given(text=markdown(), size=st.sampled_from([60, 150, 400]), factor=st.sampled_from([2, 4]))
def test_children_keep_the_contract_and_nest_inside_their_parents(
    text: str, size: int, factor: int
) -> None:
    chunks = narezka.chunk_text(text, "parent-child", size=size, parent_size=size * factor)
    assert_contract(text, chunks, size, get_counter("chars"))
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    for c in chunks:
        parent = c.meta["parent"]
        assert parent["start"] <= c.start < c.end <= parent["end"]
        assert parent["text"] == normalized[parent["start"] : parent["end"]]
    # Parents are exactly what headings cuts at the parent size.
    expected = narezka.chunk_text(text, "headings", size=size * factor)
    for number, parent in parents_of(chunks).items():
        assert (parent["start"], parent["end"]) == (expected[number].start, expected[number].end)


@given(text=markdown(), size=st.sampled_from([32, 100]))
def test_contract_in_cl100k_tokens(text: str, size: int) -> None:
    chunks = narezka.chunk_text(text, "parent-child", size=size, unit="tokens")
    assert_contract(text, chunks, size, get_counter("tokens", "cl100k_base"))


def test_a_section_that_fits_its_parent_is_one_parent_of_several_children() -> None:
    body = " ".join(f"Предложение номер {i} о доставке чая." for i in range(30))
    returns = "Вскрытый чай не возвращается, если упаковка повреждена покупателем. " * 4
    text = f"# Доставка\n\n{body}\n\n# Возврат\n\n{returns}"
    chunks = narezka.chunk_text(text, "parent-child", size=200, parent_size=2000)
    delivery = [c for c in chunks if c.section == ("Доставка",)]
    assert len(delivery) >= 4
    assert len({c.meta["parent"]["index"] for c in delivery}) == 1
    assert chunks[-1].meta["parent"]["section"] == ["Возврат"]
    assert chunks[-1].meta["parent"]["index"] != delivery[0].meta["parent"]["index"]


def test_editing_a_sibling_changes_the_hash_of_every_child_of_that_parent() -> None:
    first = "# A\n\n" + " ".join(f"Sentence {i} is here." for i in range(40))
    second = first.replace("Sentence 39", "Phrase 39")
    before = narezka.chunk_text(first, "parent-child", size=120, parent_size=2000)
    after = narezka.chunk_text(second, "parent-child", size=120, parent_size=2000)
    assert before[0].text == after[0].text
    # The first child's own text is unchanged, but its parent (stored with it) is not.
    assert before[0].content_hash != after[0].content_hash


def test_parent_size_below_size_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="parent_size"):
        narezka.chunk_text("# x\n\ntext", "parent-child", size=200, parent_size=100)


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    corpus = tmp_path / "kb"
    copy_examples(corpus)
    return corpus


def test_search_expand_parent_returns_distinct_parents(kb: Path) -> None:
    model = HashEmbedder(64)
    report = index(kb, embedder=model, strategy="parent-child", size=40, parent_size=400)
    assert not report.skipped
    assert read_index_meta(kb / ".narezka")["params"]["parent_size"] == 400
    query = "тарифы курьерской доставки зона"
    small = search(query, kb, mode="bm25", k=3, embedder=model)
    big = search(query, kb, mode="bm25", k=3, expand="parent", embedder=model)
    assert big and len(big[0].text) > len(small[0].text)
    keys = [(h.file_path, h.payload["parent_index"]) for h in big]
    assert len(keys) == len(set(keys))
    for hit in big:
        # A converted page's spans lie in its canonical Markdown, as a Markdown file's in it.
        source = read_document(kb, kb / hit.file_path)[0].text
        assert source[hit.start : hit.end] == hit.text
    # The best child lies inside the parent that replaced it.
    assert small[0].text in big[0].text
    # sync reuses the recorded parent size: nothing to redo.
    again = sync(kb, embedder=model)
    assert again.chunks_embedded == 0 and again.files_unchanged == report.files_new


def test_expand_parent_on_another_strategy_says_what_to_do(kb: Path) -> None:
    model = HashEmbedder(64)
    index(kb, embedder=model)
    with pytest.raises(ConfigError, match="--strategy parent-child"):
        search("чай", kb, mode="bm25", expand="parent", embedder=model)
