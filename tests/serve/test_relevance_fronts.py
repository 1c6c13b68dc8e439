"""'Nothing relevant' at every entry point (issue #26 item 2): the CLI exits 1 and says so,
HTTP answers 200 with no hits and ``best_relevance``, MCP answers in words (not an error),
the retrievers carry ``relevance`` and honour ``min_relevance``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka import Index, Settings
from narezka.cli import cli
from narezka.serve.service import Service

from conftest import copy_examples
from serve.helpers import run_async

NONSENSE = "xyzzy flurb qwertyuiop"
REAL = "можно ли вернуть вскрытый чай"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = copy_examples(tmp_path_factory.mktemp("fronts") / "kb")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
    return corpus


@pytest.fixture(scope="module")
def service(corpus: Path) -> Iterator[Service]:
    with Service(corpus, watch=False) as served:
        yield served


def search_cli(corpus: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["search", *args, "--store", str(corpus)])
    return result.exit_code, result.stdout, result.stderr


def test_cli_says_no_relevant_passage_and_exits_1(corpus: Path) -> None:
    code, out, err = search_cli(corpus, NONSENSE, "--format", "json")
    assert code == 1 and json.loads(out) == []
    assert "no relevant passage (best relevance 0.0" in err
    code, out, _ = search_cli(corpus, NONSENSE, "--format", "json", "--min-relevance", "0")
    assert code == 0 and json.loads(out)


def test_cli_prints_relevance_in_json_and_table(corpus: Path) -> None:
    code, out, _ = search_cli(corpus, REAL, "--format", "json", "-k", "3")
    hits = json.loads(out)
    assert code == 0 and hits and all(0 <= h["relevance"] <= 1 for h in hits)
    assert set(hits[0]["signals"]) == {"cosine", "term_cover", "term_share"}
    code, out, _ = search_cli(corpus, REAL, "-k", "2")
    assert code == 0 and "relevance" in out
    code, _, err = search_cli(corpus, REAL, "--min-relevance", "1.5")
    assert code == 2 and "min-relevance" in err


def test_http_answers_200_with_no_hits_and_the_best_relevance(service: Service) -> None:
    pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")
    from starlette.testclient import TestClient

    from narezka.serve.http_api import build_app

    with TestClient(build_app(service), base_url="http://127.0.0.1") as client:
        empty = client.get("/search", params={"q": NONSENSE})
        assert empty.status_code == 200
        body = empty.json()
        assert body["hits"] == [] and body["total"] == 0
        assert 0 <= body["best_relevance"] < body["min_relevance"]
        some = client.get("/search", params={"q": NONSENSE, "min_relevance": "0"}).json()
        assert some["hits"] and all("relevance" in h for h in some["hits"])
        bad = client.get("/search", params={"q": REAL, "min_relevance": "x"})
        assert bad.status_code == 400 and "min_relevance" in bad.json()["error"]
        worse = client.get("/search", params={"q": REAL, "min_relevance": "2"})
        assert worse.status_code == 400


def test_a_chunk_read_by_id_carries_no_relevance(service: Service) -> None:
    hit = service.search(REAL, k=1, min_relevance=0.0)["hits"][0]
    chunk = service.chunk(hit["chunk_id"])
    assert "relevance" not in chunk and "score" not in chunk


def test_mcp_says_in_words_that_nothing_answers(service: Service) -> None:
    pytest.importorskip("mcp", reason="the serve extra (mcp) is not installed")
    from mcp import Client

    from narezka.serve.mcp_server import build_mcp

    async def main() -> tuple[bool, str, bool, str]:
        async with Client(build_mcp(service)) as client:
            none = await client.call_tool("search", {"query": NONSENSE})
            some = await client.call_tool("search", {"query": REAL, "k": 2})
        return (
            none.is_error,
            none.content[0].text,  # type: ignore[union-attr]
            some.is_error,
            some.content[0].text,  # type: ignore[union-attr]
        )

    none_error, none_text, some_error, some_text = run_async(main)
    assert not none_error
    reply = json.loads(none_text)
    assert reply["hits"] == [] and reply["best_relevance"] is not None
    assert reply["answer"].startswith(f"No passage in this index answers {NONSENSE!r}")
    answered = json.loads(some_text)
    assert not some_error and answered["hits"] and "answer" not in answered
    assert all(0 <= h["relevance"] <= 1 for h in answered["hits"])


def test_retrievers_carry_relevance_and_honour_min_relevance(corpus: Path) -> None:
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from narezka.integrations.langchain import NarezkaRetriever

    with Index.open(corpus) as index:
        docs = NarezkaRetriever(index=index, k=3).invoke(REAL)
        assert docs and all(0 <= d.metadata["relevance"] <= 1 for d in docs)
        assert NarezkaRetriever(index=index, k=3).invoke(NONSENSE) == []
        assert NarezkaRetriever(index=index, k=3, min_relevance=0.0).invoke(NONSENSE)


def test_llamaindex_retriever_carries_relevance(corpus: Path) -> None:
    pytest.importorskip("llama_index.core", reason="llama-index-core is not installed")
    from narezka.integrations.llamaindex import NarezkaRetriever

    with Index.open(corpus) as index:
        nodes = NarezkaRetriever(index, k=3).retrieve(REAL)
        assert nodes and all(0 <= n.node.metadata["relevance"] <= 1 for n in nodes)
        assert NarezkaRetriever(index, k=3).retrieve(NONSENSE) == []
        assert NarezkaRetriever(index, k=3, min_relevance=0.0).retrieve(NONSENSE)
