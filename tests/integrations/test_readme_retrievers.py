"""The Python guide's retriever example (docs/guides/python.md) runs as written (on a
hash-embedded copy of the KB)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain_core", reason="langchain-core is not installed")
pytest.importorskip("llama_index.core", reason="llama-index-core is not installed")

from narezka import Index, Settings

from conftest import REPO, copy_examples


def test_the_readme_retriever_example_runs(tmp_path: Path) -> None:
    kb = copy_examples(tmp_path / "kb")
    with Index.create(kb, Settings(embedder="hash")) as index:
        index.sync()
    guide = REPO / "docs" / "guides" / "python.md"
    text = guide.read_text(encoding="utf-8")
    start = text.index("```python", text.index("## Retrievers for LangChain and LlamaIndex"))
    code = text[start + len("```python") : text.index("```", start + 3)]
    namespace: dict[str, object] = {}
    exec(compile(code.replace('"docs/"', repr(str(kb))), str(guide), "exec"), namespace)
    docs, nodes = namespace["docs"], namespace["nodes"]
    assert isinstance(docs, list) and len(docs) == 4
    assert isinstance(nodes, list) and [n.node.node_id for n in nodes] == [d.id for d in docs]
