"""The LangChain retriever against the real langchain-core: Documents whose metadata points
at the exact span that answered."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core", reason="langchain-core (extra 'langchain') is not installed")

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from narezka import Filter, Index
from narezka.discover.walk import read_document
from narezka.integrations.langchain import NarezkaRetriever

from serve.helpers import run_async


def test_documents_carry_source_url_section_start_and_score(kb_index: Index) -> None:
    retriever = NarezkaRetriever(index=kb_index, k=4, mode="bm25")
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke("вернуть вскрытый чай")
    hits = kb_index.search("вернуть вскрытый чай", k=4, mode="bm25")
    assert [d.id for d in docs] == [h.chunk_id for h in hits] and docs
    for doc, hit in zip(docs, hits, strict=True):
        assert isinstance(doc, Document)
        meta = doc.metadata
        assert meta["source"] == hit.file_path and meta["url"] == hit.url
        assert meta["section"] == " > ".join(hit.section) and meta["score"] == hit.score
        # Offsets lie in the canonical text (a PDF's or a Word file's Markdown).
        text = read_document(kb_index.corpus, kb_index.corpus / meta["source"])[0].text
        start = meta["start_index"]
        assert text[start : meta["end_index"]] == doc.page_content
        # A converted file's page (the returns policy is a PDF); none for Markdown.
        if meta["source"] == "returns.pdf":
            assert meta["where"] == "p. 1" and meta["page_start"] == meta["page_end"] == 1
        else:
            assert "where" not in meta and "page_start" not in meta
    assert any(d.metadata["source"] == "returns.pdf" for d in docs)


def test_filters_and_errors_pass_through(kb_index: Index) -> None:
    only = NarezkaRetriever(index=kb_index, k=5, mode="bm25", filters=Filter(path="products/**"))
    docs = only.invoke("лампа")
    assert docs and all(d.metadata["source"].startswith("products/") for d in docs)
    with pytest.raises(ValueError, match="empty"):
        NarezkaRetriever(index=kb_index).invoke("   ")


def test_async_invoke_works_too(kb_index: Index) -> None:
    retriever = NarezkaRetriever(index=kb_index, k=2)
    docs = run_async(lambda: retriever.ainvoke("доставка"))
    assert len(docs) == 2


def test_k_given_to_invoke_wins_over_the_retrievers_own(kb_index: Index) -> None:
    # Issue 23 item 16: invoke(q, k=2) returned the retriever's 4 documents.
    retriever = NarezkaRetriever(index=kb_index, k=4, mode="bm25")
    assert len(retriever.invoke("чай", k=2)) == 2
    assert len(run_async(lambda: retriever.ainvoke("чай", k=1))) == 1
    bm25 = retriever.invoke("чай", k=3, mode="bm25", filters=Filter(path="products/**"))
    assert len(bm25) == 3 and all(d.metadata["source"].startswith("products/") for d in bm25)
    assert len(retriever.invoke("чай")) == 4  # the retriever's own k otherwise
