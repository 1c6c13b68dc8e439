"""OpenDocument spreadsheets and presentations (issue 35 item 6)."""

from __future__ import annotations

import office_samples as office
import pytest

from narezka.convert.odf_sheets import convert_ods
from narezka.errors import ConversionLimitError, PasswordProtectedError

ODS = "application/vnd.oasis.opendocument.spreadsheet"


def _cell(text: str, extra: str = "") -> str:
    return f"<table:table-cell {extra}><text:p>{text}</text:p></table:table-cell>"


def _row(*cells: str, extra: str = "") -> str:
    return f"<table:table-row {extra}>{''.join(cells)}</table:table-row>"


def _ods(rows: str, name: str = "Лист") -> bytes:
    return office.odf(
        ODS,
        f'<office:spreadsheet><table:table table:name="{name}">{rows}</table:table>'
        "</office:spreadsheet>",
    )


def test_an_ods_sheet_splits_into_regions_and_skips_a_million_empty_rows() -> None:
    rows = (
        _row(_cell("Кубки Стэнли"))
        + _row(_cell("Команда"), _cell("Кубков"))
        + _row(_cell("Maple Leafs"), _cell("13"))
        + _row("<table:table-cell/>", extra='table:number-rows-repeated="1048000"')
        + _row(_cell("Тариф"), _cell("Цена"))
        + _row(_cell("Курьер"), _cell("300"))
    )
    md = convert_ods(_ods(rows), "b.ods").markdown
    assert md == (
        "# Лист\n\nКубки Стэнли\n\n| Команда | Кубков |\n|---|---|\n| Maple Leafs | 13 |\n\n"
        "| Тариф | Цена |\n|---|---|\n| Курьер | 300 |\n"
    )


def test_ods_merged_cells_read_whole_and_annotations_are_metadata() -> None:
    note = (
        "<office:annotation><dc:creator>Анна</dc:creator><text:p>С НДС</text:p></office:annotation>"
    )
    rows = (
        _row(_cell("Регион"), _cell("Остаток"))
        + _row(
            _cell("Север", 'table:number-rows-spanned="2"'),
            f"<table:table-cell>{note}<text:p>5</text:p></table:table-cell>",
        )
        + _row("<table:covered-table-cell/>", _cell("7"))
    )
    result = convert_ods(_ods(rows), "b.ods")
    assert "| Север | 5 |\n| Север | 7 |" in result.markdown
    assert "НДС" not in result.markdown
    [comment] = result.meta["comments"]
    assert {k: comment[k] for k in ("author", "text", "on")} == {
        "author": "Анна",
        "text": "С НДС",
        "on": "Лист!B2",
    }
    start, end = comment["at"]  # the commented cell's row
    assert result.markdown[start:end] == "| Север | 5 |"


def test_a_filled_row_repeated_past_reason_is_a_limit_not_a_hang() -> None:
    wide = _cell("x", 'table:number-columns-repeated="1000"')
    rows = _row(wide, extra='table:number-rows-repeated="1000000000"') * 3
    with pytest.raises(ConversionLimitError, match="repeats its cells"):
        convert_ods(_ods(rows), "bomb.ods")


def test_an_encrypted_ods_is_named_password_protected() -> None:
    with pytest.raises(PasswordProtectedError):
        convert_ods(office.odf(ODS, "<office:spreadsheet/>", encrypted=True), "s.ods")


def test_an_empty_ods_says_why() -> None:
    result = convert_ods(_ods(""), "e.ods")
    assert result.meta["notes"] == ["no text: the spreadsheet's sheets hold no cell values"]


ODP = "application/vnd.oasis.opendocument.presentation"


def _odp(pages: str) -> bytes:
    return office.odf(ODP, f"<office:presentation>{pages}</office:presentation>")


def test_an_odp_slide_keeps_its_title_lines_lists_tables_notes_apart() -> None:
    from narezka.convert.odf_slides import convert_odp

    page = (
        '<draw:page draw:name="p1"><draw:frame presentation:class="title"><draw:text-box>'
        "<text:p>Доставка</text:p></draw:text-box></draw:frame>"
        '<draw:frame presentation:class="outline"><draw:text-box><text:list><text:list-item>'
        "<text:p>Курьером</text:p><text:list><text:list-item><text:p>X-Library<text:line-break/>"
        "The catalogue</text:p></text:list-item></text:list></text:list-item></text:list>"
        "</draw:text-box></draw:frame>"
        "<draw:g><draw:custom-shape><text:p>Склад<office:annotation><dc:creator>Вера</dc:creator>"
        "<text:p>Какой склад?</text:p></office:annotation></text:p></draw:custom-shape></draw:g>"
        "<draw:frame><table:table><table:table-row><table:table-cell><text:p>Тариф</text:p>"
        "</table:table-cell><table:table-cell><text:p>Цена</text:p></table:table-cell>"
        "</table:table-row><table:table-row><table:table-cell><text:p>Курьер</text:p>"
        "</table:table-cell><table:table-cell><text:p>300</text:p></table:table-cell>"
        "</table:table-row></table:table></draw:frame>"
        "<office:annotation><dc:creator>Анна</dc:creator><text:p>Уточнить цену</text:p>"
        "</office:annotation>"
        '<presentation:notes><draw:frame presentation:class="notes"><draw:text-box>'
        "<text:p>Сказать про тарифы</text:p></draw:text-box></draw:frame></presentation:notes>"
        '</draw:page><draw:page draw:name="p2"><draw:frame presentation:class="subtitle">'
        "<draw:text-box><text:p>Без заголовка</text:p></draw:text-box></draw:frame></draw:page>"
    )
    result = convert_odp(_odp(page), "d.odp")
    assert result.markdown == (
        "# Доставка\n\n- Курьером\n\n  - X-Library\n    The catalogue\n\nСклад\n\n"
        "| Тариф | Цена |\n|---|---|\n| Курьер | 300 |\n\n"
        "## Speaker notes\n\nСказать про тарифы\n\n"
        "# Slide 2\n\nБез заголовка\n"
    )
    md = result.markdown
    shape, page = result.meta["comments"]
    # An annotation in a shape's text marks that shape; one on the page, the whole slide.
    assert {k: shape[k] for k in ("author", "text", "on")} == {
        "author": "Вера",
        "text": "Какой склад?",
        "on": "Склад",
    }
    assert md[slice(*shape["at"])] == "Склад"
    assert {k: page[k] for k in ("author", "text", "on")} == {
        "author": "Анна",
        "text": "Уточнить цену",
        "on": "slide 1",
    }
    assert md[slice(*page["at"])] == md[: md.index("# Slide 2")].rstrip("\n")
    notes = [s for s in result.provenance if s.where.element == "notes"]
    assert [md[s.start : s.end].strip() for s in notes] == [
        "## Speaker notes\n\nСказать про тарифы"
    ]


def test_an_odp_without_text_says_why_and_an_encrypted_one_is_named() -> None:
    from narezka.convert.odf_slides import convert_odp

    result = convert_odp(_odp('<draw:page draw:name="p1"/>'), "e.odp")
    assert result.meta["notes"] == ["no text: the slides hold only pictures or shapes without text"]
    with pytest.raises(PasswordProtectedError):
        convert_odp(office.odf(ODP, "<office:presentation/>", encrypted=True), "s.odp")
