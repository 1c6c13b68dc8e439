"""A live service's pages kept as a folder: what Confluence and Notion sources share.

A source lists its pages (id, title, version, parent, the URL a reader opens) and hands them
to :func:`stage_pages`, which writes each page at the path its parents' titles make
(``Home/Setup.html``: the breadcrumbs), asking the source for the body of a page only when its
version is not the one staged. A page whose version is unchanged but whose place in the tree
moved is moved, not fetched; a page the service no longer lists is removed, only ever among
the files this source staged (its ``state.json`` names them). The state holds ids, versions,
paths and links: never a credential.

:class:`LiveSource` is the rest the two share once: their place in the cache (alone, or a
member of several sources), the token read from the environment at refresh, one client per
refresh, a page that fails for now kept as it was (:func:`kept_on_failure`), and hit links
read from the state.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from narezka import environment
from narezka.sources.base import (
    STATE_FILE,
    CachedSource,
    Refresh,
    read_state,
    safe_member,
    write_state,
)
from narezka.sources.live_http import DEFAULT_LIMITS, LiveClient, LiveLimits, PageFailed

__all__ = [
    "LivePage",
    "LiveSource",
    "kept_on_failure",
    "page_paths",
    "previous_attachments",
    "previous_pages",
    "stage_pages",
    "staged_links",
    "trail",
]

Body = Callable[["LivePage"], bytes | None]

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
    download: str = ""
    """An attachment's download path (Confluence): this "page" is a file of its parent's,
    staged in the parent's folder; its state row keeps what lists it again unfetched."""
    label: str = ""
    """How messages name it when its title alone would not (``Setup › spec.pdf``)."""

    @property
    def name(self) -> str:
        return self.label or self.title


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
    body: Body,
    warnings: list[str],
) -> Refresh:
    """Bring ``staging`` to ``pages`` (see the module docstring). ``body`` reads one page
    (None: it could not be, and ``warnings`` already says why); the state goes to ``state``.

    Pages that moved are set aside first and put in place last, so a page that now has the
    path another page had (a rename, then a new page under the old name) overwrites nothing
    still wanted."""
    staging.mkdir(parents=True, exist_ok=True)
    state.parent.mkdir(parents=True, exist_ok=True)  # a member's home is apart from its staging
    old = previous_pages(state)
    paths = {i: p for i, p in page_paths(pages).items() if _kept_safe(p, pages[i], warnings)}
    moving, changed = _plan(staging, old, pages, paths)
    aside = Path(tempfile.mkdtemp(prefix="moving-", dir=state.parent))
    for n, page_id in enumerate(moving):
        (staging / str(old[page_id]["path"])).replace(aside / str(n))
    live = set(paths.values())
    deleted = []
    for row in old.values():
        rel = str(row["path"])
        if rel not in live and safe_member(rel) is None and (staging / rel).is_file():
            (staging / rel).unlink()  # a file this source staged: its own record names it
            deleted.append(rel)
    for n, page_id in enumerate(moving):
        (aside / str(n)).replace(_place(staging / paths[page_id]))
    shutil.rmtree(aside, ignore_errors=True)
    fetched, size, stale = [], 0, {}
    for page_id in changed:
        data = body(pages[page_id])
        if data is None:  # named in warnings; a staged copy on its path stays as it was
            before = old.get(page_id, {}).get("path")
            if before == paths[page_id] and (staging / paths[page_id]).is_file():
                stale[page_id] = dict(old[page_id])
            else:
                paths.pop(page_id)
            continue
        _place(staging / paths[page_id]).write_bytes(data)
        fetched.append(paths[page_id])
        size += len(data)
    kept = {i: _row(pages[i], rel) for i, rel in paths.items()}
    kept.update(stale)
    write_state(state, {"kind": kind, "pages": kept})
    return Refresh(
        version=f"{len(kept)} pages",
        fetched=tuple(sorted(fetched)),
        moved=tuple((str(old[i]["path"]), paths[i]) for i in moving),
        deleted=tuple(sorted(deleted)),
        fetched_bytes=size,
        warnings=tuple(warnings),
    )


def _row(page: LivePage, path: str) -> dict[str, Any]:
    row: dict[str, Any] = {"path": path, "version": page.version, "link": page.link,
                           "children": list(page.children)}  # fmt: skip
    if page.download:
        row.update(title=page.title, suffix=page.suffix, parent=page.parent,
                   download=page.download)  # fmt: skip
    return row


