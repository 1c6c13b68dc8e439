"""Span metrics (Chroma's recall / precision / IoU / hit_full) and the Chroma benchmark loader."""

from __future__ import annotations

import csv
import itertools
import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.environment import Environment
from narezka.evaluate.chroma import ChromaBenchmark, default_root, load_chroma, token_ends
from narezka.evaluate.spans import (
    Span,
    intersect_merged,
    merge_ranges,
    span_metrics,
    span_metrics_tokens,
    to_token_span,
)

REPO = Path(__file__).resolve().parents[2]
CHROMA = Path(os.environ.get("NAREZKA_SHARED", REPO.parent / "shared")) / "data" / "chroma_eval"


def S(start: int, end: int, doc: str = "a") -> Span:
    return Span(doc, start, end)


# --- span_metrics on hand-made cases ---------------------------------------------------------


def test_disjoint() -> None:
    s = span_metrics([S(0, 10)], [S(20, 30)])
    assert (s.recall, s.precision, s.iou, s.hit_full) == (0.0, 0.0, 0.0, False)


def test_other_document_never_hits_but_costs_precision() -> None:
    s = span_metrics([S(20, 30, "b"), S(20, 25)], [S(20, 30)])
    assert s.recall == 0.5
    assert s.precision == 5 / 15
    assert s.iou == 5 / (15 + 5)
    assert not s.hit_full


def test_reference_nested_in_chunk() -> None:
    s = span_metrics([S(0, 100)], [S(40, 60)])
    assert s.recall == 1.0
    assert s.precision == 0.2
    assert s.iou == 0.2
    assert s.hit_full


def test_chunk_nested_in_reference() -> None:
    s = span_metrics([S(40, 60)], [S(0, 100)])
    assert s.recall == 0.2
    assert s.precision == 1.0
    assert s.iou == 0.2
    assert not s.hit_full


def test_exact_match() -> None:
    s = span_metrics([S(5, 15)], [S(5, 15)])
    assert (s.recall, s.precision, s.iou, s.hit_full) == (1.0, 1.0, 1.0, True)


def test_partial_overlap() -> None:
    s = span_metrics([S(0, 10)], [S(5, 15)])
    assert s.recall == 0.5
    assert s.precision == 0.5
    assert s.iou == 5 / 15
    assert not s.hit_full


def test_several_references() -> None:
    refs = [S(0, 10), S(50, 60), S(0, 4, "b")]
    chunks = [S(0, 20), S(55, 70)]
    s = span_metrics(chunks, refs)
    # hits: 10 (first ref) + 5 (second ref half) + 0 (doc b) of 24 reference chars
    assert s.recall == 15 / 24
    assert s.precision == 15 / 35
    assert s.iou == 15 / (35 + 9)
    assert not s.hit_full
    full = span_metrics([*chunks, S(45, 65), S(0, 8, "b")], refs)
    assert full.recall == 1.0
    assert full.hit_full  # each reference inside some chunk, different chunks allowed


def test_hit_full_needs_one_chunk_per_reference() -> None:
    # covered by two adjacent chunks but by no single one: recall 1, hit_full false
    s = span_metrics([S(0, 10), S(10, 20)], [S(5, 15)])
    assert s.recall == 1.0
    assert not s.hit_full


def test_overlapping_retrieved_chunks_count_repeats() -> None:
    chunks = [S(0, 20), S(10, 30)]
    refs = [S(10, 20)]
    chroma = span_metrics(chunks, refs)
    assert chroma.recall == 1.0
    assert chroma.precision == 10 / 40  # overlap 10..20 counted twice, like Chroma's code
    assert chroma.iou == 10 / 40
    assert chroma.hit_full
    sets = span_metrics(chunks, refs, count_repeats=False)
    assert sets.precision == 10 / 30
    assert sets.iou == 10 / 30
    assert sets.recall == 1.0


def test_repeated_chunk_does_not_inflate_hits() -> None:
    s = span_metrics([S(0, 10), S(0, 10)], [S(0, 10)])
    assert s.recall == 1.0
    assert s.precision == 0.5


def test_empty_inputs() -> None:
    none = span_metrics([], [S(0, 10)])
    assert (none.recall, none.precision, none.iou, none.hit_full) == (0.0, 0.0, 0.0, False)
    no_refs = span_metrics([S(0, 10)], [])
    assert (no_refs.recall, no_refs.iou, no_refs.hit_full) == (0.0, 0.0, False)


def test_bad_span_rejected() -> None:
    with pytest.raises(ValueError):
        Span("a", 5, 4)
    with pytest.raises(ValueError):
        Span("a", -1, 4)


# --- properties ------------------------------------------------------------------------------

ranges = st.lists(
    st.tuples(st.integers(0, 200), st.integers(0, 60)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=12,
)


def covered(rs: list[tuple[int, int]]) -> set[int]:
    return {i for s, e in rs for i in range(s, e)}


@given(ranges)
def test_merge_ranges_properties(rs: list[tuple[int, int]]) -> None:
    merged = merge_ranges(rs)
    assert covered(merged) == covered(rs)
    assert all(s < e for s, e in merged)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(merged))
    assert merge_ranges(merged) == merged
    assert merge_ranges(reversed(rs)) == merged


