"""Word: text boxes, content controls, equations, footnotes, comments, Strict OOXML, odd
cells, and a file that degrades rather than being refused (issue 35)."""

from __future__ import annotations

import office_samples as office
import pytest
from office_samples import p

from narezka.convert import convert, docx_blocks
from narezka.errors import ConvertError, PasswordProtectedError

TEXT_BOX = (
    "<w:p><w:r><w:t>Anchor paragraph.</w:t></w:r><w:r><mc:AlternateContent><mc:Choice "
    'Requires="wps"><w:drawing><wp:anchor><a:graphic><a:graphicData uri="http://schemas.'
    'microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp><wps:txbx><w:txbxContent>'
    "<w:p><w:r><w:t>Текст во врезке</w:t></w:r></w:p></w:txbxContent></wps:txbx></wps:wsp>"
    "</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict>"
    "<v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>Текст во врезке</w:t></w:r></w:p>"
    "</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent>"
    "</w:r></w:p>"
)


def _md(body: str, **parts: str) -> str:
    return convert(office.docx(body, **parts), ".docx", "t.docx").markdown


def test_a_text_box_is_read_once_after_its_paragraph() -> None:
    md = _md(TEXT_BOX)
    assert md == "Anchor paragraph.\n\nТекст во врезке\n"  # the fallback copy not again


def test_content_controls_block_and_inline_are_read() -> None:
    table = (
        "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Тариф</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>"
        "Цена</w:t></w:r></w:p></w:tc></w:tr><w:sdt><w:sdtContent><w:tr><w:tc><w:p><w:r><w:t>"
        "Курьер</w:t></w:r></w:p></w:tc><w:sdt><w:sdtContent><w:tc><w:p><w:r><w:t>300</w:t>"
        "</w:r></w:p></w:tc></w:sdtContent></w:sdt></w:tr></w:sdtContent></w:sdt></w:tbl>"
    )
    inline = (
        '<w:p><w:r><w:t xml:space="preserve">Срок: </w:t></w:r><w:sdt><w:sdtContent><w:r>'
        "<w:t>14 дней</w:t></w:r></w:sdtContent></w:sdt></w:p>"
    )
    md = _md(f"<w:sdt><w:sdtContent>{table}</w:sdtContent></w:sdt>{inline}")
    assert "| Тариф | Цена |\n|---|---|\n| Курьер | 300 |" in md
    assert "Срок: 14 дней" in md


@pytest.mark.parametrize(
    ("omml", "linear"),
    [
        (
            "<m:f><m:num><m:sSup><m:e><m:r><m:t>x</m:t></m:r></m:e><m:sup><m:r><m:t>2</m:t>"
            "</m:r></m:sup></m:sSup></m:num><m:den><m:r><m:t>a+b</m:t></m:r></m:den></m:f>",
            "x^2/(a+b)",
        ),
        (
            '<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr><m:deg/><m:e><m:r><m:t>y</m:t>'
            "</m:r></m:e></m:rad>",
            "√(y)",
        ),
        (
            '<m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr><m:sub><m:r><m:t>i=1</m:t></m:r>'
            "</m:sub><m:sup><m:r><m:t>n</m:t></m:r></m:sup><m:e><m:r><m:t>i</m:t></m:r></m:e>"
            "</m:nary>",
            "∑_(i=1)^n i",
        ),
        (
            "<m:d><m:e><m:r><m:t>a</m:t></m:r></m:e><m:e><m:r><m:t>b</m:t></m:r></m:e></m:d>",
            "(a|b)",
        ),
    ],
)
def test_equations_become_linear_text(omml: str, linear: str) -> None:
    md = _md(
        f'<w:p><w:r><w:t xml:space="preserve">inline equation: </w:t></w:r><m:oMath>{omml}'
        "</m:oMath><w:r><w:t>.</w:t></w:r></w:p>"
    )
    assert md == f"inline equation: {linear}.\n"


def test_a_display_equation_is_its_own_paragraph() -> None:
    md = _md(
        p("До.") + "<w:p><m:oMathPara><m:oMath><m:r><m:t>E=mc</m:t></m:r></m:oMath>"
        "</m:oMathPara></w:p>" + p("После.")
    )
    assert md == "До.\n\nE=mc\n\nПосле.\n"


