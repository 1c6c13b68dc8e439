"""Retrievers for LLM frameworks over a :class:`narezka.Index`: LangChain
(:mod:`narezka.integrations.langchain`, extra ``langchain``) and LlamaIndex
(:mod:`narezka.integrations.llamaindex`, extra ``llamaindex``). Each hit keeps its exact
source span, so a citation points at the characters that answered."""

from __future__ import annotations

from typing import Any

from narezka.search import Hit


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """What both adapters put beside a hit's text."""
    return {
        "source": hit.file_path,
        "url": hit.url,
        "section": hit.breadcrumb,
        "section_path": list(hit.section),
        "start_index": hit.start,
        "end_index": hit.end,
        "score": hit.score,
        "chunk_id": hit.chunk_id,
        "chunk_index": hit.chunk_index,
        "stale": hit.stale,
    }
