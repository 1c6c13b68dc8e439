"""The payload stored with every chunk's point, and the path rules that add zone and project.

Zones follow the seed pipeline by default: ``MEMORY.md`` is hot, ``memory/_archive/**`` cold,
everything else warm. Projects come from filename patterns. Both are configurable in
``narezka.toml`` (first matching rule wins).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from narezka.enrich.redaction import redacted_text
from narezka.globs import glob_regex
from narezka.types import Chunk

PREVIEW_CHARS = 200

DEFAULT_ZONES: tuple[tuple[str, str], ...] = (
    ("MEMORY.md", "hot"),
    ("**/MEMORY.md", "hot"),
    ("memory/_archive/**", "cold"),
    ("**/memory/_archive/**", "cold"),
    ("memory/*.md", "warm"),
)
DEFAULT_ZONE = "warm"


@dataclass(frozen=True, slots=True)
class Rules:
    """Ordered (glob, value) rules for zones and projects."""

    zones: tuple[tuple[str, str], ...] = DEFAULT_ZONES
    projects: tuple[tuple[str, str], ...] = ()
    default_zone: str = DEFAULT_ZONE
    default_project: str = field(default="")


def match_rule(path: str, rules: Sequence[tuple[str, str]], default: str) -> str:
    """The value of the first rule whose glob matches the POSIX path, else ``default``."""
    for pattern, value in rules:
        if glob_regex(pattern).match(path):
            return value
    return default


def chunk_payload(chunk: Chunk, rules: Rules) -> dict[str, Any]:
    """Everything search filters on or shows, plus what sync recovery needs.

    ``text`` is the chunk's span with its secrets redacted (``start``/``end`` still locate
    the span in the source); with redaction off (``--no-redact``) it is the span itself."""
    meta: Mapping[str, Any] = chunk.meta
    tags = meta.get("tags")
    text = redacted_text(chunk)
    return {
        "file_path": chunk.source,
        "section": " > ".join(chunk.section),
        "section_path": list(chunk.section),
        "zone": match_rule(chunk.source, rules.zones, rules.default_zone),
        "project": match_rule(chunk.source, rules.projects, rules.default_project),
        "mtime": meta.get("mtime", 0.0),
        "doc_hash": str(meta.get("doc_hash") or ""),
        "content_hash": chunk.content_hash,
        "text_preview": text[:PREVIEW_CHARS],
        "text": text,
        "url": chunk.url,
        "anchor": chunk.anchor,
        "anchors": list(meta.get("anchors") or ()),  # each merged section's, for anchor_for
        "start": chunk.start,
        "end": chunk.end,
        "chunk_index": chunk.index,
        "strategy": chunk.strategy,
        "category": str(meta.get("category") or ""),
        "archived": bool(meta.get("archived", False)),
        "tags": [str(t) for t in tags] if isinstance(tags, list) else [],
        "title": str(meta.get("title") or ""),
        "tokens": chunk.tokens,
        **_parent_fields(meta.get("parent")),
    }


def _parent_fields(parent: Any) -> dict[str, Any]:
    """A parent-child chunk's parent span and text, for ``search --expand parent``."""
    if not isinstance(parent, Mapping):
        return {}
    return {
        "parent_index": int(parent.get("index", 0)),
        "parent_start": int(parent.get("start", 0)),
        "parent_end": int(parent.get("end", 0)),
        "parent_text": str(parent.get("text", "")),
        "parent_section": [str(s) for s in parent.get("section") or ()],
    }