def test_footnotes_and_endnotes_follow_the_body_and_comments_are_metadata() -> None:
    body = (
        '<w:p><w:r><w:t>Срок возврата</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r>'
        '<w:commentRangeStart w:id="0"/><w:r><w:t xml:space="preserve"> указан.</w:t></w:r>'
        '<w:r><w:endnoteReference w:id="2"/></w:r></w:p>'
    )
    result = convert(
        office.docx(
            body,
            footnotes='<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r>'
            '</w:p></w:footnote><w:footnote w:id="1">' + p("14 дней по закону.") + "</w:footnote>",
            endnotes='<w:endnote w:id="2">' + p("Конец.") + "</w:endnote>",
            comments='<w:comment w:id="0" w:author="Анна">' + p("Проверить срок") + "</w:comment>",
        ),
        ".docx",
        "t.docx",
    )
    assert result.markdown == (
        "Срок возврата[^1] указан.[^e2]\n\n[^1]: 14 дней по закону.\n\n[^e2]: Конец.\n"
    )
    # Anchored to the text it comments (its range left open: to the end of the body).
    assert result.meta["comments"] == [
        {"author": "Анна", "text": "Проверить срок", "on": "указан.", "at": [18, 25]}
    ]
    assert result.markdown[18:25] == "указан."


def test_strict_ooxml_reads_as_transitional() -> None:
    package = office.docx(TEXT_BOX + p("Второй абзац"))
    strict = office.strict(package)
    assert b"purl.oclc.org" in strict and strict != package
    assert (
        convert(strict, ".docx", "s.docx").markdown == convert(package, ".docx", "t.docx").markdown
    )


def test_a_cell_off_the_grid_does_not_refuse_the_file() -> None:
    # Row two continues a vertical merge in a column its row never reaches, and claims to
    # span fifty million columns: python-docx's grid raised "no tc element at grid_offset".
    table = (
        "<w:tbl><w:tr><w:tc>" + p("A") + '</w:tc><w:tc><w:tcPr><w:vMerge w:val="restart"/>'
        "</w:tcPr>" + p("Merged B1-B3") + "</w:tc></w:tr><w:tr><w:tc><w:tcPr><w:gridSpan "
        'w:val="50000000"/><w:vMerge/></w:tcPr>'
        + p("")
        + "</w:tc></w:tr><w:tr><w:tc>"
        + p("C")
        + "</w:tc><w:tc><w:tcPr><w:vMerge/></w:tcPr>"
        + p("")
        + "</w:tc></w:tr></w:tbl>"
    )
    md = _md(table)
    assert "| A | Merged B1-B3 |" in md
    assert "| C | Merged B1-B3 |" in md


def test_an_unreadable_block_is_skipped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object) -> list[list[str]]:
        raise ValueError("lxml internals")

    monkeypatch.setattr("narezka.convert.docx.table_rows", broken)
    assert docx_blocks.table_rows is not broken
    table = "<w:tbl><w:tr><w:tc>" + p("x") + "</w:tc></w:tr></w:tbl>"
    result = convert(office.docx(p("До таблицы") + table + p("После")), ".docx", "t.docx")
    assert result.markdown == "До таблицы\n\nПосле\n"
    assert result.meta["notes"] == ["block 2: a table that cannot be read was skipped"]
    assert "lxml" not in str(result.meta)


def test_a_file_with_no_text_says_why() -> None:
    picture = "<w:p><w:r><w:drawing><wp:inline/></w:drawing></w:r></w:p>"
    result = convert(office.docx(picture), ".docx", "t.docx")
    assert result.markdown == ""
    assert result.meta["notes"] == [
        "no text: the document holds only pictures or drawings without text"
    ]


def test_an_encrypted_word_file_is_named_password_protected() -> None:
    with pytest.raises(PasswordProtectedError, match="password-protected"):
        convert(office.encrypted(), ".docx", "secret.docx")


def test_a_legacy_doc_saved_as_docx_is_named_and_no_library_text_leaks() -> None:
    with pytest.raises(ConvertError, match="legacy binary Office file") as legacy:
        convert(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, ".docx", "old.docx")
    assert not isinstance(legacy.value, PasswordProtectedError)
    not_word = office.without(office.docx(p("x")), "word/document.xml")
    with pytest.raises(ConvertError) as caught:
        convert(not_word, ".docx", "t.docx")
    assert "KeyError" not in str(caught.value) and "no document part" in str(caught.value)


