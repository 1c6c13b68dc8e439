"""Chunk metadata beyond the split: zones and projects from path rules, the stored payload,
and the LLM-written context. (Secrets are redacted a floor lower, by
:mod:`narezka.parse.redaction`, where both the split stage and this one can reach it.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_face
from narezka.enrich.payload import ParentSpan, Payload, Rules, chunk_payload, match_rule

if TYPE_CHECKING:
    from narezka.enrich.context_cache import ContextCache, context_cache_file
    from narezka.enrich.llm_context import ContextEstimate

__getattr__, __dir__ = lazy_face(
    globals(), context_cache="ContextCache context_cache_file", llm_context="ContextEstimate"
)

__all__ = [
    "ContextCache",
    "ContextEstimate",
    "ParentSpan",
    "Payload",
    "Rules",
    "chunk_payload",
    "context_cache_file",
    "match_rule",
]
