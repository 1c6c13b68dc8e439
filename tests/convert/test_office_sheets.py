"""Excel: one table per region, titles apart from headers, defined tables, merged cells,
comments, .xlsm, encryption, and a sheet that degrades (issue 35)."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import office_samples as office
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.convert import convert
from narezka.convert.sheet_regions import Box, regions
from narezka.errors import PasswordProtectedError

STANLEY = [
    ["Кубки Стэнли"],
    ["Команда", "Город", "Кубков"],
    ["Blues", "STL", 1],
    ["Flyers", "PHI", 2],
    ["Maple Leafs", "TOR", 13],
]


def _book(**sheets: list[list[Any]]) -> Any:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    return book


def _save(book: Any) -> bytes:
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _convert(data: bytes) -> Any:
    return convert(data, ".xlsx", "b.xlsx")


def test_tables_apart_on_one_sheet_are_tables_apart_under_their_titles() -> None:
    rows = [*STANLEY, [], ["Тариф", "Цена"], ["Курьер", 300], ["Почта", 200]]
    md = _convert(_save(_book(Лист=rows))).markdown
    assert md == (
        "# Лист\n\nКубки Стэнли\n\n"
        "| Команда | Город | Кубков |\n|---|---|---|\n| Blues | STL | 1 |\n| Flyers | PHI | 2 |\n"
        "| Maple Leafs | TOR | 13 |\n\n"
        "| Тариф | Цена |\n|---|---|\n| Курьер | 300 |\n| Почта | 200 |\n"
    )


def test_a_split_table_repeats_its_column_headers_not_the_sheet_title() -> None:
    from narezka import chunk_text

    rows = [STANLEY[0], STANLEY[1], *([f"Команда {i}", "Москва", i] for i in range(60))]
    md = _convert(_save(_book(Кубки=rows))).markdown
    chunks = chunk_text(md, "headings", size=300, unit="chars")
    pieces = [c for c in chunks if "Команда 5" in c.text]
    assert len(chunks) > 3 and pieces
    assert "| Команда | Город | Кубков |" in pieces[0].embed_text
    assert "| Кубки Стэнли |" not in pieces[0].embed_text


def test_a_defined_table_is_a_region_of_its_own_and_merged_cells_read_whole() -> None:
    from openpyxl.worksheet.table import Table

    book = _book(Лист=[["Итог", "", "Склад", "Остаток"], ["", "", "Север", 5], ["", "", "Юг", 7]])
    sheet = book["Лист"]
    sheet["B1"] = "рядом"  # touches the defined table C1:D3 but is not part of it
    sheet["A2"] = "Регион"
    sheet.merge_cells("A2:A3")
    sheet.add_table(Table(displayName="Остатки", ref="C1:D3"))
    md = _convert(_save(book)).markdown
    assert "| Склад | Остаток |\n|---|---|\n| Север | 5 |\n| Юг | 7 |" in md
    assert "| Итог | рядом |\n|---|---|\n| Регион |  |\n| Регион |  |" in md


def test_comments_are_metadata_not_cells() -> None:
    from openpyxl.comments import Comment

    book = _book(Лист=[["Тариф", "Цена"], ["Курьер", 300]])
    book["Лист"]["B2"].comment = Comment("Цена с НДС", "Анна")
    result = _convert(_save(book))
    assert "НДС" not in result.markdown
    assert result.meta["comments"] == [
        {"sheet": "Лист", "cell": "B2", "author": "Анна", "text": "Цена с НДС"}
    ]


def _xlsm(data: bytes) -> bytes:
    """``data`` as Excel saves a macro-enabled workbook: its main part's content type and a
    VBA project member (never run, never read)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            member = source.read(info)
            if info.filename == "[Content_Types].xml":
                member = member.replace(
                    b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                    b"application/vnd.ms-excel.sheet.macroEnabled.main+xml",
                )
                assert b"macroEnabled" in member
            target.writestr(info, member)
        target.writestr("xl/vbaProject.bin", b"\xd0\xcf\x11\xe0 not run")
    return out.getvalue()


