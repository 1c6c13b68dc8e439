"""Each converter recovers structure (headings, lists, tables, code, links) and locates spans."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from narezka.convert import Converted, convert, locate
from narezka.types import SourceLocation

import convert_samples as samples


def _check_map(result: Converted) -> None:
    """The provenance map is sorted, disjoint, inside the text, and covers every block."""
    spans = result.provenance
    assert spans
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))
    assert spans[0].start == 0 and spans[-1].end == len(result.markdown.rstrip("\n"))
    covered = "".join(result.markdown[s.start : s.end] for s in spans)
    assert "".join(covered.split()) == "".join(result.markdown.split())


def test_word_headings_lists_tables_code_links() -> None:
    result = convert(samples.make_docx(), ".docx", "policy.docx")
    md = result.markdown
    assert md.startswith("# Возврат товара\n")
    assert "\n## Сроки\n" in md
    assert "- Первый пункт" in md and "- Второй пункт" in md
    assert "| Тариф | Цена |\n|---|---|\n| Курьер | 300 ₽ |" in md
    assert "```\nprint('hello')\n```" in md
    assert "[справку](https://example.org/help)" in md
    _check_map(result)
    assert result.provenance[0].where == SourceLocation(element="p1")


def test_docx_a_list_inside_a_numbered_item_stays_nested(tmp_path: Path) -> None:
    if shutil.which("pandoc") is None:
        pytest.skip("pandoc is not installed: it writes the Word file")
    source = tmp_path / "steps.md"
    source.write_text("1. Выберите способ:\n   - пункт выдачи;\n   - курьер.\n2. Упакуйте.\n")
    subprocess.run(["pandoc", str(source), "-o", str(tmp_path / "s.docx")], check=True)
    md = convert((tmp_path / "s.docx").read_bytes(), ".docx", "steps.docx").markdown
    tokens = MarkdownIt("commonmark").parse(md)
    nested = [t.level for t in tokens if t.type == "bullet_list_open"]
    # Inside the ordered list's item (levels: list 0, item 1, nested list 2).
    assert nested == [2], md
    assert [t.type for t in tokens].count("ordered_list_open") == 1, md


def _pandoc_docx(tmp_path: Path, source: str, suffix: str = ".md") -> bytes:
    if shutil.which("pandoc") is None:
        pytest.skip("pandoc is not installed: it writes the Word file")
    page = tmp_path / f"page{suffix}"
    page.write_text(source, encoding="utf-8")
    reader = ["-f", "gfm"] if suffix == ".md" else []  # as bench_convert renders Markdown
    subprocess.run(["pandoc", *reader, str(page), "-o", str(tmp_path / "page.docx")], check=True)
    return (tmp_path / "page.docx").read_bytes()


def test_docx_a_bare_url_keeps_its_text(tmp_path: Path) -> None:
    # pandoc writes a link whose text is a URL as a hyperlink inside a hyperlink (GFM reads
    # the text as an autolink too); python-docx's Hyperlink.text lost it.
    url = "http://127.0.0.1:8000/docs"
    data = _pandoc_docx(tmp_path, f"Go to [{url}]({url}) now.\n")
    md = convert(data, ".docx", "page.docx").markdown
    assert md == "Go to [http://127.0.0.1:8000/docs](http://127.0.0.1:8000/docs) now.\n"


def test_docx_numbered_items_keep_their_numbers(tmp_path: Path) -> None:
    source = "1. one\n2. two\n   1. sub\n   2. sub two\n3. three\n\nText.\n\n1. again\n"
    md = convert(_pandoc_docx(tmp_path, source), ".docx", "page.docx").markdown
    items = [line.strip() for line in md.splitlines() if line.strip()[:1].isdigit()]
    assert items == ["1. one", "2. two", "1. sub", "2. sub two", "3. three", "1. again"]


def test_docx_a_table_inside_a_cell_keeps_its_words_apart(tmp_path: Path) -> None:
    page = (
        "<table><tr><th>Parameter</th><th>Type</th></tr><tr><td>contact</td>"
        "<td><table><tr><td>name</td><td>str</td></tr></table></td></tr></table>"
    )
    md = convert(_pandoc_docx(tmp_path, page, ".html"), ".docx", "page.docx").markdown
    assert "| contact | name str |" in md


def test_slides_one_section_each_with_notes() -> None:
    result = convert(samples.make_pptx(), ".pptx", "deck.pptx")
    md = result.markdown
    assert md.index("# Доставка") < md.index("- Курьером") < md.index("# Цены")
    assert "Сказать про тарифы" in md[: md.index("# Цены")]
    assert "| Москва | 300 |" in md
    _check_map(result)
    second = md.index("# Цены")
    assert locate(result.provenance, second, second + 5) == (
        SourceLocation(slide=2),
        SourceLocation(slide=2),
    )


def test_sheets_one_table_each_under_its_name() -> None:
    result = convert(samples.make_xlsx(), ".xlsx", "prices.xlsx")
    assert result.markdown.startswith("# Прайс\n\n| Товар | Цена |\n|---|---|\n")
    assert "| Чай \\| зелёный | 250 |\n| Кофе | 410 |" in result.markdown
    assert "# Пусто" in result.markdown
    _check_map(result)
    assert {s.where.sheet for s in result.provenance} == {"Прайс", "Пусто"}


def test_csv_sniffs_semicolons_and_windows_1251() -> None:
    data = "Товар;Цена\nЧай;250\n".encode("cp1251")
    result = convert(data, ".csv", "prices.csv")
    assert result.markdown == "| Товар | Цена |\n|---|---|\n| Чай | 250 |\n"


@pytest.mark.parametrize("codec", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_csv_with_a_byte_order_mark_is_read_in_that_encoding(codec: str) -> None:
    # utf-16 and utf-32 write their own mark; utf-16-be gets one by hand.
    text = "Команда;Кубки\nBlues;1\n"
    data = text.encode(codec)
    if codec == "utf-16-be":
        data = b"\xfe\xff" + data
    result = convert(data, ".csv", "cups.csv")
    assert result.markdown == "| Команда | Кубки |\n|---|---|\n| Blues | 1 |\n"


def test_csv_in_windows_1252_keeps_its_accents() -> None:
    data = "Stadt;Preis\nKöln;15,50 €\nMálaga;3,50 €\n".encode("cp1252")
    result = convert(data, ".csv", "preise.csv")
    assert "| Köln | 15,50 € |" in result.markdown and "| Málaga |" in result.markdown


def _report_pdf() -> bytes:
    return samples.make_pdf(
        [
            [
                (20, "Annual Report"),
                (15, "Section A"),
                (11, "The results were extraordinarily good, said the hyphen-"),
                (11, "ated sentence, and the year went on"),
            ],
            [
                (11, "continued on the next page."),
                (15, "Section B"),
                (11, "MONO:def f(x):"),
                (11, "MONO:    return x"),
            ],
            [(11, "Third page text.")],
        ],
        header="ACME report 2024",
    )


def test_pdf_headings_hyphens_code_and_running_headers() -> None:
    result = convert(_report_pdf(), ".pdf", "report.pdf")
    md = result.markdown
    assert md.startswith("# Annual Report\n\n")
    assert "## Section A" in md and "## Section B" in md
    assert "hyphenated sentence" in md
    # A paragraph that runs over a page break stays one paragraph, located on both pages.
    assert "the year went on continued on the next page." in md
    assert "```\ndef f(x):\n" in md
    assert "ACME" not in md and result.meta["running_text"] == ["ACME report 2024", "1"]
    _check_map(result)
    at = md.index("the year went on")
    first, last = locate(result.provenance, at, md.index("next page") + 1) or (None, None)
    assert (first, last) == (SourceLocation(page=1), SourceLocation(page=2))


def test_pdf_table_rows_become_a_markdown_table() -> None:
    data = samples.make_pdf(
        [
            [
                (11, "Prices below."),
                (11, "CELLS:Zone|Price|Days"),
                (11, "CELLS:Moscow|300|1-2"),
                (11, "CELLS:Kazan|450|3-5"),
                (11, ""),
                (11, "After the table."),
            ]
        ]
    )
    md = convert(data, ".pdf", "prices.pdf").markdown
    assert md == (
        "Prices below.\n\n| Zone | Price | Days |\n|---|---|---|\n| Moscow | 300 | 1-2 |\n"
        "| Kazan | 450 | 3-5 |\n\nAfter the table.\n"
    )


def _tight_cell(gap_in_sizes: float, size: float = 11) -> str:
    """A cell text that ends ``gap_in_sizes`` font sizes before the next column (150 points
    on, as ``make_pdf`` draws cells): closer than the cell gap alone can tell."""
    from reportlab.pdfbase import pdfmetrics

    font = "DejaVu" if "DejaVu" in pdfmetrics.getRegisteredFontNames() else "Helvetica"
    text = "Rechargeable"
    while pdfmetrics.stringWidth(text + "m", font, size) < 150 - gap_in_sizes * size:
        text += "m"
    while pdfmetrics.stringWidth(text + "i", font, size) < 150 - gap_in_sizes * size:
        text += "i"  # narrow: the gap ends within a third of a font size of the aim
    return text


def test_pdf_a_row_whose_cell_nearly_meets_the_next_column_stays_in_its_table() -> None:
    samples.make_pdf([[(11, "x")]])  # registers the font _tight_cell measures with
    tight = _tight_cell(1.0)
    data = samples.make_pdf(
        [
            [
                (11, "Warranty below."),
                (11, "CELLS:Category|Months"),
                (11, f"CELLS:{tight}|6"),
                (11, "CELLS:Kettles|12"),
                (11, ""),
                (11, "After the table."),
            ]
        ]
    )
    md = convert(data, ".pdf", "warranty.pdf").markdown
    assert f"| {tight} | 6 |\n| Kettles | 12 |" in md
    assert md.startswith("Warranty below.\n\n| Category | Months |\n")


def test_pdf_numbered_items_stay_an_ordered_list() -> None:
    data = samples.make_pdf(
        [[(11, "Two ways:"), (11, ""), (11, "1. Bring it in."), (11, "2. Send it by post.")]]
    )
    md = convert(data, ".pdf", "steps.pdf").markdown
    assert md == "Two ways:\n\n1. Bring it in.\n\n2. Send it by post.\n"


_PAGE = b"""<!DOCTYPE html><html><head><meta charset="utf-8"><script>document.write('x')</script>
</head><body><header class="site-header"><a href="/">Logo</a></header>
<nav><ul>%s</ul></nav><div class="cookie-notice">We use cookies</div>
<div class="content"><h1 id="top">%s</h1><p>Body of %s with <a href="https://x.org">a link</a>
and <code>code</code>.</p><div class="promo">Subscribe to our digest now</div></div>
<aside>Related</aside><footer>Copyright 2024 ACME</footer></body></html>"""


def _page(title: str) -> bytes:
    menu = b"".join(b'<li><a href="/m%d">Menu %d</a></li>' % (i, i) for i in range(40))
    t = title.encode()
    return _PAGE % (menu, t, t)


def test_html_drops_markup_boilerplate_and_never_keeps_scripts() -> None:
    md = convert(_page("Title"), ".html", "a.html").markdown
    for gone in ("Logo", "Menu 3", "cookies", "Related", "Copyright", "document.write"):
        assert gone not in md
    assert md.startswith("# Title\n\nBody of Title with [a link](https://x.org) and `code`.")


def test_html_blocks_repeated_across_a_crawl_are_dropped() -> None:
    from narezka.convert.html import page_block_keys, repeated_blocks

    pages = {f"p{i}.html": _page(f"Page {i}") for i in range(5)}
    repeated = repeated_blocks(page_block_keys(data, name) for name, data in pages.items())
    md = convert(pages["p1.html"], ".html", "p1.html", boilerplate=repeated).markdown
    assert "Subscribe" not in md  # no markup marks it: only its repetition does
    assert "# Page 1" in md and "Body of Page 1" in md


def test_html_export_that_is_all_content_loses_nothing() -> None:
    page = (
        "<html><body><h1>Guide</h1><p><a href='/'><img alt='Logo'></a> Intro.</p>"
        "<div role='tabpanel' hidden>Second tab.</div>"
        "<h2>Menu of the restaurant</h2>"
        "<ul><li>Soup</li><li>Tea<ul><li>Green</li></ul></li></ul>"
        "<pre>a  =  1\n  b</pre><table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td>"
        "</tr></table><footer>Export footer note</footer></body></html>"
    )
    md = convert(page.encode(), ".html", "export.html").markdown
    assert md == (
        "# Guide\n\n[Logo](/) Intro.\n\nSecond tab.\n\n## Menu of the restaurant\n\n"
        "- Soup\n\n- Tea\n\n   - Green\n\n"
        "```\na  =  1\n  b\n```\n\n| k | v |\n|---|---|\n| 1 | 2 |\n"
    )


def test_html_a_list_inside_a_numbered_item_stays_nested() -> None:
    page = b"<ol><li>Choose:<ul><li>pickup</li><li>courier</li></ul></li><li>Pack.</li></ol>"
    md = convert(page, ".html", "steps.html").markdown
    tokens = MarkdownIt("commonmark").parse(md)
    assert [t.level for t in tokens if t.type == "bullet_list_open"] == [2], md


def test_pdf_monospace_runs_inside_a_sentence_become_code_spans() -> None:
    import io

    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    text = pdf.beginText(50, 700)
    for font, piece in [
        ("Helvetica", "Set "),
        ("Courier", "allow_origins = ['*']"),
        ("Helvetica", " or "),
        ("Courier", "True"),
        ("Helvetica", ", then call it."),
    ]:
        text.setFont(font, 11)
        text.textOut(piece)
    pdf.drawText(text)
    pdf.showPage()
    pdf.save()
    md = convert(out.getvalue(), ".pdf", "inline.pdf").markdown
    assert md == "Set `allow_origins = ['*']` or `True`, then call it.\n"


def test_bold_stays_bold_in_html_and_word(tmp_path: Path) -> None:
    page = b"<p>Code before <strong>yield</strong> runs <b>before</b> start; <b> </b>end.</p>"
    assert convert(page, ".html", "b.html").markdown == (
        "Code before **yield** runs **before** start; end.\n"
    )
    data = _pandoc_docx(tmp_path, "Runs **before** the app, `code` and **FastAPI** knows.\n")
    assert convert(data, ".docx", "b.docx").markdown == (
        "Runs **before** the app, `code` and **FastAPI** knows.\n"
    )


def test_pdf_text_indexes_count_astral_characters_as_two_units() -> None:
    # PDFium's text indexes count UTF-16 units: after an emoji every index is one further on.
    # Read at the string's index, fonts were the next character's ("Install `S`QLModel").
    from narezka.convert.pdf.marks import _Units

    units = _Units("a\U0001f913b\U0001f913c")
    assert [units(i) for i in range(5)] == [0, 1, 3, 4, 6]
    assert _Units("plain")(3) == 3


def test_html_a_table_inside_a_cell_is_that_cells_text() -> None:
    page = (
        b"<table><tr><th>Parameter</th><th>Fields</th></tr><tr><td>contact</td><td>fields:"
        b"<table><tr><th>name</th><th>type</th></tr><tr><td>url</td><td>str</td></tr></table>"
        b"</td></tr></table>"
    )
    md = convert(page, ".html", "t.html").markdown
    assert md == ("| Parameter | Fields |\n|---|---|\n| contact | fields: name type url str |\n")
