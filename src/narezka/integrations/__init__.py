"""Retrievers for LLM frameworks over a :class:`narezka.Index`: LangChain
(:mod:`narezka.integrations.langchain`, extra ``langchain``) and LlamaIndex
(:mod:`narezka.integrations.llamaindex`, extra ``llamaindex``). Each hit keeps its exact
source span, so a citation points at the characters that answered."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from narezka.enrich.payload import ORIGIN_KEYS
from narezka.errors import ConfigError
from narezka.parse.redaction import redacted_text
from narezka.search import Hit, Query
from narezka.search.options import FIELDS, Group, Option, field_default, field_types
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


def _flat(entry: Option | Group) -> tuple[Option, ...]:
    return entry.members if isinstance(entry, Group) else (entry,)


RETRIEVER_FIELDS = {
    name: entry
    for name, entry in FIELDS.items()
    if any(
        "retrievers" in o.fronts for o in (entry.members if isinstance(entry, Group) else [entry])
    )
}
"""What a retriever holds to build its queries: the fields of the table of search options
(:mod:`narezka.search.options`) the retrievers show, by the Query's names (``filters`` a
:class:`~narezka.search.Filter`, ``fusion`` a :class:`~narezka.search.Fusion`)."""


def retriever_fields() -> dict[str, tuple[Any, Any, str]]:
    """Each retriever field's type (None allowed: not given), default and help, from the
    table: both retrievers declare exactly these."""
    types = field_types()
    return {
        name: (types[name] | None, field_default(name), entry.help)
        for name, entry in RETRIEVER_FIELDS.items()
    }


def declare_fields(namespace: dict[str, Any], make: Callable[[Any, str], Any]) -> None:
    """Declare :func:`retriever_fields` in a class body's ``namespace`` (``locals()``): each
    an annotation and ``make(default, help)`` as its value (pydantic: a ``Field``)."""
    annotations = namespace.setdefault("__annotations__", {})
    for name, (kind, default, text) in retriever_fields().items():
        annotations[name] = kind
        namespace[name] = make(default, text)


def retriever_values(options: Mapping[str, Any]) -> dict[str, Any]:
    """A retriever's fields from its keyword arguments: each given one, else its default; an
    unknown name is refused, naming it."""
    unknown = sorted(set(options) - set(RETRIEVER_FIELDS))
    if unknown:
        raise ConfigError(f"unknown retriever option {', '.join(unknown)}")
    return {name: options.get(name, field_default(name)) for name in RETRIEVER_FIELDS}


def query_for(text: str, retriever: object, **overrides: Any) -> Query:
    """The :class:`~narezka.search.Query` a retriever asks: its own fields, then a call's
    ``overrides``. None is "not given" (the table's default: for ``min_relevance`` the
    index's setting), except where None is a field's own value (``fold``: no folding)."""
    unknown = sorted(set(overrides) - set(RETRIEVER_FIELDS))
    if unknown:
        raise ConfigError(f"unknown search option {', '.join(unknown)}")
    values = {name: getattr(retriever, name) for name in RETRIEVER_FIELDS}
    values.update({name: value for name, value in overrides.items() if value is not None})
    given = {
        name: value for name, value in values.items() if value is not None or _takes_none(name)
    }
    return Query(text, **given)


def _takes_none(name: str) -> bool:
    entry = RETRIEVER_FIELDS[name]
    return field_default(name) is None or (isinstance(entry, Option) and entry.kind == "fold")


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
