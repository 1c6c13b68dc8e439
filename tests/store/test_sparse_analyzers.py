"""BM25 analyzers: pymorphy3 lemmas, identifier-aware terms, and the names an index records."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.errors import ConfigError, MissingDependencyError
from narezka.store import StoredPoint, VectorStore, point_id
from narezka.tokens.bm25 import (
    ANALYZERS,
    Bm25Encoder,
    _morph,
    bm25_encoder,
    identifiers,
    russian_lemma,
)


def test_lemmas_join_forms_the_stemmer_keeps_apart() -> None:
    snowball, lemma = Bm25Encoder(), Bm25Encoder(analyzer="lemma")
    pairs = (("вернёт", "вернуть", "вернул"), ("людей", "человек"), ("зависимость", "зависимостям"))
    for forms in pairs:
        assert len({lemma.encode_query(w).indices for w in forms}) == 1
    assert len({snowball.encode_query(w).indices for w in ("вернёт", "вернуть")}) == 2
    # English words keep the Snowball stems; stop words and ё behave as before.
    assert lemma.tokens("Деплоим deployed и зависимостями, ещё") == [
        "деплоить", "deploy", "зависимость"]  # fmt: skip
    # A lemma that is a stop word is dropped like the stop word itself.
    assert lemma.tokens("какую гарантию дают на неё") == ["гарантия", "давать"]


def test_the_default_keeps_its_old_name_and_the_others_are_named_apart() -> None:
    names = {a: Bm25Encoder(analyzer=a).name for a in ANALYZERS}
    # Indexes built before analyzers existed recorded this name; it must not change.
    assert names["snowball"] == "bm25-ru-en:k1=1.2:b=0.75:avg=256.0"
    assert names["lemma+ident"].endswith(":analyzer=lemma+ident")
    assert len(set(names.values())) == len(ANALYZERS)


def test_an_unknown_analyzer_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"unknown BM25 analyzer 'stem'; use one of snowball"):
        Bm25Encoder(analyzer="stem")


def test_lemma_without_pymorphy3_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _morph.cache_clear()
    monkeypatch.setitem(sys.modules, "pymorphy3", None)
    try:
        with pytest.raises(MissingDependencyError, match=r"pip install 'narezka\[ru\]'"):
            Bm25Encoder(analyzer="lemma")
        Bm25Encoder()  # snowball needs nothing more
    finally:
        _morph.cache_clear()


def test_query_lemmas_are_cached_across_encoders() -> None:
    russian_lemma.cache_clear()
    Bm25Encoder(analyzer="lemma").encode_query("какие зависимости вернёт роутер")
    misses = russian_lemma.cache_info().misses
    Bm25Encoder(analyzer="lemma").encode_query("роутер вернёт зависимости")
    info = russian_lemma.cache_info()
    assert info.misses == misses and info.hits >= 3
    assert bm25_encoder("lemma") is bm25_encoder("lemma")


def test_identifiers_whole_dotted_and_camel() -> None:
    text = "Use response_model_exclude_unset, fastapi.exception_handlers and HTTPException."
    assert identifiers(text) == [
        "response_model_exclude_unset", "fastapi.exception_handlers", "exception_handlers",
        "httpexception"]  # fmt: skip
    assert identifiers("plain words, app.get? a.b __init__ and Python") == ["app.get", "a.b"]
    tokens = Bm25Encoder(analyzer="snowball+ident").tokens("HTTPException OAuth2 syntaxHighlight")
    assert tokens == ["http", "except", "auth", "syntax", "highlight", "httpexception",
                      "oauth2", "syntaxhighlight"]  # fmt: skip


@given(st.text(alphabet="абвгдеёжзийклмнопрстуфхцчшщыьэюя abcdefghxyz,.!?\n", max_size=80))
def test_ident_adds_nothing_to_text_without_identifiers(text: str) -> None:
    # Lowercase words joined by spaces and punctuation are no identifiers: the same terms.
    text = text.replace(".", ". ")
    assert bm25_encoder("lemma+ident").tokens(text) == bm25_encoder("lemma").tokens(text)


def test_an_exact_identifier_outranks_chunks_sharing_its_parts(store: VectorStore) -> None:
    docs = {
        "parts": "The response model can exclude fields that are unset, model of the response.",
        "exact": "Set response_model_exclude_unset=True on the decorator.",
        "other": "Background tasks run after the response is sent.",
    }
    for analyzer, best in (("snowball", "parts"), ("snowball+ident", "exact")):
        enc = Bm25Encoder(analyzer=analyzer)
        store.upsert([StoredPoint(point_id(f"{analyzer}{k}"), np.ones(4), {"key": k, "a": analyzer},
                      enc.encode_document(t)) for k, t in docs.items()])  # fmt: skip
        query = enc.encode_query("response_model_exclude_unset")
        hits = store.query(sparse=query, mode="bm25", k=6)
        mine = [h.payload["key"] for h in hits if h.payload["a"] == analyzer]
        assert mine[0] == best
