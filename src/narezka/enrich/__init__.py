"""Chunk metadata beyond the split: zones and projects from path rules, the stored payload,
and the redaction of secrets from everything embedded, stored or served."""

from narezka.enrich.payload import ParentSpan, Payload, Rules, chunk_payload, match_rule
from narezka.enrich.redaction import find_secrets, redact, redact_span

__all__ = [
    "ParentSpan",
    "Payload",
    "Rules",
    "chunk_payload",
    "find_secrets",
    "match_rule",
    "redact",
    "redact_span",
]
