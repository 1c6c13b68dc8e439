"""Chunk metadata beyond the split: zones and projects from path rules, the stored payload,
and the LLM-written context. (Secrets are redacted a floor lower, by
:mod:`narezka.parse.redaction`, where both the split stage and this one can reach it.)"""

from narezka.enrich.payload import ParentSpan, Payload, Rules, chunk_payload, match_rule

__all__ = ["ParentSpan", "Payload", "Rules", "chunk_payload", "match_rule"]
