"""Span golden sets end to end: a tiny corpus whose right answers are known (BM25 on
distinctive words), metrics checked against numbers computed by hand; Chroma's CSV through
``evaluate()``; ``expand`` passed to search; the cache on a re-run."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.api.evaluating import evaluate
from narezka.cli.eval import eval_command
from narezka.embed import HashEmbedder
from narezka.errors import ConfigError
from narezka.evaluate import EvalRun, as_dict, markdown_report, parse_golden, terminal_table
from narezka.evaluate.chroma import token_ends
from narezka.evaluate.runner import SIMILAR, SPLIT, miss_cause
from narezka.evaluate.spans import Span, span_metrics_tokens

A = "# Quokka\n\nThe quokka eats ferns at dawn.\n\n# Narwhal\n\nThe narwhal sings under ice.\n"
B = "# Walrus\n\nThe walrus naps on rocks.\n"
# headings with min_chars=0 keeps each section a chunk of its own:
A1 = (0, A.index("\n\n# Narwhal"))
A2 = (A.index("# Narwhal"), len(A.rstrip()))
B1 = (0, len(B.rstrip()))
FERNS = (A.index("eats ferns"), A.index("eats ferns") + len("eats ferns"))
# An excerpt across the section boundary: no chunk holds it whole.
ACROSS = (A.index("dawn."), A.index("# Narwhal") + len("# Narwhal"))
QUOKKA = (A.index("quokka eats"), A.index("quokka eats") + len("quokka"))
STRATEGY = "headings:min_chars=0"


def span_line(q: str, start: int, end: int, doc: str = "a.md") -> str:
    return json.dumps({"q": q, "references": [{"doc": doc, "start": start, "end": end}]})


GOLDEN = [
    span_line("quokka ferns", *FERNS),  # answered by A1, excerpt inside it
    span_line("narwhal ice", *ACROSS),  # A2 overlaps the excerpt's tail only
    span_line("walrus rocks", *QUOKKA),  # the walrus page wins, the excerpt is elsewhere
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kb")
    (root / "a.md").write_text(A, encoding="utf-8")
    (root / "b.md").write_text(B, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache") / "embeddings.sqlite"


@pytest.fixture(scope="module")
def run(corpus: Path, cache: Path) -> EvalRun:
    return evaluate(
        corpus,
        parse_golden(GOLDEN),
        strategies=STRATEGY,
        ks="1,2",
        mode="bm25",
        embedder=HashEmbedder(32),
        cache_path=cache,
    )


def length(r: tuple[int, int]) -> int:
    return r[1] - r[0]


def test_span_metrics_match_hand_computed_numbers(run: EvalRun) -> None:
    assert run.format == "spans" and not run.problems
    (s,) = run.strategies
    assert s.chunks == 3
    q1, q2, q3 = s.questions
    assert [(x.file_path, x.start, x.end) for x in q1.retrieved] == [("a.md", *A1)]
    assert [(x.file_path, x.start, x.end) for x in q2.retrieved] == [("a.md", *A2)]
    assert [(x.file_path, x.start, x.end) for x in q3.retrieved] == [("b.md", *B1)]
    assert [q.rank for q in s.questions] == [1, 1, None]
    assert [q.in_one_chunk for q in s.questions] == [True, False, True]
    # q1: the excerpt lies inside A1.
    assert q1.spans[1].recall == 1.0 and q1.spans[1].hit_full
    assert q1.spans[1].precision == pytest.approx(length(FERNS) / length(A1))
    assert q1.spans[1].iou == pytest.approx(length(FERNS) / length(A1))
    # q2: A2 covers the excerpt from A2's start to the excerpt's end.
    shared = ACROSS[1] - A2[0]
    assert q2.spans[1].recall == pytest.approx(shared / length(ACROSS))
    assert q2.spans[1].precision == pytest.approx(shared / length(A2))
    assert q2.spans[1].iou == pytest.approx(shared / (length(A2) + length(ACROSS) - shared))
    assert not q2.spans[1].hit_full
    # q3: another page, nothing shared.
    assert (q3.spans[1].recall, q3.spans[1].iou, q3.spans[1].hit_full) == (0.0, 0.0, False)
    assert s.hits == {1: pytest.approx(2 / 3), 2: pytest.approx(2 / 3)}
    assert s.mrr == pytest.approx(2 / 3)
    assert s.ceiling == pytest.approx(2 / 3)
    summary = s.span[1]
    assert summary.recall == pytest.approx((1 + shared / length(ACROSS)) / 3)
    assert summary.iou == pytest.approx(
        (length(FERNS) / length(A1) + shared / (length(A2) + length(ACROSS) - shared)) / 3
    )
    assert summary.hit_full == pytest.approx(1 / 3)
    # BM25 finds nothing else: k=2 retrieves the same single chunk.
    assert s.span[2] == s.span[1]
    # The token variant maps the same ranges onto cl100k tokens.
    ends = {"a.md": token_ends(A), "b.md": token_ends(B)}
    expected = span_metrics_tokens([Span("a.md", *A2)], [Span("a.md", *ACROSS)], ends)
    assert q2.token_spans[1] == expected
    assert 0 < s.span_tokens[1].iou < 1
    # Retrieved tokens are the embedder's (words and punctuation + 2 for HashEmbedder).
    assert q1.retrieved[0].tokens == len("The quokka eats ferns at dawn . # Quokka".split()) + 2
    assert miss_cause(q3) == SIMILAR


def test_reports_show_span_columns_and_excerpts(run: EvalRun) -> None:
    table = terminal_table(run)
    assert len(table.columns) == 9 + 4  # two ks; then full, recall, precision, IoU
    text = markdown_report(run)
    assert "| full@2 | recall@2 | precision@2 | IoU@2 |" in text
    assert "## Span metrics at k=2" in text and "IoU (cl100k)" in text
    assert "## Misses of headings:min_chars=0 at k=2 (1)" in text
    assert "«quokka»" in text and "`b.md` [0–" in text and "similar page won" in text
    data = as_dict(run)
    assert data["format"] == "spans"
    (s,) = data["strategies"]
    assert s["span"]["chars"]["@1"]["recall"] == pytest.approx(run.strategies[0].span[1].recall)
    assert s["questions"][1]["retrieved_spans"] == [["a.md", *A2]]
    assert s["questions"][2]["cause"] == SIMILAR


def test_a_split_excerpt_missed_is_blamed_on_the_split(corpus: Path, cache: Path) -> None:
    run = evaluate(
        corpus,
        parse_golden([span_line("walrus rocks", *ACROSS)]),
        strategies=STRATEGY,
        ks="1",
        mode="bm25",
        embedder=HashEmbedder(32),
        cache_path=cache,
    )
    (q,) = run.strategies[0].questions
    assert q.rank is None and not q.in_one_chunk and miss_cause(q) == SPLIT


def test_a_rerun_takes_every_vector_from_the_cache(run: EvalRun, corpus: Path, cache: Path) -> None:
    model = HashEmbedder(32)
    again = evaluate(
        corpus,
        parse_golden(GOLDEN),
        strategies=STRATEGY,
        ks="1,2",
        mode="bm25",
        embedder=model,
        cache_path=cache,
    )
    assert model.texts_embedded == 0
    assert again.cache_misses == 0 and again.cache_hits == 3  # the three chunks
    assert again.strategies[0].cached == 3 and again.strategies[0].embedded == 0
    assert again.strategies[0].span == run.strategies[0].span


def test_expand_is_passed_to_search_and_expanded_spans_are_scored(
    corpus: Path, cache: Path
) -> None:
    run = evaluate(
        corpus,
        parse_golden(GOLDEN[:1]),
        strategies="fixed:unit=chars,size=20",
        ks="1",
        mode="bm25",
        embedder=HashEmbedder(32),
        cache_path=cache,
        expand="section",
    )
    assert run.expand == "section"
    (q,) = run.strategies[0].questions
    top = q.retrieved[0]
    # A 20-character window grows to its whole section "# Quokka ... dawn.".
    assert (top.start, top.end) == A1 and top.text == A[A1[0] : A1[1]]
    assert q.spans[1].hit_full
    with pytest.raises(ConfigError, match="expand"):
        evaluate(
            corpus,
            parse_golden(GOLDEN[:1]),
            strategies=STRATEGY,
            mode="bm25",
            embedder=HashEmbedder(32),
            cache_path=cache,
            expand="bogus",
        )


def test_chroma_csv_through_evaluate(tmp_path: Path) -> None:
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "zoo.md").write_text(A, encoding="utf-8")
    (corpora / "sea.md").write_text(B, encoding="utf-8")
    rows = [
        ["quokka ferns", [(*FERNS, "eats ferns")], "zoo"],
        ["walrus rocks", [(0, len("# Walrus"), "# Walrus")], "sea"],
        ["unknown corpus", [(0, 1, "#")], "nope"],
        ["stale content", [(0, 5, "other")], "zoo"],
        ["past the end", [(0, 9999, "x")], "sea"],
    ]
    golden = tmp_path / "questions_df.csv"
    with golden.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "references", "corpus_id"])
        for q, refs, corpus_id in rows:
            data = [{"content": c, "start_index": s, "end_index": e} for s, e, c in refs]
            writer.writerow([q, json.dumps(data), corpus_id])
    run = evaluate(
        corpora,
        golden,
        strategies=STRATEGY,
        ks="1",
        mode="bm25",
        embedder=HashEmbedder(32),
        cache_path=tmp_path / "c.sqlite",
    )
    assert run.format == "spans"
    (s,) = run.strategies
    assert [q.question.q for q in s.questions] == ["quokka ferns", "walrus rocks"]
    assert [q.rank for q in s.questions] == [1, 1]
    assert s.span[1].recall == 1.0 and s.span[1].hit_full == 1.0
    problems = {p.line: p.problem for p in run.problems}
    assert problems == {
        4: "reference 1: unknown document 'nope.md'",
        5: problems[5],
        6: f"reference 1: offsets [0, 9999) outside sea.md (length {len(B)})",
    }
    assert problems[5].startswith("reference 1: content differs from zoo.md[0:5]")


def test_the_command_on_a_span_golden_set(corpus: Path, tmp_path: Path) -> None:
    golden = tmp_path / "spans.jsonl"
    golden.write_text("\n".join([*GOLDEN, "{oops", span_line("x", 0, 5, "gone.md")]) + "\n")
    report, plot = tmp_path / "RESULTS.md", tmp_path / "plot.png"
    args = [str(corpus), "--golden", str(golden), "--strategies", STRATEGY, "-k", "1,2"]
    args += ["--mode", "bm25", "--embedder", "hash", "--cache", str(tmp_path / "c.sqlite")]
    result = CliRunner().invoke(
        eval_command, [*args, "--report", str(report), "--plot", str(plot), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["format"] == "spans" and data["k"] == [1, 2]
    assert {(p["line"], p["skipped"]) for p in data["problems"]} == {(4, True), (5, True)}
    assert "unknown document 'gone.md'" in result.stderr
    assert "embedding cache:" in result.stderr
    assert "line 4: not valid JSON" in report.read_text(encoding="utf-8")
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # Sections are whole chunks here, so expanding hits to their section changes nothing.
    table = CliRunner().invoke(eval_command, [*args, "--expand", "section"])
    assert table.exit_code == 0
    assert "IoU@2" in table.stdout and "Equal context budget" in table.stdout
    assert "expand=section" in table.stdout
    bogus = CliRunner().invoke(eval_command, [*args, "--expand", "everything"])
    assert bogus.exit_code == 2 and "everything" in bogus.output
