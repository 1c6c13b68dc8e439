"""OpenDocument spreadsheets (.ods) → Markdown through zipfile and lxml: each sheet under its
name, one table per region of its cells (``narezka.convert.sheet_regions``), merged cells
read whole, annotations as metadata. Repeated rows and columns (``number-rows-repeated``,
how a sheet says "the next million rows are empty") are counted, never built, unless they
hold text."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from narezka.convert.guard import ZIP_ERRORS, check_office_zip, parse_xml
from narezka.convert.markdown import Converted, MarkdownWriter
from narezka.convert.ooxml import Notes
from narezka.convert.sheets import sheets_result, write_sheet
from narezka.errors import ConversionLimitError, ConvertError, PasswordProtectedError

__all__ = ["convert_ods", "odf_content"]

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_MAX_REPEAT = 1_000
"""Copies of one cell or row holding text that are written out: a sheet repeats a filled
row a few times; a file repeating one a billion times gets this many."""
_MAX_CELLS = 250_000
"""Filled cells one sheet may hold once its repeats are written out."""


def odf_content(data: bytes, path: str, kind: str) -> Any:
    """The parsed ``content.xml`` of an OpenDocument file. Raises ``PasswordProtectedError``
    for an encrypted one (its manifest lists encryption data) and ``ConvertError`` for a
    file that is none."""
    check_office_zip(data, path, every_member=False)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            manifest = (
                archive.read("META-INF/manifest.xml") if ("META-INF/manifest.xml" in names) else b""
            )
            if b"encryption-data" in manifest:
                raise PasswordProtectedError(
                    path, f"the {kind} file is password-protected (encrypted): not read"
                )
            if "content.xml" not in names:
                raise ConvertError(path, f"not an OpenDocument {kind} (no content.xml)")
            content = archive.read("content.xml")
    except ZIP_ERRORS as exc:
        raise ConvertError(path, "not a readable OpenDocument file (a damaged zip)") from exc
    return parse_xml(content, path, "content.xml", "not a readable OpenDocument file")


def _text(cell: Any) -> str:
    """A cell's paragraphs, without its annotation."""
    parts = []
    for p in cell.iter(f"{_TEXT}p", f"{_TEXT}h"):
        if any(a.tag == f"{_OFFICE}annotation" for a in p.iterancestors()):
            continue
        parts.append(" ".join("".join(p.itertext()).split()))
    return " ".join(t for t in parts if t)


def _repeat(node: Any, name: str) -> int:
    value = node.get(f"{_TABLE}{name}") or "1"
    return max(int(value), 1) if value.isdigit() and len(value) < 11 else 1


class _Sheet:
    """One ``table:table``'s cells by (row, column), merged ranges occupied, comments."""

    def __init__(self, table: Any, path: str) -> None:
        self.path = path
        self.title = table.get(f"{_TABLE}name") or ""
        self.cells: dict[tuple[int, int], str] = {}
        self.occupied: list[tuple[int, int]] = []
        self.comments: dict[tuple[int, int], dict[str, str]] = {}
        row = 1
        for element in table.iter(f"{_TABLE}table-row"):
            if next(element.iterancestors(f"{_TABLE}table")) is not table:
                continue  # a row of a table inside a cell
            repeat = _repeat(element, "number-rows-repeated")
            self._row(element, row, min(repeat, _MAX_REPEAT))
            row += repeat

    def _row(self, element: Any, row: int, copies: int) -> None:
        column = 1
        for cell in element:
            if cell.tag not in (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell"):
                continue
            repeat = _repeat(cell, "number-columns-repeated")
            text = _text(cell)
            if text:
                if len(self.cells) + copies * min(repeat, _MAX_REPEAT) > _MAX_CELLS:
                    raise ConversionLimitError(
                        self.path, f"sheet {self.title!r} repeats its cells past {_MAX_CELLS:,}"
                    )
                for r in range(row, row + copies):
                    for c in range(column, column + min(repeat, _MAX_REPEAT)):
                        self.cells[(r, c)] = text
            self._merged(cell, row, column)
            self._comment(cell, row, column)
            column += repeat

    def _merged(self, cell: Any, row: int, column: int) -> None:
        rows = min(_repeat(cell, "number-rows-spanned"), _MAX_REPEAT)
        columns = min(_repeat(cell, "number-columns-spanned"), _MAX_REPEAT)
        value = self.cells.get((row, column), "")
        for r in range(row, row + rows):
            for c in range(column, column + columns):
                if (r, c) == (row, column):
                    continue
                if c == column and value:  # down the first column: each row reads whole
                    self.cells[(r, c)] = value
                else:
                    self.occupied.append((r, c))

    def _comment(self, cell: Any, row: int, column: int) -> None:
        note = cell.find(f"{_OFFICE}annotation")
        if note is None:
            return
        text = " ".join(" ".join("".join(p.itertext()).split()) for p in note.iter(f"{_TEXT}p"))
        creator = note.find(f"{_DC}creator")
        if text.strip():
            self.comments[(row, column)] = {
                "author": (creator.text or "") if creator is not None else "",
                "text": text.strip(),
            }


def convert_ods(data: bytes, path: str) -> Converted:
    """Convert an OpenDocument spreadsheet to Markdown, located by sheet and cell range.

    Cells show their displayed text. Raises ``UnsafeFileError`` (zip bomb, DTD),
    ``PasswordProtectedError`` or ``ConvertError``; a sheet that cannot be read is skipped
    with a note."""
    root = odf_content(data, path, "spreadsheet")
    writer = MarkdownWriter()
    notes = Notes()
    comments: list[dict[str, Any]] = []
    for table in root.iter(f"{_TABLE}table"):
        if any(a.tag == f"{_TABLE}table" for a in table.iterancestors()):
            continue  # a table inside a cell is that cell's text
        try:
            sheet = _Sheet(table, path)
            comments += write_sheet(
                writer, sheet.title, sheet.cells, sheet.occupied, comments=sheet.comments
            )
        except (ConvertError, MemoryError, RecursionError):  # a limit stops the file
            raise
        except Exception:  # one damaged sheet must not cost the workbook
            notes.skip(f"sheet {table.get(f'{_TABLE}name') or ''!r}", "sheet")
    return sheets_result(writer, notes, comments, "spreadsheet")
