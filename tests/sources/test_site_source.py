"""A web site as a source, against a local server: pages under the start URL staged and
converted, re-fetched only when changed (ETag), gone pages removed, the crawl kept on its
host and under its caps, credentials sent to that host only and stored nowhere."""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from narezka.errors import ConfigError, SourceUnavailableError
from narezka.index import Index
from narezka.settings import Settings
from narezka.sources import SiteSource, open_source

SETTINGS = Settings().replace(embedder="hash", unit="chars", size=400, min_chars=0)


class Site:
    """Pages by path (bytes, content type), the requests seen, and special answers."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[bytes, str]] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.redirects: dict[str, str] = {}
        self.slow: set[str] = set()
        self.url = ""


def html(title: str, body: str, links: tuple[str, ...] = ()) -> tuple[bytes, str]:
    anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    page = f"<html><body><h1>{title}</h1><p>{body}</p><p>{anchors}</p></body></html>"
    return page.encode(), "text/html; charset=utf-8"


@contextlib.contextmanager
def serve(site: Site) -> Iterator[Site]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            site.requests.append((self.path, self.headers.get("Authorization")))
            if self.path in site.slow:
                time.sleep(2)
            if self.path in site.redirects:
                self.send_response(302)
                self.send_header("Location", site.redirects[self.path])
                self.end_headers()
                return
            if self.path not in site.pages:
                self.send_error(404)
                return
            body, kind = site.pages[self.path]
            tag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == tag:
                self.send_response(304)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("ETag", tag)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()


def handbook() -> Site:
    site = Site()
    site.pages["/docs/"] = html("Справочник", "Начало.", ("intro.html", "tea/oolong.html",
                                "/blog/post.html", "http://elsewhere.example/x.html"))  # fmt: skip
    site.pages["/docs/intro.html"] = html("Введение", "Доставка курьером.", ("./",))
    site.pages["/docs/tea/oolong.html"] = html("Улун", "Улун можно вернуть вскрытым.")
    site.pages["/blog/post.html"] = html("Блог", "Не из справочника.")
    return site


def test_pages_under_the_start_are_staged_and_only_changes_fetched_again() -> None:
    with serve(handbook()) as site:
        source = SiteSource(site.url + "/docs/")
        first = source.refresh()
        assert sorted(first.fetched) == ["index.html", "intro.html", "tea/oolong.html"]
        asked = [p for p, _ in site.requests]
        assert "/blog/post.html" not in asked  # outside the start's folder
        site.requests.clear()
        site.pages["/docs/intro.html"] = html("Введение", "Доставка и самовывоз.", ("./",))
        second = source.refresh()
        assert second.fetched == ("intro.html",) and second.deleted == ()
        del site.pages["/docs/tea/oolong.html"]
        third = source.refresh()
        assert third.deleted == ("tea/oolong.html",) and third.fetched == ()
        assert not (source.staging / "tea" / "oolong.html").exists()


def test_a_site_is_indexed_searched_and_linked_to_its_pages() -> None:
    with serve(handbook()) as site, Index.create(site.url + "/docs/", SETTINGS) as index:
        report = index.sync()
        hits = index.search("улун вернуть", k=1, mode="bm25")
    assert report.files_new == 3
    assert hits[0].file_path == "tea/oolong.html"
    assert hits[0].link == site.url + "/docs/tea/oolong.html"


def test_a_redirect_to_another_host_is_refused_by_name() -> None:
    site = handbook()
    site.redirects["/docs/intro.html"] = "http://elsewhere.example/steal"
    with serve(site) as site:
        done = SiteSource(site.url + "/docs/").refresh()
    assert "intro.html" not in done.fetched
    assert any("elsewhere.example" in w and "another host: refused" in w for w in done.warnings)


def test_a_page_over_the_size_cap_or_of_another_type_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("narezka.sources.site.PAGE_BYTES", 200)
    site = handbook()
    site.pages["/docs/intro.html"] = html("Большая", "x" * 500)
    site.pages["/docs/"] = html("С", "н", ("intro.html", "logo.png"))
    site.pages["/docs/logo.png"] = (b"\x89PNG", "image/png")
    with serve(site) as site:
        done = SiteSource(site.url + "/docs/").refresh()
    assert done.fetched == ("index.html",)
    assert any("intro.html: over 200 bytes" in w for w in done.warnings)
    assert any("image/png" in w for w in done.warnings)


def test_a_slow_page_times_out_and_is_kept_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(handbook()) as site:
        source = SiteSource(site.url + "/docs/")
        source.refresh()
        monkeypatch.setattr("narezka.sources.site.REQUEST_SECONDS", 0.5)
        site.slow.add("/docs/intro.html")
        done = source.refresh()
    assert (source.staging / "intro.html").is_file() and done.deleted == ()
    assert any("intro.html" in w and "kept as it was" in w for w in done.warnings)


def test_an_unreachable_site_is_named_and_nothing_staged_is_lost() -> None:
    with serve(handbook()) as site:
        source = SiteSource(site.url + "/docs/")
        source.refresh()
        url = site.url
    with pytest.raises(SourceUnavailableError, match=url):
        SiteSource(url + "/docs/").refresh()  # the server is gone
    assert (source.staging / "tea" / "oolong.html").is_file()


def test_credentials_go_to_the_host_only_and_are_stored_nowhere(private_cache: Path) -> None:
    secret = "s3cr3t-pass"
    with serve(handbook()) as site:
        url = site.url.replace("http://", f"http://bob:{secret}@") + "/docs/"
        source = open_source(url)
        source.refresh()
    assert all(auth and auth.startswith("Basic ") for _, auth in site.requests)
    assert secret not in source.spec and secret not in str(source.record())
    for path in private_cache.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("url", ["ftp://host/x", "https:///nohost"])
def test_a_url_that_names_no_site_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError):
        SiteSource(url)
