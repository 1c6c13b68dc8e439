"""Spreadsheets → Markdown: one table per .xlsx sheet under the sheet's name; a .csv file
as one table."""

from __future__ import annotations

import csv
import datetime as dt
import io
import itertools
from collections.abc import Iterable, Iterator, Sequence

from narezka.convert.guard import check_office_zip
from narezka.convert.limits import Limits
from narezka.convert.markdown import (
    Converted,
    MarkdownWriter,
    inline_text,
    table_lines,
    table_markdown,
)
from narezka.errors import ConversionLimitError, ConvertError
from narezka.types import SourceLocation

__all__ = ["CSV_MAX_ROWS", "convert_csv", "convert_csv_file", "convert_tsv_file", "convert_xlsx"]

CSV_MAX_ROWS = 1_000_000
"""Rows of a CSV file written as its table; the rows after them are counted and named in
the run's notes (meta ``rows_left_out``), not indexed."""


class _Budget:
    """Characters of cell text (and the separators of the cells the sheets' widths make) a
    workbook may give: its conversion's output limit, checked as the cells are read, so a
    shared string referenced from every cell or a sheet declared 16,384 columns wide is
    stopped before it is built."""

    def __init__(self, size: int, path: str) -> None:
        self.left = Limits.for_size(size).output
        self.path = path

    def spend(self, chars: int) -> None:
        self.left -= chars
        if self.left < 0:
            raise ConversionLimitError(
                self.path,
                f"its cells hold more than {Limits.for_size(0).output:,} characters of text "
                "(a shared-strings or dimension bomb?)",
            )


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


def _trim(rows: Iterable[Sequence[object]], budget: _Budget | None = None) -> list[list[str]]:
    """Rows as text with empty rows dropped and empty trailing columns cut."""
    out = []
    width = 0
    for row in rows:
        cells = [_cell(v) for v in row]
        if not any(c.strip() for c in cells):
            continue
        width = max(width, max(i + 1 for i, c in enumerate(cells) if c.strip()))
        if budget is not None:  # each row is padded to the widest: charge what it will cost
            budget.spend(sum(map(len, cells)) + 3 * width)
        out.append(cells)
    return [r[:width] for r in out]


def convert_xlsx(data: bytes, path: str) -> Converted:
    """Convert a workbook to Markdown: ``# sheet`` then its table, located by sheet name.

    Cells show their last computed values (formulas are not evaluated). Raises
    ``UnsafeFileError`` (zip bomb, DTD) or ``ConvertError`` (not an xlsx, corrupt).
    """
    check_office_zip(data, path)
    import openpyxl

    writer = MarkdownWriter()
    budget = _Budget(len(data), path)
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            for sheet in book.worksheets:
                # The sheet's declared size is not trusted: every row would be padded to
                # it (A1:XFD1048576 is 17 billion cells); rows come as they are stored.
                if hasattr(sheet, "reset_dimensions"):
                    sheet.reset_dimensions()
                rows = _trim(sheet.iter_rows(values_only=True), budget)
                where = SourceLocation(sheet=sheet.title)
                writer.block("# " + inline_text(sheet.title), where)
                if rows:
                    writer.block(table_markdown(rows), where)
        finally:
            book.close()
    except ConversionLimitError:
        raise
    except Exception as exc:  # openpyxl raises KeyError, ValueError, zip and XML errors…
        raise ConvertError(
            path, f"not a readable Excel file ({type(exc).__name__}: {exc})"
        ) from exc
    return writer.result()


def _csv_rows(text: str, dialect: type[csv.Dialect] | csv.Dialect) -> Iterator[list[str]]:
    """The non-empty rows of CSV text, read as they are asked for."""
    for row in csv.reader(io.StringIO(text), dialect):
        if any(c.strip() for c in row):
            yield row


def _text(data: bytes) -> str:
    from narezka.convert.charset import decode_table_text

    text, _ = decode_table_text(data)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def convert_csv_file(data: bytes, path: str) -> Converted:
    """Convert the bytes of a CSV file (its BOM, else UTF-8, else the code page it looks
    like: ``charset.decode_table_text``)."""
    return convert_csv(_text(data), path)


def convert_tsv_file(data: bytes, path: str) -> Converted:
    """Convert the bytes of a tab-separated file: a CSV file whose delimiter is the tab,
    never sniffed (a comma inside a cell must not split it)."""
    return convert_csv(_text(data), path, dialect=csv.excel_tab)


def convert_csv(
    text: str, path: str, *, dialect: type[csv.Dialect] | csv.Dialect | None = None
) -> Converted:
    """Convert CSV text to one Markdown table, in ``dialect`` or, without one, with its
    delimiter sniffed among ``, ; tab |``.

    The rows are read twice, never held: once for the table's width (empty trailing columns
    cut), once to write it line by line; rows past ``CSV_MAX_ROWS`` are counted, not written
    (meta ``rows_left_out``)."""
    if dialect is None:
        try:
            dialect = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
        except csv.Error:
            dialect = csv.excel
    width = count = 0
    try:
        for row in _csv_rows(text, dialect):
            count += 1
            if count <= CSV_MAX_ROWS:
                width = max(width, max(i + 1 for i, c in enumerate(row) if c.strip()))
        rows = itertools.islice(_csv_rows(text, dialect), CSV_MAX_ROWS)
        table = "\n".join(table_lines(rows, width))
    except csv.Error as exc:
        raise ConvertError(path, f"not a readable CSV file ({exc})") from exc
    writer = MarkdownWriter()
    if table:
        writer.block(table, SourceLocation(sheet=""))
    left_out = count - CSV_MAX_ROWS
    return writer.result({"rows_left_out": left_out} if left_out > 0 else None)
