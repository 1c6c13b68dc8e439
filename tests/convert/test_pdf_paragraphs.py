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
