"""Helpers of the serving tests."""

from __future__ import annotations

from pathlib import Path


def exact_span(corpus: Path, hit: dict[str, object]) -> bool:
    """Whether a served hit's text is exactly its span of the file."""
    text = (corpus / str(hit["file_path"])).read_text(encoding="utf-8")
    return text[int(str(hit["start"])) : int(str(hit["end"]))] == hit["text"]
