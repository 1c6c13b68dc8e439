"""Content hashes the index keys on."""

from __future__ import annotations

import hashlib


def doc_hash(text: str) -> str:
    """The document's content hash, as chunk metadata, payloads and the manifest record it:
    search re-reads a file only while its hash is unchanged."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]
