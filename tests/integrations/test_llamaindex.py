"""The LlamaIndex retriever against the real llama-index-core: NodeWithScore whose node
holds the exact start/end character offsets of its span."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core", reason="llama-index-core (extra 'llamaindex') is missing")

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, TextNode

from narezka import Index
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
        text = (kb_index.corpus / node.metadata["source"]).read_text(encoding="utf-8")
        assert node.start_char_idx is not None and node.end_char_idx is not None
        assert text[node.start_char_idx : node.end_char_idx] == node.text
        assert node.metadata["section"] == hit.breadcrumb


def test_errors_pass_through(kb_index: Index) -> None:
    with pytest.raises(ValueError, match="mode"):
        NarezkaRetriever(kb_index, mode="fuzzy").retrieve("чай")