def test_smartart_and_charts_in_a_word_body_are_read() -> None:
    graphic = (
        '<w:p><w:r><w:drawing><wp:inline><a:graphic><a:graphicData uri="http://schemas.'
        'openxmlformats.org/drawingml/2006/{kind}">{ref}</a:graphicData></a:graphic></wp:inline>'
        "</w:drawing></w:r></w:p>"
    )
    dgm = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
    chart_ns = "http://schemas.openxmlformats.org/drawingml/2006/chart"
    smartart = graphic.format(
        kind="diagram",
        ref=f'<dgm:relIds xmlns:dgm="{dgm}" r:dm="rIdD" r:lo="x" r:qs="x" r:cs="x"/>',
    )
    chart = graphic.format(kind="chart", ref=f'<c:chart xmlns:c="{chart_ns}" r:id="rIdC"/>')
    data = (
        f'<dgm:dataModel xmlns:dgm="{dgm}" xmlns:a="http://schemas.openxmlformats.org/drawingml/'
        '2006/main"><dgm:ptLst><dgm:pt modelId="1"><dgm:t><a:p><a:r><a:t>Заказ</a:t></a:r></a:p>'
        '</dgm:t></dgm:pt><dgm:pt modelId="2"><dgm:t><a:p><a:r><a:t>Доставка</a:t></a:r></a:p>'
        "</dgm:t></dgm:pt></dgm:ptLst></dgm:dataModel>"
    )
    plot = (
        f'<c:chartSpace xmlns:c="{chart_ns}" xmlns:a="http://schemas.openxmlformats.org/drawingml/'
        '2006/main"><c:chart><c:title><c:tx><c:rich><a:p><a:r><a:t>Продажи</a:t></a:r></a:p>'
        "</c:rich></c:tx></c:title><c:plotArea><c:barChart><c:ser><c:tx><c:strRef><c:strCache>"
        '<c:pt idx="0"><c:v>2024</c:v></c:pt></c:strCache></c:strRef></c:tx><c:cat><c:strRef>'
        '<c:strCache><c:pt idx="0"><c:v>Q1</c:v></c:pt><c:pt idx="1"><c:v>Q2</c:v></c:pt>'
        '</c:strCache></c:strRef></c:cat><c:val><c:numRef><c:numCache><c:pt idx="0"><c:v>10</c:v>'
        '</c:pt><c:pt idx="1"><c:v>25</c:v></c:pt></c:numCache></c:numRef></c:val></c:ser>'
        "</c:barChart></c:plotArea></c:chart></c:chartSpace>"
    )
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
    related = [
        office.Related(
            "rIdD",
            rel + "diagramData",
            "diagrams/data1.xml",
            "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml",
            data,
        ),
        office.Related(
            "rIdC",
            rel + "chart",
            "charts/chart1.xml",
            "application/vnd.openxmlformats-officedocument.drawingml.chart+xml",
            plot,
        ),
    ]
    md = convert(office.docx(smartart + chart, related), ".docx", "t.docx").markdown
    assert md == (
        "Заказ\n\nДоставка\n\nChart: Продажи\n\n|  | 2024 |\n|---|---|\n| Q1 | 10 |\n| Q2 | 25 |\n"
    )


def test_a_row_spanning_the_whole_table_is_its_title_not_its_header() -> None:
    def cell(text: str, span: int = 1) -> str:
        grid = f'<w:tcPr><w:gridSpan w:val="{span}"/></w:tcPr>' if span > 1 else ""
        return f"<w:tc>{grid}{p(text)}</w:tc>"

    table = (
        f"<w:tbl><w:tr>{cell('Связанные нормы:', 2)}</w:tr>"
        f"<w:tr>{cell('Статья')}{cell('Суть')}</w:tr>"
        f"<w:tr>{cell('ст. 18')}{cell('Возврат')}</w:tr>"
        f"<w:tr>{cell('Итого', 2)}</w:tr></w:tbl>"
    )
    assert _md(table) == (
        "Связанные нормы:\n\n| Статья | Суть |\n|---|---|\n| ст. 18 | Возврат |\n| Итого |  |\n"
    )


@pytest.mark.parametrize("cut", [30, 200, -40])
def test_a_truncated_office_file_is_named_without_the_zip_librarys_words(cut: int) -> None:
    data = office.docx(p("Текст"))
    broken = data[:cut]
    for suffix in (".docx", ".pptx", ".xlsx"):
        with pytest.raises(ConvertError) as caught:
            convert(broken, suffix, f"t{suffix}")
        message = str(caught.value)
        assert "broken" in message or "not a" in message
        assert "File is not a zip file" not in message and "Error" not in message


def test_a_comment_over_two_paragraphs_is_anchored_to_both() -> None:
    body = (
        '<w:p><w:r><w:t xml:space="preserve">Вступление. </w:t></w:r>'
        '<w:commentRangeStart w:id="3"/><w:r><w:t>Конец первого.</w:t></w:r></w:p>'
        '<w:p><w:r><w:t>Начало второго.</w:t></w:r><w:commentRangeEnd w:id="3"/>'
        '<w:r><w:t xml:space="preserve"> Хвост.</w:t></w:r></w:p>' + p("Третий.")
    )
    comments = '<w:comment w:id="3" w:author="Борис">' + p("Связать абзацы") + "</w:comment>"
    result = convert(office.docx(body, comments=comments), ".docx", "t.docx")
    [comment] = result.meta["comments"]
    assert comment["on"] == "Конец первого. Начало второго."
    # The words run over a paragraph break, so the anchor is the two paragraphs whole.
    start, end = comment["at"]
    assert result.markdown[start:end] == "Вступление. Конец первого.\n\nНачало второго. Хвост."
    assert "Связать" not in result.markdown
