"""The HTTP API as an app meets it: a real `narezka serve --http` process on a localhost
port, driven by httpx; the MCP streamable HTTP endpoint of the same process; the guards."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn", reason="the serve extra is not installed")

from mcp import Client

from narezka.serve.http_api import Guard

from serve.helpers import exact_span, run_async, start_http, stop


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    from narezka import Index, Settings

    from conftest import copy_examples

    corpus = copy_examples(tmp_path_factory.mktemp("http") / "kb")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
    (corpus.parent / "outside.md").write_text("# outside\n\nsecret plans\n", encoding="utf-8")
    proc, base = start_http(corpus, "--no-watch", "--max-reply-tokens", "1200")
    try:
        yield base, corpus
    finally:
        stop(proc)


def no_internals(response: httpx.Response) -> None:
    assert "Traceback" not in response.text and 'File "' not in response.text


def test_search_returns_exact_spans_and_pages(server: tuple[str, Path]) -> None:
    base, corpus = server
    # min_relevance 0: all ten, whatever their relevance, so that the reply pages.
    asked = {"q": "вернуть чай", "k": 10, "min_relevance": 0}
    r = httpx.get(f"{base}/search", params=asked)
    assert r.status_code == 200
    body = r.json()
    hits = body["hits"]
    assert hits and body["total"] == 10 and body["next_cursor"]
    assert all(h.get("truncated") or exact_span(corpus, h) for h in hits)
    rest = httpx.get(f"{base}/search", params={**asked, "cursor": body["next_cursor"]}).json()[
        "hits"
    ]
    ids = [h["chunk_id"] for h in hits + rest]
    assert len(ids) == len(set(ids))


def test_archived_pages_stay_out_unless_asked(server: tuple[str, Path]) -> None:
    base, _ = server
    params = {"q": "возврат", "k": 3, "mode": "bm25", "path": "returns-2023-archive.md"}
    assert httpx.get(f"{base}/search", params=params).json()["hits"] == []
    every = httpx.get(f"{base}/search", params={**params, "include_archived": "true"})
    hits = every.json()["hits"]
    assert hits and all(h["archived"] for h in hits)


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({}, "q is required"),
        ({"q": "чай", "k": 0}, "k must be"),
        ({"q": "чай", "k": 51}, "k must be"),
        ({"q": "чай", "k": "many"}, "whole number"),
        ({"q": "a" * 2001}, "longer than"),
        ({"q": "чай", "mode": "fuzzy"}, "mode"),
        ({"q": "чай", "include_archived": "maybe"}, "true or false"),
        ({"q": "чай", "expand": "parent"}, "parent-child"),
        ({"q": "чай", "cursor": "nonsense"}, "cursor"),
    ],
)
def test_bad_search_requests_are_400_with_a_reason(
    server: tuple[str, Path], params: dict[str, str | int], needle: str
) -> None:
    r = httpx.get(f"{server[0]}/search", params=params)
    assert r.status_code == 400 and needle in r.json()["error"]
    no_internals(r)


def test_chunks_by_id_and_with_neighbours(server: tuple[str, Path]) -> None:
    base, corpus = server
    hit = httpx.get(f"{base}/search", params={"q": "вскрытый чай", "k": 1}).json()["hits"][0]
    one = httpx.get(f"{base}/chunks/{hit['chunk_id']}").json()
    assert one["chunk_id"] == hit["chunk_id"] and exact_span(corpus, one)
    around = httpx.get(f"{base}/chunks/{hit['chunk_id']}", params={"before": 1, "after": 1})
    assert hit["chunk_index"] in [c["chunk_index"] for c in around.json()["chunks"]]
    missing = httpx.get(f"{base}/chunks/nope")
    assert missing.status_code == 404 and "no chunk" in missing.json()["error"]


def test_sources_never_escape_the_corpus(server: tuple[str, Path]) -> None:
    base, corpus = server
    listed = httpx.get(f"{base}/sources").json()
    assert listed["total"] == 18
    faq = httpx.get(f"{base}/sources/faq.md")
    assert faq.status_code == 200
    assert faq.text.startswith((corpus / "faq.md").read_text(encoding="utf-8")[:300])
    escapes = (
        "/sources/..%2Foutside.md",
        "/sources/%2E%2E/outside.md",
        "/sources/%2Fetc%2Fpasswd",
        "/sources/products/..%2F..%2Foutside.md",
        "/sources/nope.md",
    )
    for raw in escapes:
        r = httpx.get(base + raw)
        assert r.status_code in (400, 404), raw
        assert "secret plans" not in r.text and "root:" not in r.text
        no_internals(r)


def test_a_converted_files_hits_name_their_page_and_its_source_is_the_markdown(
    server: tuple[str, Path],
) -> None:
    base, corpus = server
    asked = {"q": "вскрытый чай возврат", "k": 8, "mode": "bm25", "min_relevance": 0}
    hits = httpx.get(f"{base}/search", params=asked).json()["hits"]
    pdf = [h for h in hits if h["file_path"] == "returns.pdf"]
    assert pdf and all(exact_span(corpus, h) for h in pdf)
    assert pdf[0]["page_start"] == pdf[0]["page_end"] == 1 and pdf[0]["where"] == "p. 1"
    markdown = [h for h in hits if h["file_path"].endswith(".md")]
    assert markdown and all(h["where"] is None and h["page_start"] is None for h in markdown)
    zones = httpx.get(f"{base}/search", params={**asked, "q": "Камчатский край только курьер"})
    page = next(h for h in zones.json()["hits"] if h["file_path"] == "delivery-zones.html")
    assert page["element"] == "regions-table" and page["where"].endswith("· #regions-table")
    # The source of a converted file is its canonical Markdown, which spans index.
    source = httpx.get(f"{base}/sources/returns.pdf")
    assert source.status_code == 200 and source.text.startswith("# Возврат товара\n")
    assert source.headers["x-content-type-options"] == "nosniff"


def test_status_sync_and_the_openapi_document(server: tuple[str, Path]) -> None:
    base, _ = server
    status = httpx.get(f"{base}/status").json()
    assert status["files"] == 18 and status["writer"]["syncs"] >= 1
    report = httpx.post(f"{base}/sync", timeout=120).json()
    assert report["files_unchanged"] == 18 and report["files_changed"] == 0
    doc = httpx.get(f"{base}/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    assert {"/search", "/chunks/{chunk_id}", "/sources", "/status", "/sync"} <= set(doc["paths"])


def test_no_cors_and_a_body_limit(server: tuple[str, Path]) -> None:
    base, _ = server
    r = httpx.get(f"{base}/status", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers
    pre = httpx.options(
        f"{base}/search",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
    )
    assert "access-control-allow-origin" not in pre.headers
    big = httpx.post(f"{base}/sync", content=b"x" * 100_000)
    assert big.status_code == 413


def test_mcp_streamable_http_from_the_same_process(server: tuple[str, Path]) -> None:
    base, _ = server

    async def main() -> None:
        async with Client(f"{base}/mcp") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"search", "get_context", "list_sources", "index_status"}
            result = await client.call_tool("search", {"query": "доставка", "k": 2})
            assert not result.is_error
            assert json.loads(result.content[0].text)["hits"]  # type: ignore[union-attr]

    run_async(main)


def test_an_api_key_is_checked_when_set(built_kb: Path) -> None:
    proc, base = start_http(built_kb, "--no-watch", env={"NAREZKA_API_KEY": "k3y"}, key="k3y")
    try:
        assert httpx.get(f"{base}/status").status_code == 401
        wrong = httpx.get(f"{base}/status", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert httpx.get(f"{base}/status", headers={"X-API-Key": "k3y"}).status_code == 200
        assert httpx.post(f"{base}/mcp", json={}).status_code == 401
    finally:
        stop(proc)


def test_any_address_but_loopback_needs_a_key(built_kb: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "narezka", "serve", str(built_kb), "--http", "0.0.0.0:1"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NAREZKA_API_KEY": ""},
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "NAREZKA_API_KEY" in result.stderr


def test_a_slow_request_is_cut_off_without_internals() -> None:
    async def slow(scope: object, receive: object, send: object) -> None:
        await asyncio.sleep(5)

    guard = Guard(slow, api_key=None, max_body=10, seconds=0.2)  # type: ignore[arg-type]

    async def main() -> httpx.Response:
        transport = httpx.ASGITransport(app=guard)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            return await client.get("/search")

    r = run_async(main)
    assert r.status_code == 503 and "longer than" in r.json()["error"]
