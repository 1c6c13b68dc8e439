"""A crawled site kept as a folder: what the crawl found, written where a folder sync reads it.

``stage_site`` crawls (``narezka.sources.crawl``) with what the last crawl stored, writes the
pages that changed, leaves the ones the server answered 304 for and the ones that failed for a
while, and deletes the ones the server says are gone or that no longer belong to the crawl, so
the folder sync that follows embeds only what changed upstream and deletes what went away.
Beside the pages, ``.narezka-site.json`` holds each page's URL, ETag, Last-Modified and digest
(never a credential: URLs are stored without them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from narezka.sources.base import read_state, write_state
from narezka.sources.crawl import CrawlLimits, CrawlReport, Seen, crawl, public_url, seen_from

__all__ = ["STATE_FILE", "SiteSync", "site_links", "stage_site"]

STATE_FILE = ".narezka-site.json"


@dataclass(frozen=True, slots=True)
class SiteSync:
    """What one crawl changed in the folder, and the crawl's own report."""

    written: tuple[str, ...]
    deleted: tuple[str, ...]
    links: dict[str, str]
    """Stored path -> the page's URL (the link a hit opens)."""
    report: CrawlReport


def _load(state: Path) -> dict[str, Seen]:
    rows = read_state(state)  # none yet (or a damaged one): every page is fetched again
    return {
        row["url"]: Seen(row["url"], row["path"], row["etag"], row["last_modified"], row["digest"])
        for row in rows.get("pages", ())
        if isinstance(row, dict) and {"url", "path", "etag", "last_modified", "digest"} <= set(row)
    }


def site_links(state: Path) -> dict[str, str]:
    """Stored path -> page URL, from the record a crawl left in ``state``."""
    return {seen.path: seen.url for seen in _load(state).values()}


def _inside(folder: Path, relative: str) -> Path | None:
    target = (folder / relative).resolve()
    return target if target.is_relative_to(folder.resolve()) else None


def stage_site(
    start: str,
    folder: Path,
    limits: CrawlLimits | None = None,
    progress: Callable[[int], None] | None = None,
    state: Path | None = None,
    auth: tuple[str, str] | None = None,
) -> SiteSync:
    """Bring ``folder`` up to date with the site under ``start``; what the crawl stores for
    the next one goes to ``state`` (default: :data:`STATE_FILE` in ``folder``)."""
    folder.mkdir(parents=True, exist_ok=True)
    state = state if state is not None else folder / STATE_FILE
    previous = _load(state)
    report = crawl(
        public_url(start),
        previous=previous,
        limits=limits or CrawlLimits(),
        progress=progress,
        auth=auth,
    )
    written: list[str] = []
    for page in report.pages:
        target = _inside(folder, page.path)
        if page.body is None or target is None:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(page.body)
        written.append(page.path)
    kept = {url for url, _ in report.kept}
    current = {p.url: p for p in report.pages}
    stored = seen_from(report.pages)
    stored.update({url: previous[url] for url in kept if url in previous})
    live_paths = {seen.path for seen in stored.values()}
    deleted: list[str] = []
    for url, seen in previous.items():
        if url in current or url in kept or seen.path in live_paths:
            continue
        target = _inside(folder, seen.path)
        if target is not None and target.is_file():
            target.unlink()  # only files this crawl wrote before: its own record names them
            deleted.append(seen.path)
    rows = [
        {"url": s.url, "path": s.path, "etag": s.etag, "last_modified": s.last_modified,
         "digest": s.digest}
        for s in sorted(stored.values(), key=lambda s: s.path)
    ]  # fmt: skip
    write_state(state, {"start": public_url(start), "pages": rows})
    links = {s.path: s.url for s in stored.values()}
    return SiteSync(tuple(written), tuple(deleted), links, report)