def test_an_xlsm_workbook_is_read_like_an_xlsx() -> None:
    from narezka.convert.sheets import convert_xlsx

    # The suffix's row in the formats registry is another change's; the reader is this one.
    data = _save(_book(Макрос=[["Тариф", "Цена"], ["Курьер", 300]]))
    assert convert_xlsx(_xlsm(data), "m.xlsm").markdown == _convert(data).markdown
    assert "| Курьер | 300 |" in _convert(data).markdown


def test_a_big_workbook_is_streamed_and_still_split_into_regions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("narezka.convert.sheets._FULL_LOAD_XML", 0)
    rows = [*STANLEY, [], ["Тариф", "Цена"], ["Курьер", 300]]
    md = _convert(_save(_book(Лист=rows))).markdown
    assert "Кубки Стэнли\n\n| Команда | Город | Кубков |" in md
    assert "\n\n| Тариф | Цена |\n|---|---|\n| Курьер | 300 |" in md


def test_an_unreadable_sheet_is_skipped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    from narezka.convert import sheets

    real = sheets.write_sheet

    def flaky(writer: Any, title: str, *rest: Any) -> None:
        if title == "Битый":
            raise KeyError("openpyxl internals")
        real(writer, title, *rest)

    monkeypatch.setattr(sheets, "write_sheet", flaky)
    result = _convert(_save(_book(Битый=[["x"]], Целый=[["Тариф", "Цена"], ["Курьер", 300]])))
    assert result.markdown.startswith("# Целый\n")
    assert result.meta["notes"] == ["sheet 'Битый': a sheet that cannot be read was skipped"]


def test_a_workbook_with_no_values_says_why() -> None:
    result = _convert(_save(_book(Пусто=[])))
    assert result.markdown == "# Пусто\n"
    assert result.meta["notes"] == ["no text: the workbook's sheets hold no cell values"]


def test_an_encrypted_workbook_is_named_password_protected_not_a_broken_zip() -> None:
    with pytest.raises(PasswordProtectedError, match="password-protected"):
        _convert(office.encrypted())


@settings(max_examples=60, deadline=None)
@given(st.sets(st.tuples(st.integers(1, 12), st.integers(1, 8)), min_size=1, max_size=40))
def test_every_cell_lies_in_exactly_one_region(cells: set[tuple[int, int]]) -> None:
    text = {cell: f"v{cell[0]}x{cell[1]}" for cell in cells}
    found = regions(text)
    for a in found:
        for b in found:
            assert a is b or not a.box.meets(b.box)
    for row, column in cells:
        inside = [r for r in found if r.box.meets(Box(row, column, row, column))]
        assert len(inside) == 1
        region = inside[0]
        shown = [*region.titles, *(c for line in region.rows for c in line)]
        assert any(text[(row, column)] in piece for piece in shown)


def test_a_strict_ooxml_workbook_reads_as_transitional() -> None:
    data = _save(_book(Лист=[["Тариф", "Цена"], ["Курьер", 300]]))
    strict = office.strict(data)
    assert b"purl.oclc.org/ooxml/spreadsheetml/main" in b"".join(
        zipfile.ZipFile(io.BytesIO(strict)).read(n) for n in ("xl/workbook.xml",)
    )
    assert _convert(strict).markdown == _convert(data).markdown


def test_scattered_cells_and_a_sheet_wide_table_stay_linear() -> None:
    import time

    # 5,000 cells none touching: one region (no quadratic joining), every cell kept; a
    # defined table claiming the whole sheet is read from its cells, not its area.
    text = {(2 * r + 1, 2 * c + 1): f"v{r}.{c}" for r in range(100) for c in range(50)}
    start = time.perf_counter()
    found = regions(text, tables=[Box(1, 1, 1_048_576, 16_384)])
    assert time.perf_counter() - start < 10
    assert len(found) == 1
    shown = {cell for row in found[0].rows for cell in row} | set(found[0].titles)
    assert set(text.values()) <= shown
    start = time.perf_counter()
    found = regions(text)
    assert time.perf_counter() - start < 10
    assert len(found) == 1 and {c for row in found[0].rows for c in row} >= set(text.values())
