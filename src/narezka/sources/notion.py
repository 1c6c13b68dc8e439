"""A Notion database or page tree read through the Notion API (``narezka index notion://ID``).

``ID`` is a database's or a page's id (32 hex digits, dashed or not, or the page's URL that
ends with it). A **database** is its rows: ``POST /v1/databases/{id}/query`` (paginated by
``start_cursor``/``has_more``), each row a page whose properties head its text. A **page** is
itself and its child pages, transitively. Each page's blocks (``GET /v1/blocks/{id}/children``,
paginated, nested blocks below their parents) become Markdown (``notion_blocks``), staged at
the path its parents' titles make (``Handbook/Возврат.md``: the breadcrumbs); a hit links to the
page's Notion URL. A page whose ``last_edited_time`` is the one staged is not fetched again:
its child pages (remembered) are asked for with one ``GET /v1/pages/{id}`` each.

An **inline database** on a page (a ``child_database`` block) is that page's table: its rows
(``POST /v1/databases/{id}/query``) with their properties as columns, the title first. Notion
does not count an edit of such a row as an edit of the page: the table is read again when the
page's own ``last_edited_time`` changes.

Auth: ``NOTION_TOKEN`` (an integration's secret) as Bearer, with the ``Notion-Version``
header. ``notion+https://host/ID`` (``http`` to 127.0.0.1 only) reads another address of the
same API: a proxy, or the local fake the tests run.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from narezka import environment
from narezka.errors import ConfigError, SourceUnavailableError
from narezka.sources.base import NOTION_PREFIXES, strip_credentials
from narezka.sources.live_http import LiveClient, PageFailed, check_origin
from narezka.sources.live_staging import Body, LivePage, LiveSource, kept_on_failure, previous_pages
from narezka.sources.notion_blocks import plain_text, render

__all__ = ["NOTION_PREFIXES", "NotionSource"]

API = "https://api.notion.com"
NOTION_VERSION = "2022-06-28"
MAX_PAGES = 20_000
"""Pages one refresh stages at most; past it the rest is named in one warning."""
MAX_TABLE_ROWS = 1000
"""Rows of an inline database rendered at most; past it the table says it stops there."""
_ID = re.compile(r"([0-9a-f]{32})$")


def _page_id(text: str) -> str | None:
    found = _ID.search(text.replace("-", "").lower().rstrip("/"))
    if found is None:
        return None
    h = found.group(1)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class NotionSource(LiveSource):
    """A Notion database's rows or a page's tree (see the module docstring)."""

    kind = "notion"

    def _parse(self, spec: str) -> str:
        clean = strip_credentials(spec)
        if clean.startswith("notion://"):
            api, rest = API, clean.removeprefix("notion://")
        else:
            parts = urlsplit(clean.removeprefix("notion+"))
            api, rest = f"{parts.scheme}://{parts.netloc}", parts.path
        page_id = _page_id(rest)
        if page_id is None or not clean.startswith(NOTION_PREFIXES):
            raise ConfigError(
                f"{clean}: a Notion source is notion://<database or page id> (32 hex digits)"
            )
        self.api, self.id = api, page_id
        return f"notion://{page_id}" if api == API else f"notion+{api}/{page_id}"

    def _client(self) -> LiveClient:
        env = self._environment()
        origin = check_origin(self.spec, self.api)
        if env.notion_token is None:
            raise SourceUnavailableError(
                self.spec, f"no token: set {environment.NOTION_TOKEN} to an integration's "
                "secret, and share the page or database with that integration",
            )  # fmt: skip
        headers = {"Authorization": f"Bearer {env.notion_token}",
                   "Notion-Version": NOTION_VERSION}  # fmt: skip
        return LiveClient(
            self.spec, origin, headers=headers, limits=self.limits,
            token_variable=environment.NOTION_TOKEN,
        )  # fmt: skip

    def _listing(self, client: LiveClient, warnings: list[str]) -> tuple[
        dict[str, LivePage], Body
    ]:  # fmt: skip
        pages, bodies, failed = self._discover(client, warnings)

        def body(page: LivePage) -> bytes | None:
            found = bodies.get(page.id)
            if found is not None or page.id in failed:
                return found  # a failed one is named already: read once a refresh
            return kept_on_failure(lambda: self._text(client, page)[0], page, warnings)

        return pages, body

    def _roots(self, client: LiveClient) -> list[dict[str, Any]]:
        """The database's rows, else the page itself."""
        rows = _query(client, self.id, MAX_PAGES + 1)
        if rows is not None:
            return rows
        page = client.get(f"/v1/pages/{self.id}", missing_ok=True)
        if page is None:
            raise SourceUnavailableError(
                self.spec, "no page or database with this id is shared with the integration"
            )
        return [page]

    def _discover(
        self, client: LiveClient, warnings: list[str]
    ) -> tuple[dict[str, LivePage], dict[str, bytes], set[str]]:
        """Every page to stage, the bodies of those whose version changed (read here: their
        blocks name their child pages), and those that failed for now (named in
        ``warnings``; each keeps its staged copy and the children it had)."""
        old = previous_pages(self.state)
        queue: deque[tuple[dict[str, Any], str | None]] = deque(
            (raw, None) for raw in self._roots(client)
        )
        pages: dict[str, LivePage] = {}
        bodies: dict[str, bytes] = {}
        failed: set[str] = set()
        while queue:
            raw, parent = queue.popleft()
            if raw.get("archived") or raw.get("in_trash") or raw.get("object") != "page":
                continue
            page = _page(raw, parent)
            if page.id in pages:
                continue
            if len(pages) >= MAX_PAGES:
                warnings.append(f"{self.spec}: over {MAX_PAGES:,} pages: the rest left out")
                break
            before = old.get(page.id, {})
            if (
                before.get("version") == page.version
                and (self.staging / str(before["path"] if before else "")).is_file()
            ):
                children = tuple(str(c) for c in before.get("children", ()))
            else:
                try:
                    data, found = self._text(client, page, raw)
                except PageFailed as exc:
                    warnings.append(f"{page.title}: {exc.problem}: kept as it was")
                    failed.add(page.id)
                    data, found = None, [str(c) for c in before.get("children", ())]
                if data is not None:
                    bodies[page.id] = data
                children = tuple(found)
            pages[page.id] = replace(page, children=children)
            for child in children:
                if child not in pages:
                    found_page = client.get(f"/v1/pages/{child}", missing_ok=True)
                    if found_page is not None:
                        queue.append((found_page, page.id))
        return pages, bodies, failed

    def _text(
        self, client: LiveClient, page: LivePage, raw: dict[str, Any] | None = None
    ) -> tuple[bytes | None, list[str]]:
        """The page as Markdown (title, properties, blocks) and its child pages' ids."""

        def children(block_id: str) -> list[dict[str, Any]]:
            blocks: list[dict[str, Any]] = []
            params: dict[str, Any] = {"page_size": 100}
            while True:
                answer = client.get(f"/v1/blocks/{block_id}/children", params) or {}
                blocks += [b for b in answer.get("results", ()) if isinstance(b, dict)]
                cursor = answer.get("next_cursor")
                if not answer.get("has_more") or not isinstance(cursor, str):
                    return blocks
                params = {"page_size": 100, "start_cursor": cursor}

        def table(database_id: str) -> list[list[str]]:
            return _table(client, database_id)

        done = render(children(page.id), children, table)
        head = [f"# {page.title}", ""]
        head += _properties(raw) if raw is not None else []
        text = "\n".join(head) + "\n" + done.markdown
        return text.encode("utf-8"), done.child_pages


