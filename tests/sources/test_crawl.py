"""The crawler against a site served on 127.0.0.1 (tests/sources/site_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.sources.crawl import CrawlLimits, Page, crawl, page_path, public_url, seen_from
from sources.site_server import Site, serve

FAST = CrawlLimits(rate=0, timeout=2.0, concurrency=2)


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    with serve(s) as served:
        b = served.base
        s.html(
            "/docs/",
            '<a href="guide/">Guide</a> <a href="api.html#x">API</a> '
            '<a href="/blog/">Blog</a> <a href="https://example.org/">out</a> '
            '<a href="private/x.html">private</a> <a href="manual.pdf">PDF</a> '
            '<a href="old.html">old</a> <a href="missing.html">gone</a> '
            '<a href="loop-a.html">loop</a> <a href="away.html">away</a> '
            '<a href="mailto:a@b.c">mail</a> <a href="copy.html">copy</a>',
        )
        s.html("/docs/guide/", "<h1>Guide</h1><p>Install with pip.</p>")
        s.html("/docs/api.html", "<h1>API</h1><p>Call search().</p>")
        s.html(
            "/docs/copy.html",
            "<h1>API</h1><p>Call search().</p>",
            head=f'<link rel="canonical" href="{b}/docs/api.html">',
        )
        s.html("/docs/new.html", "<h1>New</h1><p>Moved here.</p>")
        s.html("/docs/private/x.html", "<p>secret</p>")
        s.html("/docs/orphan.html", "<h1>Orphan</h1><p>Only the sitemap knows me.</p>")
        s.html("/blog/", "<p>blog</p>")
        s.pages["/docs/manual.pdf"] = ("application/pdf", b"%PDF-1.4 fake")
        s.pages["/robots.txt"] = (
            "text/plain",
            f"User-agent: *\nDisallow: /docs/private/\nSitemap: {b}/docs/sitemap.xml\n".encode(),
        )
        s.pages["/docs/sitemap.xml"] = (
            "application/xml",
            f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{b}/docs/orphan.html</loc></url></urlset>".encode(),
        )
        s.redirects["/docs/old.html"] = "/docs/new.html"
        s.redirects["/docs/loop-a.html"] = "/docs/loop-b.html"
        s.redirects["/docs/loop-b.html"] = "/docs/loop-a.html"
        s.redirects["/docs/away.html"] = "https://example.org/elsewhere"
        yield served


def _paths(report_pages: list[Page]) -> set[str]:
    return {p.path for p in report_pages}


def test_a_first_crawl_takes_the_site_and_nothing_else(site: Site) -> None:
    report = crawl(site.base + "/docs/", limits=FAST)
    assert _paths(report.pages) == {
        "index.html",
        "guide/index.html",
        "api.html",
        "new.html",
        "orphan.html",
        "manual.pdf",
    }
    skipped = dict(report.skipped)
    assert skipped[site.base + "/docs/private/x.html"] == "robots.txt disallows it"
    assert skipped[site.base + "/docs/loop-a.html"] == "redirects in a loop"
    assert skipped[site.base + "/docs/away.html"].startswith("redirects to another host: refused")
    assert skipped[site.base + "/docs/missing.html"] == "not found"
    assert skipped[site.base + "/docs/copy.html"] == "the same page as one already read"
    asked = {path for path, _, _ in site.log}
    assert "/blog/" not in asked and "/docs/private/x.html" not in asked
    assert all(h.get("User-Agent") == "narezka" for _, _, h in site.log)


def test_which_copy_is_kept_does_not_depend_on_which_answers_first(site: Site) -> None:
    # api.html is linked before its copy; it answering last must not change the report.
    site.slow["/docs/api.html"] = 0.3
    report = crawl(site.base + "/docs/", limits=CrawlLimits(rate=0, timeout=2.0, concurrency=8))
    skipped = dict(report.skipped)
    assert skipped[site.base + "/docs/copy.html"] == "the same page as one already read"
    assert site.base + "/docs/api.html" not in skipped
    assert [p.url for p in report.pages if p.path == "api.html"] == [site.base + "/docs/api.html"]


def test_a_second_crawl_of_an_unchanged_site_downloads_nothing(site: Site) -> None:
    first = crawl(site.base + "/docs/", limits=FAST)
    site.log.clear()
    second = crawl(site.base + "/docs/", previous=seen_from(first.pages), limits=FAST)
    assert _paths(second.pages) == _paths(first.pages)
    assert second.fetched == 0
    assert second.not_modified == len(first.pages)
    assert set(site.downloads()) <= {"/robots.txt", "/docs/sitemap.xml"}


def test_one_changed_page_is_the_only_one_downloaded(site: Site) -> None:
    first = crawl(site.base + "/docs/", limits=FAST)
    site.html("/docs/api.html", "<h1>API</h1><p>Call search(k=5).</p>")
    site.log.clear()
    second = crawl(site.base + "/docs/", previous=seen_from(first.pages), limits=FAST)
    assert [p.path for p in second.pages if p.body is not None] == ["api.html"]
    assert b"k=5" in next(p.body for p in second.pages if p.body is not None)


def test_a_deleted_page_is_gone_and_a_failing_one_is_kept(site: Site) -> None:
    first = crawl(site.base + "/docs/", limits=FAST)
    site.status["/docs/guide/"] = 410
    site.status["/docs/api.html"] = 503
    second = crawl(site.base + "/docs/", previous=seen_from(first.pages), limits=FAST)
    assert second.gone == [site.base + "/docs/guide/"]
    assert second.kept == [(site.base + "/docs/api.html", "answered HTTP 503")]
    assert "api.html" not in _paths(second.pages)


def test_a_page_no_link_reaches_any_more_is_asked_for_again(site: Site) -> None:
    first = crawl(site.base + "/docs/", limits=FAST)
    site.html("/docs/", '<a href="guide/">Guide</a>')
    del site.pages["/docs/sitemap.xml"]
    del site.pages["/docs/orphan.html"]
    second = crawl(site.base + "/docs/", previous=seen_from(first.pages), limits=FAST)
    assert site.base + "/docs/orphan.html" in second.gone
    assert "api.html" in _paths(second.pages)  # still served: kept, though unlinked


def test_a_slow_page_is_named_and_the_crawl_goes_on(site: Site) -> None:
    site.slow["/docs/api.html"] = 3.0
    report = crawl(site.base + "/docs/", limits=CrawlLimits(rate=0, timeout=0.5))
    assert dict(report.skipped)[site.base + "/docs/api.html"] == "no answer in 0.5 s"
    assert "guide/index.html" in _paths(report.pages)


def test_a_page_over_the_size_cap_is_named(site: Site) -> None:
    site.html("/docs/guide/", "<p>" + "x" * 50_000 + "</p>")
    report = crawl(site.base + "/docs/", limits=CrawlLimits(rate=0, max_bytes=10_000))
    assert dict(report.skipped)[site.base + "/docs/guide/"] == "over 10,000 bytes"


def test_the_page_limit_holds(site: Site) -> None:
    report = crawl(site.base + "/docs/", limits=CrawlLimits(rate=0, max_pages=2))
    assert len(report.pages) == 2
    assert any(why.startswith("past the limit of 2 pages") for _, why in report.skipped)


def test_credentials_in_the_url_are_never_sent_or_kept(site: Site) -> None:
    start = site.base.replace("http://", "http://reader:hunter2@") + "/docs/"
    report = crawl(start, limits=FAST)
    assert report.pages
    assert all("Authorization" not in h for _, _, h in site.log)
    assert not any("hunter2" in p.url for p in report.pages)
    assert public_url("https://u:p@host:8443/a?b#c") == "https://host:8443/a?b#c"


def test_a_sitemap_with_a_dtd_is_not_parsed(site: Site) -> None:
    site.pages["/docs/sitemap.xml"] = (
        "application/xml",
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><urlset><url><loc>'
        + site.base.encode()
        + b"/docs/orphan.html</loc></url></urlset>",
    )
    report = crawl(site.base + "/docs/", limits=FAST)
    assert "orphan.html" not in _paths(report.pages)


@given(st.text(alphabet="abc/.%2e\\?=&", max_size=40))
def test_a_stored_page_path_never_climbs_out(path: str) -> None:
    for html in (True, False):
        stored = page_path("https://h/" + path, html)
        assert not stored.startswith("/")
        assert ".." not in stored.split("/")
        assert stored and "\x00" not in stored
