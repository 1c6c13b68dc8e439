"""End to end on the example KB with the HashEmbedder: index per strategy, search, score,
report; plus the command on a tiny corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.api.evaluating import evaluate
from narezka.cli.eval import eval_command
from narezka.embed import HashEmbedder
from narezka.errors import ConfigError
from narezka.evaluate import EvalRun, load_golden, markdown_report, terminal_table
from narezka.evaluate.metrics import contains_all

from conftest import EXAMPLES, copy_examples

STRATEGIES = "fixed:size=200 headings"


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
        mode="hybrid",
        embedder=HashEmbedder(64),
        cache_path=cache,
    )


def test_every_strategy_is_scored_on_every_question(run: EvalRun) -> None:
    assert [s.label for s in run.strategies] == ["fixed:size=200", "headings"]
    assert not run.problems and run.ks == (1, 3, 5) and run.headline_k == 3
    for s in run.strategies:
        assert len(s.questions) == 40 and s.chunks > 40 and not s.warnings
        assert s.hits[1] <= s.hits[3] <= s.hits[5] <= s.ceiling
        assert 0 < s.mrr <= s.hits[5]
        # Fixed windows are 200 of the embedder's tokens: p95 cannot exceed that.
        if s.spec.name == "fixed":
            assert s.tokens.p95 <= 200
        for r in s.questions:
            assert len(r.retrieved) <= 5
            assert all(not x.archived for x in r.retrieved)  # excluded by default
            if r.rank is not None:
                assert contains_all(r.retrieved[r.rank - 1].text, r.question.must_contain)
                assert not any(
                    contains_all(x.text, r.question.must_contain) for x in r.retrieved[: r.rank - 1]
                )
            else:
                assert not any(contains_all(x.text, r.question.must_contain) for x in r.retrieved)
    # headings keeps sections whole: every question's strings share one of its chunks.
    assert run.strategies[1].ceiling == 1.0
    assert run.strategies[0].ceiling < 1.0
    assert [(c.a, c.b, c.k) for c in run.comparisons] == [("fixed:size=200", "headings", 3)]
    assert 0 < run.comparisons[0].test.p_value <= 1


def test_the_report_holds_the_seed_table_and_explains_every_miss(run: EvalRun) -> None:
    best = run.best()
    assert best is not None
    text = markdown_report(run, command="narezka eval …")
    assert "| strategy | chunks | mean size (chars) | hit@3 of 40 | hit@1 | MRR | ceiling |" in text
    misses = [r for r in best.questions if not r.hit(3)]
    assert f"## Misses of {best.label} at k=3 ({len(misses)})" in text
    for r in misses:
        assert f"| {r.question.line} | " in text
    assert "ranked below k" in text or "similar page won" in text
    table = terminal_table(run)
    assert table.row_count == 2 and len(table.columns) == 10


def test_a_rerun_embeds_nothing_new(cache: Path, run: EvalRun) -> None:
    model = HashEmbedder(64)
    golden = load_golden(EXAMPLES / "golden.jsonl")
    golden.questions = golden.questions[:5]
    again = evaluate(
        EXAMPLES, golden, strategies="headings", ks=[1, 3, 5], embedder=model, cache_path=cache
    )
    assert model.texts_embedded == 0
    first = run.strategies[1]
    assert [r.rank for r in again.strategies[0].questions] == [r.rank for r in first.questions[:5]]


def test_bad_settings_fail_before_anything_is_embedded(tmp_path: Path) -> None:
    model = HashEmbedder(64)
    golden = EXAMPLES / "golden.jsonl"
    for kwargs in (
        {"strategies": "nosuch"},
        {"strategies": "fixed:sise=100"},
        {"mode": "fuzzy"},
        {"ks": "0"},
    ):
        with pytest.raises(ConfigError):
            evaluate(EXAMPLES, golden, embedder=model, cache_path=tmp_path / "c", **kwargs)  # type: ignore[arg-type]
    assert model.texts_embedded == 0


TINY = {
    "delivery.md": "---\ncategory: delivery\n---\n# Доставка\n\nКурьер привезёт за 990 ₽.\n",
    "returns.md": "---\ncategory: returns\n---\n# Возврат\n\nВернуть можно за 14 дней.\n",
    "old.md": "---\ncategory: returns\narchived: true\n---\n# Возврат\n\nВернуть за 7 дней.\n",
}


def test_the_command_prints_json_writes_the_report_and_never_indexes_it(tmp_path: Path) -> None:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    for name, text in TINY.items():
        (corpus / name).write_text(text, encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    lines = [
        {"q": "сколько стоит курьер", "must_contain": ["990 ₽"], "source": "delivery.md"},
        {"q": "за сколько дней вернуть", "must_contain": ["14 дней"], "category": "returns"},
        {"q": "подарочная карта", "must_contain": ["номинал 5000"]},
    ]
    golden.write_text(
        "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n{bad\n",
        encoding="utf-8",
    )
    report = corpus / "RESULTS.md"
    # A stale report inside the corpus quotes "номинал 5000": it must not make it hittable.
    report.write_text("номинал 5000", encoding="utf-8")
    args = [str(corpus), "--golden", str(golden), "--strategies", "fixed:size=40 headings"]
    args += ["-k", "1,3", "--embedder", "hash", "--cache", str(tmp_path / "c.sqlite")]
    result = CliRunner().invoke(eval_command, [*args, "--report", str(report), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [s["strategy"] for s in data["strategies"]] == ["fixed:size=40", "headings"]
    assert {(p["line"], p["skipped"]) for p in data["problems"]} == {(3, False), (4, True)}
    questions = data["strategies"][1]["questions"]
    assert [q["rank"] for q in questions[:2]] == [1, 1]
    assert questions[2]["cause"] == "answer not in corpus" and questions[2]["rank"] is None
    text = report.read_text(encoding="utf-8")
    assert "hit@3 of 3" in text and "answer not in corpus" in text
    assert "line 4: not valid JSON" in text
    assert "narezka eval " in text and "--strategies 'fixed:size=40 headings'" in text

    missing = CliRunner().invoke(eval_command, [str(corpus), "--golden", str(tmp_path / "no")])
    assert missing.exit_code == 2 and "cannot read golden set" in missing.output


def test_a_golden_file_inside_the_corpus_is_never_indexed(tmp_path: Path) -> None:
    corpus = tmp_path / "kb"
    copy_examples(corpus)
    golden = corpus / "golden.jsonl"
    assert golden.is_file()
    # auto reads *.jsonl too: without the exclusion the golden file would answer itself.
    result = evaluate(
        corpus,
        golden,
        strategies="auto",
        mode="bm25",
        embedder=HashEmbedder(64),
        cache_path=tmp_path / "cache.sqlite",
    )
    retrieved = {r.file_path for s in result.strategies for q in s.questions for r in q.retrieved}
    assert retrieved and "golden.jsonl" not in retrieved


def test_the_embedder_of_narezka_toml_is_used_when_no_flag_names_one(tmp_path: Path) -> None:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    for name, text in TINY.items():
        (corpus / name).write_text(text, encoding="utf-8")
    (corpus / "narezka.toml").write_text('[settings]\nembedder = "hash:48"\n', encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    line = {"q": "сколько стоит курьер", "must_contain": ["990 ₽"]}
    golden.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    report = tmp_path / "RESULTS.md"
    args = [str(corpus), "--golden", str(golden), "--strategies", "headings", "--mode", "bm25"]
    args += ["--cache", str(tmp_path / "c.sqlite"), "--report", str(report)]
    result = CliRunner().invoke(eval_command, args)
    assert result.exit_code == 0, result.output
    # The report's command line names the embedder that ran: the file's, not the flag default.
    assert "--embedder hash:48" in report.read_text(encoding="utf-8")
    flagged = CliRunner().invoke(eval_command, [*args, "--embedder", "hash:32"])
    assert flagged.exit_code == 0, flagged.output
    assert "--embedder hash:32" in report.read_text(encoding="utf-8")


def test_the_terminal_table_shows_labels_as_written(run: EvalRun) -> None:
    # A spec is the user's own text: a label that looks like Rich markup is printed as it is.
    import copy
    import io

    from rich.console import Console

    from narezka.evaluate.specs import StrategySpec

    marked = copy.copy(run)
    marked.strategies = [copy.copy(s) for s in run.strategies]
    marked.strategies[0].spec = StrategySpec("fixed", {"note": "[red]x[/red]"})
    out = io.StringIO()
    Console(file=out, width=300, color_system=None).print(terminal_table(marked))
    assert "fixed:note=[red]x[/red]" in out.getvalue()
