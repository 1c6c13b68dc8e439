"""Metrics on hand-made retrievals: hit@k, MRR, ceiling, sizes, sign test, miss causes."""

from __future__ import annotations

import math

import pytest

from narezka.errors import ConfigError
from narezka.evaluate import (
    ChunkView,
    GoldenQuestion,
    Retrieved,
    StrategySpec,
    ceiling,
    miss_cause,
    parse_ks,
    parse_strategies,
    parse_strategy,
    score_strategy,
    sign_test,
    size_stats,
)
from narezka.evaluate.metrics import contains_all, first_hit_rank, mean_reciprocal_rank
from narezka.evaluate.runner import (
    ARCHIVED,
    BELOW_K,
    NOT_IN_CORPUS,
    SIMILAR,
    SPLIT,
    QuestionResult,
)


def test_a_hit_needs_every_string_in_one_text_ignoring_case() -> None:
    assert contains_all("Курьер: 5–10 КГ — 890 ₽", ["5–10 кг", "890 ₽"])
    assert not contains_all("5–10 кг", ["5–10 кг", "890 ₽"])
    texts = ["про 890 ₽", "5–10 кг", "Ёлка 5–10 кг за 890 ₽"]
    assert first_hit_rank(texts, ["5–10 кг", "890 ₽"]) == 3
    assert first_hit_rank(texts[:2], ["5–10 кг", "890 ₽"]) is None


def test_mrr_counts_misses_as_zero() -> None:
    assert mean_reciprocal_rank([1, 2, None, 4]) == pytest.approx((1 + 0.5 + 0 + 0.25) / 4)
    assert mean_reciprocal_rank([]) == 0.0


def test_ceiling_counts_questions_whose_strings_share_one_chunk() -> None:
    chunks = ["Тариф: 3–5 кг", "стоит 990 ₽", "Возврат 14 дней"]
    questions = [["3–5 кг", "990 ₽"], ["ВОЗВРАТ", "14 дней"], ["990"]]
    assert ceiling(questions, chunks) == pytest.approx(2 / 3)
    assert ceiling(questions, ["Тариф: 3–5 кг стоит 990 ₽", *chunks]) == 1.0


def test_size_stats_uses_the_nearest_rank_p95() -> None:
    stats = size_stats(list(range(1, 101)))
    assert (stats.mean, stats.p95) == (50.5, 95.0)
    assert size_stats([7]).p95 == 7.0 and size_stats([]).mean == 0.0


def _q(q: str, *strings: str, category: str = "", source: str = "") -> GoldenQuestion:
    return GoldenQuestion(q, strings, category, source)


def test_score_strategy_computes_hits_mrr_ceiling_and_over_window() -> None:
    questions = [_q("a", "alpha"), _q("b", "beta", "gamma"), _q("c", "delta"), _q("d", "omega")]
    retrieved = {
        "a": ["ALPHA here", "x", "y"],  # rank 1
        "b": ["beta", "gamma", "beta and gamma"],  # rank 3: strings apart do not count
        "c": ["x", "delta"],  # rank 2
        "d": ["x", "y", "z"],  # miss, though a chunk has it: ranked below k
    }
    chunks = [
        ChunkView("a.md", "alpha", 5, 3),
        ChunkView("a.md", "beta and gamma", 14, 9),
        ChunkView("b.md", "delta omega", 11, 12),
    ]

    def retrieve(q: GoldenQuestion) -> list[Retrieved]:
        return [Retrieved(f"u{i}", "f.md", t) for i, t in enumerate(retrieved[q.q])]

    result = score_strategy(
        StrategySpec("fixed", {"size": 10}), questions, chunks, retrieve, [1, 3, 5], max_tokens=10
    )
    assert [r.rank for r in result.questions] == [1, 3, 2, None]
    assert result.hits == {1: 0.25, 3: 0.75, 5: 0.75}
    assert result.mrr == pytest.approx((1 + 1 / 3 + 1 / 2) / 4)
    assert result.ceiling == 1.0
    assert result.over_window == 1 and result.chunks == 3
    assert result.chars.mean == pytest.approx(10.0)
    assert result.outcomes(1) == [True, False, False, False]
    assert result.label == "fixed:size=10"
    unbounded = score_strategy(StrategySpec("x"), questions, chunks, retrieve, [1])
    assert unbounded.over_window == 0


@pytest.mark.parametrize(
    ("a_only", "b_only", "ties", "p"),
    [
        (0, 0, 4, 1.0),
        (5, 0, 0, 2 / 32),
        (6, 0, 3, 2 / 64),
        (0, 6, 1, 2 / 64),
        (3, 3, 0, 1.0),
        (8, 2, 5, 2 * (1 + 10 + 45) / 1024),
        (20, 5, 0, 2 * sum(math.comb(25, i) for i in range(6)) / 2**25),
    ],
)
def test_sign_test_gives_the_exact_two_sided_binomial_p(
    a_only: int, b_only: int, ties: int, p: float
) -> None:
    a = [True] * a_only + [False] * b_only + [True] * ties
    b = [False] * a_only + [True] * b_only + [True] * ties
    test = sign_test(a, b)
    assert (test.a_only, test.b_only, test.ties) == (a_only, b_only, ties)
    assert test.p_value == pytest.approx(p, rel=1e-12)


def test_sign_test_rejects_unpaired_outcomes() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        sign_test([True], [True, False])


def _result(
    question: GoldenQuestion,
    top: Retrieved | None,
    *,
    in_one_chunk: bool = True,
    absent: tuple[str, ...] = (),
) -> QuestionResult:
    return QuestionResult(question, None, (top,) if top else (), in_one_chunk, absent)


def test_miss_causes_most_fundamental_first() -> None:
    q = _q("q", "x", category="returns", source="returns.md")
    other = Retrieved("faq.md#a", "faq.md", "t", category="returns")
    archived = Retrieved("old.md#a", "old.md", "t", category="returns", archived=True)
    same = Retrieved("returns.md#b", "returns.md", "t", category="returns")
    assert miss_cause(_result(q, other, in_one_chunk=False, absent=("x",))) == NOT_IN_CORPUS
    assert miss_cause(_result(q, archived, in_one_chunk=False)) == SPLIT
    assert miss_cause(_result(q, archived)) == ARCHIVED
    assert miss_cause(_result(q, other)) == SIMILAR
    assert miss_cause(_result(q, same)) == BELOW_K
    elsewhere = Retrieved("pay.md#a", "pay.md", "t", category="payment")
    assert miss_cause(_result(q, elsewhere)) == BELOW_K
    assert miss_cause(_result(q, None)) == BELOW_K


def test_strategy_specs_parse_ints_and_reject_junk() -> None:
    spec = parse_strategy("overlap:size=1500,overlap=250,unit=chars")
    assert spec.name == "overlap"
    assert dict(spec.params) == {"size": 1500, "overlap": 250, "unit": "chars"}
    assert spec.label == "overlap:size=1500,overlap=250,unit=chars"
    labels = [s.label for s in parse_strategies("fixed:size=1500  headings\n")]
    assert labels == ["fixed:size=1500", "headings"]
    for bad in ("fixed:size", ":size=1", "fixed:=3"):
        with pytest.raises(ConfigError):
            parse_strategy(bad)
    with pytest.raises(ConfigError, match="twice"):
        parse_strategies("headings headings")
    with pytest.raises(ConfigError):
        parse_strategies("  ")
    assert parse_ks("5,1,3,3") == (1, 3, 5)
    for bad_k in ("0,3", "a", ""):
        with pytest.raises(ConfigError):
            parse_ks(bad_k)
