"""``narezka eval --html``: answer marking, and the page in headless Chromium on the example KB
(HashEmbedder: fast and deterministic)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from narezka.api.evaluating import evaluate
from narezka.cli.eval import eval_command
from narezka.embed import HashEmbedder
from narezka.evaluate import (
    EvalRun,
    GoldenQuestion,
    Reference,
    Retrieved,
    StrategySpec,
    best_comparisons,
    compare_all,
    miss_cause,
    parse_golden,
)
from narezka.evaluate.html import answer_ranges, html_report

from conftest import EXAMPLES
from inspector.pages import write_corpus

STRATEGIES = "fixed:size=120 headings"


def test_expected_strings_are_marked_wherever_they_occur_ignoring_case() -> None:
    q = GoldenQuestion("q", ("Чай", "вернуть чай"))
    hit = Retrieved("u", "a.md", "Можно ВЕРНУТЬ ЧАЙ? Чай — да.")
    assert answer_ranges(q, hit) == [(6, 17), (19, 22)]
    text = hit.text
    assert [text[s:e] for s, e in answer_ranges(q, hit)] == ["ВЕРНУТЬ ЧАЙ", "Чай"]
    assert answer_ranges(GoldenQuestion("q", ("нет",)), hit) == []


def test_reference_excerpts_are_marked_where_the_hit_covers_them() -> None:
    refs = (Reference("a.md", 5, 15), Reference("a.md", 40, 50), Reference("b.md", 0, 99))
    q = GoldenQuestion("q", (), references=refs)
    hit = Retrieved("u", "a.md", "x" * 30, start=10, end=40)
    # [5, 15) clipped to the hit; [40, 50) only touches its end; b.md is another document.
    assert answer_ranges(q, hit) == [(0, 5)]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache") / "embeddings.sqlite"


@pytest.fixture(scope="module")
def run(cache: Path) -> EvalRun:
    return evaluate(
        EXAMPLES,
        EXAMPLES / "golden.jsonl",
        strategies=STRATEGIES,
        ks="1,3,5",
        embedder=HashEmbedder(64),
        cache_path=cache,
    )


@pytest.fixture(scope="module")
def report(run: EvalRun, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eval") / "report.html"
    out.write_text(html_report(run, command="narezka eval …"), encoding="utf-8")
    return out


def test_the_page_shows_results_plot_and_sign_tests(
    run: EvalRun, report: Path, open_page: Any, tmp_path: Path
) -> None:
    page = open_page(report)
    best = run.best()
    assert best is not None
    rows = page.eval_on_selector_all(
        "table.results tbody tr", "rows => rows.map(r => r.cells[0].textContent)"
    )
    assert rows == [s.label + (" ★ best" if s is best else "") for s in run.strategies]
    hit3 = page.eval_on_selector_all(
        "table.results tbody tr", "rows => rows.map(r => r.cells[6].textContent)"
    )
    assert hit3 == [f"{100 * s.hits[3]:.1f}%" for s in run.strategies]
    signs = page.eval_on_selector_all(
        "table.signs tbody tr", "rows => rows.map(r => r.textContent)"
    )
    assert len(signs) == len([c for c in run.comparisons if c.k == 3]) == 1
    label = page.get_attribute("svg.plot", "aria-label")
    assert all(s.label in label for s in run.strategies)
    page.screenshot(path=str(tmp_path / "eval.png"), full_page=True)


def test_a_missed_question_shows_its_cause_and_what_was_retrieved(
    run: EvalRun, report: Path, open_page: Any, tmp_path: Path
) -> None:
    best = run.best()
    assert best is not None
    n, missed = next((n, r) for n, r in enumerate(best.questions) if not r.hit(3))
    page = open_page(report)
    page.check("#only-misses")
    shown = page.eval_on_selector_all(
        ".questions tbody tr:not([hidden])", "rows => rows.map(r => Number(r.dataset.question))"
    )
    assert shown == [
        i
        for i in range(len(best.questions))
        if any(not s.questions[i].hit(3) for s in run.strategies)
    ]
    page.click(f".questions tr[data-question='{n}']")
    column = page.locator(f"#drill section[data-strategy='{best.label}']")
    assert column.locator(".cause").text_content() == miss_cause(missed)
    texts = column.locator(".retrieved .text").all_text_contents()
    assert texts == [x.text for x in missed.retrieved[:5]]
    expected = {s.lower() for s in missed.question.must_contain}
    for mark in column.locator(".retrieved mark").all_text_contents():
        assert mark.lower() in expected
    assert page.text_content("#drill .q") == missed.question.q
    page.screenshot(path=str(tmp_path / "eval-miss.png"))


def test_a_hit_marks_the_answer_inside_the_chunk_that_answers(
    run: EvalRun, report: Path, open_page: Any
) -> None:
    best = run.best()
    assert best is not None
    n, hit = next((n, r) for n, r in enumerate(best.questions) if r.rank == 1)
    page = open_page(report)
    page.click(f".questions tr[data-question='{n}']")
    first = page.locator(f"#drill section[data-strategy='{best.label}'] .retrieved").first
    assert "is-hit" in (first.get_attribute("class") or "")
    marks = {m.lower() for m in first.locator("mark").all_text_contents()}
    assert marks == {s.lower() for s in hit.question.must_contain}


def test_eval_html_writes_the_page_with_the_plot_embedded(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "kb")
    golden = tmp_path / "golden.jsonl"
    lines = [
        {"q": "сколько стоит строка 7", "must_contain": ["70 ₽"]},
        {"q": "退货", "must_contain": ["七天内可以退货"]},
    ]
    golden.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), "utf-8")
    html, plot = tmp_path / "r.html", tmp_path / "r.png"
    args = [str(corpus), "--golden", str(golden), "--strategies", "headings", "-k", "1,3"]
    args += ["--embedder", "hash", "--cache", str(tmp_path / "c.sqlite"), "--html", str(html)]
    result = CliRunner().invoke(eval_command, [*args, "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    page = html.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="narezka-index">(.*?)</script>', page)
    assert block is not None
    index = json.loads(block.group(1))
    assert [s["label"] for s in index["strategies"]] == ["headings"]
    assert [q["q"] for q in index["questions"]] == [x["q"] for x in lines]
    assert "--html" in index["command"]
    assert index["plot"] and index["plot"].startswith("iVBOR")  # a PNG, base64


SPAN_A = "# Quokka\n\nThe quokka eats ferns at dawn.\n\n# Narwhal\n\nThe narwhal sings under ice.\n"
SPAN_B = "# Walrus\n\nThe walrus naps on rocks.\n"


def test_a_span_golden_set_marks_the_excerpt_and_names_the_miss(
    tmp_path: Path, open_page: Any
) -> None:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "a.md").write_text(SPAN_A, encoding="utf-8")
    (corpus / "b.md").write_text(SPAN_B, encoding="utf-8")
    ferns = SPAN_A.index("eats ferns")
    quokka = SPAN_A.index("quokka eats")
    golden = [
        {"q": "quokka ferns", "references": [{"doc": "a.md", "start": ferns, "end": ferns + 10}]},
        # The walrus page wins; the excerpt is on the quokka page.
        {"q": "walrus rocks", "references": [{"doc": "a.md", "start": quokka, "end": quokka + 6}]},
    ]
    run = evaluate(
        corpus,
        parse_golden([json.dumps(g) for g in golden]),
        strategies="headings:min_chars=0",
        ks="1",
        mode="bm25",
        embedder=HashEmbedder(32),
        cache_path=tmp_path / "c.sqlite",
    )
    report = tmp_path / "spans.html"
    report.write_text(html_report(run), encoding="utf-8")
    page = open_page(report)
    assert "recall@1" in page.text_content("table.results thead")
    page.click(".questions tr[data-question='0']")
    assert page.text_content("#drill ul li code") == f"a.md [{ferns}–{ferns + 10})"
    first = page.locator("#drill .retrieved").first
    assert first.locator("mark").all_text_contents() == ["eats ferns"]
    page.click(".questions tr[data-question='1']")
    missed = run.strategies[0].questions[1]
    assert not missed.hit(1) and miss_cause(missed) == "similar page won"
    assert page.text_content("#drill .cause") == "similar page won"
    assert page.locator("#drill .retrieved mark").count() == 0


def test_many_pairs_show_the_best_against_the_others_and_fold_the_rest(
    run: EvalRun, tmp_path: Path, open_page: Any
) -> None:
    copies = [
        dataclasses.replace(s, spec=StrategySpec(f"{s.spec.name}-copy{n}"))
        for n in range(3)
        for s in run.strategies
    ]
    many = dataclasses.replace(run, strategies=[*run.strategies, *copies])
    many.comparisons = compare_all(many.strategies, 3)
    assert len(many.comparisons) == 28
    report = tmp_path / "many.html"
    report.write_text(html_report(many), encoding="utf-8")
    page = open_page(report)
    shown = page.locator("table.signs").first.locator("tbody tr")
    best = best_comparisons(many)
    assert shown.count() == len(best) == 7
    assert shown.first.locator("td").first.text_content() == best[0].a
    assert page.locator("details table.signs tbody tr").count() == 28


def test_the_page_shows_the_min_relevance_trade(
    run: EvalRun, tmp_path: Path, open_page: Any
) -> None:
    from narezka.evaluate.refusal import run_refusal

    run = dataclasses.replace(run, min_relevance=0.3)
    trade = run_refusal(run)
    assert trade is not None
    out = tmp_path / "report.html"
    out.write_text(html_report(run), encoding="utf-8")
    page = open_page(out)
    rows = page.eval_on_selector_all(
        "table.refusal tbody tr", "rows => rows.map(r => [r.className, r.cells[0].textContent])"
    )
    assert [r[1].split(" ")[0] for r in rows] == [f"{t.threshold:g}" for t in trade.rows]
    assert [r for r in rows if r[0] == "best"] == [["best", "0.3 (in force)"]]
    kept = page.eval_on_selector_all(
        "table.refusal tbody tr", "rows => rows.map(r => r.cells[3].textContent)"
    )
    assert kept[0].endswith(f"({trade.rows[0].correct_kept}/{trade.correct})")
