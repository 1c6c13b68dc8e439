"""BM25 field weights (``+title`` analyzers): title terms count more than body terms."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.api.indexing import index, read_index_meta
from narezka.api.searching import search
from narezka.embed import HashEmbedder
from narezka.errors import ConfigError
from narezka.tokens.bm25 import Bm25Encoder, check_analyzer, title_text, title_weight, token_id

CHUNK = (
    "Частые вопросы > Доставка > Сколько стоит доставка?\n\n"
    "### Сколько стоит доставка? {#cost}\n\n"
    "Зависит от зоны и веса посылки: курьер дороже пункта выдачи."
)


def weights(analyzer: str, text: str = CHUNK) -> dict[int, float]:
    vector = Bm25Encoder(analyzer=analyzer).encode_document(text)
    return dict(zip(vector.indices, vector.values, strict=True))


def ids(encoder: Bm25Encoder, text: str) -> set[int]:
    return {token_id(t) for t in encoder.tokens(text)}


def test_title_text_is_the_breadcrumb_path_and_the_heading_lines() -> None:
    assert title_text(CHUNK).splitlines() == [
        "Частые вопросы > Доставка > Сколько стоит доставка?",
        "Сколько стоит доставка? {#cost}",
    ]
    # A first paragraph that is no path is body text (breadcrumbs off, or a one-level crumb).
    assert title_text("Доставка стоит 300 ₽.\n\nКурьер приедет завтра.") == ""
    assert title_text("# Возврат\n\nДеньги вернут.\n\n## Сроки\nтри дня") == "Возврат\nСроки"


def test_title_terms_weigh_more_and_body_terms_stay_as_they_were() -> None:
    plain, double, triple = (
        weights("snowball"),
        weights("snowball+title"),
        weights("snowball+title3"),
    )
    assert plain.keys() == double.keys() == triple.keys()
    encoder = Bm25Encoder()
    title = ids(encoder, title_text(CHUNK))
    body_only = ids(encoder, CHUNK) - title
    assert title and body_only
    for tid in title:
        assert plain[tid] < double[tid] < triple[tid]
    for tid in body_only:  # the length normalization counts every term once either way
        assert plain[tid] == pytest.approx(double[tid]) == pytest.approx(triple[tid])


@given(st.text(alphabet="абвгдеж xyz>#\n", max_size=120))
def test_field_weights_never_drop_a_term_or_lower_a_weight(text: str) -> None:
    plain, weighted = weights("snowball", text), weights("snowball+title", text)
    assert plain.keys() == weighted.keys()
    assert all(weighted[t] >= plain[t] - 1e-12 for t in plain)


def test_queries_and_names() -> None:
    q = "сколько стоит доставка"
    assert Bm25Encoder(analyzer="snowball+title").encode_query(q) == Bm25Encoder().encode_query(q)
    names = {
        Bm25Encoder(analyzer=a).name for a in ("snowball", "snowball+title", "snowball+title3")
    }
    assert len(names) == 3  # each is its own fingerprint: stored vectors differ
    assert (
        title_weight("snowball"),
        title_weight("lemma+title"),
        title_weight("lemma+ident+title5"),
    ) == (1, 2, 5)
    assert Bm25Encoder(analyzer="snowball+ident+title").ident


@pytest.mark.parametrize(
    "bad", ["snowball+title1", "snowball+title10", "title", "snowball+title+ident"]
)
def test_unknown_title_analyzers_are_refused_with_the_choices(bad: str) -> None:
    with pytest.raises(ConfigError, match=r"unknown BM25 analyzer .* \+title2…\+title9"):
        check_analyzer(bad)


def test_a_title_weight_change_is_refused_until_rebuild(tmp_path: Path) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Возврат\n\n## Сроки\n\nДеньги вернут за три дня.\n", "utf-8")
    model = HashEmbedder(32)
    index(corpus, embedder=model, bm25="snowball+title")
    assert read_index_meta(corpus / ".narezka")["bm25"] == "snowball+title"
    with pytest.raises(ConfigError, match=r"not 'snowball\+title3'.*--rebuild"):
        index(corpus, embedder=model, bm25="snowball+title3")
    with pytest.raises(ConfigError, match=r"not 'snowball'.*--rebuild"):
        index(corpus, embedder=model, bm25="snowball")
    assert [h.file_path for h in search("сроки", corpus, mode="bm25", embedder=model)] == ["a.md"]
    assert index(corpus, embedder=model, bm25="snowball", rebuild=True).files_new == 1
