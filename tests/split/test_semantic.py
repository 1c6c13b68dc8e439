"""The ``semantic`` strategy: cuts where meaning shifts, yet keeps the whole chunk contract.

Most tests use embed functions whose similarities they control (topic words, or angles in
the plane), so each expected cut is known exactly; one test runs the bundled default model.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import narezka
from narezka.cli import cli
from narezka.discover import normalize_newlines
from narezka.embed import HashEmbedder, signal_embedder
from narezka.errors import ConfigError
from narezka.runs import chunk_raw, make_params
from narezka.split import get_strategy
from narezka.split import semantic as semantic_module
from narezka.split.base import SplitParams
from narezka.split.semantic import BATCH_SIZE, SemanticStrategy
from narezka.tokens import get_counter
from narezka.types import Chunk, RawDocument

from conftest import TEST_DATA
from contract import assert_contract
from markdown_gen import markdown

Matrix = npt.NDArray[np.float32]
TOPICS_RU = TEST_DATA / "semantic" / "topics_ru.md"
HASH_EMBED = signal_embedder(HashEmbedder(32))


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever opens the default embedder writes its cache here, not in the user's (the
    library's chunk_text and chunk_documents use the user cache dir, under this ``HOME``)."""
    monkeypatch.setenv("NAREZKA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)


def normalized(rows: list[list[float]]) -> Matrix:
    m = np.asarray(rows, dtype=np.float32)
    out: Matrix = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


TOPIC_WORDS = ("пчел", "цеп", "хлеб", "вулкан")


def topic_embed(texts: list[str]) -> Matrix:
    """One axis per topic word: same topic → cosine 1, different topics → cosine 0."""
    rows = []
    for text in texts:
        row = [float(text.lower().count(w)) for w in TOPIC_WORDS]
        rows.append([*row, 0.0 if any(row) else 1.0])
    return normalized(rows)


def angle_embed(angles: dict[int, float]) -> Callable[[list[str]], Matrix]:
    """Sentence «Фраза N …» → the unit vector at ``angles[N]`` degrees: with window=0 the
    similarity across a gap is the cosine of the angle between neighbours."""

    def embed(texts: list[str]) -> Matrix:
        rows = []
        for text in texts:
            match = re.search(r"Фраза (\d+)", text)
            assert match, text
            phi = math.radians(angles[int(match.group(1))])
            rows.append([math.cos(phi), math.sin(phi)])
        return normalized(rows)

    return embed


def phrases(n: int) -> list[str]:
    return [f"Фраза {k} про одно и то же дело." for k in range(n)]


def split(
    text: str, embed: Callable[[list[str]], Matrix], window: int = 1, **params: Any
) -> list[Chunk]:
    strategy = SemanticStrategy(embed=embed, window=window)
    return chunk_raw(
        RawDocument("doc.md", normalize_newlines(text)),
        strategy,
        make_params(**params),
        get_counter(str(params.get("unit", "chars")), "cl100k_base"),
    ).chunks


def starts(chunks: list[Chunk]) -> list[str]:
    return [c.text.split(".")[0] for c in chunks]


# ---- the contract, on any input ---------------------------------------------------------

OPTIONS = st.fixed_dictionaries(
    {
        "threshold": st.sampled_from([None, -1.0, 0.0, 0.3, 1.0]),
        "percentile": st.sampled_from([None, 10.0, 50.0, 95.0]),
        "min_chars": st.sampled_from([0, 150]),
    }
)


@settings(max_examples=40)
@given(
    text=markdown(),
    size=st.sampled_from([40, 90, 250, 1000]),
    window=st.sampled_from([0, 1, 3]),
    options=OPTIONS,
)
def test_contract_in_chars(text: str, size: int, window: int, options: dict[str, Any]) -> None:
    chunks = split(text, HASH_EMBED, window, size=size, **options)
    assert_contract(text, chunks, size, get_counter("chars"))


@settings(max_examples=30)
@given(text=markdown(), size=st.sampled_from([24, 64, 300]), options=OPTIONS)
def test_contract_in_cl100k_tokens(text: str, size: int, options: dict[str, Any]) -> None:
    chunks = split(text, HASH_EMBED, size=size, unit="tokens", **options)
    assert_contract(text, chunks, size, get_counter("tokens", "cl100k_base"))


@settings(max_examples=40)
@given(text=st.text(max_size=600), size=st.sampled_from([16, 50, 300]), options=OPTIONS)
def test_contract_on_arbitrary_text(text: str, size: int, options: dict[str, Any]) -> None:
    chunks = split(text, HASH_EMBED, size=size, **options)
    assert_contract(text, chunks, size, get_counter("chars"))


ADVERSARIAL = {
    "one giant paragraph without sentence ends": "слово за словом без точки " * 800,
    "a huge table": "| Регион | Зона |\n|---|---|\n"
    + "".join(f"| Регион номер {i} | зона {i % 5} |\n" for i in range(600)),
    "identical sentences": "Курьер привозит заказ до двери. " * 600,
    "identical paragraphs": "\n\n".join(["Курьер привозит заказ до двери."] * 600),
}


@pytest.mark.parametrize("threshold", [None, 1.0, -1.0], ids=["default", "cut-all", "cut-none"])
@pytest.mark.parametrize(("unit", "size"), [("chars", 300), ("tokens", 64)])
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_inputs_stay_bounded(
    name: str, unit: str, size: int, threshold: float | None
) -> None:
    text = ADVERSARIAL[name]
    chunks = split(text, HASH_EMBED, size=size, unit=unit, threshold=threshold)
    assert_contract(text, chunks, size, get_counter(unit, "cl100k_base"))
    assert len(chunks) > 1


@pytest.mark.parametrize("threshold", [None, -1.0], ids=["default", "cut-none"])
def test_without_any_breakpoint_a_run_is_packed_full_not_halved(threshold: float | None) -> None:
    sentence = "Курьер привозит заказ до двери. "
    text = sentence * 200
    chunks = split(text, HASH_EMBED, size=300, threshold=threshold)
    assert_contract(text, chunks, 300, get_counter("chars"))
    # Every chunk but the last holds as many whole sentences as fit.
    assert all(len(c.text) > 300 - len(sentence) for c in chunks[:-1])


# ---- where the cuts fall ----------------------------------------------------------------

BEES = [f"Пчелы в улье номер {k} собирают мёд с липы." for k in range(4)]
CHAINS = [f"Цепь велосипеда номер {k} требует смазки." for k in range(5)]
BREAD = [f"Хлеб на закваске номер {k} печётся долго." for k in range(4)]


def test_the_cut_falls_exactly_where_the_topic_changes() -> None:
    text = " ".join(BEES + CHAINS) + "\n\n" + " ".join(BREAD)
    chunks = split(text, topic_embed, size=2000)
    assert [c.text for c in chunks] == [" ".join(BEES), " ".join(CHAINS), " ".join(BREAD)]


def test_equally_sharp_shifts_tied_at_the_bottom_are_all_cut() -> None:
    # 11 gaps, two of cosine 0: the 10th percentile is that very 0.
    text = " ".join(BEES + CHAINS + BREAD[:3])
    chunks = split(text, topic_embed, size=2000, min_chars=0)
    assert [c.text for c in chunks] == [" ".join(BEES), " ".join(CHAINS), " ".join(BREAD[:3])]


def test_threshold_one_cuts_everywhere_and_minus_one_nowhere() -> None:
    sentences = phrases(6)
    text = " ".join(sentences)
    embed = angle_embed({k: 10.0 * k for k in range(6)})
    every = split(text, embed, window=0, size=2000, threshold=1.0, min_chars=0)
    assert [c.text for c in every] == sentences
    none = split(text, embed, window=0, size=2000, threshold=-1.0, min_chars=0)
    assert [c.text for c in none] == [text]


def test_a_long_group_is_cut_at_its_weakest_gap_recursively() -> None:
    sentences = phrases(6)
    text = " ".join(sentences)
    deltas = [10, 50, 80, 30, 5]  # degrees between neighbours: gap 2 is the weakest
    angles = dict(enumerate(np.cumsum([0, *deltas]).tolist()))
    size = len(" ".join(sentences[:2])) + 5  # two sentences fit, three do not
    chunks = split(text, angle_embed(angles), window=0, size=size, threshold=-1.0, min_chars=0)
    # Gap 2 first, then gap 1 on the left and gap 3 on the right; a greedy packer would
    # give three pairs instead.
    assert [c.text for c in chunks] == [
        " ".join(sentences[0:2]),
        sentences[2],
        sentences[3],
        " ".join(sentences[4:6]),
    ]


DELTAS = [20, 45, 5, 30, 50, 10, 35, 15, 40, 25]  # degrees across gaps 0..9


def cut_gaps(**params: object) -> list[int]:
    sentences = phrases(11)
    angles = dict(enumerate(np.cumsum([0, *DELTAS]).tolist()))
    chunks = split(" ".join(sentences), angle_embed(angles), window=0, size=5000, **params)
    firsts = [sentences.index(c.text.split(" Фраза")[0]) for c in chunks]
    return [k - 1 for k in firsts[1:]]


def test_threshold_cuts_every_gap_below_it() -> None:
    assert cut_gaps(threshold=math.cos(math.radians(37.5)), min_chars=0) == [1, 4, 8]
    assert cut_gaps(threshold=math.cos(math.radians(47.5)), min_chars=0) == [4]


def test_percentile_cuts_the_lowest_share_of_gaps() -> None:
    assert cut_gaps(percentile=10.0, min_chars=0) == [4]
    assert cut_gaps(percentile=15.0, min_chars=0) == [1, 4]
    assert cut_gaps(percentile=30.0, min_chars=0) == [1, 4, 8]


def test_with_both_rules_either_one_cuts() -> None:
    few = math.cos(math.radians(47.5))
    assert cut_gaps(threshold=few, percentile=30.0, min_chars=0) == [1, 4, 8]
    many = math.cos(math.radians(37.5))
    assert cut_gaps(threshold=many, percentile=10.0, min_chars=0) == [1, 4, 8]


def test_the_default_is_a_percentile() -> None:
    default = cut_gaps(min_chars=0)
    assert default == cut_gaps(percentile=semantic_module.DEFAULT_PERCENTILE, min_chars=0)
    assert default == [4]


@pytest.mark.parametrize(("angle", "joins"), [(30.0, "left"), (60.0, "right")])
def test_a_fragment_merges_into_the_more_similar_neighbour(angle: float, joins: str) -> None:
    left = "Фраза 0 — длинное рассуждение о первой теме, которое тянется и тянется дальше."
    short = "Фраза 1 коротко."
    right = "Фраза 2 — длинное рассуждение о второй теме, которое тоже тянется дальше."
    text = f"{left} {short} {right}"
    embed = angle_embed({0: 0.0, 1: angle, 2: 90.0})
    chunks = split(text, embed, window=0, size=1000, threshold=0.99, min_chars=40)
    expected = [f"{left} {short}", right] if joins == "left" else [left, f"{short} {right}"]
    assert [c.text for c in chunks] == expected


def test_a_fragment_merges_into_the_other_neighbour_when_the_similar_one_is_full() -> None:
    left = "Фраза 0 — длинное рассуждение о первой теме, которое тянется и тянется дальше."
    short = "Фраза 1 коротко."
    right = "Фраза 2 — вторая тема."
    text = f"{left} {short} {right}"
    embed = angle_embed({0: 0.0, 1: 10.0, 2: 90.0})
    size = len(left) + 5  # the fragment does not fit next to the long left sentence
    chunks = split(text, embed, window=0, size=size, threshold=0.99, min_chars=40)
    assert [c.text for c in chunks] == [left, f"{short} {right}"]


# ---- structure: headings and atoms ------------------------------------------------------


def test_a_heading_always_starts_a_chunk_and_stays_with_its_text() -> None:
    text = "# Пчелы\n\n" + " ".join(BEES[:2]) + "\n\n## Ещё пчелы\n\n" + " ".join(BEES[2:])
    chunks = split(text, topic_embed, size=2000, threshold=-1.0)
    assert [c.text for c in chunks] == [
        "# Пчелы\n\n" + " ".join(BEES[:2]),
        "## Ещё пчелы\n\n" + " ".join(BEES[2:]),
    ]
    assert chunks[1].section == ("Пчелы", "Ещё пчелы")
    assert chunks[1].embed_text.startswith("Пчелы > Ещё пчелы\n\n"), "breadcrumbs by default"
    # Headings outside ``levels`` are no hard boundary.
    merged = split(text, topic_embed, size=2000, threshold=-1.0, levels=(1, 1))
    assert [c.text for c in merged] == [text]


def test_an_indented_heading_is_a_boundary_too() -> None:
    text = " ".join(BEES[:2]) + "\n\n   ## Ещё пчелы\n\n" + " ".join(BEES[2:])
    chunks = split(text, topic_embed, size=2000, threshold=-1.0)
    assert [c.text for c in chunks] == [
        " ".join(BEES[:2]),
        "## Ещё пчелы\n\n" + " ".join(BEES[2:]),
    ]


def test_a_heading_with_nothing_under_it_joins_the_next_section() -> None:
    text = "# Хозяйство\n\n## Пчелы\n\n" + " ".join(BEES)
    chunks = split(text, topic_embed, size=2000)
    assert [c.text for c in chunks] == [text]


def test_atoms_are_single_units_never_cut_even_when_cutting_everywhere() -> None:
    table = "| Улей | Мёд, кг |\n|---|---|\n| 1 | 30 |\n| 2 | 45 |"
    code = "```python\nhives = 2\nprint(hives)\n```"
    text = f"{BEES[0]}\n\n{table}\n\n{BEES[1]}\n\n{code}\n\n{BEES[2]}"
    chunks = split(text, HASH_EMBED, size=2000, threshold=1.0, min_chars=0)
    assert [c.text for c in chunks] == [BEES[0], table, BEES[1], code, BEES[2]]


def test_a_unit_alone_over_the_limit_falls_back_to_word_cuts() -> None:
    long_sentence = "Пчелы " + "очень " * 120 + "трудолюбивы."
    text = f"{BEES[0]} {long_sentence} {BEES[1]}"
    chunks = split(text, topic_embed, size=200)
    assert_contract(text, chunks, 200, get_counter("chars"))
    inside = [c for c in chunks if long_sentence.find(c.text) >= 0]
    assert len(inside) >= 3 and all(len(c.text) <= 200 for c in inside)


def test_a_heading_stays_on_top_of_a_table_too_long_for_one_chunk() -> None:
    rows = "".join(f"| Улей {i} | {i * 3} кг |\n" for i in range(40))
    text = f"# Улья\n\n| Улей | Мёд |\n|---|---|\n{rows}"
    chunks = split(text, HASH_EMBED, size=300)
    assert_contract(text, chunks, 300, get_counter("chars"))
    assert chunks[0].text.startswith("# Улья\n\n| Улей | Мёд |\n|---|---|\n| Улей 0 |")
    assert all(c.embed_text.startswith("Улья\n\n| Улей | Мёд |") for c in chunks[1:])


# ---- embedding cost ---------------------------------------------------------------------


class CountingEmbed:
    def __init__(self) -> None:
        self.batches: list[int] = []

    def __call__(self, texts: list[str]) -> Matrix:
        self.batches.append(len(texts))
        return topic_embed(texts)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 150])
