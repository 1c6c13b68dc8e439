"""A documentation site on 127.0.0.1 for crawl tests: pages with ETag and Last-Modified
(answering 304 to conditional requests), redirects, a loop, a 404, a slow page, robots.txt and
a sitemap. Each test changes ``site.pages`` and reads ``site.log`` (path, status, headers)."""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Site:
    pages: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """path -> (content type, body)."""
    redirects: dict[str, str] = field(default_factory=dict)
    status: dict[str, int] = field(default_factory=dict)
    """path -> a status to answer instead (500, 410…)."""
    slow: dict[str, float] = field(default_factory=dict)
    log: list[tuple[str, int, dict[str, str]]] = field(default_factory=list)
    base: str = ""

    def html(self, path: str, body: str, head: str = "") -> None:
        page = f"<html><head><title>{path}</title>{head}</head><body>{body}</body></html>"
        self.pages[path] = ("text/html; charset=utf-8", page.encode())

    def downloads(self) -> list[str]:
        """Paths answered 200 with a body since the log was last cleared."""
        return [path for path, status, _ in self.log if status == 200]


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def answer(self, status: int, kind: str = "", body: bytes = b"", **extra: str) -> None:
            site.log.append((self.path, status, dict(self.headers)))
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name.replace("_", "-"), value)
            if kind:
                self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path
            if path in site.slow:
                time.sleep(site.slow[path])
            if path in site.status:
                self.answer(site.status[path], "text/plain", b"no")
            elif path in site.redirects:
                self.answer(302, Location=site.redirects[path])
            elif path in site.pages:
                kind, body = site.pages[path]
                etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.answer(304, ETag=etag)
                else:
                    self.answer(200, kind, body, ETag=etag)
            else:
                self.answer(404, "text/plain", b"not found")

    return Handler


@contextlib.contextmanager
def serve(site: Site) -> Iterator[Site]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    server.daemon_threads = True
    site.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
