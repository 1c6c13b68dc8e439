"""Request limits that stop work (#38 row 5): a path glob that made a backtracking regex spend
55 s of CPU per path answers at once on a real server while a normal search goes on beside
it; a request past its time limit stops where it is and is answered 503."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from narezka import Index, Settings
from narezka.globs import MAX_GLOB_CHARS
from narezka.serve import Service
from narezka.serve.errors import RequestTimeoutError
from narezka.serve.http_api import _guarded
from narezka.serve.limits import request_limit

from conftest import copy_examples

HOSTILE = "*[a-z]" * 12 + "*!"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("uvicorn", reason="the serve extra is not installed")
    from serve.helpers import start_http, stop

    corpus = copy_examples(tmp_path_factory.mktemp("limits") / "kb")
    # A long name: what the hostile glob backtracks over (C(40, 12) ways per path).
    (corpus / ("abcdefghij" * 4 + ".md")).write_text("# Тарифы\n\nТариф.\n", encoding="utf-8")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
    proc, base = start_http(corpus, "--no-watch")
    try:
        yield base
    finally:
        stop(proc)


def timed(url: str, params: dict[str, str]) -> tuple[float, httpx.Response]:
    started = time.monotonic()
    reply = httpx.get(url, params=params, timeout=30)
    return time.monotonic() - started, reply


@pytest.mark.parametrize(
    ("endpoint", "name"),
    [("/search", "path"), ("/sources", "path_glob")],
    ids=["search", "sources"],
)
def test_a_hostile_glob_does_not_hold_the_server(served: str, endpoint: str, name: str) -> None:
    baseline, _ = timed(f"{served}/search", {"q": "тариф"})
    params = {name: HOSTILE, "q": "тариф"}
    with ThreadPoolExecutor(4) as pool:
        hostile = [pool.submit(timed, f"{served}{endpoint}", params) for _ in range(3)]
        time.sleep(0.05)
        normal = pool.submit(timed, f"{served}/search", {"q": "тариф", "k": "3"})
        normal_seconds, normal_reply = normal.result()
        answers = [future.result() for future in hostile]
    assert normal_reply.status_code == 200 and normal_reply.json()["hits"]
    assert normal_seconds < baseline + 1.0
    for seconds, reply in answers:
        assert reply.status_code == 200 and seconds < 1.5
        assert reply.json()[endpoint.strip("/") if endpoint == "/sources" else "hits"] == []


def test_a_glob_over_the_limit_is_a_400_naming_it(served: str) -> None:
    for endpoint, name in (("/search", "path"), ("/sources", "path_glob")):
        reply = httpx.get(f"{served}{endpoint}", params={"q": "x", name: "*" * 5000}, timeout=30)
        assert reply.status_code == 400
        assert f"limit of {MAX_GLOB_CHARS}" in reply.json()["error"]
    reply = httpx.get(f"{served}/sources", params={"path_glob": "[z-a]"}, timeout=30)
    assert reply.status_code == 400 and "not a valid glob" in reply.json()["error"]


@pytest.fixture
def limited(built_kb: Path) -> Iterator[Service]:
    with Service(built_kb, watch=False, search_threads=1, request_seconds=0.3) as service:
        yield service


def test_a_search_waiting_for_a_core_past_its_limit_gives_up(limited: Service) -> None:
    assert limited.search("чай", k=1)["hits"]
    taken = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with limited._searching:
            taken.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert taken.wait(5)
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError, match=r"limit of 0 s and was stopped"):
            limited.search("чай", k=1)
        assert time.monotonic() - started < 1.0
    finally:
        release.set()
        holder.join()
    assert limited.search("чай", k=1)["hits"]  # the core given back, the next one answers


def test_a_listing_past_its_limit_stops(limited: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = limited.index.sources()

    def crawling() -> Iterator[Any]:
        for source in slow * 200:
            time.sleep(0.002)
            yield source

    monkeypatch.setattr(limited.index, "sources", crawling)
    started = time.monotonic()
    with pytest.raises(RequestTimeoutError):
        limited.list_sources("*.md")
    assert time.monotonic() - started < 1.0


def test_cutting_a_huge_text_stops_at_the_limit(limited: Service) -> None:
    started = time.monotonic()
    with request_limit(0.05), pytest.raises(RequestTimeoutError):
        limited._cut("слово " * 200_000, 500)
    assert time.monotonic() - started < 2.0
    assert limited._cut("слово " * 10, 500) == "слово " * 10  # outside a request: no limit


def test_a_timeout_is_answered_503(limited: Service) -> None:
    from starlette.requests import Request

    def late(_: Request) -> Any:
        raise RequestTimeoutError("the request took longer than the server's limit of 30 s")

    import anyio

    reply = anyio.run(_guarded(late), Request({"type": "http", "path": "/x", "headers": []}))
    assert reply.status_code == 503 and b"limit of 30 s" in reply.body


def test_a_stuck_request_is_answered_at_the_limit(
    limited: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    from starlette.testclient import TestClient

    from narezka.serve.http_api import build_app

    release = threading.Event()
    monkeypatch.setattr(limited, "search", lambda *_, **__: release.wait(10))
    app = build_app(limited, seconds=0.5)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            started = time.monotonic()
            reply = client.get("/search", params={"q": "чай"})
            took = time.monotonic() - started
            assert reply.status_code == 503 and "longer than 0 s" in reply.json()["error"]
            assert took < 2.0  # not held until the thread lets go
            assert client.get("/status").status_code == 200  # and the server answers on
    finally:
        release.set()
