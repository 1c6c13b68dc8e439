"""Chunk metadata beyond the split: zones and projects from path rules, the stored payload,
and the LLM-written context. (Secrets are redacted a floor lower, by
:mod:`narezka.parse.redaction`, where both the split stage and this one can reach it.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_exports
from narezka.enrich.payload import ParentSpan, Payload, Rules, chunk_payload, match_rule

if TYPE_CHECKING:
    from narezka.enrich.context_cache import ContextCache, context_cache_file
    from narezka.enrich.llm_context import ContextEstimate

# The names below this face that the commands use, loaded on first use: importing the
# face must not import what they need (an extra, a store, an LLM client).
_LAZY = {
    "ContextCache": "narezka.enrich.context_cache",
    "context_cache_file": "narezka.enrich.context_cache",
    "ContextEstimate": "narezka.enrich.llm_context",
}
__getattr__, __dir__ = lazy_exports(globals(), _LAZY)

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
