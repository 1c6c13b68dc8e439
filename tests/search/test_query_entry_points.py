"""Every option of the table (:mod:`narezka.search.options`) can be set from every front that
shows it, and every front's default is the table's (issues #24, #34): the CLI (``search``
and ``eval``), the HTTP API, MCP's ``search`` tool, both retrievers and
``api.searching.search``.

Nothing here names an option: the samples are made from the table, so an option added to it
is driven through every front without an edit here. Each front is driven with one option
changed from its default, and the Query that reaches ``Index.search`` must be exactly the
one :meth:`Query.parse` makes of it; with no option it must be the default Query; the
defaults each front declares (click flags, the MCP schema, the OpenAPI document, the
retrievers' fields) must be the table's."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from narezka import Index, Settings
from narezka.cli import cli
from narezka.errors import ConfigError
from narezka.index.handle import Index as IndexClass
from narezka.search import Filter, Query
from narezka.search.options import (
    FIELDS,
    FILTER_OPTIONS,
    FRONTS,
    INDEX_SETTING,
    OPTIONS,
    Group,
    Option,
    field_default,
    shown_at,
)

from conftest import copy_examples

TEXT = "можно ли вернуть вскрытый чай"
FLOOR = 0.3


def sample_value(option: Option) -> Any:
    """A flat value of ``option`` other than its default, in its typed form."""
    low, high = option.minimum, option.maximum
    if option.kind == "whole":
        return next(n for n in range(int(low or 1), 1000) if n != option.default and n > 1)
    if option.kind == "number":
        return (low or 0) + 0.7 * ((high if high is not None else (low or 0) + 1) - (low or 0))
    if option.kind == "choice":
        return next(c for c in option.choices if c != option.default)
    if option.kind == "flag":
        return not option.default
    if option.kind == "fold":
        return "off"
    return "*.md"  # text: a glob is text too (``path`` takes one)


def _candidates(option: Option) -> list[Any]:
    return list(option.choices) if option.kind == "choice" else [sample_value(option)]


def _sample(option: Option) -> dict[str, Any]:
    """The flat options that set ``option`` to a non-default value: it alone, or with the one
    other option it needs (``rrf_k`` needs a rank fusion, say)."""
    alone = {option.name: sample_value(option)}
    tries = [alone] + [
        {**alone, other.name: value}
        for other in OPTIONS.values()
        if other is not option
        for value in _candidates(other)
        if value != other.default
    ]
    for options in tries:
        try:
            Query.parse(TEXT, options)
        except ConfigError:
            continue
        return options
    raise AssertionError(f"no sample sets {option.name}")


SAMPLES = {name: _sample(option) for name, option in OPTIONS.items()}


def test_every_sample_changes_its_field_and_every_field_is_reached() -> None:
    default = Query(TEXT)
    touched = set()
    for name, options in SAMPLES.items():
        query = Query.parse(TEXT, options)
        assert query.options()[name] != default.options()[name], name
        touched |= {
            f.name
            for f in dataclasses.fields(Query)
            if getattr(query, f.name) != getattr(default, f.name)
        }
    assert touched == set(FIELDS)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_options_round_trip_through_the_query(name: str) -> None:
    query = Query.parse(TEXT, SAMPLES[name])
    assert Query.parse(TEXT, query.options()) == query


def test_the_default_query_is_the_table_s() -> None:
    query = Query(TEXT)
    for name in FIELDS:
        assert getattr(query, name) == field_default(name)
    assert query.min_relevance is INDEX_SETTING
    assert Query.parse(TEXT, {}) == query
    assert Query.parse(TEXT, {o.name: o.default for o in OPTIONS.values()}) == query


def test_a_bad_or_unknown_option_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="unknown search option colour"):
        Query.parse(TEXT, {"colour": "red"})
    with pytest.raises(ConfigError, match="k must be a whole number"):
        Query.parse(TEXT, {"k": "many"})
    with pytest.raises(ConfigError, match="include_archived must be true or false"):
        Query.parse(TEXT, {"include_archived": "perhaps"})
    with pytest.raises(ConfigError, match="min_relevance must be a number in"):
        Query(TEXT, min_relevance=None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="filters must be"):
        Query(TEXT, filters=None)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(o for o in OPTIONS if OPTIONS[o].kind != "text"))
def test_every_bounded_option_refuses_a_value_out_of_its_table_bounds(name: str) -> None:
    option = OPTIONS[name]
    bad = {"whole": -1, "number": 2.5, "flag": "perhaps", "choice": "nope", "fold": 7}
    if option.kind in ("whole", "number") and option.minimum is None and option.maximum is None:
        pytest.skip("unbounded")
    if option.kind == "number" and option.maximum is None:
        bad["number"] = -1.0
    with pytest.raises(ConfigError, match=name):
        Query.parse(TEXT, {name: bad[option.kind]})


def test_filters_are_the_flat_filter_options() -> None:
    assert set(FILTER_OPTIONS) == {f.name for f in dataclasses.fields(Filter)}


def test_every_field_shows_at_the_library_and_eval_shows_only_ranking() -> None:
    for option in OPTIONS.values():
        assert "library" in option.fronts and option.fronts <= set(FRONTS)
    assert {o.name for o in shown_at("eval")} <= {"mode", "expand", "fold"} | {
        o.name for entry in FIELDS.values() if isinstance(entry, Group) for o in entry.members
    }


# ---- every front, driven -----------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = copy_examples(tmp_path_factory.mktemp("entry") / "kb")
    # A min_relevance of the index's own, above the measured default: what every front must
    # apply when told nothing (TEXT's fifth hit falls below it, the first four do not).
    with Index.create(corpus, Settings(embedder="hash", min_relevance=FLOOR)) as index:
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


def _cli_args(options: dict[str, Any]) -> list[str]:
    args: list[str] = []
    for name, value in options.items():
        option = OPTIONS[name]
        if option.kind == "flag" and option.default is False:
            args += [option.flag] if value else []
        elif option.kind == "flag":
            args += [option.flag, "on" if value else "off"]
        else:
            args += [option.flag, str(value)]
    return args


Answer = list[tuple[str, str]]
"""What a front returned: each hit's chunk id and text, in order."""


