"""``--sizes`` sweeps, the size-normalized view on hand-made results, and ``--plot``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.api.evaluating import evaluate
from narezka.cli.eval import eval_command
from narezka.embed import HashEmbedder
from narezka.errors import ConfigError, MissingDependencyError
from narezka.evaluate import (
    EvalRun,
    GoldenQuestion,
    QuestionResult,
    Retrieved,
    SizeStats,
    StrategyResult,
    StrategySpec,
    as_dict,
    markdown_report,
    parse_sizes,
    parse_strategies,
    plot_run,
    size_tables,
    size_view,
    sweep,
)
from narezka.evaluate.metrics import hit_rate, mean_reciprocal_rank
from narezka.evaluate.normalize import common_sizes, hit_within_budget, interpolate

TINY = {
    "a.md": "# Доставка\n\nКурьер привезёт заказ за 990 ₽ в пределах МКАД.\n",
    "b.md": "# Возврат\n\nВернуть товар можно за 14 дней без объяснения причин.\n",
}
GOLDEN = [
    {"q": "сколько стоит курьер", "must_contain": ["990 ₽"]},
    {"q": "за сколько дней вернуть", "must_contain": ["14 дней"]},
]


# --- the sweep --------------------------------------------------------------------------------


def test_sweep_multiplies_specs_without_a_size_and_keeps_the_rest() -> None:
    specs = parse_strategies("recursive overlap:overlap=10 fixed:unit=chars,size=800")
    swept = sweep(specs, parse_sizes("256,128"))
    assert [s.label for s in swept] == [
        "recursive:size=128",
        "recursive:size=256",
        "overlap:overlap=10,size=128",
        "overlap:overlap=10,size=256",
        "fixed:unit=chars,size=800",
    ]
    assert [s.group for s in swept] == ["recursive"] * 2 + ["overlap:overlap=10"] * 2 + [
        "fixed:unit=chars,size=800"
    ]
    assert swept[0].params == {"size": 128} and swept[-1].family == ""
    assert sweep(specs, ()) == specs
    with pytest.raises(ConfigError, match="given twice: recursive:size=128"):
        sweep(parse_strategies("recursive recursive:size=128"), (128,))


@pytest.mark.parametrize("bad", ["0", "a,b", "128,-1", ","])
def test_bad_sizes_are_rejected(bad: str) -> None:
    with pytest.raises(ConfigError, match="sizes"):
        parse_sizes(bad)


def test_no_sizes_means_no_sweep() -> None:
    assert parse_sizes(None) == () and parse_sizes("  ") == ()
    assert parse_sizes("512, 128,128") == (128, 512)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kb")
    for name, text in TINY.items():
        (root / name).write_text(text, encoding="utf-8")
    golden = root.parent / "golden.jsonl"
    golden.write_text("\n".join(json.dumps(g, ensure_ascii=False) for g in GOLDEN) + "\n")
    return root


def test_evaluate_runs_every_spec_at_every_size(corpus: Path, tmp_path: Path) -> None:
    run = evaluate(
        corpus,
        corpus.parent / "golden.jsonl",
        strategies="fixed:unit=chars overlap:unit=chars,size=60,overlap=10",
        sizes="40,80",
        ks="1",
        mode="bm25",
        embedder=HashEmbedder(32),
        cache_path=tmp_path / "c.sqlite",
    )
    assert run.sizes == (40, 80)
    assert [s.label for s in run.strategies] == [
        "fixed:unit=chars,size=40",
        "fixed:unit=chars,size=80",
        "overlap:unit=chars,size=60,overlap=10",
    ]
    small, big, _ = run.strategies
    assert small.chars.p95 <= 40 < big.chars.p95 <= 80 and small.chunks > big.chunks
    text = markdown_report(run)
    assert "## Sweep over sizes 40, 80" in text and "| fixed:unit=chars | " in text
    assert "## Size-normalized view" in text


def test_a_bad_size_fails_before_anything_is_embedded(corpus: Path, tmp_path: Path) -> None:
    model = HashEmbedder(32)
    with pytest.raises(ConfigError, match="size must be at least 16"):
        evaluate(
            corpus,
            corpus.parent / "golden.jsonl",
            strategies="fixed",
            sizes="8",
            embedder=model,
            cache_path=tmp_path / "c.sqlite",
        )
    assert model.texts_embedded == 0


# --- the size-normalized view on hand-made results ---------------------------------------------


def made(
    name: str, size: int | None, chunk_tokens: int, ranks: list[int | None], family: str
) -> StrategyResult:
    """A strategy whose chunks all have ``chunk_tokens`` tokens and three are retrieved."""
    retrieved = tuple(Retrieved(f"u{i}", "f.md", "t", tokens=chunk_tokens) for i in range(3))
    questions = [
        QuestionResult(GoldenQuestion(f"q{i}", ("x",)), rank, retrieved, True)
        for i, rank in enumerate(ranks)
    ]
    params = {"size": size} if size is not None else {}
    return StrategyResult(
        spec=StrategySpec(name, params, family=family),
        chunks=10,
        chars=SizeStats(4.0 * chunk_tokens, 4.0 * chunk_tokens),
        tokens=SizeStats(float(chunk_tokens), float(chunk_tokens)),
        over_window=0,
        hits={3: hit_rate(ranks, 3)},
        mrr=mean_reciprocal_rank(ranks),
        ceiling=1.0,
        questions=questions,
        retrieved_tokens={3: 3.0 * chunk_tokens},
    )


@pytest.fixture
def made_run() -> EvalRun:
    run = EvalRun("c", "g", "hash", None, "hybrid", (3,), False, [], sizes=(100, 200))
    run.strategies = [
        made("small", 100, 80, [1, 3, None, 2], "small"),
        made("small", 200, 160, [1, 1, 2, None], "small"),
        made("big", 100, 120, [1, None, None, 1], "big"),
        made("big", 200, 200, [1, 2, 1, 1], "big"),
        made("fixed", None, 150, [1, 1, 1, 1], ""),
    ]
    return run


def test_equal_budget_and_interpolated_sizes_by_hand(made_run: EvalRun) -> None:
    view = size_view(made_run)
    # The least any strategy retrieves at k=3: 3 chunks of 80 tokens.
    assert view.budget == 240
    # small@100 ranks 1, 3, -, 2 with 80-token chunks: 80, 240 and 160 tokens fit in 240.
    # small@200: 160 fits, 160 fits, 320 does not. big@100: 120 twice. big@200: 200 three
    # times, 400 not. fixed: 150 each.
    assert [r.hit_within for r in view.rows] == [0.75, 0.5, 0.5, 0.75, 1.0]
    assert [r.hit for r in view.rows] == [0.75, 0.75, 0.5, 1.0, 1.0]
    assert [r.retrieved_tokens for r in view.rows] == [240, 480, 360, 600, 450]
    assert view.unswept == ["fixed"]
    (table,) = view.interpolated
    # small spans 80-160 tokens, big 120-200: common 120-160, four points 10+ apart.
    assert table.metric == "hit@3" and table.sizes == (120, 133, 147, 160)
    assert table.values["small"] == pytest.approx([0.75] * 4)
    big = [0.5 + 0.5 * (x - 120) / 80 for x in (120, 133, 147, 160)]
    assert table.values["big"] == pytest.approx(big)
    data = as_dict(made_run)["size_normalized"]
    assert data["budget_tokens"] == 240 and data["not_swept"] == ["fixed"]
    assert data["interpolated"][0]["mean_tokens"] == [120, 133, 147, 160]
    assert len(size_tables(made_run)) == 2


def test_hit_within_budget_counts_the_chunks_ranked_above() -> None:
    result = made("s", 100, 100, [1, 2, 3, None], "s")
    assert hit_within_budget(result, 99) == 0.0
    assert hit_within_budget(result, 100) == 0.25
    assert hit_within_budget(result, 250) == 0.5
    assert hit_within_budget(result, 300) == 0.75


def test_interpolate_and_common_sizes() -> None:
    points = [(100.0, 0.2), (200.0, 0.6), (200.0, 0.4), (300.0, 1.0)]
    assert interpolate(points, 150) == pytest.approx(0.35)  # 0.2 → mean(0.6, 0.4)
    assert interpolate(points, 250) == pytest.approx(0.75)
    assert interpolate(points, 99) is None and interpolate(points, 301) is None
    assert interpolate([(5.0, 0.3)], 5) == 0.3
    assert common_sizes([(80, 160), (120, 200)]) == (120, 133, 147, 160)
    assert common_sizes([(91, 177), (86, 98)]) == (94,)  # narrower than the gap: the middle
    assert common_sizes([(10, 20), (30, 40)]) == ()
    assert common_sizes([]) == ()


# --- the plot ---------------------------------------------------------------------------------


def test_plot_writes_a_png(made_run: EvalRun, tmp_path: Path) -> None:
    from matplotlib.image import imread

    out = plot_run(made_run, tmp_path / "r.png")
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    pixels = imread(out)
    assert pixels.shape[0] > 300 and pixels.shape[1] > 500
    # Not a blank canvas: lines and text leave many distinct colours.
    assert len({tuple(p) for p in pixels.reshape(-1, pixels.shape[2])[::50]}) > 10


def hide_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)


def test_plot_without_matplotlib_names_the_extra(
    made_run: EvalRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_matplotlib(monkeypatch)
    with pytest.raises(MissingDependencyError, match=r"pip install 'narezka\[plot\]'"):
        plot_run(made_run, tmp_path / "r.png")
    assert not (tmp_path / "r.png").exists()


def test_the_command_fails_before_the_run_when_matplotlib_is_missing(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_matplotlib(monkeypatch)
    args = [str(corpus), "--golden", str(corpus.parent / "golden.jsonl"), "--embedder", "hash"]
    result = CliRunner().invoke(eval_command, [*args, "--plot", str(tmp_path / "p.png")])
    assert result.exit_code == 2
    assert "matplotlib is not installed: pip install 'narezka[plot]'" in result.stderr
    assert "indexing" not in result.stderr


def test_the_command_sweeps_and_plots(corpus: Path, tmp_path: Path) -> None:
    plot = tmp_path / "p.png"
    args = [str(corpus), "--golden", str(corpus.parent / "golden.jsonl"), "--embedder", "hash"]
    args += ["--strategies", "fixed:unit=chars headings:unit=chars", "--sizes", "40,80"]
    args += ["--mode", "bm25", "-k", "1,2", "--cache", str(tmp_path / "c.sqlite")]
    args += ["--plot", str(plot), "--report", str(tmp_path / "R.md")]
    result = CliRunner().invoke(eval_command, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["sizes"] == [40, 80]
    assert [s["strategy"] for s in data["strategies"]] == [
        "fixed:unit=chars,size=40",
        "fixed:unit=chars,size=80",
        "headings:unit=chars,size=40",
        "headings:unit=chars,size=80",
    ]
    assert {s["group"] for s in data["strategies"]} == {"fixed:unit=chars", "headings:unit=chars"}
    assert plot.read_bytes().startswith(b"\x89PNG")
    report = (tmp_path / "R.md").read_text(encoding="utf-8")
    assert "--sizes 40,80" in report and "## Sweep over sizes 40, 80" in report
    table = CliRunner().invoke(eval_command, args)
    assert table.exit_code == 0 and "at equal mean chunk size" in table.stdout
