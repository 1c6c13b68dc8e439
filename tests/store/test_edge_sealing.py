"""Sealed segments: a long write seals the engine's writable segment as it goes, and a sealed
index answers exactly what the same points in one writable segment answer."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
import qdrant_edge as qe

from narezka.store import Eq, Filter, SparseVector, StoredPoint, point_id
from narezka.store.edge import SEAL_POINTS, SEAL_POINTS_MAX, SEAL_SHARE, EdgeStore, seal_points

DIM = 8
POINTS = 1500


def _points() -> list[StoredPoint]:
    rng = random.Random(7)
    out = []
    for i in range(POINTS):
        dense = [rng.uniform(-1, 1) for _ in range(DIM)]
        terms = sorted(rng.sample(range(200), 6))
        sparse = SparseVector(tuple(terms), tuple(rng.uniform(0.5, 2.0) for _ in terms))
        payload = {"file_path": f"f{i % 40}.md", "zone": "body", "archived": i % 7 == 0}
        out.append(StoredPoint(point_id(f"f{i % 40}.md#{i}"), dense, payload, sparse))
    return out


def _segment_kinds(store_dir: Path) -> list[str]:
    """``sealed`` or ``writable`` for every segment the engine keeps."""
    kinds = []
    for meta in sorted((store_dir / "segments").glob("*/segment.json")):
        config = json.loads(meta.read_text(encoding="utf-8"))["config"]
        storage = config["vector_data"]["dense"]["storage_type"]
        kinds.append("writable" if storage == "ChunkedMmap" else "sealed")
    return kinds


def _answers(store: EdgeStore) -> list[list[tuple[str, float]]]:
    rng = random.Random(11)
    answers = []
    for i in range(20):
        dense = [rng.uniform(-1, 1) for _ in range(DIM)]
        terms = sorted(rng.sample(range(200), 2))
        sparse = SparseVector(tuple(terms), (1.0, 1.0))
        where = Filter(must=(Eq("file_path", f"f{i}.md"),)) if i % 3 == 0 else None
        for mode, hits in (
            ("dense", store.query(dense, filter=where, k=5, mode="dense")),
            ("bm25", store.query(sparse=sparse, filter=where, k=5, mode="bm25")),
        ):
            # Equal scores may come in any order: compare them as a sorted list per query.
            answers.append(sorted((f"{mode}:{h.id}", round(h.score, 5)) for h in hits))
    return answers


@pytest.fixture
def small_seals(monkeypatch: pytest.MonkeyPatch) -> None:
    # Above one upsert batch (512) so that a seal falls between batches, as at scale.
    monkeypatch.setattr("narezka.store.edge.SEAL_POINTS", 600)


def test_a_long_write_seals_as_it_goes_and_answers_the_same(
    tmp_path: Path, small_seals: None
) -> None:
    points = _points()
    with EdgeStore(tmp_path / "sealed") as sealed:
        sealed.ensure(DIM)
        sealed.upsert(points)
        # 1500 points in seals of 600: two sealed during the write, the rest still writable.
        assert _segment_kinds(tmp_path / "sealed").count("sealed") >= 1
        assert sealed.count() == POINTS
        after_write = _answers(sealed)
    with EdgeStore(tmp_path / "sealed") as sealed:  # reopened: what the close optimized
        sealed.ensure(DIM)
        assert sealed.count() == POINTS
        reopened = _answers(sealed)
    with EdgeStore(tmp_path / "one", indexing_threshold_kb=10**9) as one:  # never sealed
        one.ensure(DIM)
        one.upsert(points)
        assert _segment_kinds(tmp_path / "one") == ["writable"]
        expected = _answers(one)
    assert after_write == expected
    assert reopened == expected


def test_a_small_index_stays_one_writable_segment(tmp_path: Path) -> None:
    with EdgeStore(tmp_path) as store:
        store.ensure(DIM)
        store.upsert(_points()[:200])
    assert _segment_kinds(tmp_path) == ["writable"]


def test_deletes_and_filters_reach_sealed_segments(tmp_path: Path, small_seals: None) -> None:
    points = _points()
    with EdgeStore(tmp_path) as store:
        store.ensure(DIM)
        store.upsert(points)
        store.optimize()
        assert "sealed" in _segment_kinds(tmp_path)
        store.delete([p.id for p in points[:700]])
        assert store.count() == POINTS - 700
        archived = store.count(Filter(must=(Eq("archived", True),)))
        assert archived == sum(1 for p in points[700:] if p.payload["archived"])
        store.delete_where("file_path", "f3.md")
        assert store.count(Filter(must=(Eq("file_path", "f3.md"),))) == 0


def test_an_index_written_by_the_older_layout_opens_and_answers_the_same(
    tmp_path: Path,
) -> None:
    """Indexes written before sealing (one writable segment, payload indexes in RAM, no
    graph setting) open with the new settings and answer as before."""
    points = _points()[:300]
    with EdgeStore(tmp_path / "new", indexing_threshold_kb=10**9) as new:
        new.ensure(DIM)
        new.upsert(points)
        expected = _answers(new)
    old_dir = tmp_path / "old"
    old_config = qe.EdgeConfig(
        vectors={"dense": qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
        sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=0),
    )
    old_dir.mkdir()
    shard = qe.EdgeShard.create(str(old_dir), old_config)
    shard.update(qe.UpdateOperation.create_field_index("file_path", qe.PayloadSchemaType.Keyword))
    shard.close()
    meta = {"format": 1, "dim": DIM, "sparse": True, "distance": "Cosine"}
    (old_dir / "narezka_store.json").write_text(json.dumps(meta), encoding="utf-8")
    with EdgeStore(old_dir) as old:
        old.ensure(DIM)
        old.upsert(points)
        assert _answers(old) == expected


def test_sealed_segments_keep_the_second_vector(tmp_path: Path, small_seals: None) -> None:
    """The quality tier's second vector is sealed with the first: every point still has it
    after seals during the write and the reopen."""
    rng = random.Random(3)
    points = [
        dataclasses.replace(p, rescore=[rng.uniform(-1, 1) for _ in range(4)]) for p in _points()
    ]
    with EdgeStore(tmp_path) as store:
        store.ensure(DIM, rescore=4)
        store.upsert(points)
        assert "sealed" in _segment_kinds(tmp_path)
    with EdgeStore(tmp_path) as store:
        store.ensure(DIM, rescore=4)
        got = store.get([p.id for p in points[::50]], with_vectors=True)
        assert len(got) == len(points[::50])
        for want, have in zip(points[::50], got, strict=True):
            assert have.rescore is not None and want.rescore is not None
            norm = sum(x * x for x in want.rescore) ** 0.5  # cosine vectors are kept unit
            expected = [x / norm for x in want.rescore]
            assert list(have.rescore) == pytest.approx(expected, abs=1e-4)


def test_a_seal_grows_with_the_index_between_its_bounds() -> None:
    sizes = [seal_points(n) for n in range(0, SEAL_POINTS_MAX * SEAL_SHARE * 2, 9973)]
    assert sizes == sorted(sizes)
    assert sizes[0] == SEAL_POINTS and sizes[-1] == SEAL_POINTS_MAX
    assert seal_points(SEAL_POINTS * SEAL_SHARE) == SEAL_POINTS
    middle = (SEAL_POINTS + SEAL_POINTS_MAX) // 2 * SEAL_SHARE
    assert seal_points(middle) == middle // SEAL_SHARE


@pytest.fixture
def growing_seals(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Seals of 300 points up to 900, a third of the index in between; batches of 100, so a
    seal falls where the rule puts it. Yields the points the writable segment held at each
    seal."""
    monkeypatch.setattr("narezka.store.edge.SEAL_POINTS", 300)
    monkeypatch.setattr("narezka.store.edge.SEAL_POINTS_MAX", 900)
    monkeypatch.setattr("narezka.store.edge.SEAL_SHARE", 3)
    monkeypatch.setattr("narezka.store.edge.BATCH", 100)
    held: list[int] = []
    seal = EdgeStore._seal

    def counting_seal(store: EdgeStore) -> None:
        held.append(store._unsealed)
        seal(store)

    monkeypatch.setattr(EdgeStore, "_seal", counting_seal)
    return held


