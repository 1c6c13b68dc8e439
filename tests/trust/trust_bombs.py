"""Small hostile files that explode on conversion (#38 row 1), built byte by byte: each is a
few hundred bytes to a few KB and asks a converter for gigabytes or minutes."""

from __future__ import annotations

import io
import zipfile
import zlib

_ODT_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
)


def _zip(members: dict[str, str | bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members.items():
            method = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            archive.writestr(name, body, compress_type=method)
    return out.getvalue()


def odt_spaces(count: int = 2_000_000_000) -> bytes:
    """An ``.odt`` whose one paragraph asks for ``count`` spaces (``text:s text:c``)."""
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_ODT_NS}>'
        "<office:body><office:text><text:p>a"
        + f'<text:s text:c="{count}"/>' * 8
        + "b</text:p></office:text></office:body></office:document-content>"
    )
    return _zip(
        {
            "mimetype": "application/vnd.oasis.opendocument.text",
            "content.xml": content,
        }
    )


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_RELS_TYPE = (
    '<Default Extension="rels" ContentType="application/'
    'vnd.openxmlformats-package.relationships+xml"/>'
)
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    + _RELS_TYPE
    + '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
)


def docx_grid_span(span: int = 50_000_000, rows: int = 20) -> bytes:
    """A ``.docx`` whose table cells each span ``span`` grid columns (``w:gridSpan``)."""
    cell = (
        f'<w:tc><w:tcPr><w:gridSpan w:val="{span}"/></w:tcPr>'
        "<w:p><w:r><w:t>x</w:t></w:r></w:p></w:tc>"
    )
    row = "<w:tr>" + cell * 2 + "</w:tr>"
    body = (
        f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}"><w:body>'
        "<w:p><w:r><w:t>before the table</w:t></w:r></w:p>"
        f"<w:tbl><w:tblGrid><w:gridCol/></w:tblGrid>{row * rows}</w:tbl>"
        "</w:body></w:document>"
    )
    return _zip(
        {"[Content_Types].xml": _CONTENT_TYPES, "_rels/.rels": _RELS, "word/document.xml": body}
    )


def xlsx_dimension(rows: int = 1_048_576, columns: str = "XFD") -> bytes:
    """An ``.xlsx`` of one sheet with two cells at opposite corners of the largest sheet, and
    shared strings referenced from every cell of a dense band: a dimension bomb."""
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel_ns = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    strings = f'<sst xmlns="{ns}" count="1" uniqueCount="1"><si><t>{"W" * 30000}</t></si></sst>'
    cells = "".join(f'<c r="{col}1" t="s"><v>0</v></c>' for col in _columns(2000))
    sheet = (
        f'<worksheet xmlns="{ns}"><dimension ref="A1:{columns}{rows}"/><sheetData>'
        f'<row r="1">{cells}</row>'
        f'<row r="{rows}"><c r="{columns}{rows}" t="s"><v>0</v></c></row>'
        "</sheetData></worksheet>"
    )
    book = (
        f'<workbook xmlns="{ns}" xmlns:r="{rel_ns}"><sheets>'
        '<sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )
    types = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        + _RELS_TYPE
        + '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
        '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
    )
    rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>'
    )
    book_rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/worksheet" Target="worksheets/sheet1.xml"/>'
        '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>'
    )
    return _zip(
        {
            "[Content_Types].xml": types,
            "_rels/.rels": rels,
            "xl/workbook.xml": book,
            "xl/_rels/workbook.xml.rels": book_rels,
            "xl/worksheets/sheet1.xml": sheet,
            "xl/sharedStrings.xml": strings,
        }
    )


def _columns(count: int) -> list[str]:
    out = []
    for n in range(1, count + 1):
        name = ""
        while n:
            n, r = divmod(n - 1, 26)
            name = chr(65 + r) + name
        out.append(name)
    return out