def _query(client: LiveClient, database_id: str, most: int) -> list[dict[str, Any]] | None:
    """Up to ``most`` rows of a database (``/query``, paginated); None when the id is not a
    database shared with the integration."""
    rows: list[dict[str, Any]] = []
    query: dict[str, Any] = {"page_size": 100}
    while len(rows) < most:
        answer = client.post(f"/v1/databases/{database_id}/query", query, missing_ok=True)
        if answer is None and not rows:
            return None
        answer = answer or {}
        rows += [r for r in answer.get("results", ()) if isinstance(r, dict)]
        cursor = answer.get("next_cursor")
        if not answer.get("has_more") or not isinstance(cursor, str):
            break
        query = {"page_size": 100, "start_cursor": cursor}
    return rows


def _table(client: LiveClient, database_id: str) -> list[list[str]]:
    """An inline database as table rows, its header first: the title column, then the other
    properties by name ([]: not shared with the integration, or no rows)."""
    rows = [r for r in _query(client, database_id, MAX_TABLE_ROWS + 1) or () if
            not r.get("archived") and not r.get("in_trash")]  # fmt: skip
    props_ok = [p for p in (r.get("properties") for r in rows) if isinstance(p, dict)]
    columns = _columns(props_ok)
    if not rows or not columns:
        return []
    table = [columns]
    for prop in props_ok[:MAX_TABLE_ROWS]:
        table.append([_cell(prop.get(name)) for name in columns])
    if len(props_ok) > MAX_TABLE_ROWS:
        table.append([f"(over {MAX_TABLE_ROWS:,} rows: the rest left out)"])
    return table


def _columns(props: list[dict[str, Any]]) -> list[str]:
    """The title column first, then the other properties by name."""
    title = next((n for p in props for n, v in p.items()
                  if isinstance(v, dict) and v.get("type") == "title"), None)  # fmt: skip
    others = sorted({n for p in props for n in p if n != title})
    return ([title] if title is not None else []) + others


def _cell(prop: object) -> str:
    if not isinstance(prop, dict):
        return ""
    if prop.get("type") == "title":
        return plain_text(prop.get("title"))
    return _value(prop.get(str(prop.get("type"))))


def _page(raw: dict[str, Any], parent: str | None) -> LivePage:
    page_id = str(raw.get("id", ""))
    props = raw.get("properties") if isinstance(raw.get("properties"), dict) else {}
    assert isinstance(props, dict)
    title = next(
        (plain_text(p.get("title")) for p in props.values()
         if isinstance(p, dict) and p.get("type") == "title"),
        "",
    )  # fmt: skip
    url = raw.get("url")
    link = url if isinstance(url, str) and url.startswith("https://") else ""
    return LivePage(
        id=page_id, title=title.strip() or "Untitled", version=str(raw.get("last_edited_time")),
        parent=parent, link=link or f"https://www.notion.so/{page_id.replace('-', '')}",
        suffix=".md",
    )  # fmt: skip


def _properties(raw: dict[str, Any]) -> list[str]:
    """A database row's properties besides its title, one line each (``Статус: Готово``)."""
    lines = []
    props = raw.get("properties")
    for name, prop in sorted(props.items() if isinstance(props, dict) else ()):
        if not isinstance(prop, dict) or prop.get("type") == "title":
            continue
        value = _value(prop.get(str(prop.get("type"))))
        if value:
            lines.append(f"- **{name}**: {value}")
    return [*lines, ""] if lines else []


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float | str):
        return str(value)
    if isinstance(value, list):
        if all(isinstance(v, dict) and "plain_text" in v for v in value):
            return plain_text(value)
        return ", ".join(filter(None, (_value(v) for v in value)))
    if isinstance(value, dict):
        if "name" in value:
            return str(value["name"])
        if "start" in value:
            return str(value["start"]) + (f" – {value['end']}" if value.get("end") else "")
    return ""
