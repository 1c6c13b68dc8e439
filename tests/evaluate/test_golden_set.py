"""Golden-set loading: bad lines reported by line number and skipped; corpus checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from narezka.errors import ConfigError
from narezka.evaluate import GoldenQuestion, check_against_corpus, load_golden, parse_golden

from conftest import EXAMPLES

GOOD = json.dumps({"q": "сколько стоит?", "must_contain": ["990 ₽"], "category": "delivery"})


def test_bad_lines_are_reported_with_their_line_numbers_and_skipped() -> None:
    lines = [
        GOOD,
        "{not json",
        "",  # blank lines are allowed and still counted
        json.dumps({"q": "пусто", "must_contain": []}),
        json.dumps({"must_contain": ["x"]}),
        json.dumps({"q": "  ", "must_contain": ["x"]}),
        json.dumps({"q": "строка", "must_contain": "x"}),
        json.dumps(["q", "must_contain"]),
        json.dumps({"q": "второй", "must_contain": ["а", "  "], "source": "a.md"}),
    ]
    golden = parse_golden(lines)
    assert [(q.line, q.q) for q in golden.questions] == [(1, "сколько стоит?"), (9, "второй")]
    # Whitespace-only strings would match every chunk: they are dropped, not kept.
    assert golden.questions[1].must_contain == ("а",)
    assert golden.questions[0].category == "delivery"
    problems = {p.line: p.problem for p in golden.problems}
    assert sorted(problems) == [2, 4, 5, 6, 7, 8]
    assert "not valid JSON" in problems[2]
    assert "empty" in problems[4] and "must_contain" in problems[4]
    assert '"q"' in problems[5] and '"q"' in problems[6]
    assert "list of strings" in problems[7]
    assert "object" in problems[8]
    assert all(p.skipped for p in golden.problems)
    assert str(golden.problems[0]).startswith("line 2: ")


def test_load_golden_reads_a_file_with_bom_and_fails_clearly_when_missing(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text("\ufeff" + GOOD + "\n" + "oops\n", encoding="utf-8")
    golden = load_golden(path)
    assert len(golden.questions) == 1 and [p.line for p in golden.problems] == [2]
    with pytest.raises(ConfigError, match="cannot read golden set"):
        load_golden(tmp_path / "missing.jsonl")


def test_the_bundled_golden_set_loads_cleanly() -> None:
    golden = load_golden(EXAMPLES / "golden.jsonl")
    assert len(golden.questions) == 40 and not golden.problems


def test_strings_absent_from_the_corpus_are_flagged_and_unknown_sources_dropped() -> None:
    texts = {"a.md": "Доставка стоит 990 ₽.", "b.md": "Возврат 14 дней."}
    golden = parse_golden(
        [
            json.dumps({"q": "ok", "must_contain": ["ДОСТАВКА", "990 ₽"], "source": "a.md"}),
            json.dumps({"q": "nowhere", "must_contain": ["990 ₽", "1 000 000 ₽"]}),
            json.dumps({"q": "no file", "must_contain": ["990"], "source": "gone.md"}),
            # Each string exists, in different files: hittable as far as this check goes.
            json.dumps({"q": "two files", "must_contain": ["990", "14 дней"]}),
        ]
    )
    checked, absent = check_against_corpus(golden, texts)
    assert [q.q for q in checked.questions] == ["ok", "nowhere", "two files"]
    assert absent == {checked.questions[1]: ("1 000 000 ₽",)}
    by_line = {p.line: p for p in checked.problems}
    assert sorted(by_line) == [2, 3]
    assert "never hittable" in by_line[2].problem and "1 000 000 ₽" in by_line[2].problem
    assert not by_line[2].skipped
    assert "unknown document 'gone.md'" in by_line[3].problem and by_line[3].skipped


def test_a_string_cannot_match_across_two_files() -> None:
    texts = {"a.md": "в конце стоит тест", "b.md": "ирование начала"}
    question = GoldenQuestion("q", ("тестирование",))
    golden = parse_golden([])
    golden.questions.append(question)
    _, absent = check_against_corpus(golden, texts)
    assert absent == {question: ("тестирование",)}