def previous_attachments(state: Path, page: LivePage) -> list[LivePage]:
    """The attachments of ``page`` the last refresh staged, as it listed them (a page whose
    version did not change is not asked for its attachments again)."""
    found = []
    for i, row in previous_pages(state).items():
        if row.get("parent") == page.id and row.get("download") and "title" in row:
            title, suffix = str(row["title"]), str(row.get("suffix"))
            found.append(LivePage(
                id=i, title=title, version=str(row.get("version")), parent=page.id,
                link=page.link, suffix=suffix, download=str(row["download"]),
                label=f"{page.title} › {title}{suffix}",
            ))  # fmt: skip
    return found


def _kept_safe(path: str, page: LivePage, warnings: list[str]) -> bool:
    if (why := safe_member(path)) is None:
        return True
    warnings.append(f"{page.name}: {why}: left out")
    return False


def _plan(
    staging: Path,
    old: Mapping[str, Mapping[str, Any]],
    pages: Mapping[str, LivePage],
    paths: Mapping[str, str],
) -> tuple[list[str], list[str]]:
    """The ids of pages staged elsewhere (to move, not fetch) and of those to fetch (new,
    changed, or whose staged file is gone); the others stay as they are."""
    moving, changed = [], []
    for page_id, rel in paths.items():
        before = str(old.get(page_id, {}).get("path", ""))
        same = old.get(page_id, {}).get("version") == pages[page_id].version
        if same and safe_member(before) is None and (staging / before).is_file():
            if before != rel:
                moving.append(page_id)
        else:
            changed.append(page_id)
    return moving, changed


def _place(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def staged_links(state: Path) -> dict[str, str]:
    """Staged path -> the page's URL, from the record the last refresh left."""
    return {
        str(row["path"]): str(row["link"])
        for row in previous_pages(state).values()
        if row.get("link")
    }


def kept_on_failure(read: Callable[[], bytes | None], page: LivePage, warnings: list[str]) -> (
    bytes | None
):  # fmt: skip
    """``read()``, or None (the page's staged copy kept, the page named in ``warnings``)
    when it failed for now: a ``5xx`` or no answer after the retries, a refused redirect."""
    try:
        return read()
    except PageFailed as exc:
        warnings.append(f"{page.name}: {exc.problem}: kept as it was")
        return None


class LiveSource(CachedSource):
    """A live service's pages staged into the cache (see the module docstring). A subclass
    says what its spec names (``_parse``: the spec written the one way it keeps), how to
    reach the service (``_client``) and lists its pages (``_listing``: the pages and how to
    read one's body); a listing that fails stops the run before anything staged changes."""

    limits: LiveLimits
    requests: int
    """Requests the last refresh sent (the tests count them)."""
    _env: environment.Environment | None

    def __init__(
        self,
        spec: str,
        *,
        cache: Path | None = None,
        limits: LiveLimits = DEFAULT_LIMITS,
        env: environment.Environment | None = None,
        home: Path | None = None,
        staging: Path | None = None,
    ) -> None:
        self._settle(self._parse(spec), cache, home, staging)
        self.limits, self._env, self.requests = limits, env, 0

    def _parse(self, spec: str) -> str:
        """Take in what ``spec`` names (a ``ConfigError`` when it names nothing this source
        reads); the spec as it is kept, credentials stripped."""
        raise NotImplementedError

    def _environment(self) -> environment.Environment:
        """The environment given (the command read it at its top), else the process's."""
        return self._env if self._env is not None else environment.Environment()

    def _client(self) -> LiveClient:
        raise NotImplementedError

    def _listing(self, client: LiveClient, warnings: list[str]) -> tuple[
        dict[str, LivePage], Body
    ]:  # fmt: skip
        raise NotImplementedError

    @property
    def state(self) -> Path:
        return self.home / STATE_FILE

    def refresh(self) -> Refresh:
        warnings: list[str] = []
        with self._client() as client:
            try:
                pages, body = self._listing(client, warnings)
                return stage_pages(self.staging, self.state, self.kind, pages, body, warnings)
            finally:
                self.requests = client.requests
                self._links = None

    def _read_links(self) -> dict[str, str]:
        return staged_links(self.state)
