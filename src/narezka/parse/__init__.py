"""The parse stage: a document's block map (headings, fences, tables, front matter…),
sentence boundaries (Russian- and English-aware), chat transcripts, and sanitization."""

from narezka.parse.chat import looks_like_chat, parse_chat
from narezka.parse.markdown import (
    block_at,
    parse_blocks,
    parse_blocks_reference,
    parse_document,
    plain_document,
    split_front_matter,
)
from narezka.parse.redaction import redacted_text
from narezka.parse.sanitize import needs_sanitizing, removed_characters, sanitize, trim_whitespace
from narezka.parse.sentences import sentence_ends, sentence_spans
from narezka.parse.syntax import heading_title, slugify

__all__ = [
    "block_at",
    "heading_title",
    "looks_like_chat",
    "needs_sanitizing",
    "parse_blocks",
    "parse_blocks_reference",
    "parse_chat",
    "parse_document",
    "plain_document",
    "redacted_text",
    "removed_characters",
    "sanitize",
    "sentence_ends",
    "sentence_spans",
    "slugify",
    "split_front_matter",
    "trim_whitespace",
]
