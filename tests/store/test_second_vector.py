"""The quality tier's second dense vector (``rescore``) on every backend: written with a point,
read back with it, copied by nothing but the point itself, and checked when a store opens."""

from __future__ import annotations

import pytest

from narezka.store import StoredPoint, point_id
from narezka.store.errors import StoreConfigError

from .conftest import StoreFactory

A, B = point_id("a"), point_id("b")


def test_a_second_vector_is_written_and_read_back(new_store: StoreFactory) -> None:
    store = new_store()
    store.ensure(4, sparse=True, rescore=3)
    store.upsert(
        [
            StoredPoint(A, [1.0, 0, 0, 0], {"file_path": "a.md"}, rescore=[0.0, 1.0, 0.0]),
            StoredPoint(B, [0, 1.0, 0, 0], {"file_path": "b.md"}, rescore=[1.0, 0.0, 0.0]),
        ]
    )
    got = {p.id: p for p in store.get([A, B], with_vectors=True)}
    assert got[A].rescore == pytest.approx([0.0, 1.0, 0.0])
    assert got[B].rescore == pytest.approx([1.0, 0.0, 0.0])
    # The engine never ranks by it: a dense query answers by the first vector.
    assert next(h.id for h in store.query([1.0, 0, 0, 0], k=2)) == A
    # Without vectors asked, none comes back.
    assert all(p.rescore is None for p in store.get([A, B]))
    store.close()
    reopened = new_store()
    reopened.ensure(4, sparse=True)  # opened without asking: it keeps what it has
    assert reopened.get([A], with_vectors=True)[0].rescore == pytest.approx([0.0, 1.0, 0.0])
    reopened.close()


def test_a_store_without_second_vectors_refuses_them(new_store: StoreFactory) -> None:
    store = new_store()
    store.ensure(4, sparse=True)
    with pytest.raises(StoreConfigError, match="second vectors"):
        store.upsert([StoredPoint(A, [1.0, 0, 0, 0], {}, rescore=[1.0, 0, 0])])
    store.close()
    reopened = new_store()
    with pytest.raises(StoreConfigError, match="rebuild"):
        reopened.ensure(4, sparse=True, rescore=3)
    reopened.close()
