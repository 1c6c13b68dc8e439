"""PDF headings found from the page: the printed size (text matrix × font size), bold faces
by name, printed section numbers; the outline used only when it agrees with the page."""

from __future__ import annotations

import io

import latex_samples
import pytest

from narezka.convert import convert


def _pdf(lines: list[tuple[str, str, float, bool]], outline: list[str] | None = None) -> bytes:
    """A page of lines (font, text, size, size set in the text matrix with font size 1)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    y = 760.0
    for font, text, size, in_matrix in lines:
        obj = pdf.beginText()
        if in_matrix:  # as InDesign and Chromium write it: Tf 1, the size in Tm
            obj.setFont(font, 1)
            obj.setTextTransform(size, 0, 0, size, 60, y)
        else:
            obj.setFont(font, size)
            obj.setTextOrigin(60, y)
        obj.textOut(text)
        pdf.drawText(obj)
        y -= size * 1.6
    for n, title in enumerate(outline or []):
        pdf.bookmarkPage(f"m{n}")
        pdf.addOutlineEntry(title, f"m{n}", level=0)
    pdf.showPage()
    pdf.save()
    return out.getvalue()


def _headings(data: bytes) -> list[str]:
    markdown = convert(data, ".pdf", "doc.pdf").markdown
    return [line for line in markdown.splitlines() if line.startswith("#")]


def _page(in_matrix: bool) -> list[tuple[str, str, float, bool]]:
    return [
        ("Helvetica", "Delivery rules", 18, in_matrix),
        *[
            ("Helvetica", f"Paragraph line {n} about parcels and zones.", 10, in_matrix)
            for n in range(6)
        ],
        ("Helvetica", "Returns", 14, in_matrix),
        *[
            ("Helvetica", f"Another line {n} about refunds and terms.", 10, in_matrix)
            for n in range(6)
        ],
    ]


@pytest.mark.parametrize("in_matrix", [False, True])
def test_sizes_set_in_the_text_matrix_make_headings(in_matrix: bool) -> None:
    assert _headings(_pdf(_page(in_matrix))) == ["# Delivery rules", "## Returns"]


def test_a_numbered_bold_line_of_body_size_is_a_heading_and_a_bold_sentence_is_not() -> None:
    lines = [
        ("Helvetica-Bold", "2.1 Scope of delivery", 10, False),
        *[("Helvetica", f"Body line {n} of the section, plain.", 10, False) for n in range(5)],
        ("Helvetica-Bold", "Important: this whole sentence is bold.", 10, False),
        *[("Helvetica", f"Body line {n} again, plain.", 10, False) for n in range(5)],
    ]
    found = _headings(_pdf(lines))
    assert found == ["# 2.1 Scope of delivery"]


def test_plain_text_is_not_made_bold() -> None:
    lines = [
        ("Times-Roman", f"Plain line {n} of a lecture with no bold.", 11, False) for n in range(8)
    ]
    assert "**" not in convert(_pdf(lines), ".pdf", "a.pdf").markdown


def test_an_outline_that_the_pages_do_not_hold_gives_way_to_the_page() -> None:
    data = _pdf(_page(False), outline=["Chapter one", "Chapter two", "Chapter three"])
    assert _headings(data) == ["# Delivery rules", "## Returns"]


def test_an_outline_without_the_printed_numbers_still_matches() -> None:
    lines = [
        ("Helvetica", "1 Delivery rules", 10, False),
        *[("Helvetica", f"Paragraph line {n} about parcels.", 10, False) for n in range(4)],
        ("Helvetica", "2 Returns", 10, False),
        *[("Helvetica", f"Another line {n} about refunds.", 10, False) for n in range(4)],
    ]
    data = _pdf(lines, outline=["Delivery rules", "Returns"])
    assert _headings(data) == ["# 1 Delivery rules", "# 2 Returns"]


@pytest.mark.skipif(not latex_samples.have_pdflatex(), reason="pdflatex is not installed")
@pytest.mark.parametrize("kind", ["article", "report", "twocolumn", "beamer"])
def test_russian_latex_headings_are_found_without_an_outline(kind: str) -> None:
    # A deck has an outline (beamer loads hyperref) of its sections, printed nowhere but in
    # its contents frame: the sections come from it, the frame titles from the page.
    sample = latex_samples.make_latex_pdf(kind)
    found = [h.lstrip("#").strip() for h in _headings(sample.pdf)]
    titles = [" ".join(t.split()[1:]) if t[:1].isdigit() else t for t in found]
    missing = [h for h in sample.headings if h not in titles]
    assert not missing, found


def test_large_text_set_up_a_margin_is_not_a_heading() -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.setFont("Helvetica", 10)
    for n in range(8):
        pdf.drawString(60, 700 - 14 * n, f"Body line {n} about parcels and zones.")
    pdf.saveState()
    pdf.translate(30, 300)
    pdf.rotate(90)
    pdf.setFont("Helvetica", 20)
    pdf.drawString(0, 0, "arXiv:2004.04906v3 [cs.CL]")
    pdf.restoreState()
    pdf.showPage()
    pdf.save()
    assert _headings(out.getvalue()) == []


def test_a_heading_carries_no_bold_marks() -> None:
    lines = [
        ("Helvetica-Bold", "Delivery", 18, False),
        *[("Helvetica", f"Paragraph line {n} about parcels.", 10, False) for n in range(6)],
    ]
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    obj = pdf.beginText(60, 760)
    obj.setFont("Helvetica-Bold", 18)
    obj.textOut("Delivery ")
    obj.setFont("Helvetica", 18)
    obj.textOut("rules")
    pdf.drawText(obj)
    pdf.setFont("Helvetica", 10)
    for n, (_, text, _, _) in enumerate(lines[1:]):
        pdf.drawString(60, 720 - 14 * n, text)
    pdf.showPage()
    pdf.save()
    assert _headings(out.getvalue()) == ["# Delivery rules"]


def _deck_pdf() -> bytes:
    """Three pages as a slide deck makes them: a contents page listing two sections, then a
    slide each under a large title that is not its section's; the outline holds the
    sections, pointing at the slides."""
    from reportlab.lib.pagesizes import landscape
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=landscape((360, 480)))
    pdf.setFont("Helvetica", 20)
    pdf.drawString(30, 320, "Contents")
    pdf.setFont("Helvetica", 11)
    pdf.drawString(40, 280, "1 Delivery")
    pdf.drawString(40, 260, "2 Returns")
    pdf.showPage()
    for n, (section, title) in enumerate([("Delivery", "Couriers"), ("Returns", "Refunds")]):
        pdf.bookmarkPage(f"s{n}")
        pdf.addOutlineEntry(section, f"s{n}", level=0)
        pdf.setFont("Helvetica", 20)
        pdf.drawString(30, 320, title)
        pdf.setFont("Helvetica", 11)
        for k in range(4):
            pdf.drawString(40, 280 - 18 * k, f"Point {k} about {title.lower()} and parcels.")
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def test_a_decks_sections_from_its_outline_head_their_slides_and_the_contents_stay_text() -> None:
    found = _headings(_deck_pdf())
    assert found == ["## Contents", "# Delivery", "## Couriers", "# Returns", "## Refunds"]
    markdown = convert(_deck_pdf(), ".pdf", "deck.pdf").markdown
    assert "1 Delivery" in markdown  # the contents page's entries are its text


def test_an_outline_title_holding_half_an_emoji_costs_that_half_not_the_outline() -> None:
    """A bookmark title ending in a lone UTF-16 surrogate: pypdfium2's strict decoding
    failed on it, and every bookmark was dropped with it."""
    import pypdf
    import pypdfium2 as pdfium
    from pypdf.generic import ByteStringObject, NameObject

    from narezka.convert.pdf.headings import _outline

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(_pdf(_page(False)))))
    writer.add_outline_item(title="Delivery rules", page_number=0)
    broken = writer.add_outline_item(title="Returns", page_number=0)
    title = b"\xfe\xff" + "Returns".encode("utf-16-be") + b"\xd8\x3d"
    broken.get_object()[NameObject("/Title")] = ByteStringObject(title)
    out = io.BytesIO()
    writer.write(out)
    pdf = pdfium.PdfDocument(out.getvalue())
    try:
        assert [m.title for m in _outline(pdf).values()] == ["Delivery rules", "Returns"]
    finally:
        pdf.close()
