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
    assert result.meta["comments"] == [
        {"sheet": "Лист", "cell": "R2C2", "author": "Анна", "text": "С НДС"}
    ]


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
