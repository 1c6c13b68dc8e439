"""The Russian dev set (benchmarks/ru_devset) stays valid, and its validator catches bad lines."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from narezka.evaluate.golden import load_golden

from conftest import EXAMPLES, REPO, SHARED

CORPUS = SHARED / "data" / "md_corpus" / "ru" / "fastapi"
GOLDEN = REPO / "benchmarks" / "ru_devset" / "fastapi.jsonl"


def _validator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "ru_devset_validate", REPO / "benchmarks" / "ru_devset" / "validate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


validate = _validator()


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} not found; set NAREZKA_SHARED to the shared/ folder")
    return CORPUS


def test_committed_set_is_valid(corpus: Path) -> None:
    report = validate.validate(GOLDEN, corpus)
    assert report.problems == []
    assert report.questions >= 150
    # About half of the questions are answered inside code blocks or tables.
    atoms = report.kinds["code"] + report.kinds["table"]
    assert atoms / report.questions >= 0.45
    assert set(report.kinds) == set(validate.KINDS)


def test_faq_set_is_valid_on_the_example_kb() -> None:
    report = validate.validate(GOLDEN.with_name("kb_faq.jsonl"), EXAMPLES)
    assert report.problems == [] and report.questions == 15


def test_harness_loads_every_question() -> None:
    golden = load_golden(GOLDEN)
    assert golden.problems == []
    assert len(golden.questions) == len(GOLDEN.read_text(encoding="utf-8").splitlines())
    assert {q.category for q in golden.questions} == set(validate.KINDS)


def _line(**fields: object) -> str:
    base: dict[str, object] = {
        "q": "Какой статус у RedirectResponse?",
        "must_contain": ["307 (Temporary Redirect"],
        "kind": "prose",
        "source": "docs/ru/docs/advanced/custom-response.md",
        "section": "`RedirectResponse`",
    }
    base.update(fields)
    return json.dumps(base, ensure_ascii=False)


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({}, None),
        ({"section": "`FileResponse`"}, "not all strings inside section '`FileResponse`'"),
        ({"section": "Нет такого"}, "no heading titled 'Нет такого'"),
        ({"must_contain": ["нигде не встречается"]}, "'нигде не встречается' not in"),
        ({"source": "docs/missing.md"}, "source 'docs/missing.md' is not a file"),
        ({"kind": "faq"}, "unknown kind 'faq'"),
        ({"must_contain": []}, '"must_contain" must be a non-empty list'),
        ({"q": ""}, 'missing or empty "q"'),
    ],
)
def test_validator_reports_bad_lines(
    corpus: Path, tmp_path: Path, fields: dict[str, object], problem: str | None
) -> None:
    golden = tmp_path / "set.jsonl"
    golden.write_text(_line(**fields) + "\n", encoding="utf-8")
    report = validate.validate(golden, corpus)
    if problem is None:
        assert report.problems == []
    else:
        assert len(report.problems) == 1
        assert report.problems[0].startswith("line 1: ")
        assert problem in report.problems[0]


def test_validator_flags_duplicates_and_bad_json(corpus: Path, tmp_path: Path) -> None:
    golden = tmp_path / "set.jsonl"
    golden.write_text(_line() + "\n{oops\n" + _line() + "\n", encoding="utf-8")
    problems = validate.validate(golden, corpus).problems
    assert problems[0].startswith("line 2: not valid JSON")
    assert problems[1] == "line 3: same question as line 1"


def test_main_exit_codes(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = tmp_path / "set.jsonl"
    golden.write_text(_line(section="`FileResponse`") + "\n", encoding="utf-8")
    assert validate.main([str(golden), str(corpus)]) == 1
    assert "1 questions, 1 problems" in capsys.readouterr().out
    assert validate.main([str(golden), str(tmp_path / "nowhere")]) == 2
