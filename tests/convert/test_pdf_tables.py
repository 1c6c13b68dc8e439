"""Tables ruled by horizontal lines (booktabs: no vertical rules, columns an em apart) come
out as Markdown tables with their header row; prose between rules stays prose."""

from __future__ import annotations

import io

import latex_samples
import pytest

from narezka.convert import convert

ROWS = [
    ("Zone", "Weight", "Price", "Days"),
    ("Moscow", "up to 1", "300", "1"),
    ("Centre", "up to 5", "450", "2"),
    ("Ural", "up to 10", "700", "4"),
]


def _ruled_pdf(rows: list[tuple[str, ...]], gap: float = 12.0, rules: bool = True) -> bytes:
    """A page with a paragraph, then a table whose columns are ``gap`` points apart under
    booktabs-like rules (top, below the header, bottom), then a paragraph."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.setFont("Helvetica", 10)
    pdf.drawString(60, 760, "Tariffs are set by zone and weight, as the table below shows.")
    widths = [max(stringWidth(r[c], "Helvetica", 10) for r in rows) for c in range(len(rows[0]))]
    lefts = [60 + sum(widths[:c]) + gap * c for c in range(len(widths))]
    right = lefts[-1] + widths[-1]
    y = 730.0
    pdf.setLineWidth(0.6)
    if rules:
        pdf.line(58, y + 12, right + 2, y + 12)
    for n, row in enumerate(rows):
        for x, text in zip(lefts, row, strict=True):
            pdf.drawString(x, y, text)
        if n == 0 and rules:
            pdf.line(58, y - 4, right + 2, y - 4)
        y -= 14
    if rules:
        pdf.line(58, y + 10, right + 2, y + 10)
    pdf.drawString(60, y - 20, "Prices include tax and packing for every parcel sent.")
    pdf.showPage()
    pdf.save()
    return out.getvalue()


def _table(markdown: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in markdown.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]


def test_a_booktabs_table_with_columns_an_em_apart_is_a_table() -> None:
    markdown = convert(_ruled_pdf(ROWS), ".pdf", "t.pdf").markdown
    assert _table(markdown) == [list(r) for r in ROWS]
    assert markdown.splitlines()[0].startswith("Tariffs")  # prose outside the rules stays


def test_prose_boxed_between_rules_stays_prose() -> None:
    rows = [
        ("This note explains at some length why the parcel may come late in winter months.",),
        ("Couriers drive slower on ice, and the depots close earlier than in the summer.",),
    ]
    markdown = convert(_ruled_pdf(rows), ".pdf", "t.pdf").markdown
    assert _table(markdown) == []
    assert "Couriers drive slower" in markdown


@pytest.mark.skipif(not latex_samples.have_pdflatex(), reason="pdflatex is not installed")
def test_russian_latex_booktabs_table() -> None:
    sample = latex_samples.make_latex_pdf("article")
    markdown = convert(sample.pdf, ".pdf", "a.pdf").markdown
    assert _table(markdown) == [list(r) for r in sample.table]


@pytest.mark.skipif(not latex_samples.have_pdflatex(), reason="pdflatex is not installed")
@pytest.mark.parametrize("kind", ["article", "report"])
def test_a_footnote_leaves_the_sentence_it_interrupts_and_formulas_stay_text(kind: str) -> None:
    sample = latex_samples.make_latex_pdf(kind)
    paragraphs = convert(sample.pdf, ".pdf", "a.pdf").markdown.split("\n\n")
    notes = [p for p in paragraphs if sample.footnote in p]
    assert len(notes) == 1 and notes[0].lstrip("1") == sample.footnote  # a paragraph alone
    assert any(sample.formula in p for p in paragraphs)
    # No body paragraph is cut where the footnote stood: each ends a sentence.
    body = [p for p in paragraphs if not p.startswith(("#", "|", "1Налог", "Таблица"))]
    assert all(p.rstrip().endswith((".", ":")) for p in body), [
        p[-40:] for p in body if not p.rstrip().endswith((".", ":"))
    ]


STREAM = [
    ("Зона", "Вес, кг", "Цена, руб."),
    ("Москва", "до 1", "300"),
    ("Центр", "до 5", "450"),
    ("Урал", "до 10", "700"),
    ("Сибирь", "до 20", "1200"),
]
needs_latex = pytest.mark.skipif(not latex_samples.have_pdflatex(), reason="no pdflatex")


def _tabular(rows: list[tuple[str, ...]], spec: str) -> str:
    body = " \\\\\n".join(" & ".join(row) for row in rows)
    table = f"\\begin{{tabular}}{{{spec}}}\n{body} \\\\\n\\end{{tabular}}"
    return f"\\begin{{center}}{table}\\end{{center}}"


@needs_latex
def test_a_latex_tabular_without_rules_is_a_table_with_its_header_row() -> None:
    before, after = latex_samples.prose(2)
    pdf = latex_samples.latex_pdf(f"{before}\n\n{_tabular(STREAM, 'lrr')}\n\n{after}")
    markdown = convert(pdf, ".pdf", "t.pdf").markdown
    assert _table(markdown) == [list(r) for r in STREAM]
    lines = markdown.splitlines()
    header = lines.index("| Зона | Вес, кг | Цена, руб. |")
    assert lines[header + 1] == "|---|---|---|"
    # The paragraphs around it stay paragraphs, whole.
    assert markdown.startswith(before[:40]) and after[-40:] in markdown


@needs_latex
def test_two_columns_of_prose_by_pdflatex_hold_no_table() -> None:
    paragraphs = latex_samples.prose(24)
    pdf = latex_samples.latex_pdf("\n\n".join(paragraphs), "a4paper,twocolumn")
    markdown = convert(pdf, ".pdf", "t.pdf").markdown
    assert _table(markdown) == []
    assert paragraphs[10][:60] in markdown


@needs_latex
def test_a_numbered_list_and_two_aligned_columns_stay_text() -> None:
    # Two columns over several rows are as often a list (a number, then its text) as a table.
    pairs = [("1.1:", "Установить требования к доставке"), ("1.2:", "Проверить склад")]
    pairs += [("1.3:", "Обновить тарифы на год"), ("1.4:", "Сообщить клиентам")]
    pdf = latex_samples.latex_pdf(_tabular(pairs, "ll"))
    markdown = convert(pdf, ".pdf", "t.pdf").markdown
    assert _table(markdown) == []
    assert "Обновить тарифы на год" in markdown


def test_interleaved_two_column_prose_holds_no_table() -> None:
    import convert_samples as samples

    left = ["Left column words run on here " * 8] * 3
    right = ["Right column text goes along " * 8] * 3
    pdf = samples.make_interleaved_pdf([(left, right)], title="Over both columns")
    assert _table(convert(pdf, ".pdf", "t.pdf").markdown) == []


def test_an_emoji_in_a_table_cell_stays_one_character_and_the_table_a_table() -> None:
    """PDFium gives an emoji as two lone surrogates, one per UTF-16 unit: cell texts built
    glyph by glyph held them, and writing the Markdown as UTF-8 failed."""
    import convert_samples

    markdown = convert(convert_samples.make_emoji_table_pdf(), ".pdf", "e.pdf").markdown
    markdown.encode("utf-8")  # no lone surrogate anywhere
    assert _table(markdown) == [list(r) for r in convert_samples.EMOJI_ROWS]
    assert "клиентов 😀," in markdown
