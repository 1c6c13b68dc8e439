"""The client the live sources share, against a local server: rate limits waited out within a
bound, answers past the size cap abandoned, redirects and other hosts refused, refused tokens
named by their variable."""

from __future__ import annotations

from typing import Any

import pytest

from narezka.errors import SourceUnavailableError
from narezka.sources.live_http import TOO_LARGE, LiveClient, LiveLimits, PageFailed, check_origin
from sources.live_fakes import Answer, Fake, serve


class Echo(Fake):
    """Answers ``/big`` with 10 kB, ``/moved`` with a redirect, ``/denied`` with 403, and
    anything else with the query it was asked."""

    def answer(self, method: str, path: str, query: dict[str, str], body: Any,
               auth: str | None) -> Answer:  # fmt: skip
        special = {"/big": (200, {"x": "y" * 10_000}), "/moved": (302, {}),
                   "/denied": (403, {})}  # fmt: skip
        return special.get(path, (200, {"query": query, "auth": auth}))


def client(fake: Fake, waits: list[float], **limits: Any) -> LiveClient:
    return LiveClient(
        "test-source", fake.url, headers={"Authorization": "Bearer t0ken"},
        token_variable="TEST_TOKEN", limits=LiveLimits(**limits), sleep=waits.append,
    )  # fmt: skip


def test_a_rate_limit_is_waited_out_for_as_long_as_it_asks() -> None:
    waits: list[float] = []
    with serve(Echo()) as fake:
        fake.throttle["/a"], fake.retry_after = 2, "3"
        with client(fake, waits) as http:
            assert http.get("/a", {"q": "1"}) == {"query": {"q": "1"}, "auth": "Bearer t0ken"}
            assert waits == [3.0, 3.0] and http.requests == 3
            fake.throttle["/b"], fake.retry_after = 1, "3600"
            with pytest.raises(SourceUnavailableError, match="rate-limiting"):
                http.get("/b")
    assert waits == [3.0, 3.0]  # an hour is past the bound: not waited


def test_an_answer_past_the_cap_is_abandoned() -> None:
    with serve(Echo()) as fake, client(fake, [], max_bytes=1000) as http:
        assert http.ask("GET", "/big") == (TOO_LARGE, None)
        with pytest.raises(SourceUnavailableError, match="over 1,000 bytes"):
            http.get("/big")


def test_redirects_other_hosts_and_refusals_are_named() -> None:
    with serve(Echo()) as fake, client(fake, []) as http:
        with pytest.raises(SourceUnavailableError, match="redirected"):
            http.get("/moved")
        with pytest.raises(SourceUnavailableError, match="another host"):
            http.get("https://elsewhere.example/steal")
        with pytest.raises(SourceUnavailableError, match=r"TEST_TOKEN may not read this \(403\)"):
            http.get("/denied")
    assert "t0ken" not in str(fake.log[-1][1])


@pytest.mark.parametrize(
    ("url", "ok"),
    [("https://x.example", True), ("http://127.0.0.1:9", True), ("http://localhost", True),
     ("http://x.example", False), ("ftp://x.example", False)],
)  # fmt: skip
def test_a_token_travels_over_https_or_to_this_machine_only(url: str, ok: bool) -> None:
    if ok:
        assert check_origin("s", url + "/path") == url
    else:
        with pytest.raises(SourceUnavailableError):
            check_origin("s", url)


def test_a_5xx_is_tried_again_after_each_delay_then_named() -> None:
    waits: list[float] = []
    with serve(Echo()) as fake, client(fake, waits, retry_delays=(1.0, 2.0)) as http:
        fake.fail["/flaky"] = [500, 502]
        assert http.get("/flaky") == {"query": {}, "auth": "Bearer t0ken"}
        assert waits == [1.0, 2.0] and http.requests == 3
        fake.fail["/down"] = [500, 500, 504]
        with pytest.raises(PageFailed, match=r"/down: answered 504 \(3 tries\)"):
            http.get("/down")
    assert waits == [1.0, 2.0, 1.0, 2.0]


def test_a_download_follows_its_own_origin_and_refuses_another_host() -> None:
    with serve(Echo()) as fake, client(fake, [], max_bytes=1000) as http:
        fake.raw["/file.pdf"] = (200, b"%PDF", {})
        fake.raw["/old.pdf"] = (302, b"", {"Location": "/file.pdf"})
        fake.raw["/away.pdf"] = (302, b"", {"Location": "https://cdn.example.net/x.pdf"})
        fake.raw["/huge.pdf"] = (200, b"x" * 2000, {})
        assert http.download("/old.pdf") == b"%PDF"
        fake.raw["/gone.pdf"] = (404, b"", {})
        assert http.download("/gone.pdf") is None
        with pytest.raises(PageFailed, match=r"refused a redirect to cdn\.example\.net"):
            http.download("/away.pdf")
        with pytest.raises(PageFailed, match="over 1,000 bytes"):
            http.download("/huge.pdf")
