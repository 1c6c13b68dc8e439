"""Local fakes of the live services' documented endpoints, on 127.0.0.1, for the live sources'
tests: Confluence Cloud's REST API v2 and Data Center's REST API, and the Notion API. Each
answers with the documented JSON shapes and paginates two results a page (``_links.next``;
``start_cursor``/``has_more``), checks the token, and logs every request (method, path with
query, Authorization) so a test counts what a re-sync fetched. No live service is reached.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

PER_PAGE = 2
"""Results per answer: small, so every listing paginates."""

Answer = tuple[int, Any]


@dataclass
class Fake:
    """What every fake shares: the token it accepts, the request log, rate-limit answers."""

    token: str = "tok-SECRET-1234567890"
    url: str = ""
    log: list[tuple[str, str, str | None]] = field(default_factory=list)
    """(method, path with query, Authorization header)."""
    throttle: dict[str, int] = field(default_factory=dict)
    """Path prefix -> how many 429s to answer before serving it."""
    retry_after: str = "0"
    fail: dict[str, list[int]] = field(default_factory=dict)
    """Path -> statuses to answer first, one a request (a 500, then a 502…), then served."""
    slow: dict[str, float] = field(default_factory=dict)
    """Path -> seconds to wait before answering (past the client's timeout)."""
    raw: dict[str, tuple[int, bytes, dict[str, str]]] = field(default_factory=dict)
    """Path -> (status, bytes, headers) served as they are: attachments, redirects."""

    def paths(self, method: str = "GET") -> list[str]:
        return [path for m, path, _ in self.log if m == method]

    def answer(self, method: str, path: str, query: dict[str, str], body: Any,
               auth: str | None) -> Answer:  # fmt: skip
        raise NotImplementedError


@contextlib.contextmanager
def serve(fake: Fake) -> Iterator[Fake]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def handle_one(self, method: str) -> None:
            auth = self.headers.get("Authorization")
            fake.log.append((method, self.path, auth))
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            extra: dict[str, str] = {}
            if parts.path in fake.slow:
                time.sleep(fake.slow[parts.path])
            failing = fake.fail.get(parts.path)
            if failing:
                self.send(failing.pop(0), json.dumps({"message": "down"}).encode(), {})
                return
            if parts.path in fake.raw:
                status, payload, headers = fake.raw[parts.path]
                self.send(status, payload, {"Content-Type": "application/octet-stream", **headers})
                return
            throttled = next((p for p, n in fake.throttle.items()
                              if n > 0 and parts.path.startswith(p)), None)  # fmt: skip
            if throttled is not None:
                fake.throttle[throttled] -= 1
                status, data, extra = (
                    429,
                    {"message": "slow down"},
                    {"Retry-After": fake.retry_after},
                )
            else:
                if isinstance(fake, FakeNotion) and self.headers.get("Notion-Version") is None:
                    status, data = 400, {"code": "missing_version"}
                else:
                    status, data = fake.answer(method, parts.path, query, body, auth)
            self.send(status, json.dumps(data).encode(), extra)

        def send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(payload)

        def do_GET(self) -> None:
            self.handle_one("GET")

        def do_POST(self) -> None:
            self.handle_one("POST")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


# ---- Confluence -----------------------------------------------------------------------------


@dataclass
class CPage:
    title: str
    body: str
    parent: str | None = None
    version: int = 1


@dataclass
class CFile:
    """An attachment: its name, media type and bytes (served at its download link)."""

    id: str
    title: str
    media: str
    data: bytes
    version: int = 1


@dataclass
class FakeConfluence(Fake):
    """A space ``ENG`` (id 1001). Cloud under ``/wiki`` (Basic ``user:token``), Data Center
    under the context path ``/confluence`` (Bearer ``token``)."""

    user: str = "me@example.org"
    pages: dict[str, CPage] = field(default_factory=dict)
    next_from_host: bool = False
    """Data Center's next link with the context path in it (some versions write it so)."""
    files: dict[str, list[CFile]] = field(default_factory=dict)
    """Page id -> its attachments (listed two an answer; each downloadable)."""

    def attach(self, page_id: str, *files: CFile) -> None:
        """Attach ``files`` to the page and serve their bytes at their download links, under
        both the Cloud (``/wiki``) and the Data Center (``/confluence``) context."""
        self.files.setdefault(page_id, []).extend(files)
        for f in files:
            for context in ("/wiki", "/confluence"):
                self.raw[context + self.download(page_id, f)] = (200, f.data, {})

    @staticmethod
    def download(page_id: str, f: CFile) -> str:
        return f"/download/attachments/{page_id}/{quote(f.title)}"

    def _files(self, page_id: str, query: dict[str, str], cloud: bool) -> Answer:
        start = int(query.get("cursor" if cloud else "start", "0"))
        found = self.files.get(page_id, [])
        rows = []
        for f in found[start : start + PER_PAGE]:
            link = self.download(page_id, f) + f"?version={f.version}"
            row: dict[str, Any] = {"id": f.id, "title": f.title,
                                   "version": {"number": f.version}}  # fmt: skip
            if cloud:
                row |= {"mediaType": f.media, "downloadLink": link}
            else:
                row |= {"metadata": {"mediaType": f.media}, "_links": {"download": link}}
            rows.append(row)
        links: dict[str, str] = {}
        if start + PER_PAGE < len(found):
            key = "cursor" if cloud else "start"
            base = (f"/wiki/api/v2/pages/{page_id}/attachments" if cloud
                    else f"/rest/api/content/{page_id}/child/attachment")  # fmt: skip
            links["next"] = f"{base}?{key}={start + PER_PAGE}"
        return 200, {"results": rows, "_links": links}

    def answer(self, method: str, path: str, query: dict[str, str], body: Any,
               auth: str | None) -> Answer:  # fmt: skip
        cloud = path.startswith("/wiki/")
        basic = "Basic " + base64.b64encode(f"{self.user}:{self.token}".encode()).decode()
        if auth != (basic if cloud else f"Bearer {self.token}"):
            return 401, {"message": "Unauthorized"}
        return self._cloud(path, query) if cloud else self._server(path, query)

    def _row(self, page_id: str, webui: str) -> dict[str, Any]:
        page = self.pages[page_id]
        return {"id": page_id, "title": page.title, "status": "current",
                "version": {"number": page.version}, "_links": {"webui": webui}}  # fmt: skip

    def _cloud(self, path: str, query: dict[str, str]) -> Answer:
        if path == "/wiki/api/v2/spaces":
            found = [{"id": "1001", "key": "ENG"}] if query.get("keys") == "ENG" else []
            return 200, {"results": found, "_links": {}}
        if path == "/wiki/api/v2/spaces/1001/pages":
            start = int(query.get("cursor", "0"))
            ids = sorted(self.pages)
            rows = []
            for page_id in ids[start : start + PER_PAGE]:
                row = self._row(page_id, f"/spaces/ENG/pages/{page_id}")
                rows.append({**row, "parentId": self.pages[page_id].parent, "spaceId": "1001"})
            links: dict[str, str] = {"base": self.url + "/wiki"}
            if start + PER_PAGE < len(ids):
                links["next"] = f"/wiki/api/v2/spaces/1001/pages?cursor={start + PER_PAGE}"
            return 200, {"results": rows, "_links": links}
        if path.startswith("/wiki/api/v2/pages/") and path.endswith("/attachments"):
            return self._files(path.split("/")[5], query, cloud=True)
        if path.startswith("/wiki/api/v2/pages/"):
            page_id = path.rsplit("/", 1)[1]
            if page_id not in self.pages or query.get("body-format") != "storage":
                return 404, {"message": "not found"}
            row = self._row(page_id, f"/spaces/ENG/pages/{page_id}")
            row["body"] = {"storage": {"value": self.pages[page_id].body,
                                       "representation": "storage"}}  # fmt: skip
            return 200, row
        return 404, {"message": "no such endpoint"}

    def _ancestors(self, page_id: str) -> list[dict[str, str]]:
        chain, parent = [], self.pages[page_id].parent
        while parent is not None:
            chain.append({"id": parent, "title": self.pages[parent].title})
            parent = self.pages[parent].parent
        return list(reversed(chain))

    def _server(self, path: str, query: dict[str, str]) -> Answer:
        if path == "/confluence/rest/api/space/ENG":
            return 200, {"key": "ENG", "name": "Engineering"}
        if path == "/confluence/rest/api/content":
            start = int(query.get("start", "0"))
            ids = sorted(self.pages)
            rows = [{**self._row(i, f"/display/ENG/{i}"), "ancestors": self._ancestors(i)}
                    for i in ids[start : start + PER_PAGE]]  # fmt: skip
            links = {"base": self.url + "/confluence", "context": "/confluence"}
            if start + PER_PAGE < len(ids):
                links["next"] = ("/confluence" if self.next_from_host else "") + (
                    "/rest/api/content?spaceKey=ENG&type=page&status=current"
                    f"&expand=version,ancestors&limit=2&start={start + 2}"
                )
            return 200, {"results": rows, "start": start, "limit": 2, "size": len(rows),
                         "_links": links}  # fmt: skip
        if path.startswith("/confluence/rest/api/content/") and path.endswith("/child/attachment"):
            return self._files(path.split("/")[5], query, cloud=False)
        if path.startswith("/confluence/rest/api/content/"):
            page_id = path.rsplit("/", 1)[1]
            if page_id not in self.pages:
                return 404, {"message": "not found"}
            row = self._row(page_id, f"/display/ENG/{page_id}")
            row["body"] = {"storage": {"value": self.pages[page_id].body}}
            return 200, row
        return 404, {"message": "no such endpoint"}


# ---- Notion ---------------------------------------------------------------------------------

DATABASE = "d" * 32


@dataclass
class NPage:
    title: str
    blocks: list[dict[str, Any]]
    parent: str = DATABASE
    """The database's id (a row) or a page's (a child page, named by a child_page block)."""
    edited: str = "2025-01-01T00:00:00.000Z"
    status: str = "Done"


def uuid(hex32: str) -> str:
    return f"{hex32[:8]}-{hex32[8:12]}-{hex32[12:16]}-{hex32[16:20]}-{hex32[20:]}"


def text(words: str, **marks: bool) -> list[dict[str, Any]]:
    return [{"type": "text", "plain_text": words, "annotations": marks, "href": None}]


def block(kind: str, words: str = "", block_id: str = "", **data: Any) -> dict[str, Any]:
    children = data.pop("children", None)
    return {"object": "block", "id": block_id or f"b-{kind}-{abs(hash(words)) % 10**8}",
            "type": kind, "has_children": bool(children), "_children": children or [],
            kind: {"rich_text": text(words), **data}}  # fmt: skip


@dataclass
class FakeNotion(Fake):
    """One database (``DATABASE``) whose rows, and their child pages, are ``pages``."""

    pages: dict[str, NPage] = field(default_factory=dict)
    inline: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """An inline database's id (32 hex digits) -> its rows' properties."""

    def page_object(self, page_id: str) -> dict[str, Any]:
        page = self.pages[page_id]
        parent = (
            {"type": "database_id", "database_id": uuid(DATABASE)}
            if page.parent == DATABASE
            else {"type": "page_id", "page_id": page.parent}
        )
        return {
            "object": "page", "id": page_id, "last_edited_time": page.edited,
            "archived": False, "in_trash": False, "parent": parent,
            "url": f"https://www.notion.so/{page.title.replace(' ', '-')}-"
                   f"{page_id.replace('-', '')}",
            "properties": {
                "Name": {"id": "title", "type": "title", "title": text(page.title)},
                "Status": {"id": "s", "type": "select", "select": {"name": page.status}},
            },
        }  # fmt: skip

    def answer(self, method: str, path: str, query: dict[str, str], body: Any,
               auth: str | None) -> Answer:  # fmt: skip
        if auth != f"Bearer {self.token}":
            return 401, {"object": "error", "status": 401, "code": "unauthorized"}
        missing = {"object": "error", "status": 404, "code": "object_not_found"}
        parts = path.strip("/").split("/")
        if method == "POST" and parts[:2] == ["v1", "databases"] and parts[3:] == ["query"]:
            rows_of = self.inline.get(parts[2].replace("-", ""))
            if rows_of is not None:
                found = [{"object": "page", "id": f"row-{n}", "properties": props}
                         for n, props in enumerate(rows_of)]  # fmt: skip
                return 200, self._list(found, body or {})
            if parts[2].replace("-", "") != DATABASE:
                return 404, missing
            rows = [i for i in sorted(self.pages) if self.pages[i].parent == DATABASE]
            return 200, self._list([self.page_object(i) for i in rows], body or {})
        if method == "GET" and parts[:2] == ["v1", "pages"] and len(parts) == 3:
            return (200, self.page_object(parts[2])) if parts[2] in self.pages else (404, missing)
        if method == "GET" and parts[:2] == ["v1", "blocks"] and parts[3:] == ["children"]:
            found = self._blocks(parts[2])
            if found is None:
                return 404, missing
            clean = [{k: v for k, v in b.items() if k != "_children"} for b in found]
            return 200, self._list(clean, query)
        return 404, missing

    def _blocks(self, block_id: str) -> list[dict[str, Any]] | None:
        if block_id in self.pages:
            return self.pages[block_id].blocks
        stack = [b for p in self.pages.values() for b in p.blocks]
        while stack:
            found = stack.pop()
            if found["id"] == block_id:
                return list(found.get("_children", []))
            stack.extend(found.get("_children", []))
        return None

    def _list(self, results: list[dict[str, Any]], ask: dict[str, Any]) -> dict[str, Any]:
        start = int(ask.get("start_cursor") or 0)
        more = start + PER_PAGE < len(results)
        cursor = str(start + PER_PAGE) if more else None
        return {"object": "list", "results": results[start : start + PER_PAGE],
                "has_more": more, "next_cursor": cursor}  # fmt: skip
