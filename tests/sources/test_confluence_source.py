"""A Confluence space read through the REST API, against a local fake of the documented
endpoints (``live_fakes``; no live service is reached): pages staged at their breadcrumbs with
macros' text kept, an unchanged version not fetched again, a deleted page removed, 401/429
handled by name, every answer capped, and the token kept out of the index, the state and logs."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from narezka.environment import current
from narezka.errors import ConfigError, SourceUnavailableError
from narezka.index import Index
from narezka.settings import Settings
from narezka.sources import ConfluenceSource, is_source_spec, open_source, source_from_record
from narezka.sources.live_http import LiveLimits
from sources.live_fakes import CPage, FakeConfluence, serve

SETTINGS = Settings().replace(embedder="hash", unit="chars", size=400, min_chars=0)

SETUP = (
    "<p>Install the kettle.</p>"
    '<ac:structured-macro ac:name="info"><ac:parameter ac:name="title">Heads up</ac:parameter>'
    "<ac:rich-text-body><p>Descale it monthly.</p></ac:rich-text-body></ac:structured-macro>"
    '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter>'
    "<ac:plain-text-body><![CDATA[brew --tea <oolong>]]></ac:plain-text-body>"
    "</ac:structured-macro>"
    '<p>See <ac:link><ri:page ri:content-title="Tea" /><ac:plain-text-link-body>'
    "<![CDATA[the tea page]]></ac:plain-text-link-body></ac:link> first.</p>"
)


def space() -> FakeConfluence:
    fake = FakeConfluence()
    fake.pages = {
        "101": CPage("Home", "<p>Welcome to engineering.</p>"),
        "102": CPage("Setup", SETUP, parent="101"),
        "103": CPage("Tea", "<p>Teas we stock.</p>", parent="101"),
        "104": CPage("Oolong", "<p>Oolong can be returned opened.</p>", parent="103"),
    }
    return fake


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    fake = FakeConfluence()
    monkeypatch.setenv("CONFLUENCE_USER", fake.user)
    monkeypatch.setenv("CONFLUENCE_TOKEN", fake.token)
    return fake.token


def page_bodies(fake: FakeConfluence) -> list[str]:
    return [
        p for p in fake.paths() if p.startswith("/wiki/api/v2/pages/") and "/attachments" not in p
    ]


def test_a_cloud_space_is_staged_and_only_a_changed_page_fetched_again(token: str) -> None:
    with serve(space()) as fake:
        source = open_source(f"confluence+{fake.url}/wiki/spaces/ENG/overview", env=current())
        assert isinstance(source, ConfluenceSource) and source.cloud
        first = source.refresh()
        assert first.fetched == (
            "Home.html", "Home/Setup.html", "Home/Tea.html", "Home/Tea/Oolong.html"
        )  # fmt: skip
        listings = [p for p in fake.paths() if "/spaces/1001/pages" in p]
        assert len(listings) == 2  # two results an answer: the cursor was followed
        setup = (source.staging / "Home" / "Setup.html").read_text()
        assert "Descale it monthly." in setup and "<pre>brew --tea &lt;oolong&gt;</pre>" in setup
        assert "the tea page</span> first." in setup
        assert "Heads up" not in setup and "bash" not in setup  # macro parameters dropped

        fake.log.clear()
        fake.pages["104"] = CPage("Oolong", "<p>Oolong: returns within 14 days.</p>", "103", 2)
        second = source.refresh()
        assert second.fetched == ("Home/Tea/Oolong.html",) and second.deleted == ()
        assert page_bodies(fake) == ["/wiki/api/v2/pages/104?body-format=storage"]

        fake.log.clear()
        fake.pages["103"] = CPage("Teas", "<p>Teas we stock.</p>", "101", 1)  # renamed: v1
        del fake.pages["102"]
        third = source.refresh()
        assert third.deleted == ("Home/Setup.html",) and third.fetched == ()
        assert sorted(third.moved) == [
            ("Home/Tea.html", "Home/Teas.html"), ("Home/Tea/Oolong.html", "Home/Teas/Oolong.html")
        ]  # fmt: skip
        assert page_bodies(fake) == []
        assert not (source.staging / "Home" / "Setup.html").exists()


def test_a_space_is_indexed_linked_and_the_token_kept_out_of_everything(
    token: str, private_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with serve(space()) as fake:
        spec = f"confluence+{fake.url}/wiki/spaces/ENG"
        with Index.create(spec, SETTINGS) as index:
            report = index.sync()
            hits = index.search("oolong returned opened", k=1, mode="bm25")
        assert report.files_new == 4
        assert hits[0].file_path == "Home/Tea/Oolong.html"
        assert hits[0].link == fake.url + "/wiki/spaces/ENG/pages/104"
        assert all(auth and auth.startswith("Basic ") for _, _, auth in fake.log)
    files = [p for p in private_cache.rglob("*") if p.is_file()]
    assert any(p.name == "state.json" for p in files)
    for path in files:
        assert token.encode() not in path.read_bytes(), path
    assert token not in caplog.text
    reopened = source_from_record(open_source(spec, env=current()).record(), "test")
    assert isinstance(reopened, ConfluenceSource) and token not in str(reopened.record())


@pytest.mark.parametrize("next_from_host", [False, True])
def test_a_data_center_space_reads_the_content_api_with_a_bearer_token(
    monkeypatch: pytest.MonkeyPatch, next_from_host: bool
) -> None:
    fake = space()
    fake.next_from_host = next_from_host
    with serve(fake) as fake:
        monkeypatch.setenv("CONFLUENCE_TOKEN", fake.token)
        source = ConfluenceSource(
            f"confluence+{fake.url}/confluence/display/ENG/Home", env=current()
        )
        assert not source.cloud and source.spec.endswith("/confluence/display/ENG")
        first = source.refresh()
        assert len(first.fetched) == 4 and "Home/Tea/Oolong.html" in first.fetched
        assert {auth for _, _, auth in fake.log} == {f"Bearer {fake.token}"}
        assert source.link("Home/Tea/Oolong.html", None) == fake.url + "/confluence/display/ENG/104"
        fake.log.clear()
        again = source.refresh()
        assert again.fetched == () and not [p for p in fake.paths() if "/content/1" in p]


def test_a_refused_or_missing_token_is_named_never_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve(space()) as fake:
        spec = f"confluence+{fake.url}/wiki/spaces/ENG"
        monkeypatch.setenv("CONFLUENCE_USER", fake.user)
        monkeypatch.setenv("CONFLUENCE_TOKEN", "wrong-token-XYZ")
        with pytest.raises(SourceUnavailableError, match=r"CONFLUENCE_TOKEN.*401") as refused:
            open_source(spec, env=current()).refresh()
        assert "wrong-token-XYZ" not in str(refused.value)
        monkeypatch.delenv("CONFLUENCE_TOKEN")
        with pytest.raises(SourceUnavailableError, match="no token: set CONFLUENCE_TOKEN"):
            open_source(spec, env=current()).refresh()
        assert len(fake.log) == 1  # no request without a token


def test_a_rate_limit_is_waited_out_within_a_bound(
    token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(space()) as fake:
        fake.throttle["/wiki/api/v2/spaces/1001/pages"] = 2
        done = open_source(f"confluence+{fake.url}/wiki/spaces/ENG", env=current()).refresh()
        assert len(done.fetched) == 4
        assert len([p for p in fake.paths() if "/spaces/1001/pages" in p]) == 2 + 2
        monkeypatch.setattr("narezka.sources.live_http.MAX_RETRIES", 2)
        fake.throttle["/wiki/api/v2/spaces"] = 10
        with pytest.raises(SourceUnavailableError, match="rate-limiting"):
            open_source(f"confluence+{fake.url}/wiki/spaces/ENG", env=current()).refresh()


def test_a_page_over_the_size_cap_is_named_and_left_out(token: str) -> None:
    fake = space()
    fake.pages["102"] = CPage("Setup", "<p>" + "x" * 5000 + "</p>", parent="101")
    with serve(fake) as fake:
        source = ConfluenceSource(
            f"confluence+{fake.url}/wiki/spaces/ENG",
            limits=LiveLimits(max_bytes=2000),
            env=current(),
        )
        done = source.refresh()
    assert "Home/Setup.html" not in done.fetched and len(done.fetched) == 3
    assert any("Setup: over 2,000 bytes: left out" in w for w in done.warnings)


@pytest.mark.parametrize(
    "spec",
    [
        "confluence+https://example.atlassian.net/wiki/overview",
        "confluence+ftp://host/wiki/spaces/K",
    ],
)
def test_a_spec_that_names_no_space_is_a_config_error(spec: str) -> None:
    assert is_source_spec(spec)
    with pytest.raises(ConfigError, match=r"confluence\+https://site\.atlassian\.net"):
        open_source(spec, env=current())


def test_a_token_goes_over_https_only_except_to_this_machine(token: str) -> None:
    with pytest.raises(SourceUnavailableError, match="https only"):
        open_source("confluence+http://wiki.example.org/wiki/spaces/ENG").refresh()


def test_a_new_page_under_a_renamed_pages_old_title_overwrites_nothing(token: str) -> None:
    with serve(space()) as fake:
        source = ConfluenceSource(f"confluence+{fake.url}/wiki/spaces/ENG", env=current())
        source.refresh()
        fake.pages["104"] = CPage("Oolong, old", "<p>Oolong can be returned opened.</p>", "103")
        fake.pages["099"] = CPage("Oolong", "<p>A new oolong page.</p>", parent="103")
        done = source.refresh()
        assert done.moved == (("Home/Tea/Oolong.html", "Home/Tea/Oolong, old.html"),)
        assert done.fetched == ("Home/Tea/Oolong.html",)
        tea = source.staging / "Home" / "Tea"
        assert "returned opened" in (tea / "Oolong, old.html").read_text()
        assert "A new oolong page." in (tea / "Oolong.html").read_text()


def test_a_changed_page_that_cannot_be_read_now_keeps_its_staged_copy(token: str) -> None:
    with serve(space()) as fake:
        source = ConfluenceSource(
            f"confluence+{fake.url}/wiki/spaces/ENG", limits=LiveLimits(max_bytes=2000),
            env=current(),
        )  # fmt: skip
        source.refresh()
        fake.pages["104"] = CPage("Oolong", "<p>" + "x" * 5000 + "</p>", "103", 2)
        done = source.refresh()
        assert done.fetched == () and done.deleted == ()
        assert "returned opened" in (source.staging / "Home/Tea/Oolong.html").read_text()
        fake.pages["104"] = CPage("Oolong", "<p>Back to normal.</p>", "103", 3)
        fake.log.clear()
        assert source.refresh().fetched == ("Home/Tea/Oolong.html",)  # asked again
