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


def _delivery_deck() -> tuple[Any, Any]:
    deck = _deck()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Доставка"
    slide.placeholders[1].text_frame.text = "Курьером"
    slide.notes_slide.notes_text_frame.text = "Сказать про тарифы\x0bи сроки"
    return deck, slide


def test_notes_follow_the_body_under_their_own_heading_located_as_the_slides_notes() -> None:
    from narezka.formats import SLIDE_NOTES, place

    deck, _ = _delivery_deck()
    result = convert(_save(deck), ".pptx", "d.pptx")
    assert result.markdown == (
        "# Доставка\n\n- Курьером\n\n## Speaker notes\n\nСказать про тарифы\n\nи сроки\n"
    )
    body, notes = result.provenance
    assert result.markdown[notes.start : notes.end].startswith("## Speaker notes")
    assert (body.where.slide, body.where.element) == (1, None)
    assert (notes.where.slide, notes.where.element) == (1, SLIDE_NOTES)
    # A chunk that runs from the slide's text into its notes is told apart as holding notes.
    assert place(body.where, notes.where) == {"slide": 1, "element": SLIDE_NOTES}
    assert place(body.where, body.where) == {"slide": 1}


def test_comments_are_anchored_to_their_slide_or_the_shape_they_mark_never_the_body() -> None:
    deck, slide = _delivery_deck()
    office.old_pptx_comment(deck, slide, "Анна", "Уточнить цену")
    shape = slide.placeholders[1].shape_id
    office.modern_pptx_comment(
        deck, slide, shape, [("Борис", "Курьер только по Москве"), ("Анна", "Согласна")]
    )
    result = convert(_save(deck), ".pptx", "d.pptx")
    md = result.markdown
    assert "Уточнить" not in md and "Москве" not in md and "Согласна" not in md
    notes = {c["text"]: c for c in result.meta["comments"]}
    old = notes["Уточнить цену"]
    assert (old["author"], old["on"]) == ("Анна", "slide 1")
    assert old["at"] == [0, len(md) - 1]  # the whole slide, its notes too
    modern = notes["Курьер только по Москве"]
    assert (modern["author"], modern["on"]) == ("Борис", "Курьером")
    assert md[slice(*modern["at"])] == "- Курьером"
    reply = notes["Согласна"]
    assert (reply["author"], reply["on"], reply["at"]) == ("Анна", "Курьером", modern["at"])


def test_a_comment_on_the_second_slide_is_anchored_there() -> None:
    deck, _ = _delivery_deck()
    second = deck.slides.add_slide(deck.slide_layouts[1])
    second.shapes.title.text = "Оплата"
    office.modern_pptx_comment(deck, second, second.shapes.title.shape_id, [("Вера", "Ок")])
    result = convert(_save(deck), ".pptx", "d.pptx")
    [note] = result.meta["comments"]
    assert note["on"] == "Оплата" and result.markdown[slice(*note["at"])] == "# Оплата"


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
