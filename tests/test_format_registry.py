"""The registry of formats (``narezka.formats``) is the one list every stage reads: each row's
converter exists, its suffixes are read by default, limited in size, named in the run's
summary when left out; and the rows added with it (.tsv, .xlsm) convert."""

from __future__ import annotations

import importlib
import io
import sys
import zipfile
from pathlib import Path

import pytest

import narezka.defaults as defaults
from narezka.convert import SUFFIXES, convert
from narezka.discover import read_all
from narezka.discover.kinds import (
    DOCUMENT_SUFFIXES,
    READABLE_SUFFIXES,
    TEXT_CONVERTED_SUFFIXES,
    unread_type,
)
from narezka.errors import ConvertError
from narezka.formats import (
    CONVERTED_SUFFIXES,
    FORMATS,
    MARKDOWN_GLOBS,
    PLACE_KEYS,
    TOP_OF_PAGE,
    format_for,
    place,
    where,
)
from narezka.types import SourceLocation

sys.path.insert(0, str(Path(__file__).resolve().parent / "convert"))
import convert_samples as samples


@pytest.mark.parametrize("row", FORMATS, ids=lambda f: f.name)
def test_every_row_names_a_converter_that_exists(row: object) -> None:
    from narezka.formats import Format

    assert isinstance(row, Format)
    module, _, function = row.converter.partition(":")
    assert callable(getattr(importlib.import_module(f"narezka.convert.{module}"), function))
    assert set(row.keys) <= set(PLACE_KEYS)
    assert all(s.startswith(".") and s == s.lower() for s in row.suffixes)


def test_a_suffix_belongs_to_one_row_and_every_list_is_made_from_the_rows() -> None:
    suffixes = [s for row in FORMATS for s in row.suffixes]
    assert len(suffixes) == len(set(suffixes))
    assert set(suffixes) == CONVERTED_SUFFIXES == SUFFIXES
    assert CONVERTED_SUFFIXES <= READABLE_SUFFIXES & DOCUMENT_SUFFIXES
    read_by_default = {s for row in FORMATS if row.default for s in row.suffixes}
    assert {f"**/*{s}" for s in suffixes} & set(MARKDOWN_GLOBS) == {
        f"**/*{s}" for s in read_by_default
    }
    assert {".png", ".jpg", ".tif"}.isdisjoint(read_by_default)  # OCR only when asked
    assert set(suffixes) <= set(defaults.MAX_FILE_MB)
    assert {".html", ".htm", ".csv", ".tsv", ".eml"} == TEXT_CONVERTED_SUFFIXES
    assert unread_type("old.xls") == ".xls" and unread_type("book.xlsm") is None


@pytest.mark.parametrize(
    ("name", "found"),
    [("a/B.PDF", "PDF"), ("x.xlsm", "Excel"), ("t.tsv", "TSV"), ("n.md", None), ("a.b/c", None)],
)
def test_format_for_reads_the_suffix_of_the_name(name: str, found: str | None) -> None:
    row = format_for(name)
    assert (row.name if row else None) == found


def test_place_spells_the_keys_once_and_a_page_range_runs_first_to_last() -> None:
    assert place(SourceLocation(page=3), SourceLocation(page=5)) == {
        "page_start": 3,
        "page_end": 5,
    }
    assert place(SourceLocation(sheet="Прайс"), SourceLocation(sheet="Итог")) == {"sheet": "Прайс"}
    every = place(SourceLocation(1, 2, "s", "e"), SourceLocation(1, 2, "s", "e"))
    assert tuple(every) == PLACE_KEYS
    assert where("a.pdf", every, ()) == "p. 1" and where("a.pptx", every, ()) == "slide 2"


def test_a_tsv_file_is_split_at_tabs_only() -> None:
    data = "Товар\tЦена, ₽\nЧайник, белый\t1 200\n".encode()
    result = convert(data, ".tsv", "prices.tsv")
    assert result.markdown.splitlines()[:3] == [
        "| Товар | Цена, ₽ |",
        "|---|---|",
        "| Чайник, белый | 1 200 |",
    ]