def pdf(objects: list[bytes], root: int = 1) -> bytes:
    """A PDF of ``objects`` (object ``i + 1`` is ``objects[i]``), with its cross-reference."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        root,
        xref,
    )
    return bytes(out)


def _stream(content: bytes, extra: bytes = b"") -> bytes:
    packed = zlib.compress(content, 9)
    return b"<< /Length %d /Filter /FlateDecode %s>>\nstream\n" % (len(packed), extra) + (
        packed + b"\nendstream"
    )


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def pdf_pages(pages: list[bytes], size: tuple[float, float] = (612, 792)) -> bytes:
    """A PDF with one page per content stream in ``pages`` (Helvetica as /F1)."""
    count = len(pages)
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
        _FONT,
    ]
    for i, content in enumerate(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % (size[0], size[1], 5 + 2 * i)
        )
        objects.append(_stream(content))
    return pdf(objects)


def text_lines(lines: list[str], size: float = 11, top: float = 740) -> bytes:
    """A content stream drawing ``lines`` one below the other."""
    out = [b"BT /F1 %g Tf 72 %g Td %g TL" % (size, top, size * 1.3)]
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        out.append(b"(%s) Tj T*" % escaped.encode("latin-1"))
    out.append(b"ET")
    return b"\n".join(out)


def many_text_objects(count: int) -> bytes:
    """A one-page PDF drawing ``count`` words, each its own text object, none over another
    (rows of 20 in 3-point type; the page grows as tall as they need)."""
    per_row, step = 20, 4
    rows = -(-count // per_row)
    height = rows * step + 40
    parts = []
    for i in range(count):
        x = 10 + (i % per_row) * 30
        y = height - 20 - (i // per_row) * step
        parts.append(b"BT /F1 3 Tf %d %d Td (w%d) Tj ET" % (x, y, i))
    return pdf_pages([b"\n".join(parts)], size=(620, height))


def pdf_form_bomb(depth: int = 12, fan: int = 10) -> bytes:
    """A PDF whose page draws a form XObject that draws the next ``fan`` times, ``depth``
    deep: ``fan ** depth`` glyphs from a few KB."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        _FONT,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R "
        b"/Resources << /Font << /F1 3 0 R >> /XObject << /X 6 0 R >> >> >>",
        _stream(b"/X Do"),
    ]
    for level in range(depth):
        number = 6 + level
        if level == depth - 1:
            content = b"BT /F1 12 Tf 72 700 Td (bomb) Tj ET"
            resources = b"/Resources << /Font << /F1 3 0 R >> >>"
        else:
            content = b" ".join([b"/X Do"] * fan)
            resources = b"/Resources << /XObject << /X %d 0 R >> >>" % (number + 1)
        objects.append(
            _stream(
                content, b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] " + resources + b" "
            )
        )
    return pdf(objects)


def pdf_huge_page(inches: int = 200) -> bytes:
    """A PDF of one ``inches``-inch square page that draws a path and no text: a scan to
    OCR, rendered at 300 dpi to 60,000 × 60,000 pixels."""
    side = inches * 72
    return pdf_pages([b"0 0 m %d %d l S" % (side, side)], size=(side, side))


def pdf_repeated_page(times: int = 200_000) -> bytes:
    """A PDF whose page tree lists one page ``times`` times."""
    kids = b" ".join([b"4 0 R"] * times)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, times),
        _FONT,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R "
        b"/Resources << /Font << /F1 3 0 R >> >> >>",
        _stream(text_lines(["The same page again, with its words."] * 40)),
    ]
    return pdf(objects)


def pptx_repeated_slide(times: int = 5000) -> bytes:
    """A ``.pptx`` whose presentation lists one slide ``times`` times."""
    p = "http://schemas.openxmlformats.org/presentationml/2006/main"
    a = "http://schemas.openxmlformats.org/drawingml/2006/main"
    r = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    shape = (
        '<p:sp><p:nvSpPr><p:cNvPr id="2" name="t"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
        "<p:spPr/>"
        "<p:txBody><a:bodyPr/><a:p><a:r><a:t>" + "slide text " * 200 + "</a:t></a:r></a:p>"
        "</p:txBody></p:sp>"
    )
    slide = (
        f'<p:sld xmlns:p="{p}" xmlns:a="{a}" xmlns:r="{r}"><p:cSld><p:spTree>'
        '<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>'
        f"<p:grpSpPr/>{shape}</p:spTree></p:cSld></p:sld>"
    )
    ids = "".join(f'<p:sldId id="{256 + i}" r:id="rId2"/>' for i in range(times))
    presentation = (
        f'<p:presentation xmlns:p="{p}" xmlns:a="{a}" xmlns:r="{r}">'
        f'<p:sldIdLst>{ids}</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/>'
        '<p:notesSz cx="6858000" cy="9144000"/></p:presentation>'
    )
    types = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        + _RELS_TYPE
        + '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.presentationml.presentation.main+xml"/>'
        '<Override PartName="/ppt/slides/slide1.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.presentationml.slide+xml"/></Types>'
    )
    rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="ppt/presentation.xml"/>'
        "</Relationships>"
    )
    pres_rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId2" Type="{rel}/slide" Target="slides/slide1.xml"/>'
        "</Relationships>"
    )
    return _zip(
        {
            "[Content_Types].xml": types,
            "_rels/.rels": rels,
            "ppt/presentation.xml": presentation,
            "ppt/_rels/presentation.xml.rels": pres_rels,
            "ppt/slides/slide1.xml": slide,
        }
    )
