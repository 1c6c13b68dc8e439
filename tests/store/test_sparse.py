"""BM25 sparse vectors: Russian morphology, mixed scripts, parity with qdrant_edge.Bm25."""

from __future__ import annotations

import numpy as np
import pytest
import qdrant_edge as qe

from narezka.store import StoredPoint, VectorStore, point_id
from narezka.tokens.bm25 import Bm25Encoder, murmur3_32, token_id


@pytest.fixture(scope="module")
def bm25() -> Bm25Encoder:
    return Bm25Encoder()


def test_russian_variants_share_a_token(bm25: Bm25Encoder) -> None:
    ids = {bm25.encode_query(w).indices for w in ("доставка", "доставки", "доставкой", "ДОСТАВКУ")}
    assert len(ids) == 1 and len(next(iter(ids))) == 1


def test_mixed_scripts_stem_by_language(bm25: Bm25Encoder) -> None:
    assert bm25.tokens("Деплоим deploy, deployed и deploying по API") == [
        "депло", "deploy", "deploy", "deploy", "api"]  # fmt: skip
    assert bm25.tokens("ещё ёлки и the of") == ["елк"]  # stop words, ё read as е
    assert bm25.encode_document("и в на the of") == bm25.encode_query("")


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("russian", "Доставка доставки доставкой курьером России тарифы зоны веса"),
        ("english", "Delivery parcels delivered quickly delivery tariffs zones"),
    ],
)
def test_same_vectors_as_qdrant_edge_bm25(bm25: Bm25Encoder, language: str, text: str) -> None:
    model = qe.Bm25(qe.Bm25Config(language=language))
    mine, theirs = bm25.encode_document(text), model.embed_document(text)
    assert mine.indices == tuple(theirs.indices)
    assert mine.values == pytest.approx(theirs.values, rel=1e-6)
    assert bm25.encode_query(text).indices == tuple(sorted(model.embed_query(text).indices))


def test_murmur3_reference_values() -> None:
    assert murmur3_32(b"") == 0
    assert murmur3_32(b"hello") == 0x248BFA47
    assert token_id("deliveri") == 6913142  # what qdrant_edge.Bm25 gives "delivery"


def test_bm25_search_matches_russian_forms(store: VectorStore, bm25: Bm25Encoder) -> None:
    docs = {
        "d1": "Стоимость доставки курьером по Москве",
        "d2": "Возврат товара в течение 14 дней",
        "d3": "Оплата картой при получении",
    }
    store.upsert([StoredPoint(point_id(k), np.ones(4), {"key": k}, bm25.encode_document(t))
                  for k, t in docs.items()])  # fmt: skip
    for query in ("доставка", "доставкой", "ДОСТАВКУ курьеры"):
        hits = store.query(sparse=bm25.encode_query(query), mode="bm25", k=3)
        assert [h.payload["key"] for h in hits] == ["d1"], query


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="BM25"):
        Bm25Encoder(b=2.0)
