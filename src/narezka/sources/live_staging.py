"""A live service's pages kept as a folder: what Confluence and Notion sources share.

A source lists its pages (id, title, version, parent, the URL a reader opens) and hands them
to :func:`stage_pages`, which writes each page at the path its parents' titles make
(``Home/Setup.html``: the breadcrumbs), asking the source for the body of a page only when its
version is not the one staged. A page whose version is unchanged but whose place in the tree
moved is moved, not fetched; a page the service no longer lists is removed, only ever among
the files this source staged (its ``state.json`` names them). The state holds ids, versions,
paths and links: never a credential.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from narezka.sources.base import Refresh, read_state, safe_member, write_state

__all__ = ["LivePage", "page_paths", "previous_pages", "stage_pages", "staged_links", "trail"]

MAX_DEPTH = 32
"""Parents followed for a page's path at most (a cycle in what a service says stops here)."""


@dataclass(frozen=True, slots=True)
class LivePage:
    """One page as the service lists it."""

    id: str
    title: str
    version: str
    """What changes when the page does (Confluence's version number, Notion's
    ``last_edited_time``): an unchanged one is not fetched again."""
    parent: str | None
    link: str
    suffix: str
    children: tuple[str, ...] = ()
    """Child pages the body named (Notion): kept so an unchanged page's children are still
    visited without fetching it."""


def title_component(title: str) -> str:
    """A page title as one path component (no separators, control characters or dots at
    the ends)."""
    text = re.sub(r'[\\/:*?"<>|\x00-\x1f]', "_", title).strip(" .") or "untitled"
    return text[:120]


def page_paths(pages: Mapping[str, LivePage]) -> dict[str, str]:
    """Each page's path: its parent's path (without the suffix) as its folder, its title as
    the file. Two pages on one path (the same title under one parent) keep apart: the one
    met later (by depth, then id) gets the id's start after its title."""
    stems: dict[str, str] = {}
    taken: set[str] = set()
    for page in sorted(pages.values(), key=lambda p: (len(trail(p, pages)), p.id)):
        parent = page.parent
        if parent is not None and parent in stems:
            folder = stems[parent]
        else:  # a parent not listed, or one in a cycle the service claims
            folder = "/".join(title_component(title) for title in trail(page, pages))
        base = f"{folder}/{title_component(page.title)}" if folder else title_component(page.title)
        stem, n, short = base, 1, page.id.replace("-", "")[:8]
        while (stem + page.suffix).lower() in taken:
            n += 1
            stem = f"{base} ({short})" if n == 2 else f"{base} ({short} {n})"
        taken.add((stem + page.suffix).lower())
        stems[page.id] = stem
    return {page_id: stems[page_id] + pages[page_id].suffix for page_id in pages}


def trail(page: LivePage, pages: Mapping[str, LivePage]) -> tuple[str, ...]:
    """The titles of ``page``'s ancestors, the root's first (its breadcrumbs)."""
    titles: list[str] = []
    seen, parent = {page.id}, page.parent
    while parent is not None and parent in pages and parent not in seen:
        if len(titles) >= MAX_DEPTH:
            break
        seen.add(parent)
        titles.append(pages[parent].title)
        parent = pages[parent].parent
    return tuple(reversed(titles))


def previous_pages(state: Path) -> dict[str, dict[str, Any]]:
    """The pages the last refresh staged, by id (``{}``: none, or a damaged record)."""
    pages = read_state(state).get("pages")
    if not isinstance(pages, dict):
        return {}
    return {str(k): v for k, v in pages.items() if isinstance(v, dict) and "path" in v}


def stage_pages(
    staging: Path,
    state: Path,
    kind: str,
    pages: Mapping[str, LivePage],
    body: Callable[[LivePage], bytes | None],
    warnings: list[str],
) -> Refresh:
    """Bring ``staging`` to ``pages`` (see the module docstring). ``body`` reads one page
    (None: it could not be, and ``warnings`` already says why); the state goes to ``state``."""
    staging.mkdir(parents=True, exist_ok=True)
    old = previous_pages(state)
    paths = page_paths(pages)
    fetched: list[str] = []
    moved: list[tuple[str, str]] = []
    kept: dict[str, dict[str, Any]] = {}
    size = 0
    for page_id, page in pages.items():
        rel = paths[page_id]
        if (why := safe_member(rel)) is not None:
            warnings.append(f"{page.title}: {why}: left out")
            continue
        before = old.get(page_id, {})
        source = staging / str(before.get("path", ""))
        if before.get("version") == page.version and before.get("path") and source.is_file():
            if before["path"] != rel:
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                source.replace(staging / rel)
                moved.append((str(before["path"]), rel))
        else:
            data = body(page)
            if data is None:
                continue
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_bytes(data)
            fetched.append(rel)
            size += len(data)
        kept[page_id] = {"path": rel, "version": page.version, "link": page.link,
                         "children": list(page.children)}  # fmt: skip
    live = {row["path"] for row in kept.values()}
    deleted = []
    for row in old.values():
        rel = str(row["path"])
        target = staging / rel
        if rel not in live and safe_member(rel) is None and target.is_file():
            target.unlink()  # a file this source staged: its own record names it
            deleted.append(rel)
    write_state(state, {"kind": kind, "pages": kept})
    return Refresh(
        version=f"{len(kept)} pages",
        fetched=tuple(sorted(fetched)),
        moved=tuple(moved),
        deleted=tuple(sorted(deleted)),
        fetched_bytes=size,
        warnings=tuple(warnings),
    )


def staged_links(state: Path) -> dict[str, str]:
    """Staged path -> the page's URL, from the record the last refresh left."""
    return {
        str(row["path"]): str(row["link"])
        for row in previous_pages(state).values()
        if row.get("link")
    }
