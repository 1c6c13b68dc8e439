"""Test documents generated in code (no binaries committed): Word, PowerPoint, Excel, PDF."""

from __future__ import annotations

import io
from collections.abc import Sequence


def make_docx() -> bytes:
    """A Word file with a title, two heading levels, a list, a table, code and a link."""
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    document.add_heading("Возврат товара", level=1)
    document.add_paragraph("Товар можно вернуть в течение 14 дней.")
    document.add_heading("Сроки", level=2)
    document.add_paragraph("Первый пункт", style="List Bullet")
    document.add_paragraph("Второй пункт", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([["Тариф", "Цена"], ["Курьер", "300 ₽"]]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    code = document.add_paragraph()
    run = code.add_run("print('hello')")
    run.font.name = "Courier New"
    para = document.add_paragraph("См. ")
    link = OxmlElement("w:hyperlink")
    rel = document.part.relate_to(
        "https://example.org/help",
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink",
        is_external=True,
    )
    link.set(qn("r:id"), rel)
    inner = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "справку"
    inner.append(text)
    link.append(inner)
    para._p.append(link)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_pptx() -> bytes:
    """Two slides with titles, bullets, a table and speaker notes."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Доставка"
    body = slide.placeholders[1].text_frame
    body.text = "Курьером"
    body.add_paragraph().text = "Самовывоз"
    slide.notes_slide.notes_text_frame.text = "Сказать про тарифы"
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Цены"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for r, row in enumerate([["Зона", "Цена"], ["Москва", "300"]]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def make_xlsx() -> bytes:
    """Two sheets: a price list and an empty one."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Прайс"
    for row in [["Товар", "Цена"], ["Чай | зелёный", 250], ["Кофе", 410.0]]:
        sheet.append(row)
    book.create_sheet("Пусто")
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def make_pdf(pages: Sequence[Sequence[tuple[float, str]]], header: str = "") -> bytes:
    """A PDF whose pages hold lines of ``(font size, text)`` (``MONO:`` code, ``CELLS:a|b`` a
    table row), optionally with a running header and a page number on every page. Fonts:
    DejaVu (Cyrillic) when the system has it."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    font = "Helvetica"
    for candidate in ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",):
        try:
            pdfmetrics.registerFont(TTFont("DejaVu", candidate))
            font = "DejaVu"
        except Exception:
            pass
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    width, height = A4
    for number, lines in enumerate(pages, 1):
        if header:
            pdf.setFont(font, 9)
            pdf.drawString(50, height - 30, header)
            pdf.drawString(width / 2, 25, str(number))
        y = height - 80
        for size, text in lines:
            if text.startswith("MONO:"):
                pdf.setFont("Courier", size)
                text = text[5:]
            else:
                pdf.setFont(font, size)
            if not text:
                y -= size * 1.2
                continue
            if text.startswith("CELLS:"):  # a table row: cells 150 points apart
                for n, cell in enumerate(text[6:].split("|")):
                    pdf.drawString(50 + 150 * n, y, cell)
                y -= size * 1.25
                continue
            pdf.drawString(50, y, text)
            y -= size * 1.25
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def make_interleaved_pdf(
    pages: Sequence[tuple[Sequence[str], Sequence[str]]], title: str = "", header: str = ""
) -> bytes:
    """A PDF of two text columns written as some generators write them: each baseline
    across both columns, left then right (PDFium keeps that order). Each page gives its
    left and right column's paragraphs, wrapped at 40 characters; ``title`` spans both
    columns over the first page; a running ``header`` and a page number on every page."""
    import textwrap

    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("DejaVu", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    width, height = A4
    for number, (left, right) in enumerate(pages, 1):
        if header:
            pdf.setFont("DejaVu", 8)
            pdf.drawString(50, height - 30, header)
            pdf.drawString(width / 2, 25, str(number))
        y = height - 80
        if title and number == 1:
            pdf.setFont("DejaVu", 16)
            pdf.drawString(50, y, title)
            y -= 36
        columns: list[list[str]] = [[], []]
        for column, paragraphs in zip(columns, (left, right), strict=True):
            for paragraph in paragraphs:
                column += [*textwrap.wrap(paragraph, 40), ""]
        pdf.setFont("DejaVu", 10)
        for row in range(max(len(c) for c in columns)):
            for x, column in ((50, columns[0]), (310, columns[1])):
                if row < len(column) and column[row]:
                    pdf.drawString(x, y, column[row])
            y -= 13
        pdf.showPage()
    pdf.save()
    return out.getvalue()


EMOJI_ROWS = (
    ("Зона", "Оценка", "Цена", "Срок"),
    ("Москва", "😀 отлично", "300", "1"),
    ("Урал", "хорошо", "700", "4"),
    ("Сибирь", "хорошо 😀", "1200", "7"),
)


def make_emoji_table_pdf(rows: Sequence[Sequence[str]] = EMOJI_ROWS) -> bytes:
    """A page with a table ruled as booktabs rules it whose cells hold an emoji (DejaVu Sans
    draws U+1F600), between two paragraphs. PDFium gives an astral character as two
    characters (UTF-16 units). Reportlab writes such a character's ToUnicode entry with five
    hex digits (``<1F600>``), which readers take for U+1F60: rewritten here as UTF-16."""
    import re

    import pypdf
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("DejaVu", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
    width = [max(pdfmetrics.stringWidth(r[c], "DejaVu", 10) for r in rows) for c in range(4)]
    lefts = [60 + sum(width[:c]) + 12 * c for c in range(4)]
    right = lefts[-1] + width[-1] + 2
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.setFont("DejaVu", 10)
    pdf.drawString(60, 760, "Тарифы по зонам и оценки клиентов 😀, как показывает таблица.")
    y = 730.0
    pdf.line(58, y + 12, right, y + 12)
    for n, row in enumerate(rows):
        for x, text in zip(lefts, row, strict=True):
            pdf.drawString(x, y, text)
        if n == 0:
            pdf.line(58, y - 4, right, y - 4)
        y -= 14
    pdf.line(58, y + 10, right, y + 10)
    pdf.drawString(60, y - 20, "Цены включают налог и упаковку.")
    pdf.showPage()
    pdf.save()
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(out.getvalue())))
    for font in writer.pages[0]["/Resources"]["/Font"].values():
        font = font.get_object()
        if "/ToUnicode" in font:
            cmap = font["/ToUnicode"].get_object()
            text = re.sub(
                r"<([0-9A-F]{5})>",
                lambda m: f"<{chr(int(m.group(1), 16)).encode('utf-16-be').hex().upper()}>",
                cmap.get_data().decode("latin-1"),
            )
            cmap.set_data(text.encode("latin-1"))
    done = io.BytesIO()
    writer.write(done)
    return done.getvalue()


def raw_pdf(content: bytes, font: bytes) -> bytes:
    """A one-page PDF written by hand: ``content`` is the page's content stream and ``font``
    the dictionary of its font F1 (for fonts no generator would write, e.g. no Unicode map)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        font,
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def make_scan_pdf(
    pages: Sequence[Sequence[str] | None], turns: Sequence[int] | None = None
) -> bytes:
    """A PDF whose pages are pictures of text, as a scanner makes them (no text layer): each
    page's lines drawn at 200 dpi in DejaVu Sans, 12 pt, blank lines between paragraphs. A
    page given as None gets a text layer instead (a typed page among scans). ``turns`` gives
    each page's picture a turn counter-clockwise (90, 180, 270: a sheet fed sideways)."""
    from PIL import Image, ImageDraw, ImageFont
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    dpi = 200
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 12 * dpi // 72)
    width, height = A4
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    for n, lines in enumerate(pages):
        if lines is None:
            pdf.setFont("Helvetica", 12)
            pdf.drawString(72, height - 90, "A typed page between the scans.")
            pdf.showPage()
            continue
        image = Image.new("L", (int(width * dpi / 72), int(height * dpi / 72)), 255)
        draw = ImageDraw.Draw(image)
        y = dpi  # an inch from the top
        for line in lines:
            if line:
                draw.text((dpi, y), line, font=font, fill=0)
            y += int(12 * 1.5 * dpi / 72)
        turn = turns[n] if turns else 0
        if turn:
            image = image.rotate(turn, expand=True).resize(image.size)
        png = io.BytesIO()
        image.save(png, format="PNG")
        pdf.drawImage(ImageReader(io.BytesIO(png.getvalue())), 0, 0, width, height)
        pdf.showPage()
    pdf.save()
    return out.getvalue()


_ODT_CONTENT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.3">
<office:automatic-styles>
 <style:style style:name="P1" style:family="paragraph"
  style:parent-style-name="Preformatted_20_Text"/>
 <text:list-style style:name="L1"><text:list-level-style-number text:level="1"/>
  <text:list-level-style-bullet text:level="2"/></text:list-style>
</office:automatic-styles>
<office:body><office:text>
 <text:p text:style-name="Title">Возврат товара</text:p>
 <text:h text:outline-level="2">Сроки</text:h>
 <text:p>Вернуть можно за<text:s text:c="2"/>14 дней<text:note text:note-class="footnote">
  <text:note-citation>1</text:note-citation><text:note-body><text:p>Со дня получения.</text:p>
  </text:note-body></text:note>, см. <text:a xlink:href="https://example.org/help">справку</text:a>.</text:p>
 <text:list text:style-name="L1">
  <text:list-item><text:p>Откройте заказ.</text:p></text:list-item>
  <text:list-item><text:p>Выберите способ:</text:p>
   <text:list><text:list-item><text:p>пункт выдачи;</text:p></text:list-item>
   <text:list-item><text:p>курьер.</text:p></text:list-item></text:list></text:list-item>
  <text:list-item><text:p>Отправьте.</text:p></text:list-item>
 </text:list>
 <table:table><table:table-header-rows><table:table-row>
  <table:table-cell><text:p>Тариф</text:p></table:table-cell>
  <table:table-cell><text:p>Цена</text:p></table:table-cell></table:table-row></table:table-header-rows>
  <table:table-row><table:table-cell><text:p>Курьер</text:p></table:table-cell>
  <table:table-cell><text:p>290 ₽</text:p></table:table-cell></table:table-row></table:table>
 <text:section><text:p text:style-name="P1">print('hello')</text:p>
 <text:p text:style-name="P1">print('bye')</text:p></text:section>
</office:text></office:body></office:document-content>
"""
_ODT_STYLES = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-styles xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"><office:styles>
 <style:style style:name="Preformatted_20_Text" style:display-name="Preformatted Text"
  style:family="paragraph"/>
 <style:style style:name="Title" style:family="paragraph"/>
</office:styles></office:document-styles>
"""


def make_odt(content: str = _ODT_CONTENT) -> bytes:
    """An OpenDocument text written by hand: a title, a heading, a paragraph with spaces, a
    footnote and a link, a numbered list with a bulleted sub-list, a table, code."""
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as odt:
        odt.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        odt.writestr("content.xml", content)
        odt.writestr("styles.xml", _ODT_STYLES)
    return out.getvalue()


_CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
 <rootfiles><rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/>
 </rootfiles></container>"""


def make_epub(opf: str | None = None, chapters: dict[str, str] | None = None) -> bytes:
    """An EPUB written by hand: a package listing two chapters (spine order reversed from
    the manifest's) and a navigation page left out of the reading order."""
    import zipfile

    chapters = chapters or {
        "ch1.xhtml": '<h1 id="one">Глава 1</h1><p>Первый абзац.</p><ul><li>пункт</li></ul>',
        "ch2.xhtml": '<h1 id="two">Глава 2</h1><pre><code>x = 1</code></pre>',
        "nav.xhtml": "<nav><ol><li>Оглавление</li></ol></nav>",
    }
    opf = (
        opf
        or """<?xml version="1.0"?>
<package xmlns="http://www.idpf.org/2007/opf" xmlns:dc="http://purl.org/dc/elements/1.1/"
 version="3.0"><metadata><dc:title>Книга</dc:title></metadata><manifest>
 <item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/>
 <item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
 <item id="nav" href="text/nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
 <item id="css" href="style.css" media-type="text/css"/></manifest>
 <spine><itemref idref="c1"/><itemref idref="c2"/><itemref idref="nav" linear="no"/></spine>
</package>"""
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as epub:
        epub.writestr("mimetype", "application/epub+zip")
        epub.writestr("META-INF/container.xml", _CONTAINER)
        epub.writestr("OEBPS/book.opf", opf)
        epub.writestr("OEBPS/style.css", "p { margin: 0 }")
        for name, body in chapters.items():
            page = (
                '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
                '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head>'
                f"<body>{body}</body></html>"
            )
            epub.writestr(f"OEBPS/text/{name}", page)
    return out.getvalue()