def test_units_are_embedded_in_batches_not_one_call_per_sentence(n: int) -> None:
    sentences = [f"Пчелы улья номер {k} летают." for k in range(n + 1)]
    text = " ".join(sentences)
    embed = CountingEmbed()
    strategy = SemanticStrategy(embed=embed)
    params, counter = SplitParams(size=300), get_counter("chars")
    chunk_raw(RawDocument("a.md", text), strategy, params, counter)
    units = n + 1
    assert embed.batches == [min(BATCH_SIZE, units - k) for k in range(0, units, BATCH_SIZE)]
    expected = {"calls": math.ceil(units / BATCH_SIZE), "texts": units, "chars": len(text) - n}
    assert strategy.stats == expected
    # The counters accumulate over documents.
    chunk_raw(RawDocument("b.md", text), strategy, params, counter)
    assert strategy.stats == {key: 2 * value for key, value in expected.items()}


def test_batch_size_is_configurable() -> None:
    embed = CountingEmbed()
    strategy = SemanticStrategy(embed=embed, batch_size=10)
    text = " ".join(f"Пчелы улья номер {k} летают." for k in range(25))
    chunk_raw(RawDocument("a.md", text), strategy, SplitParams(), get_counter("chars"))
    assert embed.batches == [10, 10, 5]


