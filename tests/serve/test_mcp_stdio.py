"""The MCP server as a desktop agent meets it: the SDK's own client starts `narezka serve`
as a subprocess over stdio and calls every tool and the resource."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the serve extra (mcp) is not installed")

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from narezka import Index
from narezka.search.hits import above
from narezka.tokens import get_counter

from serve.helpers import exact_span, run_async

BUDGET = 900


@asynccontextmanager
async def served(corpus: Path, *extra: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "narezka", "serve", str(corpus), "--max-reply-tokens", str(BUDGET), *extra],
        # The SDK passes on only a few variables by default: PYTHONPATH says which narezka.
        env=dict(os.environ),
    )
    async with Client(params, read_timeout_seconds=60) as client:
        yield client


def run(corpus: Path, scenario: Callable[[Client], Awaitable[None]], *extra: str) -> None:
    async def main() -> None:
        async with served(corpus, *extra) as client:
            await scenario(client)

    run_async(main)


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert get_counter("tokens").count(text) <= BUDGET, f"{tool} reply over the budget"
    data: dict[str, Any] = json.loads(text)
    return data


async def refused(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.content
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text
    return text


def test_tools_are_described_for_a_model(built_kb: Path) -> None:
    async def scenario(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"search", "get_context", "list_sources", "index_status"}
        for tool in tools.values():
            assert tool.description and len(tool.description) > 40
            for name, prop in tool.input_schema.get("properties", {}).items():
                assert prop.get("description"), f"{tool.name}.{name} has no description"
        mode = tools["search"].input_schema["properties"]["mode"]
        assert set(mode["enum"]) == {"hybrid", "dense", "bm25"}
        assert tools["search"].input_schema["required"] == ["query"]

    run(built_kb, scenario, "--no-watch")


def test_search_pages_under_the_budget_and_matches_the_index(built_kb: Path) -> None:
    with Index.open(built_kb) as index:
        found = index.search("вернуть чай доставка", k=12)
        # The server drops what is below the index's min_relevance, and nothing else.
        direct = [h.chunk_id for h in above(found, index.settings.relevance_floor)[0]]
    seen: list[dict[str, Any]] = []

    async def scenario(client: Client) -> None:
        reply = await call(client, "search", query="вернуть чай доставка", k=12)
        pages = 1
        seen.extend(reply["hits"])
        while reply["next_cursor"]:
            reply = await call(
                client, "search", query="вернуть чай доставка", k=12, cursor=reply["next_cursor"]
            )
            seen.extend(reply["hits"])
            pages += 1
        assert pages > 1, "a 900-token budget must need more than one page for 12 hits"
        text = await refused(
            client, "search", query="другой запрос", k=12, cursor=reply["next_cursor"] or "eyJ9"
        )
        assert "cursor" in text

    run(built_kb, scenario, "--no-watch")
    assert [h["chunk_id"] for h in seen] == direct
    for hit in seen:
        assert hit["breadcrumb"] == " > ".join(hit["section"])
        assert hit.get("truncated") or exact_span(built_kb, hit)


def test_context_sources_status_and_resource(built_kb: Path) -> None:
    faq = (built_kb / "faq.md").read_text(encoding="utf-8")

    async def scenario(client: Client) -> None:
        hit = (await call(client, "search", query="вскрытый чай", k=1, mode="bm25"))["hits"][0]
        around = await call(client, "get_context", chunk_id=hit["chunk_id"], before=1, after=2)
        indexes = [c["chunk_index"] for c in around["chunks"]]
        assert hit["chunk_index"] in indexes
        assert indexes == list(range(indexes[0], indexes[0] + len(indexes)))
        assert all(c["file_path"] == hit["file_path"] for c in around["chunks"])

        listed = await call(client, "list_sources")
        assert listed["total"] == 18
        products = await call(client, "list_sources", path_glob="products/**")
        assert products["sources"] and all(
            s["path"].startswith("products/") for s in products["sources"]
        )
        status = await call(client, "index_status")
        assert status["files"] == 18 and status["embedder"].startswith("hash")
        assert status["strategy"] == "headings" and status["changed_files"] == []

        pdf = await call(client, "search", query="вскрытый чай возврат", k=8, mode="bm25")
        found = [h for h in pdf["hits"] if h["file_path"] == "returns.pdf"]
        assert found and found[0]["page_start"] == 1 and found[0]["where"] == "p. 1"

        resource = await client.read_resource("narezka://source/faq.md")
        text = resource.contents[0].text  # type: ignore[union-attr]
        assert text == faq[: len(text) - 40] + text[len(text) - 40 :]
        assert text.startswith(faq[:200])
        for bad in ("../outside.md", "nope.md", "%2Fetc%2Fpasswd"):
            with pytest.raises(MCPError):
                await client.read_resource(f"narezka://source/{bad}")

    run(built_kb, scenario, "--no-watch")


def test_malformed_calls_are_tool_errors_and_the_server_keeps_answering(
    built_kb: Path,
) -> None:
    async def scenario(client: Client) -> None:
        assert "query" in await refused(client, "search", query="")
        assert "k" in await refused(client, "search", query="чай", k="many")
        await refused(client, "search", query="чай", k=500)
        await refused(client, "search", query="чай", mode="fuzzy")
        assert "parent" in await refused(client, "search", query="чай", expand="parent")
        assert "no chunk" in await refused(client, "get_context", chunk_id="not-an-id")
        await refused(client, "get_context", chunk_id="x", before=-1)
        await refused(client, "no_such_tool")
        # Issue 23 item 14: an unknown argument was dropped and the call succeeded.
        unknown = await refused(client, "search", query="чай", bogus=1)
        assert "bogus" in unknown and "query" in unknown
        assert "pathh" in await refused(client, "list_sources", pathh="x")
        assert (await call(client, "search", query="чай", k=1))["hits"]

    run(built_kb, scenario, "--no-watch")


def test_a_line_that_is_not_json_rpc_gets_an_error_reply_with_id_null(built_kb: Path) -> None:
    # Issue 23 item 14: these lines got no reply at all. The SDK's client cannot send them:
    # the wire is driven by hand, then the SDK client checks that the server still works.
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    garbage = [b"{not json", b'"\\ud800"', b'{"jsonrpc": "2.0", "id": 3, "x": "\\udc00"}',
               b"[1, 2]", b"42", b'{"jsonrpc": "2.0"}']  # fmt: skip
    ping = b'{"jsonrpc": "2.0", "id": 99, "method": "ping"}'
    with subprocess.Popen(
        [sys.executable, "-m", "narezka", "serve", str(built_kb), "--no-watch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        lines = [json.dumps(hello).encode(), *garbage, ping]
        proc.stdin.write(b"\n".join(lines) + b"\n")
        proc.stdin.flush()
        replies = []
        try:
            while not replies or replies[-1].get("id") != 99:
                line = proc.stdout.readline()
                assert line, f"the server closed stdout after {replies}"
                replies.append(json.loads(line))
        finally:
            proc.kill()
    errors = [r for r in replies if "error" in r]
    assert [e["error"]["code"] for e in errors] == [-32700, -32700, -32700, -32600, -32600, -32600]
    assert all(e["id"] is None and e["jsonrpc"] == "2.0" for e in errors)
