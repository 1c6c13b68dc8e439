"""Score-gated folding of neighbouring chunks (narezka.search.folding)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from narezka import Index
from narezka.cli import cli
from narezka.errors import ConfigError
from narezka.search import Hit, fold_neighbours

from conftest import copy_examples


def hit(i: int, score: float, section: str = "A") -> Hit:
    return Hit(score, "u", "f.md", (section,), "t", "t", i, i * 10, i * 10 + 8)


def test_a_neighbour_folds_only_when_it_scored_close_to_its_hit() -> None:
    hits = [hit(3, 1.0), hit(4, 0.95), hit(9, 0.9), hit(2, 0.5)]
    assert [(h.chunk_index, h.merged) for h in fold_neighbours(hits)] == [(3, (2, 4)), (9, ())]
    # At 0.8 the chunk at 0.5 is too far behind: it stands as a result of its own.
    gated = fold_neighbours(hits, ratio=0.8)
    assert [(h.chunk_index, h.merged) for h in gated] == [(3, (4,)), (9, ()), (2, ())]
    assert [(h.start, h.end) for h in gated] == [(30, 48), (90, 98), (20, 28)]
    # The limit still counts results: the stand-alone neighbour takes a slot.
    assert [h.chunk_index for h in fold_neighbours(hits, 2, ratio=0.8)] == [3, 9]


ranked = st.lists(st.integers(0, 30), unique=True, min_size=1, max_size=15).flatmap(
    lambda order: st.lists(st.floats(0.01, 1.0), min_size=len(order), max_size=len(order)).map(
        lambda s: [hit(i, x) for i, x in zip(order, sorted(s, reverse=True), strict=True)]
    )
)


@given(ranked, st.floats(0.0, 1.0), st.one_of(st.none(), st.integers(1, 10)))
def test_every_folded_chunk_scored_at_least_ratio_times_its_hit(
    hits: list[Hit], ratio: float, limit: int | None
) -> None:
    score = {h.chunk_index: h.score for h in hits}
    folded = fold_neighbours(hits, limit, ratio=ratio)
    covered = [i for h in folded for i in (h.chunk_index, *h.merged)]
    assert len(covered) == len(set(covered))  # no chunk counts twice
    assert set(covered) <= set(score)
    for result in folded:
        for i in result.merged:
            assert score[i] >= ratio * result.score
    if limit is None:  # nothing is lost: every hit is a result or folded into one
        assert set(covered) == set(score)


@given(ranked)
def test_ratio_one_folds_nothing_below_the_hit(hits: list[Hit]) -> None:
    folded = fold_neighbours(hits, ratio=1.0)
    for result in folded:
        assert all(h.score == result.score for h in hits if h.chunk_index in result.merged)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.5", True])
def test_a_fold_ratio_outside_zero_to_one_is_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"fold must be a score ratio in \[0, 1\]"):
        fold_neighbours([hit(1, 1.0)], ratio=bad)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = tmp_path_factory.mktemp("folding") / "kb"
    copy_examples(corpus)
    built = CliRunner().invoke(cli, ["index", str(corpus), "--embedder", "hash", "--size", "40"])
    assert built.exit_code == 0, built.output
    return corpus


def test_index_search_folds_as_told(kb: Path) -> None:
    query = "бонусы баллы"
    with Index.open(kb) as index:
        default = index.search(query, mode="bm25", k=5)
        assert any(h.merged for h in default), "the query should hit neighbouring chunks"
        assert index.search(query, mode="bm25", k=5, fold=0.0) == default
        unfolded = index.search(query, mode="bm25", k=5, fold=None)
        assert not any(h.merged for h in unfolded)
        assert all((h.start, h.end) == (h.record.start, h.record.end) for h in unfolded)
        strict = index.search(query, mode="bm25", k=5, fold=1.0)
        assert sum(len(h.merged) for h in strict) <= sum(len(h.merged) for h in default)
        with pytest.raises(ConfigError, match="fold must be a score ratio"):
            index.search(query, fold=2.0)


def test_cli_fold_option(kb: Path) -> None:
    runner = CliRunner()
    base = ["search", "бонусы баллы", "--store", str(kb), "--mode", "bm25", "--format", "json"]
    default = runner.invoke(cli, base)
    assert default.exit_code == 0, default.output
    assert runner.invoke(cli, [*base, "--fold", "0"]).stdout == default.stdout
    off = runner.invoke(cli, [*base, "--fold", "off"])
    assert off.exit_code == 0, off.output
    assert any(h["merged"] for h in json.loads(default.stdout))
    assert not any(h["merged"] for h in json.loads(off.stdout))
    for bad in ("1.5", "half"):
        result = runner.invoke(cli, [*base, "--fold", bad])
        assert result.exit_code == 2 and "--fold" in result.stderr, result.output
