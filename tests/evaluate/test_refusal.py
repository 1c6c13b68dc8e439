"""Unanswerable questions in golden sets and the min_relevance trade ``eval`` reports."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.cli.eval import eval_command
from narezka.evaluate import (
    ChunkView,
    GoldenQuestion,
    Retrieved,
    check_against_corpus,
    markdown_report,
    parse_golden,
    score_strategy,
)
from narezka.evaluate.html import eval_page_data
from narezka.evaluate.refusal import auroc, refusal, refusal_markdown
from narezka.evaluate.report import refusal_table
from narezka.evaluate.runner import EvalRun, StrategyResult
from narezka.evaluate.specs import StrategySpec
from narezka.search.relevance import MIN_RELEVANCE

NEAR = {
    "q": "как оформить подарочную карту",
    "answerable": False,
    "must_contain": [],
    "evidence": ["номинал 5000"],
    "source": "held/gift.md",
}


def test_unanswerable_lines_load_in_either_format_and_bad_ones_are_reported() -> None:
    lines = [
        json.dumps({"q": "сколько стоит", "must_contain": ["990 ₽"]}),
        json.dumps(NEAR, ensure_ascii=False),
        json.dumps({"q": "без полей", "answerable": False}),
        json.dumps({"q": "a", "answerable": "no"}),
        json.dumps({"q": "b", "answerable": False, "must_contain": ["x"]}),
        json.dumps({"q": "c", "answerable": False, "evidence": "x"}),
        json.dumps({"q": "d", "answerable": False, "references": [{"doc": "a", "start": 0}]}),
    ]
    golden = parse_golden(lines)
    assert [(q.line, q.answerable) for q in golden.questions] == [(1, True), (2, False), (3, False)]
    near = golden.questions[1]
    assert near.evidence == ("номинал 5000",) and near.source == "held/gift.md"
    assert near.must_contain == () and golden.unanswerable == golden.questions[1:]
    problems = {p.line: p.problem for p in golden.problems}
    assert sorted(problems) == [4, 5, 6, 7]
    assert "true or false" in problems[4]
    assert "no" in problems[5] and "must_contain" in problems[5]
    assert "evidence" in problems[6]
    # An unanswerable question has no format: it fits a span set as well.
    spans = parse_golden(
        [
            json.dumps({"q": "s", "references": [{"doc": "a.md", "start": 0, "end": 3}]}),
            json.dumps({"q": "u", "answerable": False}),
        ]
    )
    assert len(spans.questions) == 2 and spans.format == "spans" and not spans.problems


def test_evidence_found_in_the_corpus_is_flagged_but_the_question_kept() -> None:
    golden = parse_golden([json.dumps(NEAR, ensure_ascii=False)])
    texts = {"a.md": "Подарочная карта: НОМИНАЛ 5000 ₽."}
    kept, absent = check_against_corpus(golden, texts)
    assert len(kept.questions) == 1 and not absent
    [problem] = kept.problems
    assert not problem.skipped and "unanswerable" in problem.problem
    assert "номинал 5000" in problem.problem
    clean, _ = check_against_corpus(golden, {"a.md": "Доставка за 990 ₽."})
    # The source is held out of the corpus on purpose: that is no problem for such a question.
    assert len(clean.questions) == 1 and not clean.problems


def test_auroc_counts_pairs_and_ties_half() -> None:
    assert auroc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auroc([0.1], [0.9]) == 0.0
    assert auroc([0.5, 0.9], [0.5, 0.1]) == pytest.approx((0.5 + 1 + 1 + 1) / 4)
    assert auroc([], [0.1]) is None and auroc([0.1], []) is None


def _hits(*relevances: float, answer_at: int | None = None) -> list[Retrieved]:
    texts = ["ответ здесь" if n == answer_at else f"шум {n}" for n in range(1, 1 + len(relevances))]
    return [
        Retrieved(f"u{n}", "a.md", t, relevance=r)
        for n, (t, r) in enumerate(zip(texts, relevances, strict=True), start=1)
    ]


def _scored(cases: Sequence[tuple[GoldenQuestion, list[Retrieved]]]) -> StrategyResult:
    answers = {q.q: hits for q, hits in cases}
    chunks = [ChunkView("a.md", "ответ здесь", 11, 2)]
    return score_strategy(
        StrategySpec("headings"), [q for q, _ in cases], chunks, lambda q: answers[q.q], (1, 5)
    )


def test_the_trade_is_counted_threshold_by_threshold() -> None:
    good = ("ответ",)
    cases = [
        # Answered at rank 1 with top relevances 0.9, 0.3 and 0.04.
        (GoldenQuestion("a1", good), _hits(0.9, 0.2, answer_at=1)),
        (GoldenQuestion("a2", good), _hits(0.3, answer_at=1)),
        (GoldenQuestion("a3", good), _hits(0.04, 0.01, answer_at=1)),
        # Answered at rank 2: not a correct top answer, yet not refused while a hit holds.
        (GoldenQuestion("a4", good), _hits(0.15, 0.6, answer_at=2)),
        # Unanswerable: best relevances 0.25 (not at the top), 0.03, and no hit at all.
        (GoldenQuestion("u1", (), answerable=False), _hits(0.02, 0.25)),
        (GoldenQuestion("u2", (), answerable=False), _hits(0.03)),
        (GoldenQuestion("u3", (), answerable=False), []),
    ]
    result = _scored(cases)
    # Unanswerable questions count in no hit figure.
    assert len(result.questions) == 4 and len(result.unanswerable) == 3
    assert result.hits[1] == 0.75 and result.hits[5] == 1.0
    trade = refusal(result, 0.05, thresholds=(0.01, 0.1, 0.5))
    assert trade is not None
    assert (trade.answerable, trade.correct, trade.unanswerable) == (4, 3, 3)
    assert [r.threshold for r in trade.rows] == [0.01, 0.05, 0.1, 0.5]
    at = trade.at(0.05)
    assert (at.unanswerable_refused, at.correct_dropped, at.correct_kept) == (2, 1, 2)
    assert at.answerable_refused == 1  # a3: its best hit is 0.04
    at = trade.at(0.5)
    assert (at.unanswerable_refused, at.correct_dropped, at.correct_kept) == (3, 2, 1)
    assert at.answerable_refused == 2  # a4 keeps its 0.6
    assert trade.at(0.01).unanswerable_refused == 1  # only the question without hits
    # Top relevances: correct 0.9, 0.3, 0.04 against unanswerable 0.02, 0.03, 0 (no hit).
    assert trade.auroc == 1.0
    data = trade.to_json()
    assert data["thresholds"][1]["unanswerable_refused_share"] == pytest.approx(2 / 3)
    text = "\n".join(refusal_markdown(trade))
    assert "| **0.05 (in force)** | 66.7% (2/3) | 33.3% (1/3) | 66.7% (2/3) | 25.0% (1/4) |" in text
    assert "AUROC (top-hit relevance, answered at rank 1 against unanswerable): 1.000" in text


def test_hits_without_relevance_give_no_trade() -> None:
    cases = [(GoldenQuestion("a1", ("ответ",)), [Retrieved("u", "a.md", "ответ здесь")])]
    assert refusal(_scored(cases), 0.05) is None


TINY = {
    "delivery.md": "# Доставка\n\nКурьер привезёт заказ за 990 ₽ в пределах города.\n",
    "returns.md": "# Возврат\n\nВернуть товар можно за 14 дней с чеком.\n",
    "payment.md": "# Оплата\n\nОплатить заказ можно картой или наличными курьеру.\n",
}


@pytest.fixture
def golden_corpus(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    for name, text in TINY.items():
        (corpus / name).write_text(text, encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    lines = [
        {"q": "сколько стоит доставка курьер", "must_contain": ["990 ₽"]},
        {"q": "за сколько дней вернуть товар", "must_contain": ["14 дней"]},
        {"q": "чем оплатить заказ", "must_contain": ["картой"]},
        {"q": "как оформить подарочную карту", "answerable": False, "evidence": ["номинал"]},
        {"q": "квантовая хромодинамика глюонов", "answerable": False},
    ]
    golden.write_text(
        "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8"
    )
    return corpus, golden


def test_eval_reports_the_trade_in_json_markdown_and_the_terminal(
    tmp_path: Path, golden_corpus: tuple[Path, Path]
) -> None:
    corpus, golden = golden_corpus
    report = tmp_path / "RESULTS.md"
    args = [str(corpus), "--golden", str(golden), "--strategies", "headings", "--mode", "bm25"]
    args += ["-k", "1,3", "--embedder", "hash", "--cache", str(tmp_path / "c.sqlite")]
    result = CliRunner().invoke(eval_command, [*args, "--report", str(report), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["min_relevance"] == MIN_RELEVANCE
    [strategy] = data["strategies"]
    assert len(strategy["questions"]) == 3 and len(strategy["unanswerable"]) == 2
    trade = strategy["refusal"]
    assert trade["answerable"] == 3 and trade["unanswerable"] == 2
    # The table agrees with the per-question relevances the JSON carries.
    correct_tops = [q["relevance"][0] for q in strategy["questions"] if q["rank"] == 1]
    best_unanswerable = [q["best_relevance"] for q in strategy["unanswerable"]]
    assert trade["correct_at_1"] == len(correct_tops) > 0
    for row in trade["thresholds"]:
        t = row["threshold"]
        assert row["correct_dropped"] == sum(r < t for r in correct_tops)
        assert row["unanswerable_refused"] == sum(r < t for r in best_unanswerable)
    assert MIN_RELEVANCE in [row["threshold"] for row in trade["thresholds"]]
    # The nonsense question shares no term with the corpus: bm25 finds nothing, it is refused.
    assert strategy["unanswerable"][1]["retrieved"] == []
    assert trade["thresholds"][0]["unanswerable_refused"] >= 1
    text = report.read_text(encoding="utf-8")
    assert "## Nothing relevant: min_relevance against unanswerable questions (headings)" in text
    assert "hit@3 of 3" in text  # unanswerable questions do not count as misses
    assert "(in force)" in text
    # narezka.toml's min_relevance is the threshold in force.
    (corpus / "narezka.toml").write_text("[settings]\nmin_relevance = 0.42\n", encoding="utf-8")
    table = CliRunner().invoke(eval_command, args)
    assert table.exit_code == 0, table.output
    assert "0.42 ◀ in force" in table.stdout and "2 unanswerable" in table.stdout
    flagged = CliRunner().invoke(eval_command, [*args, "--min-relevance", "0.3", "--json"])
    assert json.loads(flagged.stdout)["min_relevance"] == 0.3
    bad = CliRunner().invoke(eval_command, [*args, "--min-relevance", "2"])
    assert bad.exit_code == 2 and "min-relevance" in bad.output


def test_the_html_page_carries_the_trade() -> None:
    questions = [GoldenQuestion("a", ("ответ",)), GoldenQuestion("u", (), answerable=False)]
    answers = {"a": _hits(0.8, answer_at=1), "u": _hits(0.01)}
    result = score_strategy(
        StrategySpec("headings"),
        questions,
        [ChunkView("a.md", "ответ здесь", 11, 2)],
        lambda q: answers[q.q],
        (1,),
    )
    run = EvalRun("kb", "g.jsonl", "hash", None, "hybrid", (1,), False, [], [result])
    run.min_relevance = 0.3
    index, _ = eval_page_data(run)
    trade = index["refusal"]
    assert trade["strategy"] == "headings" and trade["min_relevance"] == 0.3
    row = next(r for r in trade["thresholds"] if r["threshold"] == 0.3)
    assert (row["unanswerable_refused"], row["correct_dropped"]) == (1, 0)
    assert "min_relevance" in markdown_report(run)
    table = refusal_table(run)
    assert table is not None and table.row_count == len(trade["thresholds"])
