"""An index whose corpus is staged from a source (a git repository): its refresh before a
sync, and the links its hits carry (:mod:`narezka.sources` does the reading)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from narezka.index.syncing import IndexReport
from narezka.sources import Source, line_span

if TYPE_CHECKING:  # hits come from a search, which loads the search stack itself
    from narezka.search import Hit


def refresh(source: Source, report: IndexReport) -> None:
    """Bring the staging folder to the source's current version before the folder sync
    runs over it, and say in ``report`` what was fetched, moved and removed."""
    done = source.refresh()
    report.warnings.extend(done.warnings)
    report.source = {
        "spec": source.spec,
        "version": done.version,
        "fetched": list(done.fetched),
        "fetched_bytes": done.fetched_bytes,
        "moved": [list(pair) for pair in done.moved],
        "deleted": list(done.deleted),
    }


def with_links(hits: Sequence[Hit], source: Source, corpus: Path) -> list[Hit]:
    """``hits`` with the URL a reader opens (the file at the indexed commit, at the hit's
    lines where the stored offsets index the file's own text)."""
    texts: dict[str, str | None] = {}
    linked = []
    for hit in hits:
        if hit.file_path not in texts:
            texts[hit.file_path] = _text(corpus / hit.file_path)
        text = texts[hit.file_path]
        # A converted file's offsets index its Markdown, not the file: no lines for it.
        exact = text is not None and not hit.stale and text[hit.start : hit.end] == hit.text
        lines = line_span(text, hit.start, hit.end) if exact and text is not None else None
        linked.append(dataclasses.replace(hit, link=source.link(hit.file_path, lines)))
    return linked


def vault_links(hits: Sequence[Hit], vault: Path) -> list[Hit]:
    """``hits`` of an Obsidian vault with the link that opens the note in Obsidian
    (``obsidian://open?vault=NAME&file=PATH``, the note's path without ``.md``)."""
    base = f"obsidian://open?vault={quote(vault.resolve().name, safe='')}&file="
    return [
        dataclasses.replace(h, link=base + quote(h.file_path.removesuffix(".md"), safe=""))
        for h in hits
    ]


def _text(path: Path) -> str | None:
    """The document text as the chunk contract defines it (BOM gone, line ends LF)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    text = raw.decode("utf-8-sig", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")
