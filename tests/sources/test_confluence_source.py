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
from sources.live_fakes import CFile, CPage, FakeConfluence, serve

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


NO_WAIT = LiveLimits(retry_delays=(0.0, 0.0))
"""Two retries, as by default, without the 1 s and 2 s waits."""


def spec_pdf() -> CFile:
    return CFile("9001", "Спецификация.pdf", "application/pdf", b"%PDF-1.4 not really")


@pytest.mark.parametrize("cloud", [True, False])
def test_attachments_are_staged_beside_their_page_images_skipped(
    token: str, monkeypatch: pytest.MonkeyPatch, cloud: bool
) -> None:
    fake = space()
    fake.attach(
        "102",
        spec_pdf(),
        CFile("9002", "schema.png", "image/png", b"\x89PNG"),
        CFile("9003", "сроки.csv", "text/csv", "Город,Срок\nМосква,1 день\n".encode()),
        CFile("9004", "tool.exe", "application/octet-stream", b"MZ"),
    )
    with serve(fake) as fake:
        monkeypatch.setenv("CONFLUENCE_TOKEN", fake.token)
        if not cloud:
            monkeypatch.delenv("CONFLUENCE_USER")
        where = "/wiki/spaces/ENG" if cloud else "/confluence/display/ENG"
        source = ConfluenceSource(f"confluence+{fake.url}{where}", env=current(), limits=NO_WAIT)
        first = source.refresh()
        assert "Home/Setup/Спецификация.pdf" in first.fetched
        assert "Home/Setup/сроки.csv" in first.fetched
        assert not any(p.endswith((".png", ".exe")) for p in first.fetched)
        staged = source.staging / "Home" / "Setup" / "Спецификация.pdf"
        assert staged.read_bytes() == b"%PDF-1.4 not really"
        assert source.link("Home/Setup/сроки.csv", None) == source.link("Home/Setup.html", None)
        fake.log.clear()
        assert source.refresh().fetched == ()
        assert not [p for p in fake.paths() if "attach" in p]  # unchanged: not listed again

        fake.pages["102"].version = 2  # an edit, and the PDF's new version
        fake.files["102"][0].version, fake.files["102"][0].data = 2, b"%PDF-1.4 v2"
        fake.attach("102")  # (serves nothing new: the same download path)
        fake.raw[("/wiki" if cloud else "/confluence") + fake.download("102", spec_pdf())] = (
            200, b"%PDF-1.4 v2", {}
        )  # fmt: skip
        third = source.refresh()
        assert sorted(third.fetched) == ["Home/Setup.html", "Home/Setup/Спецификация.pdf"]
        assert staged.read_bytes() == b"%PDF-1.4 v2"

        del fake.files["102"][0]
        fake.pages["102"].version = 3
        assert "Home/Setup/Спецификация.pdf" in source.refresh().deleted


def test_an_attachment_over_the_cap_or_redirected_elsewhere_is_named_and_left_out(
    token: str,
) -> None:
    fake = space()
    big = CFile("9005", "big.pdf", "application/pdf", b"x" * 5000)
    fake.attach("102", spec_pdf(), big)
    with serve(fake) as fake:
        fake.raw["/wiki" + fake.download("102", spec_pdf())] = (
            302, b"", {"Location": "https://media.example.net/steal"}
        )  # fmt: skip
        source = ConfluenceSource(
            f"confluence+{fake.url}/wiki/spaces/ENG", env=current(),
            limits=LiveLimits(max_bytes=2000, retry_delays=(0.0, 0.0)),
        )  # fmt: skip
        done = source.refresh()
    assert not any("Setup/" in p for p in done.fetched) and "Home/Setup.html" in done.fetched
    assert any("Setup › Спецификация.pdf: " in w and "refused a redirect to media.example.net"
               in w for w in done.warnings)  # fmt: skip
    assert any("Setup › big.pdf: " in w and "over 2,000 bytes" in w for w in done.warnings)
    assert not any(auth for _, path, auth in fake.log if "media.example" in path)


