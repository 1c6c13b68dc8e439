"""Spreadsheets → Markdown: each .xlsx/.xlsm sheet under its name, one table per region of
its cells (``narezka.convert.sheet_regions``); a .csv file as one table."""

from __future__ import annotations

import array
import csv
import datetime as dt
import io
import itertools
import posixpath
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from narezka.convert.guard import check_office_zip, parse_xml
from narezka.convert.limits import output_chars
from narezka.convert.markdown import (
    Converted,
    MarkdownWriter,
    escape_line,
    inline_text,
    table_lines,
)
from narezka.convert.ooxml import Notes, open_package
from narezka.convert.sheet_regions import Box, cell_name, regions
from narezka.errors import ConversionLimitError, ConvertError
from narezka.formats import sheet_ref
from narezka.types import SourceLocation

__all__ = [
    "CSV_MAX_ROWS",
    "convert_csv",
    "convert_csv_file",
    "convert_tsv_file",
    "convert_xlsx",
    "sheets_result",
    "write_sheet",
]

CSV_MAX_ROWS = 1_000_000
"""Rows of a CSV file written as its table; the rows after them are counted and named in
the run's notes (meta ``rows_left_out``), not indexed."""

ROW_SPANS = 10_000
"""Provenance spans one table is given at most: a span per row up to this many rows, then a
span per run of rows, so a million-row CSV file's map stays small (a hit's cells then name
the runs its text meets, a few rows wider than its own)."""


