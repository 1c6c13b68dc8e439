"""Every ``VectorStore`` method, on every backend, through one parametrized fixture."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from narezka.search import Fusion
from narezka.search.fusion import hybrid_query
from narezka.store import (
    AnyOf,
    DimensionMismatchError,
    Eq,
    Filter,
    Range,
    SparseVector,
    StoreConfigError,
    StoredPoint,
    VectorStore,
    chunk_point_id,
    point_id,
)
from narezka.store.base import StoredHit, decode_payload, encode_payload

StoreFactory = Callable[[], VectorStore]


Q = np.array([1.0, 0.0, 0.0, 0.0])


def pt(key: str, dense: list[float], term_weight: float = 0.0, **payload: object) -> StoredPoint:
    sparse = SparseVector((7,), (term_weight,)) if term_weight else SparseVector((99,), (1.0,))
    return StoredPoint(point_id(key), np.array(dense), dict(payload), sparse)


@pytest.fixture
def five(store: VectorStore) -> dict[str, str]:
    """A hand-made example: dense ranking A B C D E for Q, BM25 ranking C A E for term 7."""
    points = [
        pt("A", [1, 0, 0, 0], 2.0, file_path="a.md", zone="hot", archived=False, n=1),
        pt("B", [1, 0.2, 0, 0], 0, file_path="a.md", zone="warm", archived=True, n=2),
        pt("C", [1, 0.5, 0, 0], 3.0, file_path="b.md", zone="warm", archived=False, n=3),
        pt("D", [1, 1, 0, 0], 0, file_path="b.md", zone="cold", archived=True, n=4),
        pt("E", [-1, 0, 0, 0], 1.0, file_path="c.md", zone="hot", archived=False, n=5),
    ]
    store.upsert(points)
    return {k: point_id(k) for k in "ABCDE"}


def names(hits: list[StoredHit], ids: dict[str, str]) -> str:
    back = {v: k for k, v in ids.items()}
    return "".join(back[h.id] for h in hits)


def test_point_ids_are_deterministic_uuids() -> None:
    assert point_id("a.md\0fp\x000") == point_id("a.md\0fp\x000") != point_id("a.md\0fp\x001")
    assert chunk_point_id("a.md", "fp", 0) == point_id("a.md\0fp\x000")
    assert len(point_id("x")) == 36


def test_upsert_count_get(store: VectorStore, five: dict[str, str]) -> None:
    assert store.count() == 5
    got = store.get([five["C"], point_id("missing"), "not-a-uuid", five["A"]], with_vectors=True)
    assert [p.id for p in got] == [five["C"], five["A"]]
    assert got[1].payload["file_path"] == "a.md"
    assert got[1].dense is not None and np.allclose(got[1].dense, [1, 0, 0, 0], atol=1e-6)
    assert got[1].sparse == SparseVector((7,), (2.0,))
    assert store.get([five["B"]])[0].dense is None
    # Upsert replaces by id: no duplicates, new payload.
    store.upsert([pt("A", [1, 0, 0, 0], 2.0, file_path="z.md", archived=False)])
    assert store.count() == 5
    assert store.get([five["A"]])[0].payload["file_path"] == "z.md"


def test_delete_and_delete_where(store: VectorStore, five: dict[str, str]) -> None:
    store.delete([five["A"], point_id("never-there"), "junk"])
    assert store.count() == 4
    store.delete_where("file_path", "b.md")
    assert store.count() == 2
    store.delete_where("archived", True)
    assert [p.id for p in store.get(list(five.values()))] == [five["E"]]


def test_boolean_trap(store: VectorStore, five: dict[str, str]) -> None:
    """qdrant-edge never matches True/False; narezka stores 0/1 and hides it."""
    assert store.count(Filter.where(archived=True)) == 2
    assert store.count(Filter.where(archived=False)) == 3
    assert store.count(Filter(must_not=(Eq("archived", True),))) == 3
    assert store.count(Filter((AnyOf("archived", (True,)),))) == 2
    hit = store.query(Q, filter=Filter.where(archived=True), k=1)[0]
    assert hit.payload["archived"] is True
    assert store.get([five["A"]])[0].payload["archived"] is False


def test_filters(store: VectorStore, five: dict[str, str]) -> None:
    assert store.count(Filter.where(zone="hot")) == 2
    assert store.count(Filter((AnyOf("zone", ("hot", "cold")),))) == 3
    assert store.count(Filter((Range("n", gte=2, lt=5),))) == 3
    both = Filter(must=(Eq("zone", "warm"),), must_not=(Eq("file_path", "a.md"),))
    assert names(store.query(Q, filter=both), five) == "C"


def test_dense_bm25_hybrid(store: VectorStore, five: dict[str, str]) -> None:
    term = SparseVector((7,), (1.0,))
    dense = store.query(Q, k=10)
    assert names(dense, five) == "ABCDE"
    assert dense[0].score == pytest.approx(1.0, abs=1e-5)
    assert names(store.query(sparse=term, mode="bm25"), five) == "CAE"
    both = store.rankings(Q, term, k=10)
    assert names(both.dense, five) == "ABCDE"
    assert names(both.sparse, five) == "CAE"
    assert [h.score for h in both.dense] == pytest.approx([h.score for h in dense])
    rrf = Fusion("rrf")
    hybrid = hybrid_query(store, Q, term, k=5, fusion=rrf)
    # RRF with k=60, ranks from 1: A 1/61+1/62, C 1/63+1/61, E 1/65+1/63, B 1/62, D 1/64.
    assert names(hybrid, five) == "ACEBD"
    assert [h.score for h in hybrid] == pytest.approx(
        [1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 65 + 1 / 63, 1 / 62, 1 / 64]
    )
    filtered = hybrid_query(store, Q, term, k=5, filter=Filter.where(zone="hot"), fusion=rrf)
    assert names(filtered, five) == "AE"
    hot = store.rankings(Q, term, k=10, filter=Filter.where(zone="hot"))
    assert (names(hot.dense, five), names(hot.sparse, five)) == ("AE", "AE")
    assert names(hybrid_query(store, Q, term, k=2, fusion=rrf), five) == "AC"


def test_query_errors(store: VectorStore) -> None:
    with pytest.raises(StoreConfigError, match="dense query vector"):
        store.rankings(None, SparseVector((1,), (1.0,)))  # type: ignore[arg-type]
    with pytest.raises(StoreConfigError, match="sparse"):
        store.rankings(Q, None)  # type: ignore[arg-type]
    with pytest.raises(StoreConfigError, match=r"rankings\(\) and fuse"):
        store.query(Q, SparseVector((1,), (1.0,)), mode="hybrid")  # type: ignore[arg-type]
    with pytest.raises(StoreConfigError, match="sparse"):
        store.query(Q, mode="bm25")
    with pytest.raises(StoreConfigError, match="unknown store query mode"):
        store.query(Q, mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(StoreConfigError, match="UUID"):
        store.upsert([StoredPoint("chunk-1", Q)])


def test_dimension_mismatch_says_rebuild(new_store: StoreFactory) -> None:
    first = new_store()
    first.ensure(4)
    first.upsert([pt("A", [1, 0, 0, 0])])
    first.close()
    second = new_store()
    with pytest.raises(DimensionMismatchError, match="--rebuild") as info:
        second.ensure(8)
    assert (info.value.expected, info.value.found) == (8, 4)
    second.ensure(4)  # the right size still opens it, data intact
    assert second.count() == 1
    second.close()


def test_dense_only_index(new_store: StoreFactory) -> None:
    s = new_store()
    s.ensure(4, sparse=False)
    s.upsert([StoredPoint(point_id("A"), Q, {"archived": True})])
    with pytest.raises(StoreConfigError, match="--rebuild"):
        s.rankings(Q, SparseVector((1,), (1.0,)))
    with pytest.raises(StoreConfigError, match="--rebuild"):
        s.query(sparse=SparseVector((1,), (1.0,)), mode="bm25")
    with pytest.raises(StoreConfigError):
        s.upsert([pt("B", [0, 1, 0, 0], 1.0)])
    assert s.count(Filter.where(archived=True)) == 1
    s.close()
    reopened = new_store()
    with pytest.raises(StoreConfigError, match="BM25"):
        reopened.ensure(4, sparse=True)
    reopened.close()


def test_use_before_ensure_and_close_twice(new_store: StoreFactory) -> None:
    s = new_store()
    with pytest.raises(StoreConfigError, match="ensure"):
        s.count()
    s.close()
    s.close()


def test_payload_codec() -> None:
    stored = encode_payload({"archived": True, "flags": [True, False], "n": 1, "tags": ["x"]})
    assert stored == {"archived": 1, "flags": [1, 0], "n": 1, "tags": ["x"], "_bools": [
        "archived", "flags"]}  # fmt: skip
    assert decode_payload(stored) == {"archived": True, "flags": [True, False], "n": 1,
                                      "tags": ["x"]}  # fmt: skip
