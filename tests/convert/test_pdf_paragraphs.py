"""PDF lines join into paragraphs by their baselines: a paragraph's lines as close as CSS's
``line-height: 1.5`` sets them (pandoc's HTML, printed by Chromium) are one paragraph, the
wider step between paragraphs parts them."""

from __future__ import annotations

import io

import pytest

from narezka.convert import convert

PARAGRAPHS = [
    [
        "The parcel leaves the depot in the morning and",
        "reaches the pick-up point by the",
        "evening.",
    ],
    [
        "A refund is paid to the card the order was",
        "paid with, within ten working days of the",
        "return.",
    ],
]


def _pdf(step: float, in_matrix: bool) -> bytes:
    """Two paragraphs of 12-point lines ``step`` font sizes apart, 2.5 between them; the
    size set in the font (Tf 12) or in the text matrix (Tf 1, as Chromium writes it)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    y = 700.0
    for lines in PARAGRAPHS:
        for text in lines:
            obj = pdf.beginText()
            if in_matrix:
                obj.setFont("Helvetica", 1)
                obj.setTextTransform(12, 0, 0, 12, 72, y)
            else:
                obj.setFont("Helvetica", 12)
                obj.setTextOrigin(72, y)
            obj.textOut(text)
            pdf.drawText(obj)
            y -= step * 12
        y -= (2.5 - step) * 12
    pdf.showPage()
    pdf.save()
    return out.getvalue()


@pytest.mark.parametrize("in_matrix", [False, True])
@pytest.mark.parametrize("step", [1.2, 1.5])
def test_lines_a_line_height_apart_are_one_paragraph(step: float, in_matrix: bool) -> None:
    markdown = convert(_pdf(step, in_matrix), ".pdf", "p.pdf").markdown
    assert markdown.strip().split("\n\n") == [" ".join(lines) for lines in PARAGRAPHS]


def _leading_pdf(body_step: float, item_step: float) -> bytes:
    """A page of 10-point prose set ``body_step`` font sizes apart, then three list items
    without bullets set ``item_step`` apart, then prose again (``fr_olap.pdf``'s ``q1``…)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.setFont("Helvetica", 10)
    y = 780.0
    prose = "the log of queries is summarised by the members asked most often here"
    for n in range(24):
        pdf.drawString(72, y, f"{prose} {n}")
        y -= 10 * body_step
    y -= 10 * (item_step - body_step)
    for n in (1, 2, 3):
        pdf.drawString(84, y, f"q{n} the sales of cola for July, in Paris")
        y -= 10 * item_step
    for n in range(4):
        pdf.drawString(72, y, f"{prose} again {n}")
        y -= 10 * body_step
    pdf.save()
    return out.getvalue()


@pytest.mark.parametrize(("body_step", "items_apart"), [(1.2, True), (1.5, False)])
def test_lines_spaced_wider_than_the_body_are_paragraphs_of_their_own(
    body_step: float, items_apart: bool
) -> None:
    # Items 1.5 sizes apart in prose set at 1.2 (LaTeX) stand apart; in prose set at 1.5
    # (CSS's line-height) the same 1.5 is a paragraph's own line spacing.
    markdown = convert(_leading_pdf(body_step, 1.5), ".pdf", "items.pdf").markdown
    blocks = markdown.split("\n\n")
    items = [b for b in blocks if b.lstrip().startswith("q")]
    if items_apart:
        assert [b.split()[0] for b in items] == ["q1", "q2", "q3"], blocks
        assert sum("summarised" in b for b in blocks) == 2  # the prose, before and after
    else:
        assert len(blocks) == 1 and markdown.count("q2 the sales") == 1
