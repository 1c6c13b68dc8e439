"""The LlamaIndex retriever against the real llama-index-core: NodeWithScore whose node
holds the exact start/end character offsets of its span."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core", reason="llama-index-core (extra 'llamaindex') is missing")

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, TextNode

from narezka import Index
from narezka.discover.walk import read_document
from narezka.integrations.llamaindex import NarezkaRetriever


def test_nodes_hold_exact_offsets_and_scores(kb_index: Index) -> None:
    retriever = NarezkaRetriever(kb_index, k=4, mode="bm25")
    assert isinstance(retriever, BaseRetriever)
    found = retriever.retrieve("вернуть вскрытый чай")
    hits = kb_index.search("вернуть вскрытый чай", k=4, mode="bm25")
    assert found and [n.node.node_id for n in found] == [h.chunk_id for h in hits]
    for item, hit in zip(found, hits, strict=True):
        assert isinstance(item, NodeWithScore) and isinstance(item.node, TextNode)
        assert item.score == hit.score
        node = item.node
        # Offsets lie in the canonical text (a PDF's or a Word file's Markdown).
        text = read_document(kb_index.corpus, kb_index.corpus / node.metadata["source"])[0].text
        assert node.start_char_idx is not None and node.end_char_idx is not None
        assert text[node.start_char_idx : node.end_char_idx] == node.text
        assert node.metadata["section"] == hit.breadcrumb
    # The returns policy is a PDF: its node names the page, and the model is shown it.
    pdf = next(n.node for n in found if n.node.metadata["source"] == "returns.pdf")
    assert pdf.metadata["where"] == "p. 1" and pdf.metadata["page_start"] == 1
    assert "where" not in pdf.excluded_llm_metadata_keys
    assert "page_start" in pdf.excluded_llm_metadata_keys


def test_errors_pass_through(kb_index: Index) -> None:
    with pytest.raises(ValueError, match="mode"):
        NarezkaRetriever(kb_index, mode="fuzzy").retrieve("чай")


def test_a_prompt_shows_source_url_and_section_not_ids_offsets_or_scores(
    kb_index: Index,
) -> None:
    # Issue 23 item 16: get_content(metadata_mode="llm") put 11 lines of bookkeeping ahead of
    # every chunk.
    from llama_index.core.schema import MetadataMode

    from narezka import chunk_documents
    from narezka.integrations.llamaindex import chunks_to_nodes

    found = NarezkaRetriever(kb_index, k=2, mode="bm25").retrieve("вернуть вскрытый чай")
    chunks = chunk_documents([kb_index.corpus / "faq.md"]).chunks[:2]
    nodes = [item.node for item in found] + list(chunks_to_nodes(chunks))
    assert len(nodes) == 4
    for node in nodes:
        for mode in (MetadataMode.LLM, MetadataMode.EMBED):
            header = node.get_content(metadata_mode=mode).split("\n\n")[0]
            keys = {line.split(":")[0] for line in header.splitlines()}
            # A converted file's page is shown too: a citation the model can give.
            where = {"where"} if node.metadata.get("where") else set()
            assert keys == {"source", "url", "section", *where}, header
        assert "start_index" in node.metadata and "source" in node.metadata  # kept for code
