"""A web site as a source: its pages under the start URL, crawled into the staging folder.

``narezka index https://docs.example.org/handbook/`` crawls the start page and what it links
to on the same host under the same folder (``narezka.sources.crawl``: robots.txt and its
sitemaps obeyed, canonical URLs, the same page read once, linked PDFs and Office files taken
too); the pages are staged as files (``intro.html``, ``tea/oolong.html``…) and converted like
any local file. A later refresh asks each page with its ``ETag`` / ``Last-Modified`` (a ``304``
is not fetched again), removes pages that are gone (``404``/``410``), and keeps a page that
failed for now (``narezka.sources.site_staging``).

The crawl never leaves its host: links elsewhere are not followed, a redirect elsewhere is
refused by name. Every request has a timeout, every page a size cap, the crawl a page cap;
credentials in the URL go, as a Basic header, to that host only and are stored nowhere.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urldefrag, urlsplit

from narezka.errors import ConfigError, SourceUnavailableError
from narezka.sources.base import (
    STATE_FILE,
    CachedSource,
    Refresh,
    split_credentials,
    strip_credentials,
)
from narezka.sources.crawl import CrawlLimits
from narezka.sources.site_staging import site_links, stage_site

MAX_PAGES = 5000
"""Pages one crawl reads at most: a site that generates links without end stops here."""
PAGE_BYTES = 8 * 2**20
"""A page larger than this is named and not staged."""
REQUEST_SECONDS = 30.0
"""A request that has not answered within this is given up (the page is kept as it was)."""


class SiteSource(CachedSource):
    """The pages of one site under a start URL (see the module docstring)."""

    kind = "site"

    def __init__(self, url: str, *, cache: Path | None = None, home: Path | None = None,
                 staging: Path | None = None) -> None:  # fmt: skip
        clean, user, password = split_credentials(url)
        parts = urlsplit(clean)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"{strip_credentials(url)}: a site is an http(s) URL with a host")
        self.start = urldefrag(clean)[0]
        self._auth = (user or "", password or "") if user or password else None
        self._settle(self.start, cache, home, staging)

    def refresh(self) -> Refresh:
        limits = CrawlLimits(max_pages=MAX_PAGES, max_bytes=PAGE_BYTES, timeout=REQUEST_SECONDS)
        synced = stage_site(
            self.start, self.staging, limits, state=self.home / STATE_FILE, auth=self._auth
        )
        report = synced.report
        self._links = synced.links
        if not report.pages:
            # The start page itself failed: the site is not there, and nothing staged goes.
            why = next((w for u, w in (*report.kept, *report.skipped) if u.rstrip("/")
                        == self.start.rstrip("/")), "no page could be read")  # fmt: skip
            raise SourceUnavailableError(self.start, strip_credentials(why))
        warnings = [f"{url}: {why}" for url, why in report.skipped]
        warnings += [f"{url}: {why}: kept as it was" for url, why in report.kept]
        size = sum(len(p.body) for p in report.pages if p.body is not None)
        return Refresh(
            version=f"{len(report.pages)} pages", fetched=tuple(sorted(synced.written)),
            deleted=tuple(sorted(synced.deleted)), fetched_bytes=size,
            warnings=tuple(strip_credentials(w) for w in warnings),
        )  # fmt: skip

    def _read_links(self) -> dict[str, str]:
        return site_links(self.home / STATE_FILE)
