"""The BM25 analyzer is a property of the index: recorded, read back by search and sync, and
never silently changed under stored vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.api.evaluating import evaluate
from narezka.api.indexing import index, read_index_meta
from narezka.api.maintenance import sync
from narezka.api.searching import search
from narezka.cli import cli
from narezka.embed import HashEmbedder
from narezka.errors import ConfigError


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "refund.md").write_text(
        "# Возврат\n\nДеньги вернут на карту за три дня.\n", encoding="utf-8"
    )
    (root / "cards.md").write_text(
        "# Карты\n\nПодарочную карту можно оплатить картой любого банка.\n", encoding="utf-8"
    )
    return root


def model() -> HashEmbedder:
    return HashEmbedder(32)


def files(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.file_path for h in hits]


def test_search_analyzes_the_query_as_the_index_was_built(corpus: Path, tmp_path: Path) -> None:
    lemma, snowball = tmp_path / "lemma", tmp_path / "snowball"
    index(corpus, store_dir=lemma, embedder=model(), bm25="lemma")
    index(corpus, store_dir=snowball, embedder=model())
    assert read_index_meta(lemma)["bm25"] == "lemma"
    assert read_index_meta(snowball)["bm25"] == "snowball"
    # "вернёт" and "вернут" share a lemma; their Snowball stems differ.
    assert files(search("вернёт", lemma, mode="bm25", embedder=model())) == ["refund.md"]
    assert files(search("вернёт", snowball, mode="bm25", embedder=model())) == []


def test_an_index_from_before_analyzers_searches_with_snowball(corpus: Path) -> None:
    index(corpus, embedder=model())
    before = files(search("карту вернут", corpus, mode="bm25", embedder=model()))
    meta_path = corpus / ".narezka" / "index.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    del meta["bm25"]
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    assert files(search("карту вернут", corpus, mode="bm25", embedder=model())) == before
    assert set(before) == {"refund.md", "cards.md"}
    assert index(corpus, embedder=model()).files_unchanged == 2  # sync keeps snowball


def test_another_analyzer_on_an_existing_index_is_refused_until_rebuild(corpus: Path) -> None:
    index(corpus, embedder=model())
    refused = r"built with BM25 analyzer 'snowball', not 'lemma'.*--rebuild"
    with pytest.raises(ConfigError, match=refused):
        index(corpus, embedder=model(), bm25="lemma")
    assert read_index_meta(corpus / ".narezka")["bm25"] == "snowball"
    assert index(corpus, embedder=model(), bm25="lemma", rebuild=True).files_new == 2
    # Naming no analyzer, or syncing, keeps the one the index was built with.
    assert index(corpus, embedder=model()).files_unchanged == 2
    sync(corpus, embedder=model())
    assert read_index_meta(corpus / ".narezka")["bm25"] == "lemma"
    with pytest.raises(ConfigError, match="unknown BM25 analyzer 'stems'"):
        index(corpus, embedder=model(), bm25="stems")


def test_cli_index_takes_bm25(corpus: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(
        cli, ["index", str(corpus), "--embedder", "hash", "--bm25", "lemma+ident", "--json"]
    )
    assert done.exit_code == 0, done.output
    assert read_index_meta(corpus / ".narezka")["bm25"] == "lemma+ident"
    refused = runner.invoke(cli, ["index", str(corpus), "--embedder", "hash", "--bm25", "lemma"])
    assert refused.exit_code != 0 and "--rebuild" in refused.output
    bad = runner.invoke(cli, ["index", str(corpus), "--embedder", "hash", "--bm25", "nope"])
    assert bad.exit_code == 2 and "nope" in bad.output


def test_eval_specs_sweep_the_analyzer(corpus: Path, tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        json.dumps({"q": "вернёт ли магазин", "must_contain": ["вернут на карту"]}) + "\n",
        encoding="utf-8",
    )
    cache = tmp_path / "cache.sqlite"
    run = evaluate(
        corpus,
        golden,
        strategies="headings headings:bm25=lemma",
        mode="bm25",
        embedder=model(),
        cache_path=cache,
        ks="1",
    )
    assert [s.label for s in run.strategies] == ["headings", "headings:bm25=lemma"]
    # Both strategies cut the same chunks; only the analyzer tells them apart.
    assert [s.chunks for s in run.strategies] == [2, 2]
    assert [s.hits[1] for s in run.strategies] == [0.0, 1.0]
    with pytest.raises(ConfigError, match="unknown BM25 analyzer 'nope'"):
        evaluate(corpus, golden, strategies="headings:bm25=nope", embedder=model())