def test_a_page_that_fails_for_now_keeps_its_staged_copy_after_two_retries(
    token: str,
) -> None:
    with serve(space()) as fake:
        source = ConfluenceSource(
            f"confluence+{fake.url}/wiki/spaces/ENG", env=current(), limits=NO_WAIT
        )
        source.refresh()
        fake.pages["104"] = CPage("Oolong", "<p>Oolong: returns within 14 days.</p>", "103", 2)
        fake.pages["103"] = CPage("Tea", "<p>Teas we sell.</p>", "101", 2)
        fake.fail["/wiki/api/v2/pages/104"] = [500, 502, 504]
        fake.fail["/wiki/api/v2/pages/103"] = [500, 503]  # the 503 waits its Retry-After
        fake.log.clear()
        done = source.refresh()
        assert done.fetched == ("Home/Tea.html",) and done.deleted == ()
        assert page_bodies(fake).count("/wiki/api/v2/pages/104?body-format=storage") == 3
        assert [w for w in done.warnings if "Oolong" in w] == [
            "Oolong: /wiki/api/v2/pages/104: answered 504 (3 tries): kept as it was"
        ]
        assert "returned opened" in (source.staging / "Home/Tea/Oolong.html").read_text()
        done = source.refresh()  # the service is back: the page is asked for again
        assert done.fetched == ("Home/Tea/Oolong.html",)
        assert "14 days" in (source.staging / "Home/Tea/Oolong.html").read_text()


def test_a_page_that_does_not_answer_in_time_is_kept_and_named(token: str) -> None:
    with serve(space()) as fake:
        source = ConfluenceSource(
            f"confluence+{fake.url}/wiki/spaces/ENG", env=current(),
            limits=LiveLimits(timeout=0.2, retry_delays=(0.0,)),
        )  # fmt: skip
        source.refresh()
        fake.pages["104"] = CPage("Oolong", "<p>New.</p>", "103", 2)
        fake.slow["/wiki/api/v2/pages/104"] = 1.0
        done = source.refresh()
    assert done.fetched == () and done.deleted == ()
    assert any(w.startswith("Oolong: ") and "no answer in 0.2 s" in w for w in done.warnings)
    assert (source.staging / "Home/Tea/Oolong.html").is_file()


def test_a_space_that_cannot_be_listed_stops_the_sync_with_exit_2_and_deletes_nothing(
    token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from narezka.cli import cli

    waits: list[float] = []
    monkeypatch.setattr("narezka.sources.live_http.time.sleep", waits.append)
    with serve(space()) as fake:
        spec = f"confluence+{fake.url}/wiki/spaces/ENG"
        runner = CliRunner()
        done = runner.invoke(cli, ["index", spec, "--embedder", "hash"])
        assert done.exit_code == 0, done.output
        fake.pages["104"] = CPage("Oolong", "<p>Newer.</p>", "103", 2)
        fake.fail["/wiki/api/v2/pages/104"] = [500] * 3
        kept = runner.invoke(cli, ["sync", spec])
        assert kept.exit_code == 0, kept.output
        assert "Oolong" in kept.output and "kept as it was" in kept.output
        assert waits == [1.0, 2.0]  # the default retries: after 1 s, then 2 s
        fake.fail["/wiki/api/v2/spaces/1001/pages"] = [500] * 3
        fake.pages.clear()
        failed = runner.invoke(cli, ["sync", spec])
        assert failed.exit_code == 2
        assert "/wiki/api/v2/spaces/1001/pages: answered 500 (3 tries)" in failed.stderr
        staged = ConfluenceSource(spec, env=current()).staging
        assert (staged / "Home/Tea/Oolong.html").is_file()
        found = runner.invoke(cli, ["search", "oolong", "--store", spec, "--mode", "bm25",
                                    "--format", "json"])  # fmt: skip
        assert found.exit_code == 0 and "Oolong.html" in found.stdout