def test_a_tsv_file_in_the_windows_code_page_is_read() -> None:
    result = convert("Товар\tЦена\nЧай\t300\n".encode("cp1251"), ".tsv", "old.tsv")
    assert "| Чай | 300 |" in result.markdown


def test_an_empty_tsv_file_is_named() -> None:
    with pytest.raises(ConvertError, match=r"empty\.tsv: file is empty"):
        convert(b"  \n", ".tsv", "empty.tsv")


def _xlsm(with_macros: bool = True) -> bytes:
    """A macro-enabled workbook: the xlsx sample under the macro-enabled content type,
    with a VBA project part beside it."""
    source = zipfile.ZipFile(io.BytesIO(samples.make_xlsx()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "[Content_Types].xml":
                data = data.replace(
                    b"openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                    b"ms-excel.sheet.macroEnabled.main+xml",
                )
                assert b"macroEnabled" in data
            book.writestr(item, data)
        if with_macros:
            book.writestr("xl/vbaProject.bin", b'Attribute VB_Name = "Module1"\nShell "calc"')
    return out.getvalue()


def test_an_xlsm_workbook_is_read_as_xlsx_and_its_macros_are_not() -> None:
    plain = convert(samples.make_xlsx(), ".xlsx", "prices.xlsx")
    macro = convert(_xlsm(), ".xlsm", "prices.xlsm")
    assert macro.markdown == plain.markdown and "Shell" not in macro.markdown
    assert {s.where.sheet for s in macro.provenance} == {s.where.sheet for s in plain.provenance}


def test_a_broken_xlsm_is_named_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "good.xlsm").write_bytes(_xlsm())
    (tmp_path / "bad.xlsm").write_bytes(b"PK\x03\x04 truncated")
    (tmp_path / "good.tsv").write_text("a\tb\n1\t2\n", encoding="utf-8")
    docs, errors, _ = read_all([tmp_path])
    assert sorted(d.source for d in docs) == ["good.tsv", "good.xlsm"]
    assert [Path(e.path).name for e in errors] == ["bad.xlsm"]
    assert isinstance(errors[0], ConvertError)


def test_an_unknown_suffix_is_a_clear_error() -> None:
    with pytest.raises(ConvertError, match=r"notes\.rtf: no converter for '\.rtf' files"):
        convert(b"{\\rtf1}", ".rtf", "notes.rtf")


SAMPLE_PLACE = {"page_start": 2, "page_end": 3, "slide": 4, "sheet": "Прайс", "element": "p7"}


def test_a_csv_or_tsv_hit_says_its_cells_without_a_sheet_name() -> None:
    from narezka.formats import where

    # One unnamed sheet: its cells alone; a workbook's sheet is named before its cells.
    for name in ("prices.csv", "prices.tsv"):
        assert where(name, {"sheet": "", "element": "A2:F41"}, ()) == "A2:F41"
        assert where(name, {"sheet": ""}, ()) == ""
    assert where("b.xlsx", {"sheet": "Q1 plan", "element": "B3:F40"}, ()) == "'Q1 plan'!B3:F40"


@pytest.mark.parametrize("row", FORMATS, ids=lambda f: f.name)
def test_every_row_says_where_from_its_own_keys(row: object) -> None:
    from narezka.formats import Format

    assert isinstance(row, Format)
    own = {key: SAMPLE_PLACE[key] for key in row.keys}
    assert row.where(own, ("Доставка",)), f"{row.name} hits say nothing of where they lie"
    # What it says comes from its own keys: without them only the heading path is left (a
    # web page's text before its first heading and id is at the page's top, and says so).
    assert row.where({}, ()) == (TOP_OF_PAGE if row.name == "HTML" else "")
