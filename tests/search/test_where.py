"""Every hit of a converted file says where it lies in the original (issue #35 item 10):
HTML and EPUB by heading and element, Word by heading path, PDF by the pages its text covers
— a folded or expanded hit by all of them, not by its best chunk's alone — through
``Index.search`` and the HTTP API alike."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from narezka import Index, Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "convert"))
import convert_samples as samples

PDF_PAGES = [
    [
        (18, "Доставка"),
        (11, "Курьер привозит заказ за два дня по Москве."),
        (11, "Тарифы курьера зависят от веса посылки."),
    ],
    [
        (11, "Тарифы самовывоза ниже тарифов курьера на треть."),
        (11, "Пункты выдачи открыты до девяти вечера."),
    ],
]
CHAPTERS = {
    "ch1.xhtml": '<h1 id="one">Глава 1</h1><p>Первый абзац: зелёный чай заваривают при'
    " восьмидесяти градусах.</p>",
    "ch2.xhtml": '<h1 id="two">Глава 2</h1><p>Второй абзац: чёрному чаю нужен крутой кипяток'
    " и пять минут.</p>",
    "nav.xhtml": "<nav><ol><li>Оглавление</li></ol></nav>",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("where") / "kb"
    root.mkdir()
    (root / "delivery.pdf").write_bytes(samples.make_pdf(PDF_PAGES))
    (root / "policy.docx").write_bytes(samples.make_docx())
    (root / "book.epub").write_bytes(samples.make_epub(chapters=CHAPTERS))
    (root / "page.html").write_text(
        "<html><body><main><h1>Оплата</h1><p>Оплатить заказ можно при получении или заранее"
        " на сайте.</p><h2 id='cards'>Карты</h2><p>Принимаем карты Мир и наличные курьеру."
        "</p></main></body></html>",
        encoding="utf-8",
    )
    (root / "plain.htm").write_text(
        "<html><body><h1>Гарантия</h1><p>Гарантия на чайники один год.</p></body></html>",
        encoding="utf-8",
    )
    (root / "cover.html").write_text(
        "<html><body><p>Годовой отчёт компании Самоварный двор за две тысячи двадцать"
        " четвёртый год, форма десять-К.</p><h1>Риски</h1><p>Риски описаны ниже подробно"
        " и по порядку, от сырья до логистики.</p></body></html>",
        encoding="utf-8",
    )
    (root / "deck.pptx").write_bytes(samples.make_pptx())
    (root / "prices.xlsx").write_bytes(samples.make_xlsx())
    (root / "manual.odt").write_bytes(samples.make_odt())
    (root / "notes.md").write_text("# Заметки\n\nЗаметки про чайники.\n", encoding="utf-8")
    # Chunks of one paragraph each, so that the PDF's two "Тарифы" paragraphs, one a page,
    # are two neighbouring chunks of one section, folded into one hit.
    with Index.create(root, Settings(embedder="hash", size=90, unit="chars")) as index:
        index.sync()
    return root


def _search(corpus: Path, text: str, **options: Any) -> list[Any]:
    with Index.open(corpus) as index:
        return list(index.search(text, k=3, mode="bm25", min_relevance=0.0, **options))


def _top(corpus: Path, text: str, file_path: str) -> Any:
    return next(h for h in _search(corpus, text, fold=None) if h.file_path == file_path)


def test_html_hits_name_heading_and_element(corpus: Path) -> None:
    assert _top(corpus, "карты Мир", "page.html").where == "§ Оплата > Карты · #cards"
    assert _top(corpus, "гарантия чайники", "plain.htm").where == "§ Гарантия"


def test_a_web_page_hit_before_any_heading_or_id_says_top_of_page(corpus: Path) -> None:
    assert _top(corpus, "Самоварный двор", "cover.html").where == "top of page"


def test_epub_hits_name_chapter_and_heading(corpus: Path) -> None:
    hit = _top(corpus, "первый абзац", "book.epub")
    assert hit.where == "OEBPS/text/ch1.xhtml#one · § Глава 1"


def test_word_hits_name_their_heading_path(corpus: Path) -> None:
    hit = _top(corpus, "вернуть в течение 14 дней", "policy.docx")
    assert hit.where == "§ Возврат товара"
    assert hit.to_json()["element"] == hit.payload["element"]


@pytest.mark.parametrize(
    ("query", "file_path", "where"),
    [
        ("Москва цена", "deck.pptx", "slide 2"),
        ("Кофе", "prices.xlsx", "Прайс!A1:B3"),
        ("Откройте заказ", "manual.odt", "§ Возврат товара > Сроки"),
    ],
)
def test_slides_sheets_and_opendocument_hits_say_where(
    corpus: Path, query: str, file_path: str, where: str
) -> None:
    assert _top(corpus, query, file_path).where == where


def test_markdown_hits_say_nothing(corpus: Path) -> None:
    hit = _top(corpus, "заметки чайники", "notes.md")
    assert hit.where == "" and hit.to_json()["where"] is None


def test_a_folded_pdf_hit_names_every_page_its_text_covers(corpus: Path) -> None:
    hits = [h for h in _search(corpus, "тарифы курьера") if h.file_path == "delivery.pdf"]
    folded = hits[0]
    assert folded.merged, "the two Тарифы paragraphs fold into one hit"
    assert "Тарифы курьера" in folded.text and "самовывоза" in folded.text
    own = (folded.payload["page_start"], folded.payload["page_end"])
    assert own in ((1, 1), (2, 2)), "its best chunk alone lies on one page"
    assert folded.where == "p. 1–2"
    assert (folded.to_json()["page_start"], folded.to_json()["page_end"]) == (1, 2)


def test_an_unfolded_pdf_hit_names_its_own_page(corpus: Path) -> None:
    hit = _top(corpus, "пункты выдачи", "delivery.pdf")
    assert hit.where == "p. 2" and not hit.merged


def test_an_expanded_pdf_hit_names_the_pages_of_its_section(corpus: Path) -> None:
    hit = _search(corpus, "пункты выдачи", expand="section", fold=None)[0]
    assert hit.file_path == "delivery.pdf" and "Курьер привозит" in hit.text
    assert hit.where == "p. 1–2"


def test_a_stale_folded_hit_shrinks_back_to_its_own_pages(tmp_path: Path, corpus: Path) -> None:
    import shutil

    copy = tmp_path / "kb"
    shutil.copytree(corpus, copy)
    changed = [[*PDF_PAGES[0]], [(11, "Тарифы самовывоза теперь другие."), *PDF_PAGES[1][1:]]]
    (copy / "delivery.pdf").write_bytes(samples.make_pdf(changed))
    hit = next(h for h in _search(copy, "тарифы курьера") if h.file_path == "delivery.pdf")
    assert hit.stale and not hit.merged
    first, last = hit.payload["page_start"], hit.payload["page_end"]
    assert hit.where == f"p. {first}" and first == last


@pytest.fixture(scope="module")
def client(corpus: Path) -> Iterator[Any]:
    pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")
    from starlette.testclient import TestClient

    from narezka.serve.http_api import build_app
    from narezka.serve.service import Service

    with (
        Service(corpus, watch=False) as service,
        TestClient(build_app(service), base_url="http://127.0.0.1") as served,
    ):
        yield served


@pytest.mark.parametrize(
    ("query", "file_path", "where"),
    [
        ("карты Мир", "page.html", "§ Оплата > Карты · #cards"),
        ("первый абзац", "book.epub", "OEBPS/text/ch1.xhtml#one · § Глава 1"),
        ("вернуть в течение 14 дней", "policy.docx", "§ Возврат товара"),
        ("тарифы курьера", "delivery.pdf", "p. 1–2"),
    ],
)
def test_the_http_api_says_where_every_converted_hit_lies(
    client: Any, query: str, file_path: str, where: str
) -> None:
    asked = {"q": query, "k": 3, "mode": "bm25", "min_relevance": 0}
    hits = client.get("/search", params=asked).json()["hits"]
    hit = next(h for h in hits if h["file_path"] == file_path)
    assert hit["where"] == where


def test_a_folded_sheet_hit_names_the_cells_of_both_its_chunks() -> None:
    from narezka.search.folding import joined_place
    from narezka.search.hits import Hit

    def hit(start: int, place: dict[str, object]) -> Hit:
        return Hit(0.5, "b.xlsx", "b.xlsx", (), "t", "t", 0, start, start + 1, payload=place)

    top = hit(0, {"sheet": "Q1 plan", "element": "A1:D20"})
    below = hit(9, {"sheet": "Q1 plan", "element": "A21:D40"})
    assert joined_place(below, top) == {"sheet": "Q1 plan", "element": "A1:D40"}
    # Another sheet's cells are not this one's; an HTML id that reads as a cell is no cell.
    other = hit(20, {"sheet": "Итог", "element": "A1:B2"})
    assert joined_place(top, other)["element"] == "A1:D20"
    page = [hit(0, {"element": "A1"}), hit(5, {"element": "C3"})]
    assert joined_place(*page) == {"element": "A1"}
    from narezka.formats import place
    from narezka.types import SourceLocation

    assert place(SourceLocation(element="A1"), SourceLocation(element="C3")) == {"element": "A1"}
