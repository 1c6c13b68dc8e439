"""Chunk metadata beyond the split: zones and projects from path rules, the stored payload."""

from narezka.enrich.payload import Rules, chunk_payload, match_rule

__all__ = ["Rules", "chunk_payload", "match_rule"]
