"""Every field of a :class:`Query` can be set from every entry point (issue #24): the CLI, the
HTTP API, MCP's ``search`` tool, both retrievers and ``api.searching.search``. Each is driven
with one option changed from its default, and the Query that reaches ``Index.search`` must
carry it; a field added to Query without an option of every entry point fails here."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from narezka import Index, Settings
from narezka.cli import cli
from narezka.index.handle import Index as IndexClass
from narezka.search import Filter, Fusion, Query
from narezka.search.query import FILTER_OPTIONS, OPTIONS

from conftest import copy_examples

TEXT = "можно ли вернуть вскрытый чай"

# One change from the default per flat option, the other options it needs, and what the
# resulting Query must hold.
SAMPLES: dict[str, tuple[dict[str, Any], Callable[[Query], bool]]] = {
    "k": ({"k": 3}, lambda q: q.k == 3),
    "mode": ({"mode": "bm25"}, lambda q: q.mode == "bm25"),
    "zone": ({"zone": "hot"}, lambda q: q.filters.zone == "hot"),
    "project": ({"project": "shop"}, lambda q: q.filters.project == "shop"),
    "category": ({"category": "faq"}, lambda q: q.filters.category == "faq"),
    "path": ({"path": "*.md"}, lambda q: q.filters.path == "*.md"),
    "include_archived": ({"include_archived": True}, lambda q: q.filters.include_archived),
    "expand": ({"expand": "section"}, lambda q: q.expand == "section"),
    "fusion": ({"fusion": "rrf"}, lambda q: q.fusion == Fusion("rrf")),
    "rrf_k": (
        {"fusion": "weighted", "rrf_k": 30},
        lambda q: q.fusion is not None and q.fusion.rrf_k == 30,
    ),
    "dense_weight": (
        {"fusion": "weighted", "dense_weight": 0.7},
        lambda q: q.fusion is not None and q.fusion.dense_weight == 0.7,
    ),
    "fold": ({"fold": "off"}, lambda q: q.fold is None),
    "min_relevance": ({"min_relevance": 0.0}, lambda q: q.min_relevance == 0.0),
    "rescore": ({"rescore": "off"}, lambda q: q.rescore is False),
}


def test_the_samples_cover_every_option_and_every_field() -> None:
    assert set(SAMPLES) == set(OPTIONS)
    default = Query(TEXT)
    touched = set()
    for options, holds in SAMPLES.values():
        query = Query.parse(TEXT, options)
        assert holds(query) and not holds(default)
        touched |= {
            f.name
            for f in dataclasses.fields(Query)
            if getattr(query, f.name) != getattr(default, f.name)
        }
    # Every field but the text itself is reached by some option.
    assert touched == {f.name for f in dataclasses.fields(Query)} - {"text"}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_options_round_trip_through_the_query(name: str) -> None:
    query = Query.parse(TEXT, SAMPLES[name][0])
    assert Query.parse(TEXT, query.options()) == query


def test_a_bad_or_unknown_option_is_refused_by_name() -> None:
    from narezka.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown search option colour"):
        Query.parse(TEXT, {"colour": "red"})
    with pytest.raises(ConfigError, match="k must be a whole number"):
        Query.parse(TEXT, {"k": "many"})
    with pytest.raises(ConfigError, match="include_archived must be true or false"):
        Query.parse(TEXT, {"include_archived": "perhaps"})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = copy_examples(tmp_path_factory.mktemp("entry") / "kb")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
    return corpus


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Query]]:
    """The Queries that reach Index.search (which then runs as usual)."""
    seen: list[Query] = []
    real = IndexClass.search

    def recording(self: Index, query: str | Query, **options: Any) -> Any:
        result = real(self, query, **options)
        seen.append(query if isinstance(query, Query) else Query(query, **options))
        return result

    monkeypatch.setattr(IndexClass, "search", recording)
    yield seen


def _flag(name: str) -> str:
    return "-k" if name == "k" else "--" + name.replace("_", "-")


def via_cli(corpus: Path, options: dict[str, Any]) -> None:
    args = ["search", TEXT, "--store", str(corpus), "--format", "json"]
    for name, value in options.items():
        args += [_flag(name)] if value is True else [_flag(name), str(value)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1), result.output


def via_http(corpus: Path, options: dict[str, Any]) -> None:
    pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")
    from starlette.testclient import TestClient

    from narezka.serve.http_api import build_app
    from narezka.serve.service import Service

    params = {"q": TEXT, **{k: str(v).lower() if v is True else str(v) for k, v in options.items()}}
    with (
        Service(corpus, watch=False) as service,
        TestClient(build_app(service), base_url="http://127.0.0.1") as client,
    ):
        reply = client.get("/search", params=params)
    assert reply.status_code == 200, reply.text


def via_mcp(corpus: Path, options: dict[str, Any]) -> None:
    pytest.importorskip("mcp", reason="the serve extra (mcp) is not installed")
    from mcp import Client

    from narezka.serve.mcp_server import build_mcp
    from narezka.serve.service import Service

    from serve.helpers import run_async

    async def main(service: Service) -> bool:
        async with Client(build_mcp(service)) as client:
            reply = await client.call_tool("search", {"query": TEXT, **options})
        return bool(reply.is_error)

    with Service(corpus, watch=False) as service:
        assert not run_async(lambda: main(service))


def _retriever_fields(options: dict[str, Any]) -> dict[str, Any]:
    """The flat options as a retriever's fields (a Query's fields but the text)."""
    query = Query.parse(TEXT, options)
    return {f.name: getattr(query, f.name) for f in dataclasses.fields(Query) if f.name != "text"}


def via_langchain(corpus: Path, options: dict[str, Any]) -> None:
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    from narezka.integrations.langchain import NarezkaRetriever

    with Index.open(corpus) as index:
        NarezkaRetriever(index=index, **_retriever_fields(options)).invoke(TEXT)


def via_llamaindex(corpus: Path, options: dict[str, Any]) -> None:
    pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed")
    from narezka.integrations.llamaindex import NarezkaRetriever

    with Index.open(corpus) as index:
        NarezkaRetriever(index, **_retriever_fields(options)).retrieve(TEXT)


def via_api(corpus: Path, options: dict[str, Any]) -> None:
    from narezka.api.searching import search

    search(TEXT, corpus, **options)


ENTRY_POINTS = {
    "cli": via_cli,
    "http": via_http,
    "mcp": via_mcp,
    "langchain": via_langchain,
    "llamaindex": via_llamaindex,
    "api": via_api,
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_option_reaches_index_search(entry: str, corpus: Path, asked: list[Query]) -> None:
    failures = []
    for name, (options, holds) in SAMPLES.items():
        asked.clear()
        ENTRY_POINTS[entry](corpus, options)
        if not asked or not holds(asked[-1]):
            failures.append(name)
    assert not failures, f"{entry} cannot set: {', '.join(failures)}"


def test_filters_are_the_flat_filter_options() -> None:
    assert set(FILTER_OPTIONS) == {f.name for f in dataclasses.fields(Filter)}
