"""Converted files go through the same pipeline as Markdown, their chunks carrying pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from narezka import chunk_path
from narezka.discover import read_all
from narezka.errors import ConvertError
from narezka.split.auto import choose_strategy

import convert_samples as samples

_CONVERTED = ["**/*.pdf", "**/*.docx", "**/*.html", "**/*.pptx", "**/*.xlsx", "**/*.csv"]


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "report.pdf").write_bytes(
        samples.make_pdf(
            [
                [(18, "Quarterly report"), (11, "Revenue grew by ten percent this quarter.")],
                [(14, "Outlook"), (11, "Next quarter we open two new shops.")],
            ],
            header="ACME confidential",
        )
    )
    (tmp_path / "policy.docx").write_bytes(samples.make_docx())
    (tmp_path / "deck.pptx").write_bytes(samples.make_pptx())
    (tmp_path / "prices.xlsx").write_bytes(samples.make_xlsx())
    (tmp_path / "page.html").write_bytes(
        b"<html><body><nav>Home | About</nav><main><h1 id='faq'>FAQ</h1><p>Answer.</p>"
        b"</main><footer>Footer text</footer></body></html>"
    )
    return tmp_path


def test_read_document_yields_the_canonical_markdown(tmp_path: Path) -> None:
    docs, errors, _ = read_all([_folder(tmp_path)], include=_CONVERTED)
    assert errors == []
    by_name = {d.source: d for d in docs}
    assert set(by_name) == {"report.pdf", "policy.docx", "deck.pptx", "prices.xlsx", "page.html"}
    page = by_name["page.html"]
    assert page.text == "# FAQ\n\nAnswer.\n" and page.provenance[0].where.element == "faq"
    assert by_name["report.pdf"].provenance[-1].where.page == 2


def test_chunks_of_a_pdf_carry_their_pages(tmp_path: Path) -> None:
    chunks = chunk_path(_folder(tmp_path), include=["**/*.pdf"], size=60)
    assert len(chunks) >= 2
    assert all("ACME" not in c.text for c in chunks)
    assert chunks[0].section == ("Quarterly report",)
    assert (chunks[0].meta["page_start"], chunks[-1].meta["page_end"]) == (1, 2)
    outlook = next(c for c in chunks if "new shops" in c.text)
    assert outlook.meta["page_start"] == 2 and outlook.section[-1] == "Outlook"


def test_chunks_of_slides_and_sheets_name_them(tmp_path: Path) -> None:
    chunks = chunk_path(_folder(tmp_path), include=["**/*.pptx", "**/*.xlsx"], size=50)
    slides = {c.meta.get("slide") for c in chunks if c.source == "deck.pptx"}
    sheets = {c.meta.get("sheet") for c in chunks if c.source == "prices.xlsx"}
    assert slides == {1, 2} and "Прайс" in sheets


def test_converted_files_are_split_as_markdown_by_auto() -> None:
    assert choose_strategy("report.pdf", "# Title\n\nText.\n") == "headings"
    assert choose_strategy("notes.txt", "# Title\n\nText.\n") == "recursive"


def test_errors_of_one_file_do_not_stop_the_others(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "broken.docx").write_bytes(b"PK\x03\x04 truncated")
    (folder / "empty.pdf").write_bytes(b"")
    docs, errors, _ = read_all([folder], include=_CONVERTED)
    assert len(docs) == 5
    assert [type(e) for e in errors] == [ConvertError, ConvertError]
    assert {Path(e.path).name for e in errors} == {"broken.docx", "empty.pdf"}


def test_converted_formats_are_read_by_default(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "notes.md").write_text("# Notes\n\nPlain Markdown.\n", encoding="utf-8")
    sources = {c.source for c in chunk_path(folder, size=300)}
    assert sources == {
        "deck.pptx",
        "notes.md",
        "page.html",
        "policy.docx",
        "prices.xlsx",
        "report.pdf",
    }


@pytest.mark.parametrize(
    ("path", "payload", "section", "shown"),
    [
        ("report.pdf", {"page_start": 12, "page_end": 13}, (), "p. 12–13"),
        ("report.pdf", {"page_start": 4, "page_end": 4}, ("Итоги",), "p. 4"),
        ("deck.pptx", {"slide": 3}, (), "slide 3"),
        ("prices.xlsx", {"sheet": "Прайс"}, (), "sheet Прайс"),
        ("page.html", {"element": "tariffs"}, ("Доставка",), "§ Доставка · #tariffs"),
        ("page.htm", {}, ("Доставка", "Тарифы"), "§ Доставка > Тарифы"),
        ("page.html", {}, (), "top of page"),
        ("book.epub", {"element": "ch2.xhtml#s1"}, ("Глава 2",), "ch2.xhtml#s1 · § Глава 2"),
        ("policy.docx", {"element": "p7"}, ("Возврат", "Сроки"), "§ Возврат > Сроки"),
        ("policy.odt", {"element": "p7"}, (), "¶ 7"),
        ("notes.md", {"page_start": 4, "page_end": 4}, ("Итоги",), ""),
        ("report.pdf", {"zone": "docs"}, (), ""),
    ],
)
def test_a_hit_says_where_it_lies_in_the_original(
    path: str, payload: dict[str, object], section: tuple[str, ...], shown: str
) -> None:
    from narezka.search.hits import Hit

    hit = Hit(0.5, path, path, section, "t", "t", 0, 0, 1, payload=dict(payload))
    assert hit.where == shown


def test_blocks_repeated_across_a_crawled_folder_never_reach_a_chunk(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    promo = "<div class='promo'>Подпишитесь на рассылку магазина</div>"
    for n in range(4):
        site.joinpath(f"p{n}.html").write_text(
            f"<html><body>{promo}<h1>Страница {n}</h1><p>Текст страницы {n}.</p></body></html>",
            encoding="utf-8",
        )
    (tmp_path / "export.html").write_text(
        f"<html><body><h1>Экспорт</h1>{promo}</body></html>", encoding="utf-8"
    )
    chunks = chunk_path(tmp_path, size=300)
    crawled = [c for c in chunks if c.source.startswith("site/")]
    assert len({c.source for c in crawled}) == 4
    assert all("Подпишитесь" not in c.text for c in crawled)
    # A page alone in its folder is all content: the same block stays.
    assert any("Подпишитесь" in c.text for c in chunks if c.source == "export.html")
