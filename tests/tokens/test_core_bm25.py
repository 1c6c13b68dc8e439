"""Differential tests: the core's BM25 document vectors are the Python encoder's, to the
last bit of every weight, and its word count is the regex's for every code point it takes."""

from __future__ import annotations

import importlib.util
import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka._native import core
from narezka.tokens.bm25 import _WORD, STEMS_HELD, Bm25Encoder

SHARED = Path(os.environ.get("NAREZKA_SHARED", Path(__file__).resolve().parents[3] / "shared"))
CORPUS = SHARED / "data" / "md_corpus"

pytestmark = pytest.mark.skipif(core is None, reason="the native core is not built here")

ANALYZERS = ["snowball"]
if importlib.util.find_spec("pymorphy3") is not None:
    ANALYZERS.append("lemma")

WORDS = st.sampled_from(
    ["Ёлка", "ёлки", "елка", "и", "не", "the", "of", "Running", "runs", "FastAPI", "app_id",
     "x", "42", "2²", "ª", "Ж", "ЖУРНАЛ", "ѣ", "Ѳ", "ß", "Æsir", "café", "naïve", "№5",
     " ", "  ", "\n", ", ", ". ", "—", "«", "»", "…", "😀", "✅", "→", "_", "-", "\u00a0",
     "\u200b", "\u0301", "Σίσυφος", "漢字", "İ"]
)  # fmt: skip


def python_encoder(analyzer: str) -> Bm25Encoder:
    encoder = Bm25Encoder(analyzer=analyzer)
    encoder._native = None
    return encoder


@pytest.mark.parametrize("analyzer", ANALYZERS)
@given(st.lists(WORDS, max_size=60).map("".join))
@settings(max_examples=400, deadline=None)
def test_core_vectors_are_pythons(analyzer: str, text: str) -> None:
    native, plain = Bm25Encoder(analyzer=analyzer), python_encoder(analyzer)
    assert native._native is not None
    assert native.encode_document(text) == plain.encode_document(text)


def test_every_code_point_counts_as_the_regex_counts() -> None:
    assert core is not None
    taken = 0
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        c = chr(code)
        found = core.word_counts(c)
        if found is not None:
            taken += 1
            assert found == list(Counter(_WORD.findall(c.lower())).items()), hex(code)
    assert taken > 1000


def test_a_text_the_core_leaves_gives_pythons_vector() -> None:
    text = "Σίσυφος и ёлка, Σίσυφος"
    assert core is not None and core.word_counts(text) is None
    assert Bm25Encoder().encode_document(text) == python_encoder("snowball").encode_document(text)
    assert Bm25Encoder().encode_document("a\udc80b ёлка") == python_encoder(
        "snowball"
    ).encode_document("a\udc80b ёлка")


def test_stems_asked_once_then_held_and_a_full_table_still_answers() -> None:
    assert core is not None
    terms = core.Bm25Terms(1.2, 0.75, 256.0, STEMS_HELD)
    assert terms.encode("Ёлка ёлка и") == ["ёлка", "и"]  # first-seen order, lowered
    first = terms.encode("Ёлка ёлка и", {"ёлка": "елк", "и": ""})
    assert first == terms.encode("ёлка, и ЁЛКА")  # held now
    assert first[0] and len(first[0]) == 1
    full = core.Bm25Terms(1.2, 0.75, 256.0, 0)  # no room: the stems given are used anyway
    assert full.encode("Ёлка ёлка и", {"ёлка": "елк", "и": ""}) == first
    assert full.encode("ёлка") == ["ёлка"]
    assert terms.encode("и, и.") == ((), ())  # only stop words: the empty vector


def test_analyzers_with_title_weights_or_identifiers_stay_in_python() -> None:
    assert Bm25Encoder(analyzer="snowball+title")._native is None
    assert Bm25Encoder(analyzer="snowball+ident")._native is None


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"{CORPUS} not found; set NAREZKA_SHARED")
def test_md_corpus_vectors_alike() -> None:
    native, plain = Bm25Encoder(), python_encoder("snowball")
    for path in sorted(CORPUS.rglob("*.md"))[::7]:
        text = path.read_text(encoding="utf-8", errors="replace")
        for part in text.split("\n\n"):
            assert native.encode_document(part) == plain.encode_document(part), path
