"""OpenDocument text (.odt) → Markdown through zipfile and lxml: headings by outline level,
lists (numbered or not, nested), tables, code by paragraph style, links, footnotes."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from typing import Any

from narezka.convert.guard import check_office_zip, parse_xml
from narezka.convert.markdown import (
    CodeRun,
    Converted,
    MarkdownWriter,
    escape_line,
    link,
    table_markdown,
)
from narezka.errors import ConvertError
from narezka.types import SourceLocation

__all__ = ["convert_odt"]

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_XLINK = "{http://www.w3.org/1999/xlink}"
_CODE_STYLE = re.compile(r"preformatted|source.?code|source.?text|code|verbatim", re.IGNORECASE)
_SKIP = frozenset(
    f"{_TEXT}{name}"
    for name in "table-of-content alphabetical-index bibliography tracked-changes "
    "note-citation sequence-decls variable-decls user-field-decls".split()
)


def _xml(archive: zipfile.ZipFile, name: str, path: str) -> Any:
    try:
        data = archive.read(name)
    except KeyError:
        return None
    return parse_xml(data, path, name, "not a readable OpenDocument file")


class _Styles:
    """Paragraph styles' parents and display names, and which list styles number."""

    def __init__(self, *roots: Any) -> None:
        self.parent: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.numbered: dict[tuple[str, int], bool] = {}
        for root in roots:
            if root is None:
                continue
            for style in root.iter(f"{_STYLE}style"):
                name = style.get(f"{_STYLE}name") or ""
                self.parent[name] = style.get(f"{_STYLE}parent-style-name") or ""
                self.names[name] = style.get(f"{_STYLE}display-name") or name
            for lst in root.iter(f"{_TEXT}list-style"):
                name = lst.get(f"{_STYLE}name") or ""
                for level in lst:
                    depth = int(level.get(f"{_TEXT}level") or 1)
                    self.numbered[(name, depth)] = level.tag == f"{_TEXT}list-level-style-number"

    def is_title(self, style: str) -> bool:
        for _ in range(5):
            if not style:
                return False
            if self.names.get(style, style).lower() == "title":
                return True
            style = self.parent.get(style, "")
        return False

    def is_code(self, style: str) -> bool:
        for _ in range(5):  # an automatic style ("P3") is based on a named one
            if not style:
                return False
            if _CODE_STYLE.search(self.names.get(style, style)):
                return True
            style = self.parent.get(style, "")
        return False


_MAX_SPACES = 100
"""Spaces one ``text:s`` may stand for: a layout's run is a few dozen; an 800-byte file
asking for billions (``text:c="2000000000"``) must not get them."""


def _spaces(count: str | None) -> int:
    """The spaces ``text:s text:c`` asks for, at least 1 and at most ``_MAX_SPACES``."""
    digits = (count or "1").strip()
    if not digits.isdigit() or len(digits) > 9:
        return 1 if not digits.isdigit() else _MAX_SPACES
    return max(1, min(int(digits), _MAX_SPACES))


def _inline(el: Any) -> str:
    """An element's text with spaces, tabs and breaks, links as ``[text](url)``, footnotes
    in brackets."""
    out: list[str] = [el.text or ""] if el.tag != f"{_TEXT}note" else []
    for child in el:
        tag = child.tag
        if tag == f"{_TEXT}s":
            out.append(" " * _spaces(child.get(f"{_TEXT}c")))
        elif tag in (f"{_TEXT}tab", f"{_TEXT}line-break"):
            out.append(" ")
        elif tag == f"{_TEXT}a":
            text = _inline(child)
            url = child.get(f"{_XLINK}href") or ""
            out.append(link(text.strip(), url) if url and text.strip() else text)
        elif tag == f"{_TEXT}note":
            body = child.find(f"{_TEXT}note-body")
            if body is not None:
                note = " ".join(_inline(p) for p in body.iter(f"{_TEXT}p"))
                out.append(f" [{' '.join(note.split())}]")
        elif tag in _SKIP or tag == f"{_OFFICE}annotation":
            pass
        else:
            out.append(_inline(child))
        out.append(child.tail or "")
    return "".join(out)


def _cell(cell: Any) -> str:
    return " ".join(" ".join(_inline(p).split()) for p in cell.iter(f"{_TEXT}p", f"{_TEXT}h"))


