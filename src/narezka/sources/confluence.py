"""A Confluence space read through its REST API (``narezka index confluence+https://…``).

The spelling is the space's own address with ``confluence+`` before it:

- **Cloud**: ``confluence+https://example.atlassian.net/wiki/spaces/KEY`` reads the REST API
  v2: ``GET /wiki/api/v2/spaces?keys=KEY`` for the space's id, then
  ``/wiki/api/v2/spaces/{id}/pages`` (cursor pages, ``_links.next``) for every page's id,
  title, parent and version, and ``/wiki/api/v2/pages/{id}?body-format=storage`` for the body
  of a page whose version is not the one staged. Auth: ``CONFLUENCE_USER`` (the account's
  e-mail) and ``CONFLUENCE_TOKEN`` (an API token) as Basic.
- **Data Center / Server**: ``confluence+https://wiki.example.com/display/KEY`` (a context path
  before ``/display`` is kept) reads ``/rest/api/space/KEY``, ``/rest/api/content?spaceKey=KEY``
  (``start``/``limit`` pages through ``_links.next``) and ``/rest/api/content/{id}?expand=
  body.storage,version``. Auth: ``CONFLUENCE_TOKEN`` alone, a personal access token sent as
  Bearer (with ``CONFLUENCE_USER``, Basic as on Cloud).

Each page is staged as HTML (``narezka.sources.confluence_storage``: macros' text kept) at the
path its ancestors' titles make (``Home/Setup.html``); a hit links to the page's web address.
An unchanged version number is neither fetched nor converted again (``live_staging``).

A page's **attachments** that narezka reads (PDF, Office, text; not images) are listed when the
page's version changed (Cloud ``/wiki/api/v2/pages/{id}/attachments``, Data Center
``/rest/api/content/{id}/child/attachment``), downloaded (each under the size cap; a redirect
to another host refused, so the token never leaves; Cloud's media host, where Cloud sends a
download, is asked without the token) and staged in the page's folder
(``Home/Setup/spec.pdf``: the page, then the file), converted like a local file; a hit links
to the page, and messages name it ``Setup › spec.pdf``. An unchanged page's attachments are
taken from the last refresh's record: one added without editing the page arrives with the
page's next version.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote, urlsplit

from narezka import environment
from narezka.errors import ConfigError, SourceUnavailableError
from narezka.formats import CONVERTED_SUFFIXES
from narezka.sources.base import CONFLUENCE_PREFIX, strip_credentials
from narezka.sources.confluence_storage import storage_page
from narezka.sources.live_http import TOO_LARGE, LiveClient, PageFailed, check_origin
from narezka.sources.live_staging import (
    Body,
    LivePage,
    LiveSource,
    kept_on_failure,
    previous_attachments,
    previous_pages,
    trail,
)

__all__ = ["CONFLUENCE_PREFIX", "ConfluenceSource"]

MAX_PAGES = 20_000
"""Pages of a space read at most; past it the rest is named in one warning."""
PAGE_LIMIT = 250
"""Pages asked for per request (Cloud allows 250; Data Center caps it lower itself)."""
_CLOUD = re.compile(r"^(?P<base>.*?/wiki)/spaces/(?P<key>[^/?#]+)")
_SERVER = re.compile(r"^(?P<base>.*?)/display/(?P<key>[^/?#]+)")
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".tif", ".tiff", ".svg", ".webp"})
ATTACHMENT_SUFFIXES = (CONVERTED_SUFFIXES | {".md", ".markdown", ".txt"}) - IMAGE_SUFFIXES
"""Attachments staged: what narezka reads, images aside (a diagram's pixels are no text)."""
CLOUD_MEDIA_HOSTS = frozenset({"api.media.atlassian.com"})
"""Where Confluence Cloud redirects an attachment's download (a signed URL: no token sent)."""
MAX_ATTACHMENTS = 200
"""Attachments of one page staged at most."""


class ConfluenceSource(LiveSource):
    """The pages of one Confluence space (see the module docstring)."""

    kind = "confluence"

    def _parse(self, spec: str) -> str:
        url = strip_credentials(spec.removeprefix(CONFLUENCE_PREFIX))
        parts = urlsplit(url)
        address = f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")
        found = _CLOUD.match(address) or _SERVER.match(address)
        if parts.scheme not in ("http", "https") or not parts.hostname or found is None:
            raise ConfigError(
                f"{CONFLUENCE_PREFIX}{url}: a Confluence space is "
                "confluence+https://site.atlassian.net/wiki/spaces/KEY (Cloud) or "
                "confluence+https://wiki.example.com/display/KEY (Data Center)"
            )
        self.cloud = found.re is _CLOUD
        self.base = found["base"]
        self.key = found["key"]
        where = "/spaces/" if self.cloud else "/display/"
        return f"{CONFLUENCE_PREFIX}{self.base}{where}{self.key}"

    def _client(self) -> LiveClient:
        env = self._environment()
        origin = check_origin(self.spec, self.base)
        token, user = env.confluence_token, env.confluence_user
        if token is None:
            raise SourceUnavailableError(
                self.spec, f"no token: set {environment.CONFLUENCE_TOKEN} (and, for Cloud, "
                f"{environment.CONFLUENCE_USER} to the account's e-mail)",
            )  # fmt: skip
        headers = {} if user is not None else {"Authorization": f"Bearer {token}"}
        auth = (user, token) if user is not None else None
        return LiveClient(
            self.spec, origin, headers=headers, auth=auth, limits=self.limits,
            token_variable=environment.CONFLUENCE_TOKEN,
            media_hosts=CLOUD_MEDIA_HOSTS if self.cloud else frozenset(),
        )  # fmt: skip

    def _listing(self, client: LiveClient, warnings: list[str]) -> tuple[
        dict[str, LivePage], Body
    ]:  # fmt: skip
        pages = self._cloud_pages(client) if self.cloud else self._server_pages(client)
        if len(pages) > MAX_PAGES:
            warnings.append(f"{self.spec}: over {MAX_PAGES:,} pages: the rest left out")
            pages = dict(list(pages.items())[:MAX_PAGES])
        pages.update(self._attachments(client, pages, warnings))

        def body(page: LivePage) -> bytes | None:
            def read() -> bytes | None:
                if page.download:
                    return self._file(client, page, warnings)
                return self._body(client, page, pages, warnings)

            return kept_on_failure(read, page, warnings)

        return pages, body

    def _attachments(
        self, client: LiveClient, pages: dict[str, LivePage], warnings: list[str]
    ) -> dict[str, LivePage]:
        """The attachments to stage: listed anew for a page whose version changed, taken
        from the record for the others."""
        old = previous_pages(self.state)
        found: dict[str, LivePage] = {}
        for page in list(pages.values()):
            if old.get(page.id, {}).get("version") == page.version:
                listed = previous_attachments(self.state, page)
            else:
                try:
                    listed = self._list_attachments(client, page)
                except PageFailed as exc:
                    warnings.append(f"{page.title}: attachments not listed: {exc.problem}")
                    listed = previous_attachments(self.state, page)
            found.update((item.id, item) for item in listed[:MAX_ATTACHMENTS])
        return found

    def _list_attachments(self, client: LiveClient, page: LivePage) -> list[LivePage]:
        """The page's attachments narezka reads, as the service lists them."""
        if self.cloud:
            url: str | None = f"{self.base}/api/v2/pages/{quote(page.id)}/attachments"
            params: dict[str, Any] | None = {"limit": PAGE_LIMIT}
        else:
            url = f"{self.base}/rest/api/content/{quote(page.id)}/child/attachment"
            params = {"limit": PAGE_LIMIT, "expand": "version"}
        listed: list[LivePage] = []
        while url is not None and len(listed) < MAX_ATTACHMENTS:
            answer = client.get(url, params, missing_ok=True) or {}
            for row in answer.get("results", ()):
                item = _attachment(row, page) if isinstance(row, dict) else None
                if item is not None:
                    listed.append(item)
            url, params = self._absolute(_next(answer)), None
        return listed

    def _file(self, client: LiveClient, page: LivePage, warnings: list[str]) -> bytes | None:
        """An attachment's bytes; None (named) when it is gone since it was listed."""
        data = client.download(self.base + page.download)
        if data is None:
            warnings.append(f"{page.name}: gone since the space was listed")
        return data

    def _cloud_pages(self, client: LiveClient) -> dict[str, LivePage]:
        api = f"{self.base}/api/v2"
        spaces = client.get(f"{api}/spaces", {"keys": self.key}) or {}
        found = [s for s in spaces.get("results", ()) if isinstance(s, dict)]
        if not found:
            raise SourceUnavailableError(self.spec, f"no space {self.key} the token can see")
        space_id = quote(str(found[0].get("id", "")))
        pages: dict[str, LivePage] = {}
        params: dict[str, Any] | None = {"limit": PAGE_LIMIT, "status": "current"}
        url: str | None = f"{api}/spaces/{space_id}/pages"
        while url is not None and len(pages) <= MAX_PAGES:
            answer = client.get(url, params) or {}
            for row in answer.get("results", ()):
                if isinstance(row, dict) and row.get("id") is not None:
                    page = self._page(row, row.get("parentId"))
                    pages[page.id] = page
            url, params = _next(answer), None  # the next link carries the cursor
        return pages

    def _server_pages(self, client: LiveClient) -> dict[str, LivePage]:
        api = f"{self.base}/rest/api"
        if client.get(f"{api}/space/{quote(self.key)}", missing_ok=True) is None:
            raise SourceUnavailableError(self.spec, f"no space {self.key} the token can see")
        pages: dict[str, LivePage] = {}
        params: dict[str, Any] | None = {
            "spaceKey": self.key, "type": "page", "status": "current",
            "expand": "version,ancestors", "limit": PAGE_LIMIT, "start": 0,
        }  # fmt: skip
        url: str | None = f"{api}/content"
        while url is not None and len(pages) <= MAX_PAGES:
            answer = client.get(url, params) or {}
            for row in answer.get("results", ()):
                if isinstance(row, dict) and row.get("id") is not None:
                    ancestors = [a for a in row.get("ancestors") or () if isinstance(a, dict)]
                    parent = ancestors[-1].get("id") if ancestors else None
                    page = self._page(row, parent)
                    pages[page.id] = page
            url, params = self._absolute(_next(answer)), None
        return pages

    def _absolute(self, link: str | None) -> str | None:
        """A Data Center ``next`` link: relative to the context path (the base), Cloud's to
        the host; one that already starts with the context path is taken as it is."""
        context = urlsplit(self.base).path
        if self.cloud or not link or not link.startswith("/"):
            return link
        return link if context and link.startswith(context + "/") else self.base + link

    def _page(self, row: dict[str, Any], parent: object) -> LivePage:
        version = row.get("version")
        number = version.get("number") if isinstance(version, dict) else None
        links = row.get("_links")
        webui = links.get("webui") if isinstance(links, dict) else None
        page_id = str(row["id"])
        link = self.base + webui if isinstance(webui, str) and webui.startswith("/") else ""
        return LivePage(
            id=page_id, title=str(row.get("title") or page_id), version=str(number),
            parent=str(parent) if parent is not None else None,
            link=link or f"{self.base}/pages/viewpage.action?pageId={quote(page_id)}",
            suffix=".html",
        )  # fmt: skip

    def _body(
        self,
        client: LiveClient,
        page: LivePage,
        pages: dict[str, LivePage],
        warnings: list[str],
    ) -> bytes | None:
        """The page's storage body as an HTML page; None (named) when it is past the cap
        or gone since it was listed."""
        if self.cloud:
            url, params = f"{self.base}/api/v2/pages/{quote(page.id)}", {"body-format": "storage"}
        else:
            url, params = (
                f"{self.base}/rest/api/content/{quote(page.id)}",
                {"expand": "body.storage,version"},
            )
        status, answer = client.ask("GET", url, params)
        if status == TOO_LARGE:
            warnings.append(f"{page.title}: over {client.limits.max_bytes:,} bytes: left out")
            return None
        if answer is None:
            warnings.append(f"{page.title}: gone since the space was listed")
            return None
        body = answer.get("body")
        storage = body.get("storage") if isinstance(body, dict) else None
        value = storage.get("value") if isinstance(storage, dict) else None
        return storage_page(page.title, value if isinstance(value, str) else "", trail(page, pages))


def _next(answer: dict[str, Any]) -> str | None:
    links = answer.get("_links")
    found = links.get("next") if isinstance(links, dict) else None
    return found if isinstance(found, str) and found else None


def _attachment(row: dict[str, Any], page: LivePage) -> LivePage | None:
    """One attachment as the service lists it (Cloud v2's ``downloadLink``, Data Center's
    ``_links.download``), None for one narezka does not read (an image, an unknown kind)."""
    title = PurePosixPath(str(row.get("title") or ""))
    media = row.get("mediaType") or (row.get("metadata") or {}).get("mediaType") or ""
    suffix = title.suffix.lower()
    links = row.get("_links") if isinstance(row.get("_links"), dict) else {}
    assert isinstance(links, dict)
    download = row.get("downloadLink") or links.get("download")
    if (
        row.get("id") is None
        or str(media).startswith("image/")
        or suffix not in ATTACHMENT_SUFFIXES
        or not isinstance(download, str)
        or not download.startswith("/")
    ):
        return None
    version = row.get("version")
    number = version.get("number") if isinstance(version, dict) else None
    return LivePage(
        id=f"att-{row['id']}", title=title.stem, version=str(number), parent=page.id,
        link=page.link, suffix=suffix, download=download, label=f"{page.title} › {title}",
    )  # fmt: skip