def via_cli(corpus: Path, options: dict[str, Any]) -> Answer:
    args = ["search", TEXT, "--store", str(corpus), "--format", "json", *_cli_args(options)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1), result.output
    return [(hit["chunk_id"], hit["text"]) for hit in json.loads(result.stdout)]


def via_http(corpus: Path, options: dict[str, Any]) -> Answer:
    pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")
    from starlette.testclient import TestClient

    from narezka.serve.http_api import build_app
    from narezka.serve.service import Service

    params = {
        "q": TEXT,
        **{k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()},
    }
    with (
        Service(corpus, watch=False) as service,
        TestClient(build_app(service), base_url="http://127.0.0.1") as client,
    ):
        reply = client.get("/search", params=params)
    assert reply.status_code == 200, reply.text
    return [(hit["chunk_id"], hit["text"]) for hit in reply.json()["hits"]]


def via_mcp(corpus: Path, options: dict[str, Any]) -> Answer:
    pytest.importorskip("mcp", reason="the serve extra (mcp) is not installed")
    from mcp import Client

    from narezka.serve.mcp_server import build_mcp
    from narezka.serve.service import Service

    from serve.helpers import run_async

    async def main(service: Service) -> Answer:
        async with Client(build_mcp(service)) as client:
            reply = await client.call_tool("search", {"query": TEXT, **options})
        assert not reply.is_error, reply.content
        text = reply.content[0].text  # type: ignore[union-attr]
        return [(hit["chunk_id"], hit["text"]) for hit in json.loads(text)["hits"]]

    with Service(corpus, watch=False) as service:
        return run_async(lambda: main(service))


def _retriever_fields(options: dict[str, Any]) -> dict[str, Any]:
    """The flat options as a retriever's fields (a Query's fields but the text); none at all
    when none are given, so the retriever's own defaults are what is driven."""
    if not options:
        return {}
    query = Query.parse(TEXT, options)
    return {name: getattr(query, name) for name in FIELDS}


def via_langchain(corpus: Path, options: dict[str, Any]) -> Answer:
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    from narezka.integrations.langchain import NarezkaRetriever

    with Index.open(corpus) as index:
        docs = NarezkaRetriever(index=index, **_retriever_fields(options)).invoke(TEXT)
    return [(str(doc.id), doc.page_content) for doc in docs]