def test_seals_grow_with_the_index_and_answer_the_same(
    tmp_path: Path, growing_seals: list[int]
) -> None:
    points = _points()
    with EdgeStore(tmp_path / "sealed", optimize_on_close=False) as sealed:
        sealed.ensure(DIM)
        sealed.upsert(points)
        segments = sealed._need().info().segments_count
        answers = _answers(sealed)
    # 300 until the index holds 900 points; then a third of the index, the writable segment
    # included: from 900 sealed points it seals at 450, the first batch past it being 500.
    assert growing_seals == [300, 300, 300, 500]
    # One segment per seal, never merged, and the writable one.
    assert segments == len(growing_seals) + 1
    assert _segment_kinds(tmp_path / "sealed").count("sealed") == len(growing_seals)
    with EdgeStore(tmp_path / "one", indexing_threshold_kb=10**9) as one:
        one.ensure(DIM)
        one.upsert(points)
        assert answers == _answers(one)


def test_a_reopened_index_seals_by_the_points_it_holds(
    tmp_path: Path, growing_seals: list[int]
) -> None:
    points = _points()
    with EdgeStore(tmp_path) as store:
        store.ensure(DIM)
        store.upsert(points[:900])
    growing_seals.clear()
    with EdgeStore(tmp_path) as store:
        store.ensure(DIM)
        store.upsert(points[900:])
        assert store.count() == POINTS
    # 900 points already indexed: the next seal takes 500 (as above), not the smallest 300.
    assert growing_seals == [500]
