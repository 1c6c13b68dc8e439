"""The dev suite (benchmarks/devsuite): its manifest, held-out checks, far questions and scoring."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from narezka.errors import ConfigError
from narezka.evaluate.golden import GoldenQuestion, Reference

from conftest import REPO, SHARED


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


validate = _load("ru_devset_validate", REPO / "benchmarks" / "ru_devset" / "validate.py")
manifest = _load("manifest", REPO / "benchmarks" / "devsuite" / "manifest.py")
devsuite = _load("devsuite_runner", REPO / "benchmarks" / "devsuite.py")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "kept").mkdir(parents=True)
    (root / "held").mkdir()
    (root / "kept" / "a.md").write_text(
        "# Кошки [#cats]\n\nКошки спят 16 часов в сутки.\n\n## Еда\n\nКорм дают дважды.\n",
        encoding="utf-8",
    )
    (root / "held" / "b.md").write_text(
        "# Собаки\n\nСобаки спят 12 часов.\n\n## Прогулки\n\nГулять трижды в день.\n",
        encoding="utf-8",
    )
    return root


def _write(path: Path, *rows: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _near(**fields: object) -> dict[str, object]:
    row: dict[str, object] = {
        "q": "Сколько гулять с собакой?",
        "answerable": False,
        "must_contain": [],
        "evidence": ["Гулять трижды в день."],
        "kind": "prose",
        "source": "held/b.md",
        "section": "Прогулки",
    }
    row.update(fields)
    return row


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({}, None),
        ({"source": "kept/a.md", "section": "Еда"}, "is not held out"),
        ({"must_contain": ["Гулять"]}, 'needs "must_contain": []'),
        ({"evidence": []}, '"evidence" must be a non-empty list'),
        ({"section": "Собаки"}, "not all strings inside section 'Собаки'"),
        (
            {"section": "Собаки", "evidence": ["Собаки спят 12 часов.", "спят"]},
            "'спят' also in an indexed file",
        ),
    ],
)
def test_unanswerable_lines_need_held_out_evidence_the_index_lacks(
    corpus: Path, tmp_path: Path, fields: dict[str, object], problem: str | None
) -> None:
    golden = _write(tmp_path / "near.jsonl", _near(**fields))
    report = validate.validate(golden, corpus, ["held"])
    if problem is None:
        assert report.problems == [] and report.unanswerable == 1
    else:
        assert len(report.problems) == 1 and problem in report.problems[0]


def test_answerable_lines_of_held_out_files_are_counted_not_asked(
    corpus: Path, tmp_path: Path
) -> None:
    rows = [
        {"q": "Сколько спят кошки?", "must_contain": ["16 часов"], "kind": "prose"}
        | {"source": "kept/a.md", "section": "Кошки"},  # the [#cats] anchor is not in the title
        {"q": "Сколько спят собаки?", "must_contain": ["12 часов"], "kind": "prose"}
        | {"source": "held/b.md", "section": "Собаки"},
    ]
    report = validate.validate(_write(tmp_path / "set.jsonl", *rows), corpus, ["held/"])
    assert report.problems == [] and report.held == 1 and report.unanswerable == 0


def test_manifest_paths_and_held_out(tmp_path: Path) -> None:
    entry = {
        "name": "x",
        "root": "shared",
        "path": "data/x",
        "language": "ru",
        "genre": "tutorial",
        "golden": ["benchmarks/x.jsonl"],
        "near": None,
        "held_out": ["part", "one.md"],
    }
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"far": {"per_corpus": 3, "seed": 1}, "corpora": [entry]}))
    suite = manifest.load_suite(path, shared=tmp_path)
    corpus = suite.get("x")
    assert corpus.root == tmp_path / "data" / "x"
    assert [corpus.is_held_out(s) for s in ("part/a.md", "partly.md", "one.md")] == [
        True,
        False,
        True,
    ]
    with pytest.raises(ValueError, match="no corpus 'y'"):
        suite.get("y")
    path.write_text(json.dumps({"corpora": [{"name": "x"}]}))
    with pytest.raises(ValueError, match=r"suite\.json: bad suite manifest"):
        manifest.load_suite(path)


def _suite(names: list[str], per_corpus: int) -> object:
    corpora = tuple(manifest.Corpus(n, Path(n), "en", "g", (), None, ()) for n in names)
    return manifest.Suite(corpora, per_corpus, 26)


def _pool(corpus: str, n: int) -> list[object]:
    questions = [GoldenQuestion(f"{corpus} {i}", ("x",)) for i in range(n)]
    return [devsuite.Question(corpus, "answerable", g, g.q) for g in questions]


def test_far_questions_come_from_the_other_corpora_in_turn_and_the_same_each_run() -> None:
    suite = _suite(["a", "b", "c"], per_corpus=5)
    pools = {"a": _pool("a", 10), "b": _pool("b", 10), "c": _pool("c", 2)}
    drawn = devsuite.far_questions(suite, suite.corpora[0], pools)
    assert len(drawn) == 5 and all(q.kind == "far" and q.corpus == "a" for q in drawn)
    assert sorted(q.origin for q in drawn) == ["b", "b", "b", "c", "c"]
    assert drawn == devsuite.far_questions(suite, suite.corpora[0], pools)
    other = devsuite.far_questions(suite, suite.corpora[1], pools)
    assert {q.origin for q in other} == {"a", "c"}


def test_far_questions_stop_when_the_pools_run_dry() -> None:
    suite = _suite(["a", "b"], per_corpus=30)
    drawn = devsuite.far_questions(suite, suite.corpora[0], {"a": [], "b": _pool("b", 4)})
    assert len(drawn) == 4


class _Hit:
    def __init__(self, text: str, start: int = 0, end: int = 0, path: str = "d.md") -> None:
        self.text, self.start, self.end, self.file_path = text, start, end, path


def test_rank_of_scores_strings_and_spans() -> None:
    strings = GoldenQuestion("q", ("Foo", "bar"))
    assert devsuite.rank_of(strings, [_Hit("foo"), _Hit("a FOO and BAR")]) == 2
    assert devsuite.rank_of(strings, [_Hit("foo")]) is None
    spans = GoldenQuestion("q", (), references=(Reference("d.md", 10, 20),))
    assert devsuite.rank_of(spans, [_Hit("", 0, 10), _Hit("", 19, 30)]) == 2
    assert devsuite.rank_of(spans, [_Hit("", 10, 20, "e.md")]) is None


def test_result_row_records_each_hits_length() -> None:
    question = devsuite.Question("c", "answerable", GoldenQuestion("q", ("bar",)), "q")
    hits = [_Hit("foo", 0, 30), _Hit("bar", 40, 45)]
    for hit, score in zip(hits, (0.9, 0.4), strict=True):
        hit.score = score  # type: ignore[attr-defined]
    row = devsuite.result_row(question, hits, {"fusion": "x"})
    assert (row["rank"], row["chars"], row["top_score"]) == (2, [30, 5], 0.9)


def test_auroc() -> None:
    assert devsuite.auroc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert devsuite.auroc([0.1], [0.9]) == 0.0
    assert devsuite.auroc([0.5], [0.5]) == 0.5
    assert devsuite.auroc([], [0.5]) is None


@pytest.mark.parametrize(("value", "fold"), [("auto", "auto"), ("off", None), ("0.8", 0.8)])
def test_parse_fold(value: str, fold: object) -> None:
    assert devsuite.parse_fold(value) == fold


def test_parse_fusion() -> None:
    assert devsuite.parse_fusion(None) is None
    assert devsuite.parse_fusion("rrf:10").rrf_k == 10
    assert devsuite.parse_fusion("score:0.3").dense_weight == 0.3


def _row(kind: str, q: str, rank: int | None, score: float) -> dict[str, object]:
    return {
        "corpus": "c",
        "kind": kind,
        "q": q,
        "rank": rank,
        "top_score": score,
        "top_relevance": None,
        "config": {"fusion": "x"},
    }


def test_compare_prints_sign_tests_and_auroc(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = [_row("answerable", f"q{i}", 1, 0.9) for i in range(6)] + [_row("near", "n", None, 0.1)]
    b = [_row("answerable", f"q{i}", None, 0.9) for i in range(6)] + [_row("far", "f", None, 0.95)]
    paths = []
    for name, rows in (("a", a), ("b", b)):
        paths.append(tmp_path / f"{name}.jsonl")
        paths[-1].write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert devsuite.main(["compare", str(paths[0]), str(paths[1])]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| c |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1:5] == ["6", "1.000", "0.000", "+6/−0, p=0.031"]
    # A answered all at rank 1 and its near question scored lower: AUROC 1; B answered none.
    assert cells[8:] == ["1.000", "—", "—", "—"]


def test_committed_suite_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    if not (SHARED / "data" / "md_corpus").is_dir():
        pytest.skip(f"{SHARED} has no md_corpus; set NAREZKA_SHARED to the shared/ folder")
    assert validate.main(["--suite"]) == 0
    out = capsys.readouterr().out
    assert out.count(" 0 problems") == 8


def test_table_joins_runs_of_one_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    first.write_text(json.dumps(_row("answerable", "q", 2, 0.5)) + "\n", encoding="utf-8")
    row = _row("near", "n", None, 0.25) | {"corpus": "d"}
    second.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert devsuite.main(["table", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "| c | 1 | 0.000 | 1.000 | 0.500 | — | 0 | — | 0 | — |" in out
    assert "| d | 0 | 0.000 | 0.000 | 0.000 | — | 1 | 0.250 (0.250–0.250) | 0 | — |" in out
    second.write_text(json.dumps(row | {"config": {"fusion": "y"}}) + "\n", encoding="utf-8")
    assert devsuite.main(["table", str(first), str(second)]) == 2


def test_suite_check_fails_on_a_missing_corpus_and_a_bad_set(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = {
        "name": "x",
        "root": "repo",
        "path": str(corpus),  # absolute: the repo prefix is dropped
        "language": "ru",
        "genre": "tutorial",
        "golden": [str(_write(tmp_path / "set.jsonl", _near(source="kept/a.md")))],
        "near": None,
        "held_out": ["held"],
    }
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"far": {"per_corpus": 1, "seed": 1}, "corpora": [entry]}))
    assert validate.main(["--suite", str(path)]) == 1
    assert "is not held out" in capsys.readouterr().out
    path.write_text(
        json.dumps(
            {
                "far": {"per_corpus": 1, "seed": 1},
                "corpora": [entry | {"path": str(tmp_path / "nowhere")}],
            }
        )
    )
    assert validate.main(["--suite", str(path)]) == 2


def test_grid_reads_fusion_fold_pairs_and_refuses_a_bad_one() -> None:
    args = argparse.Namespace(
        grid=["default/auto", "rrf:30/0", "score/off", "weighted:0.7"], fusion=None, fold="auto"
    )
    settings = devsuite.grid(args)
    assert settings == [(None, "auto"), ("rrf:30", "0"), ("score", "off"), ("weighted:0.7", "auto")]
    assert [devsuite.slug(*s) for s in settings][:2] == ["default_auto", "rrf-30_0"]
    args.grid = None
    assert devsuite.grid(args) == [(None, "auto")]
    args.grid = ["rank/0"]
    with pytest.raises(ConfigError, match="unknown fusion 'rank'"):
        devsuite.grid(args)


def test_decide_applies_the_rule_win_somewhere_and_lose_nowhere(tmp_path: Path) -> None:
    def write(name: str, ranks: list[int | None], fusion: str) -> Path:
        path = tmp_path / f"{name}.jsonl"
        rows = [
            _row("answerable", f"q{i}", r, 0.5) | {"config": {"fusion": fusion, "fold": "0"}}
            for i, r in enumerate(ranks)
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path

    base = write("base", [2] * 6, "score")
    better = write("better", [1] * 6, "rrf")  # hit@1 +6/−0, p = 0.031
    rows = better.read_text(encoding="utf-8").splitlines()
    sized = [json.dumps(json.loads(r) | {"chars": [100, 50]}) + "\n" for r in rows]
    better.write_text("".join(sized), encoding="utf-8")  # 150 characters returned per answer
    worse = write("worse", [None] * 6, "weighted")  # hit@5 −6: a significant loss
    even = write("even", [1, 1, 1, None, None, None], "rrf:30")  # +3 @1, −3 @5: not significant
    lines = devsuite.decide(base, [better, worse, even])
    head = lines[: lines.index("", 2)]  # the summary, before the per-corpus rows
    summary = {line.split("|")[1].strip(): line for line in head if line.startswith("| fusion")}
    assert summary["fusion rrf, fold 0"].endswith("| 150 | c @1 | — | **replaces the default** |")
    assert summary["fusion weighted, fold 0"].endswith("| — | c @5 | loses somewhere |")
    assert summary["fusion rrf:30, fold 0"].endswith("| — | — | no significant win |")
    assert summary["fusion score, fold 0"].endswith("| — | — | — | the default |")
    detail = [line for line in lines if line.startswith("| fusion rrf, fold 0 | c |")]
    assert detail == [
        "| fusion rrf, fold 0 | c | 6 | 1.000 | 1.000 | 1.000 | **+6/−0, p=0.031** | "
        "+0/−0, p=1.000 |"
    ]
