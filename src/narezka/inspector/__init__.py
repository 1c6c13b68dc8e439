"""The chunk inspector: one self-contained HTML page showing where each chunk of a corpus
starts and ends, its breadcrumb, size against the limit and ``embed_text``, and two
strategies side by side (``narezka inspect``).

``model`` turns chunking runs into the page's data; ``page`` assembles a page from data and
the stylesheet and scripts in ``assets/`` (the evaluation report uses it too).
"""

from __future__ import annotations

from collections.abc import Sequence

from narezka.inspector.model import (
    InspectRun,
    SourceText,
    index_convert_cache,
    inspection_data,
    read_sources,
)
from narezka.pages import render_page, script_json
from narezka.tokens import TokenCounter


def inspector_page(
    runs: Sequence[InspectRun],
    sources: dict[str, SourceText],
    *,
    display: TokenCounter | None = None,
    title: str = "narezka inspect",
) -> str:
    """The inspector page for one run, or two compared side by side."""
    index, docs = inspection_data(runs, sources, display=display, title=title)
    return render_page("inspector", title, index, docs, scripts=["inspector.js"])


__all__ = [
    "InspectRun",
    "SourceText",
    "index_convert_cache",
    "inspection_data",
    "inspector_page",
    "read_sources",
    "render_page",
    "script_json",
]
