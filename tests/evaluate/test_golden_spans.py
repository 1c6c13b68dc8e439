"""Reference-span golden sets (JSONL and Chroma's CSV): bad lines reported by line number and
skipped, references checked against the corpus text before any embedding."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from narezka.errors import ConfigError
from narezka.evaluate import (
    GoldenQuestion,
    Reference,
    check_against_corpus,
    load_golden,
    parse_chroma_csv,
    parse_golden,
)
from narezka.evaluate.golden import is_chroma_csv

TEXTS = {"a.md": "# Доставка\n\nКурьер привезёт за 990 ₽.\n", "sub/b.md": "Возврат 14 дней.\n"}


def ref(doc: str, start: int, end: int, **extra: object) -> dict[str, object]:
    return {"doc": doc, "start": start, "end": end, **extra}


def line(q: str, *refs: dict[str, object], **extra: object) -> str:
    return json.dumps({"q": q, "references": list(refs), **extra}, ensure_ascii=False)


def test_span_lines_parse_and_bad_ones_are_reported_with_line_numbers() -> None:
    price = TEXTS["a.md"].index("990 ₽")
    lines = [
        line("цена", ref("a.md", price, price + 5, content="990 ₽"), category="delivery"),
        line("пусто"),  # empty references
        json.dumps({"q": "строка", "references": "a.md"}),
        line("не объект", "a.md"),  # type: ignore[arg-type]
        line("без doc", ref("", 0, 3)),
        line("дробь", ref("a.md", 0.5, 3)),  # type: ignore[arg-type]
        line("наоборот", ref("a.md", 5, 5)),
        line("булево", ref("a.md", True, 3)),  # type: ignore[arg-type]
        json.dumps({"q": "оба", "must_contain": ["x"], "references": [ref("a.md", 0, 1)]}),
        line("content", ref("a.md", 0, 1, content=7)),
        line("второй", ref("./sub/b.md", 0, 7), ref("a.md", 0, 10)),
        json.dumps({"q": "строки", "must_contain": ["990"]}),  # the other format
    ]
    golden = parse_golden(lines)
    assert golden.format == "spans"
    assert [(q.line, q.q) for q in golden.questions] == [(1, "цена"), (11, "второй")]
    first, second = golden.questions
    assert first.references == (Reference("a.md", price, price + 5, "990 ₽"),)
    assert first.category == "delivery" and first.source == "a.md" and first.must_contain == ()
    # "./" is dropped so the doc matches the corpus-relative path.
    assert [r.doc for r in second.references] == ["sub/b.md", "a.md"]
    problems = {p.line: p.problem for p in golden.problems}
    assert sorted(problems) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 12]
    assert problems[2] == 'empty "references"'
    assert "list of" in problems[3]
    assert problems[4] == "reference 1 is not an object"
    assert '"doc"' in problems[5]
    assert "integers" in problems[6] and "integers" in problems[8]
    assert "empty or reversed range [5, 5)" in problems[7]
    assert "not both" in problems[9]
    assert '"content"' in problems[10]
    assert "strings question in a golden set of spans" in problems[12]
    assert all(p.skipped for p in golden.problems)


def test_the_first_question_decides_the_format() -> None:
    golden = parse_golden(
        [json.dumps({"q": "s", "must_contain": ["x"]}), line("r", ref("a.md", 0, 1))]
    )
    assert golden.format == "strings" and [q.q for q in golden.questions] == ["s"]
    assert golden.problems[0].line == 2 and "spans question" in golden.problems[0].problem


def test_references_are_checked_against_the_corpus_before_embedding() -> None:
    text = TEXTS["a.md"]
    price = text.index("990 ₽")
    golden = parse_golden(
        [
            line("ok", ref("a.md", price, price + 5)),
            line("unknown", ref("a.md", 0, 2), ref("c.md", 0, 2)),
            line("outside", ref("sub/b.md", 10, 99)),
            line("moved", ref("a.md", 0, 5, content="990 ₽")),
            line("wrong", ref("a.md", 0, 5, content="нет такого")),
            line("matches", ref("a.md", 0, 5, content=text[0:5])),
        ]
    )
    checked, absent = check_against_corpus(golden, TEXTS)
    assert absent == {}
    assert [q.q for q in checked.questions] == ["ok", "matches"]
    # Offsets-only references get their excerpt filled in for the reports.
    assert checked.questions[0].references[0].content == "990 ₽"
    problems = {p.line: p.problem for p in checked.problems}
    assert sorted(problems) == [2, 3, 4, 5]
    assert problems[2] == "reference 2: unknown document 'c.md'"
    assert problems[3] == "reference 1: offsets [10, 99) outside sub/b.md (length 17)"
    assert problems[4].startswith("reference 1: content differs from a.md[0:5]")
    assert f"the content occurs at [{price}, {price + 5})" in problems[4]
    assert "occurs at" not in problems[5] and "'нет такого'" in problems[5]
    assert all(p.skipped for p in checked.problems)


def write_csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def chroma_refs(*spans: tuple[int, int, str]) -> str:
    return json.dumps([{"content": c, "start_index": s, "end_index": e} for s, e, c in spans])


def test_chroma_csv_rows_become_span_questions_with_file_line_numbers() -> None:
    text = write_csv(
        [
            ["question", "references", "corpus_id"],
            ["what\nspans two lines?", chroma_refs((0, 3, "abc")), "c"],
            ["bad json", "[{", "c"],
            ["", chroma_refs((0, 1, "a")), "c"],
            ["no corpus", chroma_refs((0, 1, "a")), ""],
            ["not a list", "{}", "c"],
            ["floats", json.dumps([{"start_index": 0.5, "end_index": 2}]), "c"],
            ["reversed", chroma_refs((4, 2, "")), "c"],
            ["empty", "[]", "c"],
            ["last", chroma_refs((2, 5, "cde"), (6, 7, "g")), "d"],
        ]
    )
    golden = parse_chroma_csv(text)
    assert golden.format == "spans"
    assert [(q.line, q.q) for q in golden.questions] == [
        (2, "what\nspans two lines?"),
        (11, "last"),
    ]
    assert golden.questions[0].references == (Reference("c.md", 0, 3, "abc"),)
    assert [r.doc for r in golden.questions[1].references] == ["d.md", "d.md"]
    problems = {p.line: p.problem for p in golden.problems}
    # The first row spans file lines 2-3, so the rows after it start one line later.
    assert sorted(problems) == [4, 5, 6, 7, 8, 9, 10]
    assert "not valid JSON" in problems[4]
    assert problems[5] == "empty question" and problems[6] == "empty corpus_id"
    assert "not a JSON list" in problems[7]
    assert "non-integer offsets" in problems[8]
    assert "reversed" in problems[9] and problems[10] == "empty references"
    with pytest.raises(ConfigError, match="missing CSV column corpus_id"):
        parse_chroma_csv("question,references\nq,[]\n")


def test_csv_is_detected_by_suffix_or_header(tmp_path: Path) -> None:
    body = write_csv(
        [["question", "references", "corpus_id"], ["q", chroma_refs((0, 1, "a")), "c"]]
    )
    for name in ("questions.csv", "questions.txt"):
        path = tmp_path / name
        path.write_text(body, encoding="utf-8")
        golden = load_golden(path)
        assert [q.q for q in golden.questions] == ["q"] and golden.format == "spans"
    jsonl = tmp_path / "g.jsonl"
    jsonl.write_text(line("q", ref("a.md", 0, 1)) + "\n", encoding="utf-8")
    assert not is_chroma_csv(jsonl, jsonl.read_text(encoding="utf-8"))
    assert load_golden(jsonl).questions[0].references == (Reference("a.md", 0, 1),)


def test_question_format_property() -> None:
    assert GoldenQuestion("q", ("x",)).format == "strings"
    assert GoldenQuestion("q", (), references=(Reference("a", 0, 1),)).format == "spans"
