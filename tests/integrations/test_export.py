"""The export helpers: chunks as LangChain Documents and LlamaIndex TextNodes, spans exact,
secrets redacted as the index would store them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain_core", reason="langchain-core is not installed")
pytest.importorskip("llama_index.core", reason="llama-index-core is not installed")

import narezka
from narezka.integrations.langchain import chunks_to_documents
from narezka.integrations.llamaindex import chunks_to_nodes

from conftest import copy_examples

KEY = "AKIAIOSFODNN7EXAMPLE"


def test_chunks_export_with_exact_spans_and_redaction(tmp_path: Path) -> None:
    kb = copy_examples(tmp_path / "kb")
    (kb / "keys.md").write_text(f"# Ключи\n\nAWS key: {KEY}\n", encoding="utf-8")
    chunks = narezka.chunk_documents([str(kb)], "headings", size=400).chunks
    docs, nodes = chunks_to_documents(chunks), chunks_to_nodes(chunks)
    assert len(docs) == len(nodes) == len(chunks) > 18
    for chunk, doc, node in zip(chunks, docs, nodes, strict=True):
        assert doc.page_content == node.text
        assert (node.start_char_idx, node.end_char_idx) == (chunk.start, chunk.end)
        assert doc.metadata["start_index"] == chunk.start
        assert doc.metadata["source"] == chunk.source == node.metadata["source"]
        if not chunk.secrets:
            assert doc.page_content == chunk.text
    secret = [d for d in docs if d.metadata["redacted"]]
    assert secret and all(KEY not in d.page_content for d in docs)