def via_llamaindex(corpus: Path, options: dict[str, Any]) -> Answer:
    pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed")
    from narezka.integrations.llamaindex import NarezkaRetriever

    with Index.open(corpus) as index:
        nodes = NarezkaRetriever(index, **_retriever_fields(options)).retrieve(TEXT)
    return [(node.node.node_id, node.node.get_content()) for node in nodes]


def via_api(corpus: Path, options: dict[str, Any]) -> Answer:
    from narezka.api.searching import search

    return [(hit.chunk_id, hit.text) for hit in search(TEXT, corpus, **options)]


def via_index(corpus: Path, options: dict[str, Any]) -> Answer:
    with Index.open(corpus) as index:
        return [(h.chunk_id, h.text) for h in index.search(Query.parse(TEXT, options))]


ENTRY_POINTS: dict[str, tuple[str, Callable[[Path, dict[str, Any]], Answer]]] = {
    "cli": ("search", via_cli),
    "http": ("http", via_http),
    "mcp": ("mcp", via_mcp),
    "langchain": ("retrievers", via_langchain),
    "llamaindex": ("retrievers", via_llamaindex),
    "api": ("library", via_api),
    "index": ("library", via_index),
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_option_reaches_index_search(entry: str, corpus: Path, asked: list[Query]) -> None:
    front, drive = ENTRY_POINTS[entry]
    failures = []
    for name, options in SAMPLES.items():
        if not all(front in OPTIONS[n].fronts for n in options):
            continue
        asked.clear()
        drive(corpus, options)
        if not asked or asked[-1] != Query.parse(TEXT, options):
            failures.append(f"{name} ({asked[-1] if asked else 'no query'})")
    assert not failures, f"{entry} cannot set: {', '.join(failures)}"


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_front_asks_the_default_query_when_told_nothing(
    entry: str, corpus: Path, asked: list[Query]
) -> None:
    ENTRY_POINTS[entry][1](corpus, {})
    assert asked == [Query(TEXT)]


def test_every_front_answers_the_same_hits_by_default(corpus: Path) -> None:
    """The index's min_relevance applies at every front alike, the library's included: the
    same hits with the same text, in the same order, and some of all that ranked left out."""
    with Index.open(corpus) as index:
        every = index.search(TEXT, min_relevance=0)
        floor = index.settings.relevance_floor
    assert floor == FLOOR
    expected = [(h.chunk_id, h.text) for h in every if h.relevance >= floor]
    assert expected and len(expected) < len(every), "the query must have hits on both sides"
    answers = {entry: drive(corpus, {}) for entry, (_, drive) in ENTRY_POINTS.items()}
    assert answers == dict.fromkeys(ENTRY_POINTS, expected)


# ---- the defaults each front declares ----------------------------------------------------


def _click_params(command: click.Command) -> dict[str, click.Parameter]:
    return {str(p.name): p for p in command.params}


@pytest.mark.parametrize("front", ["search", "eval"])
def test_the_click_flags_are_the_table_s(front: str) -> None:
    from narezka.cli.eval import eval_command
    from narezka.cli.search import search_command

    params = _click_params(search_command if front == "search" else eval_command)
    for option in shown_at(front):  # type: ignore[arg-type]
        param = params[option.name]
        assert option.flag in param.opts, option.name
        if option.default is INDEX_SETTING:
            assert param.default is None
        else:
            assert option.parse(param.default) == option.parse(option.default), option.name
        if option.choices:
            assert tuple(param.type.choices) == option.choices  # type: ignore[attr-defined]


def test_the_mcp_schema_is_the_table_s(corpus: Path) -> None:
    pytest.importorskip("mcp", reason="the serve extra (mcp) is not installed")
    from mcp import Client

    from narezka.serve.mcp_server import build_mcp
    from narezka.serve.service import Service

    from serve.helpers import run_async

    async def main(service: Service) -> dict[str, Any]:
        async with Client(build_mcp(service)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools["search"].input_schema

    with Service(corpus, watch=False) as service:
        schema = run_async(lambda: main(service))
    shown = {o.name for o in shown_at("mcp")}
    assert set(schema["properties"]) == {"query", "cursor", *shown}
    for name in shown:
        option, prop = OPTIONS[name], schema["properties"][name]
        expected = None if option.default is INDEX_SETTING else option.default
        assert prop.get("default") == expected, name
        assert option.help in prop["description"], name


def test_the_openapi_parameters_are_the_table_s() -> None:
    from narezka.serve.openapi import openapi_document

    params = {p["name"]: p for p in openapi_document()["paths"]["/search"]["get"]["parameters"]}
    shown = {o.name for o in shown_at("http")}
    assert set(params) == {"q", "cursor", *shown}
    for name in shown:
        option, schema = OPTIONS[name], params[name]["schema"]
        expected = None if option.default in (None, INDEX_SETTING) else option.default
        assert schema.get("default") == expected, name
        assert params[name]["description"].startswith(option.help)
        for bound, key in ((option.minimum, "minimum"), (option.maximum, "maximum")):
            if bound is not None and name != "k":  # k's top is the server's reply bound
                assert schema[key] == bound, name


def test_the_retrievers_fields_are_the_table_s(corpus: Path) -> None:
    pytest.importorskip("langchain_core", reason="the langchain extra is not installed")
    pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed")
    from narezka.integrations import RETRIEVER_FIELDS
    from narezka.integrations.langchain import NarezkaRetriever as LangChain
    from narezka.integrations.llamaindex import NarezkaRetriever as LlamaIndex

    assert set(RETRIEVER_FIELDS) == set(FIELDS)
    fields = LangChain.model_fields
    with Index.open(corpus) as index:
        llama = LlamaIndex(index)
        chain = LangChain(index=index)
        for name in FIELDS:
            assert fields[name].default == field_default(name), name
            assert getattr(chain, name) == getattr(llama, name) == field_default(name), name
        with pytest.raises(ConfigError, match="unknown retriever option colour"):
            LlamaIndex(index, colour="red")
        with pytest.raises(ConfigError, match="unknown search option colour"):
            chain.invoke(TEXT, colour="red")


# ---- max_chars, through every front ------------------------------------------------------


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_max_chars_cuts_the_text_every_front_returns(entry: str, corpus: Path) -> None:
    drive = ENTRY_POINTS[entry][1]
    whole = drive(corpus, {})
    cut = drive(corpus, {"max_chars": 40})
    # The same hits (the search saw whole chunks), each text its first 40 characters.
    assert whole and any(len(text) > 40 for _, text in whole)
    assert cut == [(chunk_id, text[:40]) for chunk_id, text in whole]


def test_max_chars_leaves_the_span_relevance_and_order_alone(corpus: Path) -> None:
    with Index.open(corpus) as index:
        whole = index.search(TEXT, expand="section")
        cut = index.search(TEXT, expand="section", max_chars=25)
        assert Query(TEXT, max_chars=25).options()["max_chars"] == 25
        with pytest.raises(ConfigError, match="max_chars must be a whole number of at least 1"):
            index.search(TEXT, max_chars=0)
    assert [(h.chunk_id, h.start, h.end, h.relevance) for h in cut] == [
        (h.chunk_id, h.start, h.end, h.relevance) for h in whole
    ]
    for short, full in zip(cut, whole, strict=True):
        assert short.text == full.text[:25] and short.snippet == full.snippet[:25]
        assert len(full.text) > 25  # a section is longer: the cut did cut


def test_a_bad_max_chars_is_refused_in_each_front_s_words(corpus: Path) -> None:
    result = CliRunner().invoke(cli, ["search", TEXT, "--store", str(corpus), "--max-chars", "0"])
    assert result.exit_code == 2 and "--max-chars must be a whole number" in result.stderr
    pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")
    from starlette.testclient import TestClient

    from narezka.serve.http_api import build_app
    from narezka.serve.service import Service

    with (
        Service(corpus, watch=False) as service,
        TestClient(build_app(service), base_url="http://127.0.0.1") as client,
    ):
        reply = client.get("/search", params={"q": TEXT, "max_chars": "many"})
    assert reply.status_code == 400 and "max_chars must be a whole number" in reply.json()["error"]