@given(ranges, ranges)
def test_intersect_merged_is_set_intersection(
    a: list[tuple[int, int]], b: list[tuple[int, int]]
) -> None:
    got = intersect_merged(merge_ranges(a), merge_ranges(b))
    assert covered(got) == covered(a) & covered(b)
    assert merge_ranges(got) == got


@given(ranges, ranges)
def test_span_metrics_match_set_definitions(
    ret: list[tuple[int, int]], ref: list[tuple[int, int]]
) -> None:
    retrieved = [S(s, e) for s, e in ret]
    references = [S(s, e) for s, e in ref]
    R, T = covered(ret), covered(ref)
    s = span_metrics(retrieved, references, count_repeats=False)
    assert s.recall == (len(R & T) / len(T) if T else 0.0)
    assert s.precision == (len(R & T) / len(R) if R else 0.0)
    assert s.iou == (len(R & T) / len(R | T) if R | T else 0.0)
    c = span_metrics(retrieved, references)
    assert c.recall == s.recall
    assert c.precision <= s.precision and c.iou <= s.iou
    for v in (c.recall, c.precision, c.iou):
        assert 0.0 <= v <= 1.0
    if s.hit_full:
        assert s.recall == 1.0 or not T


# --- token variant ---------------------------------------------------------------------------


def test_to_token_span() -> None:
    ends = [3, 7, 10, 15]  # tokens [0,3) [3,7) [7,10) [10,15)
    assert to_token_span(S(0, 3), ends) == S(0, 1)
    assert to_token_span(S(2, 4), ends) == S(0, 2)
    assert to_token_span(S(3, 7), ends) == S(1, 2)
    assert to_token_span(S(8, 15), ends) == S(2, 4)
    assert to_token_span(S(4, 4), ends) == S(1, 1)


def test_token_ends_and_token_metrics() -> None:
    text = "Привет, мир! Hello world, ещё раз."
    ends = token_ends(text)
    assert ends == sorted(ends)
    assert ends[-1] == len(text)
    whole = S(0, len(text), "d")
    assert to_token_span(whole, ends) == S(0, len(ends), "d")
    s = span_metrics_tokens([whole], [S(8, 12, "d")], {"d": ends})
    assert s.recall == 1.0 and s.hit_full
    assert 0.0 < s.precision < 1.0


# --- the Chroma benchmark --------------------------------------------------------------------


def test_load_chroma_reports_bad_rows(tmp_path: Path) -> None:
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "c.md").write_text("abcdefghij", encoding="utf-8")
    rows = [
        ("ok", [{"content": "cde", "start_index": 2, "end_index": 5}], "c"),
        ("mismatch", [{"content": "xyz", "start_index": 2, "end_index": 5}], "c"),
        ("out of range", [{"content": "j", "start_index": 9, "end_index": 11}], "c"),
        ("unknown corpus", [{"content": "a", "start_index": 0, "end_index": 1}], "nope"),
    ]
    with (tmp_path / "questions_df.csv").open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["question", "references", "corpus_id"])
        for q, refs, c in rows:
            w.writerow([q, json.dumps(refs), c])
        w.writerow(["bad json", "[{", "c"])
    bench = load_chroma(tmp_path)
    assert [q.q for q in bench.questions] == ["ok", "mismatch"]
    assert bench.questions[0].references == (Span("c", 2, 5),)
    assert bench.mismatches == 1
    assert {p.row for p in bench.problems} == {2, 3, 4, 5}


def test_default_root_is_under_the_shared_folder_the_environment_names(tmp_path: Path) -> None:
    env = Environment.read({"NAREZKA_SHARED": str(tmp_path)})
    assert default_root(env) == tmp_path / "data" / "chroma_eval"


@pytest.fixture(scope="module")
def chroma() -> ChromaBenchmark:
    if not (CHROMA / "questions_df.csv").is_file():
        pytest.skip(f"{CHROMA} not found; set NAREZKA_SHARED to the shared/ folder")
    return load_chroma(CHROMA)


def test_chroma_real_data(chroma: ChromaBenchmark) -> None:
    assert len(chroma.questions) == 472
    assert sorted(chroma.corpora) == [
        "chatlogs",
        "finance",
        "pubmed",
        "state_of_the_union",
        "wikitexts",
    ]
    assert chroma.per_corpus() == {
        "chatlogs": 56,
        "finance": 97,
        "pubmed": 99,
        "state_of_the_union": 76,
        "wikitexts": 144,
    }
    assert chroma.references == 790
    for q in chroma.questions:
        assert 1 <= len(q.references) <= 5
        assert len({r.doc for r in q.references}) == 1
        for r in q.references:
            assert 0 <= r.start < r.end <= len(chroma.corpora[r.doc])
    # README: corpus[start:end] == content for all 790 excerpts
    assert chroma.problems == []
    assert chroma.mismatches == 0


def test_chroma_references_score_perfectly_against_themselves(chroma: ChromaBenchmark) -> None:
    for q in chroma.questions:
        s = span_metrics(list(q.references), q.references)
        assert (s.recall, s.precision, s.iou, s.hit_full) == (1.0, 1.0, 1.0, True)
