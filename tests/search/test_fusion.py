"""Hybrid fusion (narezka.search.fusion): RRF, weighted RRF and normalized score fusion."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from narezka import Index
from narezka.cli import cli
from narezka.embed import get_embedder
from narezka.errors import ConfigError
from narezka.search import Fusion, Query, fuse
from narezka.search.folding import AUTO_FOLD
from narezka.search.fusion import DEFAULT, SCORE_DENSE_WEIGHT, depth, hybrid_query
from narezka.store import StoredHit, open_store
from narezka.tokens.bm25 import bm25_encoder

from conftest import copy_examples, index_data


def ranking(ids: list[str], top: float = 1.0) -> list[StoredHit]:
    """A ranking best first, scores strictly falling."""
    return [StoredHit(pid, top - i / 100, {"pid": pid}) for i, pid in enumerate(ids)]


ids = st.lists(st.sampled_from("abcdefghijklmnop"), unique=True, max_size=12)
weights = st.floats(min_value=0.0, max_value=1.0)
fusions = st.one_of(
    st.builds(Fusion, st.just("rrf"), st.integers(0, 200)),
    st.builds(Fusion, st.just("weighted"), st.integers(0, 200), weights),
    st.builds(Fusion, st.just("score"), st.just(60), weights),
)


def order(hits: list[StoredHit]) -> list[str]:
    return [h.id for h in hits]


@given(ids, ids, fusions, st.integers(1, 20))
def test_fused_list_is_best_first_unique_and_drawn_from_the_rankings(
    dense: list[str], sparse: list[str], fusion: Fusion, k: int
) -> None:
    fused = fuse(ranking(dense), ranking(sparse), k, fusion)
    scores = [h.score for h in fused]
    assert scores == sorted(scores, reverse=True)
    assert len(set(order(fused))) == len(fused)
    assert set(order(fused)) <= set(dense) | set(sparse)
    pool = (set(dense) if fusion.dense_weight > 0 else set()) | (
        set(sparse) if fusion.dense_weight < 1 or fusion.method == "rrf" else set()
    )
    assert len(fused) == min(k, len(pool))
    assert all(h.payload == {"pid": h.id} for h in fused)


@given(ids, ids, st.integers(0, 200))
def test_rrf_ranks_a_point_better_in_both_lists_above_the_other(
    dense: list[str], sparse: list[str], rrf_k: int
) -> None:
    fused = order(fuse(ranking(dense), ranking(sparse), 100, Fusion("rrf", rrf_k=rrf_k)))
    both = [p for p in dense if p in sparse]
    for a in both:
        for b in both:
            if dense.index(a) < dense.index(b) and sparse.index(a) < sparse.index(b):
                assert fused.index(a) < fused.index(b)


@given(ids, ids, st.integers(0, 200))
def test_rrf_does_not_care_which_ranking_is_which(
    dense: list[str], sparse: list[str], rrf_k: int
) -> None:
    one = fuse(ranking(dense), ranking(sparse), 100, Fusion("rrf", rrf_k=rrf_k))
    other = fuse(ranking(sparse), ranking(dense), 100, Fusion("rrf", rrf_k=rrf_k))
    assert {h.id: h.score for h in one} == pytest.approx({h.id: h.score for h in other})


def test_rrf_scores_are_the_sum_of_reciprocal_ranks_from_one() -> None:
    fused = fuse(ranking(list("abc")), ranking(list("ca")), 5, Fusion("rrf"))
    assert order(fused) == ["a", "c", "b"]
    assert [h.score for h in fused] == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62])
    assert [h.score for h in fuse(ranking(list("ab")), [], 5, Fusion("rrf", rrf_k=0))] == [1.0, 0.5]


@given(ids, ids, st.integers(0, 200))
def test_weighted_rrf_at_equal_weights_ranks_as_rrf_at_half_the_score(
    dense: list[str], sparse: list[str], rrf_k: int
) -> None:
    plain = fuse(ranking(dense), ranking(sparse), 100, Fusion("rrf", rrf_k=rrf_k))
    half = fuse(ranking(dense), ranking(sparse), 100, Fusion("weighted", rrf_k, 0.5))
    assert order(half) == order(plain)
    assert [h.score for h in half] == pytest.approx([h.score / 2 for h in plain])


@pytest.mark.parametrize("method", ["weighted", "score"])
@given(dense=ids, sparse=ids, k=st.integers(1, 20))
def test_weights_one_to_zero_give_exactly_one_ranking(
    method: str, dense: list[str], sparse: list[str], k: int
) -> None:
    only_dense = fuse(ranking(dense), ranking(sparse), k, Fusion(method, dense_weight=1.0))  # type: ignore[arg-type]
    only_sparse = fuse(ranking(dense), ranking(sparse), k, Fusion(method, dense_weight=0.0))  # type: ignore[arg-type]
    assert order(only_dense) == dense[:k]
    assert order(only_sparse) == sparse[:k]


@given(ids, ids, weights)
def test_score_fusion_is_a_convex_mix_of_min_max_scores(
    dense: list[str], sparse: list[str], w: float
) -> None:
    fused = fuse(ranking(dense, 0.9), ranking(sparse, 17.0), 100, Fusion("score", dense_weight=w))
    for hit in fused:
        assert -1e-12 <= hit.score <= 1 + 1e-12
    if dense and dense == sparse:  # the same order on both sides: 1 for the best, 0 the worst
        assert fused[0].score == pytest.approx(1.0)
        assert order(fused) == dense


def test_score_fusion_keeps_how_far_apart_the_scores_were() -> None:
    # a is far ahead in dense, b barely ahead in BM25: ranks tie, scores do not.
    dense = [StoredHit("a", 0.9, {}), StoredHit("b", 0.1, {})]
    sparse = [StoredHit("b", 5.0, {}), StoredHit("a", 4.9, {})]
    even = Fusion("score", dense_weight=0.5)
    assert order(fuse(dense, sparse, 2, even)) == ["a", "b"]
    scores = {h.id: h.score for h in fuse(dense, sparse, 2, even)}
    assert scores["a"] == pytest.approx(0.5 * 1 + 0.5 * 0) and scores["b"] == pytest.approx(0.5)
    # A single candidate is as good as the best, not the worst.
    assert fuse([StoredHit("x", 0.3, {})], [], 1, even)[0].score == pytest.approx(0.5)


def test_score_fusion_weighs_bm25_0_7_unless_told() -> None:
    # Chosen on the dev suite (benchmarks/results/devsuite_decisions.md): dense 0.3, BM25 0.7.
    assert SCORE_DENSE_WEIGHT == 0.3
    assert Fusion().dense_weight == Fusion("score").dense_weight == DEFAULT.dense_weight == 0.3
    # The rank fusions keep equal weights: plain rrf refuses any other.
    assert Fusion("weighted").dense_weight == Fusion("rrf").dense_weight == 0.5
    assert Fusion("score", dense_weight=0.5).dense_weight == 0.5
    # a leads dense by far, b leads BM25 by far: the default puts BM25's leader first.
    dense = [StoredHit("a", 0.9, {}), StoredHit("b", 0.1, {})]
    sparse = [StoredHit("b", 5.0, {}), StoredHit("a", 1.0, {})]
    fused = fuse(dense, sparse, 2, Fusion())
    assert order(fused) == ["b", "a"]
    assert [h.score for h in fused] == pytest.approx([0.7, 0.3])
    assert Fusion().label == "score dense=0.3"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"method": "borda"}, "unknown fusion 'borda'; use one of rrf, weighted, score"),
        ({"rrf_k": -1}, "RRF k must be a whole number ≥ 0, got -1"),
        ({"rrf_k": 1.5}, "RRF k must be a whole number ≥ 0, got 1.5"),
        ({"rrf_k": True}, "RRF k must be a whole number"),
        ({"method": "weighted", "dense_weight": -0.2}, r"dense weight must lie in \[0, 1\]"),
        ({"method": "score", "dense_weight": 1.5}, r"dense weight must lie in \[0, 1\]"),
        ({"method": "score", "dense_weight": math.nan}, r"dense weight must lie in \[0, 1\]"),
        ({"method": "score", "dense_weight": "0.3"}, "dense weight must be a number"),
        ({"method": "rrf", "dense_weight": 0.7}, "plain rrf weighs both rankings equally"),
        ({"rrf_k": 10}, "RRF k applies to rrf and weighted fusion"),
        ({"method": "score", "rrf_k": 10}, "RRF k applies to rrf and weighted fusion"),
    ],
)
def test_bad_fusion_options_are_refused_with_what_is_wrong(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Fusion(**options)  # type: ignore[arg-type]


def test_fusion_is_for_hybrid_search_only() -> None:
    with pytest.raises(ConfigError, match="applies to hybrid search, not to dense"):
        Query("q", mode="dense", fusion=Fusion("weighted"))
    with pytest.raises(ConfigError, match=r"must be a narezka\.search\.Fusion"):
        Query("q", fusion="score")  # type: ignore[arg-type]
    Query("q", mode="dense", fusion=Fusion())  # the default is no change
    with pytest.raises(ConfigError, match="applies to hybrid search, not to bm25"):
        Query("q", mode="bm25", fusion=Fusion("rrf"))


# ---- on a real index --------------------------------------------------------------------


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = tmp_path_factory.mktemp("fusion") / "kb"
    copy_examples(corpus)
    built = CliRunner().invoke(cli, ["index", str(corpus), "--embedder", "hash"])
    assert built.exit_code == 0, built.output
    return corpus


QUERIES = ["можно ли вернуть вскрытый чай", "сколько стоит доставка курьером", "гарантия лампа"]


def old_rrf(dense: list[StoredHit], sparse: list[StoredHit], k: int) -> list[str]:
    """The fusion the store used to do itself (store/base.py rrf_fuse before the move), each
    ranking's equal scores ordered by file and place (the engine returns them in no order)."""

    def place(hit: StoredHit) -> tuple[float, str, int]:
        return (-hit.score, str(hit.payload["file_path"]), int(hit.payload["start"]))

    scores: dict[str, float] = {}
    for ranked in (dense, sparse):
        for rank, hit in enumerate(sorted(ranked, key=place), start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (60 + rank)
    return [pid for pid, _ in sorted(scores.items(), key=lambda item: -item[1])[:k]]


def test_hybrid_query_fuses_one_batch_call_as_the_store_used_to(kb: Path) -> None:
    model, bm25 = get_embedder("hash"), bm25_encoder()
    store = open_store(index_data(kb / ".narezka"))
    try:
        store.ensure(model.dim)
        for q in QUERIES:
            d, s = model.embed_queries([q])[0], bm25.encode_query(q)
            both = store.rankings(d, s, k=depth(20))
            assert order(both.dense) == order(store.query(d, k=depth(20)))
            assert order(both.sparse) == order(store.query(sparse=s, mode="bm25", k=depth(20)))
            expected = old_rrf(both.dense, both.sparse, 20)
            assert order(hybrid_query(store, d, s, k=20, fusion=Fusion("rrf"))) == expected
    finally:
        store.close()


def test_index_search_takes_each_fusion_and_the_default_is_score_fusion(kb: Path) -> None:
    with Index.open(kb) as index:
        for q in QUERIES:
            default = [h.chunk_id for h in index.search(q)]
            assert [h.chunk_id for h in index.search(q, fusion=Fusion("score"))] == default
            assert [h.chunk_id for h in index.search(q, fold=AUTO_FOLD)] == default
            rrf = [h.chunk_id for h in index.search(q, fusion=Fusion("rrf"), fold=0)]
            half = index.search(q, fusion=Fusion("weighted", dense_weight=0.5), fold=0)
            assert [h.chunk_id for h in half] == rrf
            # A ranking of weight 0 adds nothing. Folding is off on both sides: the other
            # ranking's candidates (score 0 here) would still be neighbours to fold, and
            # which of the hash embedder's tied candidates the engine returns is its choice.
            dense = [h.chunk_id for h in index.search(q, mode="dense", k=3, fold=None)]
            weighted = index.search(q, k=3, fusion=Fusion("weighted", dense_weight=1.0), fold=None)
            assert [h.chunk_id for h in weighted] == dense
            scored = index.search(q, k=3, fusion=Fusion("score", dense_weight=0.0), fold=None)
            assert [h.chunk_id for h in scored] == [
                h.chunk_id for h in index.search(q, mode="bm25", k=3, fold=None)
            ]


def test_cli_fusion_options(kb: Path) -> None:
    runner = CliRunner()
    base = ["search", "вскрытый чай", "--store", str(kb), "--format", "json", "-k", "3"]
    plain = runner.invoke(cli, base)
    assert plain.exit_code == 0, plain.output
    same = runner.invoke(cli, [*base, "--fusion", "score", "--dense-weight", "0.3"])
    assert same.stdout == plain.stdout
    ranked = runner.invoke(cli, [*base, "--fusion", "rrf", "--rrf-k", "60", "--fold", "0"])
    assert ranked.exit_code == 0, ranked.output
    assert ranked.stdout != plain.stdout  # RRF's scores are reciprocal ranks, not [0, 1]
    for args, message in [
        (["--fusion", "weighted", "--dense-weight", "-1"], "--dense-weight must be a number in"),
        (["--fusion", "rrf", "--rrf-k", "-5"], "--rrf-k must be a whole number of at least 0"),
        (["--rrf-k", "30"], "RRF k applies to rrf and weighted fusion, not to 'score'"),
        (["--fusion", "rrf", "--dense-weight", "0.8"], "use fusion 'weighted'"),
        (["--mode", "dense", "--fusion", "rrf"], "apply to --mode hybrid"),
        (["--fold", "often"], "--fold takes a ratio in [0, 1], auto or off"),
    ]:
        bad = runner.invoke(cli, [*base, *args])
        assert bad.exit_code == 2, (args, bad.output)
        assert message in bad.stderr, (args, bad.stderr)


@pytest.mark.parametrize("method", ["rrf", "weighted", "score"])
def test_tied_scores_fuse_the_same_whatever_order_the_engine_returns_them(method: str) -> None:
    def hit(name: str, score: float, start: int) -> StoredHit:
        return StoredHit(name, score, {"file_path": "a.md", "start": start})

    dense = [hit("x", 0.9, 0), hit("y", 0.5, 10), hit("z", 0.5, 20)]
    sparse = [hit("z", 2.0, 20), hit("w", 1.0, 30), hit("y", 1.0, 10)]
    fusion = Fusion(method)  # type: ignore[arg-type]
    first = [h.id for h in fuse(dense, sparse, 4, fusion)]
    again = [h.id for h in fuse(dense[::-1], sparse[::-1], 4, fusion)]
    assert first == again
