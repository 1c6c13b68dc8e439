"""Spreadsheets → Markdown: one table per .xlsx sheet under the sheet's name; a .csv file
as one table."""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Sequence

from narezka.convert.guard import check_office_zip
from narezka.convert.markdown import Converted, MarkdownWriter, inline_text, table_markdown
from narezka.errors import ConvertError
from narezka.types import SourceLocation

__all__ = ["convert_csv", "convert_xlsx"]


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _trim(rows: Iterable[Sequence[object]]) -> list[list[str]]:
    """Rows as text with empty rows dropped and empty trailing columns cut."""
    out = [[_cell(v) for v in row] for row in rows]
    out = [r for r in out if any(c.strip() for c in r)]
    width = max((i + 1 for r in out for i, c in enumerate(r) if c.strip()), default=0)
    return [r[:width] for r in out]


def convert_xlsx(data: bytes, path: str) -> Converted:
    """Convert a workbook to Markdown: ``# sheet`` then its table, located by sheet name.

    Cells show their last computed values (formulas are not evaluated). Raises
    ``UnsafeFileError`` (zip bomb, DTD) or ``ConvertError`` (not an xlsx, corrupt).
    """
    check_office_zip(data, path)
    import openpyxl

    writer = MarkdownWriter()
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            for sheet in book.worksheets:
                rows = _trim(sheet.iter_rows(values_only=True))
                where = SourceLocation(sheet=sheet.title)
                writer.block("# " + inline_text(sheet.title), where)
                if rows:
                    writer.block(table_markdown(rows), where)
        finally:
            book.close()
    except Exception as exc:  # openpyxl raises KeyError, ValueError, zip and XML errors…
        raise ConvertError(
            path, f"not a readable Excel file ({type(exc).__name__}: {exc})"
        ) from exc
    return writer.result()


def convert_csv(text: str, path: str) -> Converted:
    """Convert CSV text (its delimiter sniffed among ``, ; tab |``) to one Markdown table."""
    sample = text[:8192]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        rows = _trim(csv.reader(io.StringIO(text), dialect))
    except csv.Error as exc:
        raise ConvertError(path, f"not a readable CSV file ({exc})") from exc
    writer = MarkdownWriter()
    if rows:
        writer.block(table_markdown(rows), SourceLocation(sheet=""))
    return writer.result()
