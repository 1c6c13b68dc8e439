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
    [comment] = result.meta["comments"]
    assert {k: comment[k] for k in ("author", "text", "on")} == {
        "author": "Анна",
        "text": "Цена с НДС",
        "on": "Лист!B2",
    }
    start, end = comment["at"]  # the commented cell's row of the table
    assert result.markdown[start:end] == "| Курьер | 300 |"


def _where_of_chunks(data: bytes, name: str, size: int = 300) -> list[tuple[str, str]]:
    """(where, text) of each chunk of a converted file, as the index records them."""
    from narezka import chunk_text
    from narezka.convert import locate
    from narezka.formats import place, where

    result = convert(data, name[name.rindex(".") :], name)
    out = []
    for chunk in chunk_text(result.markdown, "headings", size=size, unit="chars"):
        found = locate(result.provenance, chunk.start, chunk.end)
        assert found is not None, f"chunk {chunk.index} has no place"
        out.append((where(name, place(*found), chunk.section), chunk.text))
    return out


def test_a_hit_names_its_sheet_and_the_cells_its_text_covers() -> None:
    rows = [*STANLEY, [], ["Тариф", "Цена"], ["Курьер", 300], ["Почта", 200]]
    book = _book(Лист=rows)
    book["Лист"].insert_cols(1)  # the tables start in column B
    chunks = _where_of_chunks(_save(book), "b.xlsx", size=2000)
    assert chunks == [(r"Лист!B1:D9", chunks[0][1])]
    small = _where_of_chunks(_save(book), "b.xlsx", size=120)
    tariffs = [w for w, text in small if "| Тариф | Цена |" in text]
    assert tariffs and tariffs[0].endswith("!B7:C9")


def test_each_piece_of_a_split_table_names_its_own_rows() -> None:
    rows = [STANLEY[0], STANLEY[1], *([f"Команда {i}", "Москва", i] for i in range(60))]
    chunks = _where_of_chunks(_save(_book(Кубки=rows)), "b.xlsx")
    assert len(chunks) > 3
    for where, text in chunks:
        sheet, _, cells = where.partition("!")
        assert sheet == "Кубки", where
        first, _, last = cells.partition(":")
        rows_named = range(int(first[1:]), int((last or first)[1:]) + 1)
        # Row n of the sheet holds "Команда n-3": every team in the text is in the range
        # named, and the range is no wider than the text.
        teams = [int(t.split(" |")[0]) for t in text.split("| Команда ")[1:] if t[0].isdigit()]
        assert [n - 3 for n in rows_named if n >= 3] == teams, (where, text)
        assert first[0] == "A" and (last or first)[0] == "C"


def test_a_sheet_name_with_a_space_is_quoted_as_excel_quotes_it() -> None:
    from narezka.formats import sheet_ref

    chunks = _where_of_chunks(
        _save(_book(**{"Q1 plan": [["Статья", "Сумма"], ["Аренда", 5]]})), "b.xlsx"
    )
    assert [w for w, _ in chunks] == ["'Q1 plan'!A1:B2"]
    assert [sheet_ref(n) for n in ("Budget", "Прайс", "2024", "A1", "it's")] == [
        "Budget",
        "Прайс",
        "'2024'",
        "'A1'",
        "'it''s'",
    ]


def test_a_csv_hit_names_its_cells_by_the_rows_a_spreadsheet_shows() -> None:
    # Row 2 is empty: the next record is row 3, as a spreadsheet opens the file.
    data = "Город,Цена\n\n" + "".join(f"Город {i},{i}\n" for i in range(40))
    chunks = _where_of_chunks(data.encode(), "prices.csv", size=200)
    assert len(chunks) > 2
    assert chunks[0][0].startswith("A1:B")
    last_row = int(chunks[-1][0].rsplit(":B", 1)[1])
    assert last_row == 42 and all(":" in w and "!" not in w for w, _ in chunks)


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


def test_a_streamed_workbook_keeps_its_cell_comments_as_the_loaded_one_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openpyxl.comments import Comment

    book = _book(Тарифы=[["Тариф", "Цена"], ["Курьер", 300], ["Почта", 200]], Пусто=[["x"]])
    book["Тарифы"]["B3"].comment = Comment("Без НДС", "Борис")
    book["Пусто"]["A1"].comment = Comment("Проверить", "Анна")
    data = _save(book)
    loaded = _convert(data)
    monkeypatch.setattr("narezka.convert.sheets._FULL_LOAD_XML", 0)
    streamed = _convert(data)
    assert streamed.markdown == loaded.markdown
    assert "НДС" not in streamed.markdown and "Проверить" not in streamed.markdown
    assert streamed.meta["comments"] == loaded.meta["comments"]
    price, empty = streamed.meta["comments"]
    assert (price["author"], price["text"], price["on"]) == ("Борис", "Без НДС", "Тарифы!B3")
    assert streamed.markdown[slice(*price["at"])] == "| Почта | 200 |"
    assert (empty["author"], empty["on"]) == ("Анна", "Пусто!A1")


def test_an_unreadable_sheet_is_skipped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    from narezka.convert import sheets

    real = sheets.write_sheet

    def flaky(writer: Any, title: str, *rest: Any) -> list[dict[str, Any]]:
        if title == "Битый":
            raise KeyError("openpyxl internals")
        return real(writer, title, *rest)

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