class _Budget:
    """Characters of cell text (and the separators of the cells the sheets' widths make) a
    workbook may give: its conversion's output limit, checked as the cells are read, so a
    shared string referenced from every cell or a sheet declared 16,384 columns wide is
    stopped before it is built."""

    def __init__(self, size: int, path: str) -> None:
        self.left = output_chars(size)
        self.path = path

    def spend(self, chars: int) -> None:
        self.left -= chars
        if self.left < 0:
            raise ConversionLimitError(
                self.path,
                f"its cells hold more than {output_chars(0):,} characters of text "
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


_FULL_LOAD_XML = 4 * 1024 * 1024
"""Worksheet XML (uncompressed) under which a workbook is loaded whole, with its merged
cells, comments and defined tables; a bigger one is streamed (its cells' values, and its
comments read from their own small part, in far less memory)."""


def _sheet_xml_size(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sum(
            i.file_size for i in archive.infolist() if i.filename.startswith("xl/worksheets/")
        )


def _streamed_cells(sheet: Any, budget: _Budget) -> dict[tuple[int, int], str]:
    """A streamed sheet's non-empty cells by (row, column)."""
    # The sheet's declared size is not trusted: every row would be padded to it
    # (A1:XFD1048576 is 17 billion cells); rows come as they are stored.
    if hasattr(sheet, "reset_dimensions"):
        sheet.reset_dimensions()
    cells: dict[tuple[int, int], str] = {}
    for row in sheet.iter_rows():
        for cell in row:
            text = _cell(getattr(cell, "value", None))
            if text.strip():
                budget.spend(len(text) + 3)
                cells[(cell.row, cell.column)] = text
    return cells


_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"


_THREADED = "{http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments}"
_OFFICE_RELS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"

Comment = Mapping[str, str]
"""A cell comment's ``author`` and ``text``."""
CellComments = Mapping[tuple[int, int], Comment | Sequence[Comment]]
"""The comments of a sheet's cells by (row, column): a note, or a thread's comments in
their order (the first, then its replies)."""


def _related_part(archive: zipfile.ZipFile, part: str, kind: str, path: str) -> str | None:
    """The name of the part that ``part``'s relationships name with a type ending in
    ``/kind`` (``comments``, ``threadedComment``, ``person``), if any."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", name + ".rels")
    if rels not in archive.namelist():
        return None
    root = parse_xml(archive.read(rels), path, rels, "not a readable relationships part")
    for rel in root.iter(_RELS + "Relationship"):
        target = rel.get("Target") or ""
        if (rel.get("Type") or "").endswith("/" + kind) and rel.get("TargetMode") != "External":
            return _target(folder, target)
    return None


def _target(folder: str, target: str) -> str:
    """A relationship's target as a part name: from the package's root when it starts with
    ``/`` (openpyxl writes them so), else from the folder of the part it is related to."""
    if target.startswith("/"):
        return target[1:]
    return posixpath.normpath(posixpath.join(folder, target))


def _sheet_parts(archive: zipfile.ZipFile, path: str) -> dict[str, str]:
    """Each sheet's part by its title, from ``xl/workbook.xml`` and its relationships."""
    book = "xl/workbook.xml"
    rels = "xl/_rels/workbook.xml.rels"
    names = archive.namelist()
    if book not in names or rels not in names:
        return {}
    targets = {
        rel.get("Id"): _target("xl", rel.get("Target") or "")
        for rel in parse_xml(
            archive.read(rels), path, rels, "not a readable relationships part"
        ).iter(_RELS + "Relationship")
    }
    root = parse_xml(archive.read(book), path, book, "not a readable workbook part")
    return {
        sheet.get("name") or "": targets.get(sheet.get(_OFFICE_RELS + "id"), "")
        for sheet in root.iter(_MAIN + "sheet")
    }


def _persons(archive: zipfile.ZipFile, path: str) -> dict[str, str]:
    """Threaded comments' authors (``xl/persons/person.xml``): display name by person id."""
    part = _related_part(archive, "xl/workbook.xml", "person", path)
    if part is None or part not in archive.namelist():
        return {}
    root = parse_xml(archive.read(part), path, part, "not a readable persons part")
    return {p.get("id") or "": p.get("displayName") or "" for p in root.iter(_THREADED + "person")}


def _threaded_comments(
    archive: zipfile.ZipFile, worksheet: str, persons: Mapping[str, str], path: str
) -> dict[tuple[int, int], list[Comment]]:
    """A sheet's threaded comments (modern Excel's, ``xl/threadedComments/*.xml``) by cell,
    each thread in its order. Excel also writes each thread as a legacy note for older
    readers (``[Threaded comment] Your version of Excel…``): the thread stands for it."""
    from openpyxl.utils.cell import coordinate_to_tuple

    part = _related_part(archive, worksheet, "threadedComment", path)
    if part is None or part not in archive.namelist():
        return {}
    root = parse_xml(archive.read(part), path, part, "not a readable threaded comments part")
    found: dict[tuple[int, int], list[Comment]] = {}
    for comment in root.iter(_THREADED + "threadedComment"):
        text = " ".join("".join(t.text or "" for t in comment.iter(_THREADED + "text")).split())
        try:
            cell = coordinate_to_tuple(comment.get("ref") or "")
        except (ValueError, TypeError):  # a comment on no cell: nothing to anchor it to
            continue
        if text:
            author = persons.get(comment.get("personId") or "", "")
            found.setdefault(cell, []).append({"author": author, "text": text})
    return found


def _workbook_threads(
    data: bytes, path: str, budget: _Budget, notes: Notes
) -> dict[str, dict[tuple[int, int], list[Comment]]]:
    """Each sheet's threaded comments by its title. A threaded comments part that cannot be
    read costs its sheet's threads (named in ``notes``), not the workbook."""
    found: dict[str, dict[tuple[int, int], list[Comment]]] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        try:
            persons = _persons(archive, path)
            parts = _sheet_parts(archive, path)
        except ConvertError:
            notes.skip("threaded comments", "part")
            return found
        for title, part in parts.items():
            try:
                threads = _threaded_comments(archive, part, persons, path)
            except ConvertError:
                notes.skip(f"sheet {title!r}, threaded comments", "part")
                continue
            budget.spend(sum(len(c["text"]) for thread in threads.values() for c in thread))
            if threads:
                found[title] = threads
    return found


def _streamed_comments(
    data: bytes, sheet: Any, path: str, budget: _Budget
) -> dict[tuple[int, int], dict[str, str]]:
    """A streamed sheet's cell comments (author, text) by (row, column), read from its
    comments part (``xl/comments1.xml``: small beside the sheet) as the loaded path has them."""
    from openpyxl.utils.cell import coordinate_to_tuple

    worksheet = str(getattr(sheet, "_worksheet_path", "") or "")
    found: dict[tuple[int, int], dict[str, str]] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        part = _related_part(archive, worksheet, "comments", path) if worksheet else None
        if part is None or part not in archive.namelist():
            return found
        root = parse_xml(archive.read(part), path, part, "not a readable comments part")
    authors = [a.text or "" for a in root.iter(_MAIN + "author")]
    for comment in root.iter(_MAIN + "comment"):
        text = " ".join("".join(t.text or "" for t in comment.iter(_MAIN + "t")).split())
        number = comment.get("authorId") or ""
        try:
            cell = coordinate_to_tuple(comment.get("ref") or "")
        except (ValueError, TypeError):  # a comment on no cell: nothing to anchor it to
            continue
        if text:
            budget.spend(len(text))
            ok = number.isdigit() and int(number) < len(authors)
            found[cell] = {"author": authors[int(number)] if ok else "", "text": text}
    return found


class _Loaded:
    """A loaded sheet's cells, merged ranges, defined tables and comments."""

    def __init__(self, sheet: Any, budget: _Budget) -> None:
        from openpyxl.utils.cell import range_boundaries

        self.cells: dict[tuple[int, int], str] = {}
        self.occupied: list[tuple[int, int]] = []
        self.tables: list[Box] = []
        self.comments: dict[tuple[int, int], dict[str, str]] = {}
        # Only the cells the file stores: ``iter_rows`` would make every cell of the
        # sheet's extent, and one cell at XFD1048576 makes that extent 17 billion cells.
        for (row, column), cell in sorted(getattr(sheet, "_cells", {}).items()):
            text = _cell(cell.value)
            if text.strip():
                budget.spend(len(text) + 3)
                self.cells[(row, column)] = text
            if cell.comment is not None and cell.comment.text.strip():
                self.comments[(row, column)] = {
                    "author": cell.comment.author or "",
                    "text": " ".join(cell.comment.text.split()),
                }
        for merged in sheet.merged_cells.ranges:
            self._merge(merged.min_row, merged.min_col, merged.max_row, merged.max_col)
        for table in sheet.tables.values():
            bounds = range_boundaries(table.ref)
            if None not in bounds:
                left, top, right, bottom = (int(b) for b in bounds if b is not None)
                self.tables.append(Box(top, left, bottom, right))

    def _merge(self, top: int, left: int, bottom: int, right: int) -> None:
        """A merged range's text down its first column (each row reads whole); the rest of
        the range is occupied, so the range keeps its region together."""
        if (bottom - top + 1) * (right - left + 1) > 100_000:  # a range no table has
            return
        value = self.cells.get((top, left), "")
        for row in range(top, bottom + 1):
            for column in range(left, right + 1):
                if column == left and value:
                    self.cells[(row, column)] = value
                else:
                    self.occupied.append((row, column))


def table_runs(rows: Iterable[Sequence[str]], width: int, count: int) -> list[tuple[str, int, int]]:
    """The lines of a GFM table of ``count`` rows (``table_lines``) in runs of rows: ``(text,
    first, last)``, 0-based row indices (the header 0, its separator line with it). A row a
    run up to ``ROW_SPANS`` rows, so that a chunk of a split table names its own rows."""
    step = max(1, -(-count // ROW_SPANS))
    runs: list[tuple[str, int, int]] = []
    lines: list[str] = []
    group = 0
    for number, line in enumerate(table_lines(rows, width)):
        row = max(number - 1, 0)
        if row // step != group and lines:
            runs.append(("\n".join(lines) + "\n", group * step, group * step + step - 1))
            lines = []
        group = row // step
        lines.append(line)
    if lines:
        runs.append(("\n".join(lines), group * step, max(count - 1, group * step)))
    return runs


def write_sheet(
    writer: MarkdownWriter,
    title: str,
    cells: Mapping[tuple[int, int], str],
    occupied: Iterable[tuple[int, int]] = (),
    tables: Iterable[Box] = (),
    comments: CellComments | None = None,
) -> list[dict[str, Any]]:
    """``# title``, then each region of the sheet's ``cells``: its title lines, its table,
    each row located by sheet and cells (``A5:D5``). ``occupied`` and ``tables`` as
    ``regions`` takes them.

    ``comments`` are the cells' comments (``CellComments``); they are returned anchored, a
    thread's one after another: each with ``on``, its cell (``Budget!B3``), and ``at``, the
    Markdown span of its cell's row (a comment is its chunk's metadata, never its text)."""
    found = regions(cells, occupied, tables)
    top = next((r.box.row((*r.title_rows, *r.row_numbers)[0]) for r in found), None)
    # The sheet's heading belongs to its first row: a hit from the top of the sheet names
    # the cells it covers from there.
    writer.block("# " + inline_text(title), SourceLocation(sheet=title, element=top))
    rows_at: dict[int, tuple[int, int]] = {}  # a sheet row -> its span of the Markdown
    for region in found:
        box = region.box
        for line, number in zip(region.titles, region.title_rows, strict=True):
            writer.block(
                escape_line(inline_text(line)), SourceLocation(sheet=title, element=box.row(number))
            )
            text_end = writer.length
            rows_at[number] = (text_end - len(escape_line(inline_text(line))), text_end)
        if not region.rows:
            continue
        numbers = region.row_numbers
        runs = table_runs(region.rows, max(map(len, region.rows)), len(numbers))
        writer.pieces(
            [
                (
                    text,
                    SourceLocation(
                        sheet=title, element=Box(numbers[a], box.left, numbers[b], box.right).ref()
                    ),
                )
                for text, a, b in runs
            ]
        )
        at = writer.length - sum(len(text) for text, _, _ in runs)
        for text, a, b in runs:
            for number in numbers[a : b + 1]:
                rows_at[number] = (at, at + len(text.rstrip("\n")))
            at += len(text)
    anchored = []
    for (row, column), notes in sorted((comments or {}).items()):
        span = rows_at.get(row)
        if span is None:  # a comment on an empty cell outside every table: no chunk
            continue
        on = f"{sheet_ref(title)}!{cell_name(row, column)}"
        for comment in (notes,) if isinstance(notes, Mapping) else notes:
            anchored.append({**comment, "on": on, "at": list(span)})
    return anchored


def sheets_result(
    writer: MarkdownWriter, notes: Notes, comments: list[dict[str, Any]], kind: str
) -> Converted:
    """A spreadsheet's Markdown, its cells' comments and its notes, with a note where no
    sheet of the ``kind`` (``workbook``, ``spreadsheet``) holds a value: headings alone."""
    meta: dict[str, Any] = {"comments": comments} if comments else {}
    if all(line.startswith("# ") or not line for line in writer.result().markdown.splitlines()):
        notes.add(f"no text: the {kind}'s sheets hold no cell values")
    if notes:
        meta["notes"] = notes.lines()
    return writer.result(meta)


def convert_xlsx(data: bytes, path: str) -> Converted:
    """Convert a workbook (.xlsx, or .xlsm: its macros are never run nor read) to Markdown:
    ``# sheet``, then each of its tables under its title lines, located by sheet and range.

    Cells show their last computed values (formulas are not evaluated). Raises
    ``UnsafeFileError`` (zip bomb, DTD), ``PasswordProtectedError`` (encrypted) or
    ``ConvertError`` (not a workbook). A sheet that cannot be read is skipped with a note.
    """
    data = open_package(data, path, "Excel")
    check_office_zip(data, path)
    import openpyxl

    writer = MarkdownWriter()
    budget = _Budget(len(data), path)
    notes = Notes()
    comments: list[dict[str, Any]] = []
    full = _sheet_xml_size(data) <= _FULL_LOAD_XML
    threads = _workbook_threads(data, path, budget, notes)
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=not full, data_only=True)
    except Exception as exc:  # openpyxl raises KeyError, ValueError, zip and XML errors…
        raise ConvertError(path, "not a readable Excel file (no workbook it can open)") from exc
    try:
        for sheet in book.worksheets:
            try:
                if full:
                    loaded = _Loaded(sheet, budget)
                    comments += write_sheet(
                        writer,
                        sheet.title,
                        loaded.cells,
                        loaded.occupied,
                        loaded.tables,
                        {**loaded.comments, **threads.get(sheet.title, {})},
                    )
                else:
                    cells = _streamed_cells(sheet, budget)
                    notes_of: dict[tuple[int, int], Comment | Sequence[Comment]] = {
                        **_streamed_comments(data, sheet, path, budget),
                        **threads.get(sheet.title, {}),
                    }
                    comments += write_sheet(writer, sheet.title, cells, (), (), notes_of)
            except (ConversionLimitError, MemoryError, RecursionError):
                raise
            except Exception:  # one damaged sheet must not cost the workbook
                notes.skip(f"sheet {sheet.title!r}", "sheet")
    finally:
        book.close()
    return sheets_result(writer, notes, comments, "workbook")


def _csv_rows(
    text: str, dialect: type[csv.Dialect] | csv.Dialect
) -> Iterator[tuple[int, list[str]]]:
    """The non-empty rows of CSV text with their row numbers (a record a row, from 1, the
    empty ones counted: the row a spreadsheet shows it in), read as they are asked for."""
    for number, row in enumerate(csv.reader(io.StringIO(text), dialect), 1):
        if any(c.strip() for c in row):
            yield number, row


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
    numbers = array.array("q")  # each written row's number (8 bytes a row, not 36)
    try:
        for number, row in _csv_rows(text, dialect):
            count += 1
            if count <= CSV_MAX_ROWS:
                width = max(width, max(i + 1 for i, c in enumerate(row) if c.strip()))
                numbers.append(number)
        rows = (row for _, row in itertools.islice(_csv_rows(text, dialect), CSV_MAX_ROWS))
        runs = table_runs(rows, width, len(numbers))
    except csv.Error as exc:
        raise ConvertError(path, f"not a readable CSV file ({exc})") from exc
    writer = MarkdownWriter()
    # One unnamed sheet: each run of rows located by its cells (``A2:F2``).
    writer.pieces(
        [
            (text, SourceLocation(sheet="", element=Box(numbers[a], 1, numbers[b], width).ref()))
            for text, a, b in runs
        ]
    )
    left_out = count - CSV_MAX_ROWS
    return writer.result({"rows_left_out": left_out} if left_out > 0 else None)
