"""Word .docx → Markdown through python-docx: heading styles, lists, tables, code, links."""

from __future__ import annotations

import io
import re
from typing import Any

from narezka.convert.guard import check_office_zip
from narezka.convert.markdown import Converted, MarkdownWriter, escape_line, link, table_markdown
from narezka.errors import ConvertError
from narezka.types import SourceLocation

__all__ = ["convert_docx"]

_HEADING = re.compile(r"^(?:heading|заголовок)\s*(\d)$", re.IGNORECASE)
_CODE_STYLES = re.compile(r"source code|code|verbatim|preformatted|html preformatted", re.I)
_MONO = re.compile(r"mono|courier|consol|menlo", re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


class _Styles:
    """Style names and parents by style id, read once: python-docx's ``paragraph.style``
    searches the styles part on every call (2.5 of 3.2 s converting a 30 KB document)."""

    def __init__(self, document: Any) -> None:
        self.by_id: dict[str, tuple[str, str | None]] = {}
        for style in document.styles.element.findall(_W + "style"):
            name = style.find(_W + "name")
            based = style.find(_W + "basedOn")
            self.by_id[style.get(_W + "styleId") or ""] = (
                (name.get(_W + "val") or "") if name is not None else "",
                based.get(_W + "val") if based is not None else None,
            )

    def name(self, style_id: str | None) -> str:
        return self.by_id.get(style_id or "", ("", None))[0]

    def heading_level(self, paragraph: Any) -> int:
        style_id = paragraph._p.style
        for _ in range(4):  # a custom style based on "Heading 2" is a level-2 heading too
            if not style_id or style_id not in self.by_id:
                return 0
            name, style_id = self.by_id[style_id]
            if name.lower() == "title":
                return 1
            match = _HEADING.match(name)
            if match:
                return min(max(int(match.group(1)), 1), 6)
        return 0

    def is_mono(self, run: Any) -> bool:
        style = self.name(run._r.style)
        return bool(_CODE_STYLES.search(style) or _MONO.search(run.font.name or ""))

    def is_code(self, paragraph: Any) -> bool:
        if _CODE_STYLES.search(self.name(paragraph._p.style)):
            return True
        runs = [r for r in paragraph.runs if r.text.strip()]
        return bool(runs) and all(self.is_mono(r) for r in runs)


def _list_kind(
    paragraph: Any, numbering: dict[tuple[str, str], str], styles: _Styles
) -> tuple[int, str, str] | None:
    """(indent level, "bullet" or a number format, the list's numId) of a list paragraph,
    else None."""
    ppr = paragraph._p.pPr
    num_pr = ppr.numPr if ppr is not None else None
    style = styles.name(paragraph._p.style).lower()
    if num_pr is None or num_pr.numId is None:
        if style.startswith("list bullet"):
            return 0, "bullet", ""
        if style.startswith("list number"):
            return 0, "decimal", style
        return None
    num_id = str(num_pr.numId.val)
    level = int(num_pr.ilvl.val) if num_pr.ilvl is not None else 0
    return level, numbering.get((num_id, str(level)), "bullet"), num_id


def _numbering(document: Any) -> dict[tuple[str, str], str]:
    """``(numId, ilvl) → numFmt`` from the numbering part (bullet, decimal…)."""
    try:
        root = document.part.numbering_part.element
    except (KeyError, NotImplementedError, AttributeError):
        return {}
    abstract = {
        a.get(_W + "abstractNumId"): {
            lvl.get(_W + "ilvl"): (lvl.find(_W + "numFmt").get(_W + "val") or "bullet")
            for lvl in a.findall(_W + "lvl")
            if lvl.find(_W + "numFmt") is not None
        }
        for a in root.findall(_W + "abstractNum")
    }
    found: dict[tuple[str, str], str] = {}
    for num in root.findall(_W + "num"):
        ref = num.find(_W + "abstractNumId")
        if ref is None:
            continue
        for ilvl, fmt in abstract.get(ref.get(_W + "val"), {}).items():
            found[(num.get(_W + "numId") or "", ilvl or "0")] = fmt
    return found


def _inline(paragraph: Any, styles: _Styles) -> str:
    """The paragraph's text with links as ``[text](url)``, monospace runs as code and bold
    runs as bold (consecutive bold runs are one ``**…**``)."""
    pieces: list[tuple[str, bool]] = []
    heading = bool(styles.heading_level(paragraph))
    for item in paragraph.iter_inner_content():
        if hasattr(item, "address"):  # a Hyperlink
            # Every w:t inside it: pandoc nests a hyperlink in a hyperlink (a bare URL), whose
            # text python-docx's ``Hyperlink.text`` leaves out (0.3 % of a Word file's words).
            text = "".join(t.text or "" for t in item._hyperlink.iter(_W + "t"))
            url = item.address
            if url and text.strip():
                fragment = f"#{item.fragment}" if item.fragment else ""
                pieces.append((link(text.strip(), f"{url}{fragment}"), False))
            else:
                pieces.append((text, False))
        elif item.text and styles.is_mono(item) and item.text.strip():
            pieces.append((f"`{item.text}`", False))
        else:
            pieces.append((item.text, bool(item.text and item.bold) and not heading))
    out: list[str] = []
    bold: list[str] = []
    for text, is_bold in [*pieces, ("", False)]:
        if is_bold:
            bold.append(text)
            continue
        if bold:
            run = "".join(bold)
            core = run.strip()
            lead, trail = run[: len(run) - len(run.lstrip())], run[len(run.rstrip()) :]
            out.append(f"{lead}**{core}**{trail}" if core else run)
            bold.clear()
        out.append(text)
    return "".join(out)


def _cell_text(cell: Any) -> str:
    """A cell's paragraphs (those of tables nested in it too) joined by spaces:
    python-docx's ``cell.text`` runs a nested table's cells together ("namestrthe")."""
    paragraphs = ("".join(t.text or "" for t in p.iter(_W + "t")) for p in cell._tc.iter(_W + "p"))
    return " ".join(text for text in paragraphs if text.strip())


_MAX_SPAN = 63
"""Word's own limit on a table's columns: a cell spanning more (``w:gridSpan w:val=
"50000000"``) would be repeated that many times by python-docx's cell grid."""


def _clamp_spans(table: Any) -> None:
    """Cut every ``w:gridSpan`` of ``table`` to ``_MAX_SPAN`` before its grid is built."""
    for span in table._tbl.iter(_W + "gridSpan"):
        value = span.get(_W + "val") or ""
        if not value.isdigit() or len(value) > 3 or int(value) > _MAX_SPAN:
            span.set(_W + "val", str(_MAX_SPAN) if value.isdigit() else "1")


def _table_rows(table: Any) -> list[list[str]]:
    _clamp_spans(table)
    rows: list[list[str]] = []
    for row in table.rows:
        rows.append([_cell_text(cell) for cell in row.cells])
    return rows


def convert_docx(data: bytes, path: str) -> Converted:
    """Convert a Word file to Markdown; each block's location is its number (``p12``).

    Raises ``UnsafeFileError`` (zip bomb, DTD) or ``ConvertError`` (not a docx, corrupt).
    """
    check_office_zip(data, path)
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        numbering = _numbering(document)
        styles = _Styles(document)
        content = list(document.iter_inner_content())
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors…
        raise ConvertError(path, f"not a readable Word file ({type(exc).__name__}: {exc})") from exc
    writer = MarkdownWriter()
    code: list[str] = []
    code_at = SourceLocation()
    numbers: dict[tuple[str, int], int] = {}

    def flush_code() -> None:
        if code:
            body = "\n".join(code)
            fence = "~~~~" if "```" in body else "```"
            writer.block(f"{fence}\n{body}\n{fence}", code_at)
            code.clear()

    try:
        for number, item in enumerate(content, 1):
            where = SourceLocation(element=f"p{number}")
            if isinstance(item, Table):
                flush_code()
                writer.block(table_markdown(_table_rows(item)), where)
                continue
            if styles.is_code(item) and item.text.strip():
                if not code:
                    code_at = where
                code.append(item.text)
                continue
            flush_code()
            text = _inline(item, styles).strip()
            if not text:
                continue
            level = styles.heading_level(item)
            kind = _list_kind(item, numbering, styles)
            if level:
                writer.block("#" * level + " " + " ".join(text.split()), where)
            elif kind is not None:
                indent, fmt, num_id = kind
                if fmt in ("bullet", "none"):
                    marker = "-"
                else:  # the item's own number: "1." on every item would lose "2", "3"…
                    key = (num_id, indent)
                    numbers[key] = numbers.get(key, 0) + 1
                    for deeper in [k for k in numbers if k[0] == num_id and k[1] > indent]:
                        del numbers[deeper]  # a sub-list numbers from 1 again
                    marker = f"{numbers[key]}."
                # Three spaces a level: CommonMark nests an item under "1. " only from the
                # third column (two spaces made the sub-list a new top-level list).
                writer.block("   " * indent + marker + " " + " ".join(text.split()), where)
            else:
                writer.block("\n".join(escape_line(ln) for ln in text.split("\n")), where)
        flush_code()
    except Exception as exc:
        raise ConvertError(
            path, f"Word content cannot be read ({type(exc).__name__}: {exc})"
        ) from exc
    return writer.result()