def test_sections_of_one_unit_need_no_embedding() -> None:
    embed = CountingEmbed()
    strategy = SemanticStrategy(embed=embed)
    text = "# Один\n\nПчелы летают.\n\n# Два\n\nЦепь смазана.\n\n# Три\n\nХлеб испечён."
    chunks = chunk_raw(
        RawDocument("a.md", text), strategy, SplitParams(), get_counter("chars")
    ).chunks
    assert len(chunks) == 3
    assert embed.batches == [] and strategy.stats["calls"] == 0


def test_the_default_embedder_opens_lazily_on_the_first_split(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import narezka.runs.chunking as chunking_module

    opened: list[str] = []

    def fake_default(cache: Path | None = None) -> Callable[[list[str]], Matrix]:
        opened.append("default")
        return topic_embed

    monkeypatch.setattr(chunking_module, "cached_signal_embedder", fake_default)
    text = " ".join(BEES + CHAINS)
    embed = chunking_module.lazy_signal_embedder()
    assert opened == [], "building the embed function must not load a model"
    strategy = get_strategy("semantic", embed=embed)
    for source in ("a.md", "b.md"):
        chunk_raw(RawDocument(source, text), strategy, SplitParams(size=2000), get_counter("chars"))
    assert opened == ["default"], "loaded once, on the first split that needs it"
    assert len(chunking_module.chunk_text(text, "semantic", size=2000)) >= 2


def test_the_split_stage_never_opens_an_embedder_itself() -> None:
    strategy = get_strategy("semantic")
    text = " ".join(BEES + CHAINS)
    with pytest.raises(ConfigError, match="needs an embed function"):
        chunk_raw(RawDocument("a.md", text), strategy, SplitParams(size=2000), get_counter("chars"))


def test_an_embed_function_with_the_wrong_shape_is_a_clear_error() -> None:
    def broken(texts: list[str]) -> Matrix:
        return np.ones((1, 4), dtype=np.float32)

    with pytest.raises(ConfigError, match=r"doc\.md: the embed function returned shape"):
        split(" ".join(BEES), broken, size=2000)


def test_an_embed_function_that_changes_its_dimension_is_a_clear_error() -> None:
    dims = iter([4, 8])

    def drifting(texts: list[str]) -> Matrix:
        return normalized([[1.0] * next(dims)] * len(texts))

    strategy = SemanticStrategy(embed=drifting, batch_size=2)
    doc = RawDocument("doc.md", " ".join(BEES))
    with pytest.raises(ConfigError, match=r"doc\.md: .* changed its dimension from 4 to 8"):
        chunk_raw(doc, strategy, SplitParams(), get_counter("chars"))


@pytest.mark.parametrize("kwargs", [{"window": -1}, {"batch_size": 0}])
def test_bad_strategy_options_are_config_errors(kwargs: dict[str, int]) -> None:
    with pytest.raises(ConfigError):
        SemanticStrategy(embed=topic_embed, **kwargs)


# ---- the real default model -------------------------------------------------------------


def test_default_model_finds_the_topic_shifts_in_russian_text() -> None:
    text = TOPICS_RU.read_text(encoding="utf-8")
    chunks = narezka.chunk_text(text, "semantic", source="topics_ru.md", size=800)
    assert_contract(text, chunks, 800, get_counter("chars"))
    firsts = {c.text[:30] for c in chunks}
    # Bees → bicycles and bread → volcanoes have no heading between them; the heading before
    # the bread is a hard boundary anyway.
    for shift in ("Велосипедная цепь", "## Кухня и география", "Камчатка — один"):
        assert any(f.startswith(shift) for f in firsts), (shift, sorted(firsts))


def test_cli_output_passes_the_shared_checker(tmp_path: Path, check_chunks_tool: Path) -> None:
    corpus = TEST_DATA / "semantic"
    result = CliRunner().invoke(
        cli, ["chunk", str(corpus), "--strategy", "semantic", "--format", "jsonl"]
    )
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) >= 4 and {r["strategy"] for r in rows} == {"semantic"}
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(result.stdout, encoding="utf-8")
    check = [sys.executable, str(check_chunks_tool), str(corpus), str(chunks)]
    checked = subprocess.run(
        [*check, "--size", "800", "--unit", "chars"], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.strip().splitlines()[-1].startswith("ok:")


def test_chunk_stats_report_the_embedding_calls() -> None:
    corpus = str(TEST_DATA / "semantic")
    as_json = CliRunner().invoke(
        cli, ["chunk", corpus, "--strategy", "semantic", "--stats", "--format", "json"]
    )
    assert as_json.exit_code == 0, as_json.stderr
    spent = json.loads(as_json.stdout)["stats"]["embedding"]
    assert spent["calls"] >= 1 and spent["texts"] >= 10 and spent["chars"] > 1000
    # The same run for people: the table names the calls (the cache is warm by now, but
    # calls count what the strategy asked for, cached or not).
    table = CliRunner().invoke(cli, ["chunk", corpus, "--strategy", "semantic", "--stats"])
    line = next(x for x in table.output.splitlines() if "Embedding calls" in x)
    assert line.split()[2:] == [str(spent["calls"]), f"({spent['texts']}", "texts)"]
    plain = CliRunner().invoke(cli, ["chunk", corpus, "--strategy", "headings", "--stats"])
    assert "Embedding calls" not in plain.output
