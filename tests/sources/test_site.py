"""A crawled site kept as a folder: written, kept, deleted as the site changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from narezka.sources.crawl import CrawlLimits
from narezka.sources.site_staging import STATE_FILE, stage_site
from sources.site_server import Site, serve

FAST = CrawlLimits(rate=0, timeout=2.0)


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    with serve(s) as served:
        links = "".join(f'<a href="p{n}.html">{n}</a>' for n in range(20))
        s.html("/kb/", links)
        for n in range(20):
            s.html(f"/kb/p{n}.html", f"<h1>Page {n}</h1><p>Text of page {n}.</p>")
        yield served


def test_a_resync_writes_the_changed_page_deletes_the_gone_and_keeps_the_failing(
    site: Site, tmp_path: Path
) -> None:
    folder = tmp_path / "staged"
    first = stage_site(site.base + "/kb/", folder, FAST)
    assert len(first.written) == 21 and first.deleted == ()
    assert first.links["p3.html"] == site.base + "/kb/p3.html"
    site.html("/kb/p3.html", "<h1>Page 3</h1><p>New text.</p>")
    site.status["/kb/p4.html"] = 404
    site.status["/kb/p5.html"] = 500
    site.log.clear()
    second = stage_site(site.base + "/kb/", folder, FAST)
    assert second.written == ("p3.html",)
    assert second.deleted == ("p4.html",)
    assert "New text" in (folder / "p3.html").read_text()
    assert not (folder / "p4.html").exists()
    assert "Text of page 5" in (folder / "p5.html").read_text()
    assert [p for p in site.downloads() if p.startswith("/kb/")] == ["/kb/p3.html"]


def test_a_file_the_crawl_did_not_write_is_never_deleted(site: Site, tmp_path: Path) -> None:
    folder = tmp_path / "staged"
    stage_site(site.base + "/kb/", folder, FAST)
    (folder / "mine.md").write_text("# Mine\n")
    site.status["/kb/p1.html"] = 410
    stage_site(site.base + "/kb/", folder, FAST)
    assert (folder / "mine.md").exists()
    assert not (folder / "p1.html").exists()


def test_the_record_holds_no_credentials(site: Site, tmp_path: Path) -> None:
    folder = tmp_path / "staged"
    stage_site(site.base.replace("//", "//ann:s3cret@") + "/kb/", folder, FAST)
    record = (folder / STATE_FILE).read_text()
    assert "s3cret" not in record and "ann@" not in record


def test_a_damaged_record_means_a_full_crawl_not_a_failure(site: Site, tmp_path: Path) -> None:
    folder = tmp_path / "staged"
    stage_site(site.base + "/kb/", folder, FAST)
    (folder / STATE_FILE).write_text("{not json")
    again = stage_site(site.base + "/kb/", folder, FAST)
    assert len(again.written) == 21
