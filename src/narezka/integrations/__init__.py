"""Retrievers for LLM frameworks over a :class:`narezka.Index`: LangChain
(:mod:`narezka.integrations.langchain`, extra ``langchain``) and LlamaIndex
(:mod:`narezka.integrations.llamaindex`, extra ``llamaindex``). Each hit keeps its exact
source span, so a citation points at the characters that answered."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from narezka.enrich.payload import ORIGIN_KEYS
from narezka.parse.redaction import redacted_text
from narezka.search import Filter, Hit, Query
from narezka.settings import Settings
from narezka.types import Chunk

SHOWN_KEYS = ("source", "url", "section", "where")
"""The metadata a model should read beside a text; the rest (ids, offsets, scores) is
bookkeeping for the program, which frameworks that print metadata into prompts leave out."""


def bookkeeping_keys(metadata: dict[str, Any]) -> list[str]:
    """The keys of ``metadata`` a framework should keep out of the text it gives a model or
    an embedder (LlamaIndex's ``excluded_*_metadata_keys``)."""
    return [key for key in metadata if key not in SHOWN_KEYS]


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """What both adapters put beside a hit's text."""
    data: dict[str, Any] = {
        "source": hit.file_path,
        "url": hit.url,
        "section": hit.breadcrumb,
        "section_path": list(hit.section),
        "start_index": hit.start,
        "end_index": hit.end,
        "relevance": hit.relevance,
        "score": hit.score,
        "chunk_id": hit.chunk_id,
        "chunk_index": hit.chunk_index,
        "stale": hit.stale,
        **_origin(hit.payload),
    }
    if hit.where:  # a converted file's page, slide or sheet: a citation a model can give
        data["where"] = hit.where
    return data


def _origin(meta: Mapping[str, Any]) -> dict[str, Any]:
    """Where a converted file's chunk lies in its original: ``page_start``/``page_end``,
    ``slide``, ``sheet``, ``element`` (those it has)."""
    return {key: meta[key] for key in ORIGIN_KEYS if meta.get(key) is not None}


QUERY_FIELDS = tuple(f.name for f in dataclasses.fields(Query) if f.name != "text")
"""What a retriever holds to build its queries: every field of a Query but the text."""


def query_for(text: str, retriever: object, settings: Settings, **overrides: Any) -> Query:
    """The :class:`~narezka.search.Query` a retriever asks: its own :data:`QUERY_FIELDS`,
    then a call's ``overrides`` (None: not given); ``min_relevance`` unset is the index's
    ``min_relevance`` setting."""
    values = {name: getattr(retriever, name) for name in QUERY_FIELDS}
    values.update({name: value for name, value in overrides.items() if value is not None})
    if values["filters"] is None:
        values["filters"] = Filter()
    if values["min_relevance"] is None:
        values["min_relevance"] = settings.relevance_floor
    return Query(text, **values)


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    """What the export helpers put beside a chunk's text (no index needed)."""
    return {
        "source": chunk.source,
        "url": chunk.url,
        "section": " > ".join(chunk.section),
        "section_path": list(chunk.section),
        "start_index": chunk.start,
        "end_index": chunk.end,
        "chunk_index": chunk.index,
        "content_hash": chunk.content_hash,
        "redacted": bool(chunk.secrets),
        **_origin(chunk.meta),
    }


def chunk_text(chunk: Chunk) -> str:
    """The chunk's exact span, secrets redacted (as the index stores it)."""
    return redacted_text(chunk)
