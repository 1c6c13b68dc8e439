"""PowerPoint: line breaks, titles from the title placeholder only, charts, groups, a shape
that cannot be read, notes and comments apart from the body (issue 35)."""

from __future__ import annotations

import io
from typing import Any

import office_samples as office
import pytest

from narezka.convert import convert
from narezka.errors import PasswordProtectedError


def _deck() -> Any:
    import pptx

    return pptx.Presentation()


def _save(deck: Any) -> bytes:
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _md(deck: Any) -> str:
    return convert(_save(deck), ".pptx", "d.pptx").markdown


def test_line_breaks_are_kept_between_words() -> None:
    from pptx.util import Inches

    deck = _deck()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Библиотека\x0bX-Library"
    box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(5), Inches(1))
    box.text_frame.text = "X-Library\x0bThe catalogue"
    md = _md(deck)
    assert md.startswith("# Библиотека X-Library\n")
    assert "X-Library\nThe catalogue" in md and "X-LibraryThe" not in md


def test_the_title_comes_from_the_title_placeholder_only() -> None:
    from lxml import etree
    from pptx.util import Inches

    deck = _deck()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title placeholder
    box = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(5), Inches(1))
    box.text_frame.text = "Длинный текст тела слайда " * 20
    # A body placeholder with no idx (idx 0): python-pptx's ``shapes.title`` returned it.
    nv_pr = box._element.nvSpPr.nvPr
    etree.SubElement(nv_pr, f"{{{nv_pr.nsmap['p']}}}ph", type="body")
    assert slide.shapes.title is not None  # the library's own answer, the one not to use
    md = _md(deck)
    assert md.startswith("# Slide 1\n\n- Длинный текст тела слайда")


def test_a_chart_is_its_title_and_a_data_table() -> None:
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    deck = _deck()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Итоги"
    data = CategoryChartData()
    data.categories = ["Q1", "Q2"]
    data.add_series("Продажи", (10, 25))
    data.add_series("Возвраты", (1, 3))
    frame = slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(6), Inches(4), data
    )
    frame.chart.has_title = True
    frame.chart.chart_title.text_frame.text = "Продажи по кварталам"
    md = _md(deck)
    assert "Chart: Продажи по кварталам\n\n| | Продажи | Возвраты |" in md.replace("|  |", "| |")
    assert "| Q1 | 10 | 1 |\n| Q2 | 25 | 3 |" in md


def test_group_shapes_are_opened_and_an_unreadable_shape_is_skipped_with_a_note() -> None:
    from lxml import etree
    from pptx.util import Inches

    deck = _deck()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Схема"
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(2), Inches(2), Inches(1)).text_frame.text = "Склад"
    broken = slide.shapes.add_chart(
        _chart_type(), Inches(1), Inches(4), Inches(3), Inches(2), _chart_data()
    )
    ref = broken._element.find(".//{http://schemas.openxmlformats.org/drawingml/2006/chart}chart")
    ref.attrib.clear()  # a chart naming no part
    assert isinstance(ref, etree._Element)
    result = convert(_save(deck), ".pptx", "d.pptx")
    assert "Склад" in result.markdown
    assert len(result.meta["notes"]) == 1
    assert result.meta["notes"][0].startswith("slide 1, shape 'Chart ")
    assert result.meta["notes"][0].endswith("a shape that cannot be read was skipped")


def _chart_type() -> Any:
    from pptx.enum.chart import XL_CHART_TYPE

    return XL_CHART_TYPE.PIE


def _chart_data() -> Any:
    from pptx.chart.data import CategoryChartData

    data = CategoryChartData()
    data.categories = ["a"]
    data.add_series("s", (1,))
    return data


def test_notes_follow_the_body_and_comments_are_metadata() -> None:
    from pptx.opc.package import Part
    from pptx.opc.packuri import PackURI

    deck = _deck()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Доставка"
    slide.placeholders[1].text_frame.text = "Курьером"
    slide.notes_slide.notes_text_frame.text = "Сказать про тарифы\x0bи сроки"
    blob = (
        '<p:cmLst xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main">'
        '<p:cm authorId="0" idx="1"><p:pos x="0" y="0"/><p:text>Уточнить цену</p:text></p:cm>'
        "</p:cmLst>"
    ).encode()
    part = Part(
        PackURI("/ppt/comments/comment1.xml"),
        "application/vnd.openxmlformats-officedocument.presentationml.comments+xml",
        deck.part.package,
        blob,
    )
    slide.part.relate_to(
        part, "http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments"
    )
    result = convert(_save(deck), ".pptx", "d.pptx")
    assert result.markdown == (
        "# Доставка\n\n- Курьером\n\nSpeaker notes:\n\nСказать про тарифы\n\nи сроки\n"
    )
    assert result.meta["comments"] == [{"slide": 1, "text": "Уточнить цену"}]


def test_a_deck_with_no_text_says_why() -> None:
    deck = _deck()
    deck.slides.add_slide(deck.slide_layouts[6])
    result = convert(_save(deck), ".pptx", "d.pptx")
    assert result.markdown == "# Slide 1\n"
    assert result.meta["notes"] == ["no text: the slides hold only pictures or shapes without text"]


def test_an_encrypted_deck_is_named_password_protected() -> None:
    with pytest.raises(PasswordProtectedError):
        convert(office.encrypted(), ".pptx", "secret.pptx")


def test_a_strict_ooxml_deck_reads_as_transitional() -> None:
    deck = _deck()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Доставка"
    slide.placeholders[1].text_frame.text = "Курьером"
    data = _save(deck)
    assert convert(office.strict(data), ".pptx", "s.pptx").markdown == _md_of(data)


def _md_of(data: bytes) -> str:
    return convert(data, ".pptx", "d.pptx").markdown
