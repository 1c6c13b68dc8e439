"""Running headers and footers: taken out only when they are, never a page's whole text."""

from __future__ import annotations

import latex_samples
import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.convert import convert
from narezka.convert.pdf.base import _Line
from narezka.convert.pdf.running import _PAGE_NUMBER, _strip_running


def _line(text: str, page: int) -> _Line:
    return _Line(text, page, 11.0, False, False, 700.0, True)


def _strip(pages: list[list[str]]) -> tuple[list[list[str]], list[str]]:
    lines = [[_line(t, n) for t in texts] for n, texts in enumerate(pages, 1)]
    kept, removed = _strip_running(lines)
    return [[ln.text for ln in kept if ln.page == n] for n in range(1, len(pages) + 1)], removed


def test_headers_that_count_pages_go_and_lines_that_differ_otherwise_stay() -> None:
    pages = [
        [f"ACME report — page {n} of 12", f"Invoice {1000 + n * 7}", "Body"] for n in range(12)
    ]
    kept, removed = _strip(pages)
    assert "ACME report — page 0 of 12" in removed
    assert all(page[0].startswith("Invoice") for page in kept)


texts = st.lists(
    st.sampled_from(["Invoice 1001", "Invoice 1002", "Header", "12", "Page 3", "Total 5.40", "x"]),
    min_size=1,
    max_size=4,
)


@given(st.lists(texts, min_size=1, max_size=12))
def test_no_page_is_emptied_but_of_page_numbers(pages: list[list[str]]) -> None:
    kept, _ = _strip(pages)
    for before, after in zip(pages, kept, strict=True):
        if any(not _PAGE_NUMBER.match(text) for text in before):
            assert after, before


def _placed(text: str, page: int, baseline: float, margin: bool) -> _Line:
    return _Line(text, page, 9.0, False, False, baseline, margin)


def test_running_heads_that_change_by_chapter_and_alternate_pages_go() -> None:
    """A booklet's heads: ``N Company`` on even pages, the chapter's title and the page
    number on odd ones, a chapter seen on two pages only: all go, the body stays."""
    chapters = {1: "What is it?", 3: "What is it?", 5: "What is it?", 7: "Glossary", 9: "Glossary"}
    pages = []
    for n in range(1, 11):
        head = f"{n} Company" if n % 2 == 0 else f"{chapters[n]} {n}"
        pages.append([_placed(head, n, 20.0, True), _placed(f"Body {n} text.", n, 400.0, False)])
    kept, removed = _strip_running(pages)
    assert [ln.text for ln in kept] == [f"Body {n} text." for n in range(1, 11)]
    assert "Glossary 7" in removed


def test_a_margin_line_whose_number_is_not_the_page_stays() -> None:
    pages = []
    for n in range(1, 9):
        head = f"{n} Company" if n % 2 == 0 else f"Table {n * 3}"
        pages.append([_placed(head, n, 20.0, True), _placed("Body.", n, 400.0, False)])
    kept, _ = _strip_running(pages)
    assert "Table 3" in [ln.text for ln in kept]


def test_a_running_line_that_prints_a_hash_sign_and_no_number_is_taken_out() -> None:
    # "#" stands for the digits in a line's key: a printed "#" with no number once read as
    # a page number's place and failed the whole document (a 400-page manual).
    bodies = ["Alpha text.", "Beta text.", "Gamma text.", "Delta text.", "Epsilon text."]
    kept, removed = _strip([["Command Codes #", body] for body in bodies])
    assert removed == ["Command Codes #"]
    assert kept == [[body] for body in bodies]


def test_a_one_page_document_keeps_a_bare_number_in_its_body() -> None:
    """Nothing repeats on one page: its last line ``1500`` (a memo's total, set in the body)
    is text, though last in reading order; a number set at the page's foot is its page
    number (a page printed from a book)."""

    def page(last: _Line) -> list[list[_Line]]:
        body = [
            _placed("Memo to the warehouse", 1, 780.0, True),
            _placed("Total:", 1, 500.0, False),
        ]
        return [[*body, last]]

    kept, removed = _strip_running(page(_placed("1500", 1, 480.0, True)))
    assert [ln.text for ln in kept] == ["Memo to the warehouse", "Total:", "1500"]
    assert not removed
    kept, removed = _strip_running(page(_Line("633", 1, 9.0, False, False, 30.0, True, edge=True)))
    assert [ln.text for ln in kept] == ["Memo to the warehouse", "Total:"]
    assert removed == ["633"]


@pytest.mark.skipif(not latex_samples.have_pdflatex(), reason="pdflatex is not installed")
def test_a_one_page_pdf_keeps_its_header_and_footer_text() -> None:
    pdf = latex_samples.latex_pdf(
        "Просим согласовать поставку товара на склад.\n\nИтоговая сумма договора в рублях:\n\n1500",
        preamble="\\usepackage{fancyhdr}\\pagestyle{fancy}\\fancyhf{}"
        "\\fancyhead[C]{ООО Ромашка: служебная записка}\\fancyfoot[R]{Москва, 2024}\n",
    )
    done = convert(pdf, ".pdf", "memo.pdf")
    for text in ("ООО Ромашка: служебная записка", "Москва, 2024", "1500"):
        assert text in done.markdown, done.markdown
    assert done.meta["running_text"] == []


@pytest.mark.skipif(not latex_samples.have_pdflatex(), reason="pdflatex is not installed")
@pytest.mark.parametrize(("head", "goes"), [("\\hfill 5", True), (" 5", False)])
def test_a_one_page_pdfs_head_goes_when_its_page_number_stands_apart(head: str, goes: bool) -> None:
    # A page cut from a paper: nothing repeats, but its head prints the page number at the
    # far end of the line. The same words with the number right after them are a title.
    pdf = latex_samples.latex_pdf(
        "Глава 5 описывает поставки товара на склад.\n\nИтоговая сумма договора: 1500",
        preamble="\\usepackage{fancyhdr}\\pagestyle{fancy}\\fancyhf{}"
        f"\\fancyhead[L]{{Отчёт о поставках за год{head}}}\n",
    )
    done = convert(pdf, ".pdf", "page.pdf")
    assert "Глава 5 описывает поставки товара на склад." in done.markdown
    assert ("Отчёт о поставках за год" not in done.markdown) == goes, done.markdown
    assert done.meta["running_text"] == (["Отчёт о поставках за год 5"] if goes else [])


@pytest.mark.skipif(not latex_samples.have_pdflatex(), reason="pdflatex is not installed")
def test_a_beamer_decks_footline_goes_and_its_frames_text_stays() -> None:
    import re

    sample = latex_samples.make_latex_pdf("beamer")
    markdown = convert(sample.pdf, ".pdf", "deck.pdf").markdown
    patterns = [re.compile(p) for p in sample.running]
    left = [ln for ln in markdown.splitlines() if any(p.search(ln) for p in patterns)]
    assert not left
    assert all(passage in markdown for passage in sample.passages)


def test_a_page_printed_twice_keeps_its_margins() -> None:
    # A memo with its copy: every line repeats because the whole page does; its date and
    # signature are its text, not running lines (they reached no chunk).
    memo = ["May 5, 2023", "To Whom it May Concern:", "Water delivered.", "Best Regards,", "Mal"]
    kept, removed = _strip([memo, memo])
    assert removed == [] and kept == [memo, memo]
    # A header over pages whose bodies differ still goes, a copy among them or not.
    kept, removed = _strip([["ACME report", "one"], ["ACME report", "two"], ["ACME report", "two"]])
    assert removed == ["ACME report"] and kept == [["one"], ["two"], ["two"]]