def _table_rows(table: Any) -> Iterator[Any]:
    """A table's own rows (header rows and row groups too, not a nested table's)."""
    for child in table:
        if child.tag == f"{_TABLE}table-row":
            yield child
        elif child.tag in (
            f"{_TABLE}table-header-rows",
            f"{_TABLE}table-rows",
            f"{_TABLE}table-row-group",
        ):
            yield from _table_rows(child)


def _rows(table: Any) -> list[list[str]]:
    rows = []
    for row in _table_rows(table):
        cells = [
            _cell(c) if c.tag == f"{_TABLE}table-cell" else ""
            for c in row
            if c.tag in (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell")
        ]
        if any(cells):
            rows.append(cells)
    return rows


class _Reader:
    def __init__(self, styles: _Styles) -> None:
        self.styles = styles
        self.writer = MarkdownWriter()
        self.number = 0
        self.code = CodeRun(self.writer)

    def where(self) -> SourceLocation:
        self.number += 1
        return SourceLocation(element=f"p{self.number}")

    def blocks(self, parent: Any) -> None:
        for el in parent:
            tag = el.tag
            if tag in _SKIP:
                continue
            if tag == f"{_TEXT}p" and self.styles.is_code(el.get(f"{_TEXT}style-name") or ""):
                self.code.add(_inline(el).rstrip(), self.where)
                continue
            self.code.flush()
            if tag in (f"{_TEXT}h", f"{_TEXT}p"):
                self.text(el, heading=tag == f"{_TEXT}h")
            elif tag == f"{_TEXT}list":
                self.items(el, 0, el.get(f"{_TEXT}style-name") or "")
            elif tag == f"{_TABLE}table":
                rows = _rows(el)
                if rows:
                    self.writer.block(table_markdown(rows), self.where())
            elif tag in (f"{_TEXT}section", f"{_OFFICE}text", f"{_TEXT}soft-page-break"):
                self.blocks(el)
            elif tag == f"{_DRAW}frame":
                for box in el.iter(f"{_DRAW}text-box"):
                    self.blocks(box)
        self.code.flush()

    def text(self, el: Any, *, heading: bool) -> None:
        """A heading, or a paragraph (a title-styled one as a first-level heading); one
        without text writes nothing."""
        text = " ".join(_inline(el).split())
        if heading:
            level = min(max(int(el.get(f"{_TEXT}outline-level") or 1), 1), 6)
            if text:
                self.writer.block("#" * level + " " + text, self.where())
        elif text and self.styles.is_title(el.get(f"{_TEXT}style-name") or ""):
            self.writer.block("# " + text, self.where())
        elif text:
            self.writer.block(escape_line(text), self.where())

    def items(self, lst: Any, depth: int, style: str) -> None:
        style = lst.get(f"{_TEXT}style-name") or style
        numbered = self.styles.numbered.get((style, depth + 1), False)
        number = 0
        for item in lst:
            if item.tag not in (f"{_TEXT}list-item", f"{_TEXT}list-header"):
                continue
            number += 1
            marker = f"{number}." if numbered else "-"
            for child in item:
                if child.tag == f"{_TEXT}list":
                    self.items(child, depth + 1, style)
                elif child.tag in (f"{_TEXT}p", f"{_TEXT}h"):
                    text = " ".join(_inline(child).split())
                    if text:
                        # Three spaces a level: CommonMark nests under "1. " from there.
                        self.writer.block("   " * depth + f"{marker} {text}", self.where())
                        marker = " " * len(marker)  # a second paragraph of the same item


def _walk(root: Any) -> Iterator[Any]:
    body = root.find(f"{_OFFICE}body")
    text = body.find(f"{_OFFICE}text") if body is not None else None
    if text is not None:
        yield text


def convert_odt(data: bytes, path: str) -> Converted:
    """Convert an OpenDocument text to Markdown; each block's location is its number
    (``p12``).

    Raises ``UnsafeFileError`` (zip bomb, DTD) or ``ConvertError`` (not an .odt, corrupt).
    """
    check_office_zip(data, path, every_member=False)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            content = _xml(archive, "content.xml", path)
            styles = _Styles(content, _xml(archive, "styles.xml", path))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ConvertError(path, f"not a readable OpenDocument file ({exc})") from exc
    if content is None:
        raise ConvertError(path, "not an OpenDocument text (content.xml is missing)")
    reader = _Reader(styles)
    try:
        for text in _walk(content):
            reader.blocks(text)
    except RecursionError as exc:
        raise ConvertError(path, "OpenDocument nested too deeply to convert") from exc
    return reader.writer.result()
