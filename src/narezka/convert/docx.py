"""Word .docx → Markdown: heading styles, lists, tables, code, links, content controls, text
boxes, equations, SmartArt, charts, footnotes and endnotes; comments as metadata.

python-docx opens the package and resolves styles, numbering and relationships; the body is
read from its XML (``narezka.convert.docx_blocks``). A block that cannot be read is skipped
and named in ``meta["notes"]``; the rest of the file is indexed.
"""

from __future__ import annotations

import dataclasses
import io
import re
from typing import Any

from narezka.convert.charts import chart_markdown
from narezka.convert.docx_blocks import (
    Context,
    W,
    blocks,
    is_code,
    paragraph,
    table_rows,
    title_rows,
)
from narezka.convert.docx_comments import Anchors, anchor_comments
from narezka.convert.guard import check_office_zip, parse_xml
from narezka.convert.markdown import (
    CodeRun,
    Converted,
    MarkdownWriter,
    escape_line,
    table_markdown,
)
from narezka.convert.ooxml import Notes, open_package
from narezka.errors import ConvertError
from narezka.types import SourceLocation

__all__ = ["convert_docx"]

_HEADING = re.compile(r"^(?:heading|заголовок)\s*(\d)$", re.IGNORECASE)
_CODE_STYLES = re.compile(r"source code|code|verbatim|preformatted|html preformatted", re.I)
_NOTE_SKIP = ("separator", "continuationSeparator", "continuationNotice")
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"


class _Styles:
    """Style names and parents by style id, read once: python-docx's ``paragraph.style``
    searches the styles part on every call (2.5 of 3.2 s converting a 30 KB document)."""

    def __init__(self, document: Any) -> None:
        self.by_id: dict[str, tuple[str, str | None]] = {}
        try:
            element = document.styles.element
        except (KeyError, AttributeError, ValueError):  # no styles part: every style unknown
            return
        for style in element.findall(W + "style"):
            name = style.find(W + "name")
            based = style.find(W + "basedOn")
            self.by_id[style.get(W + "styleId") or ""] = (
                (name.get(W + "val") or "") if name is not None else "",
                based.get(W + "val") if based is not None else None,
            )

    def name(self, style_id: str | None) -> str:
        return self.by_id.get(style_id or "", ("", None))[0]

    def heading_level(self, style_id: str | None) -> int:
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

    def is_code_style(self, style_id: str) -> bool:
        return bool(_CODE_STYLES.search(self.name(style_id)))


def _style_id(p: Any) -> str:
    found = p.find(f"{W}pPr/{W}pStyle")
    return (found.get(W + "val") or "") if found is not None else ""


def _numbering(document: Any) -> dict[tuple[str, str], str]:
    """``(numId, ilvl) → numFmt`` from the numbering part (bullet, decimal…)."""
    try:
        root = document.part.numbering_part.element
    except (KeyError, NotImplementedError, AttributeError):
        return {}
    abstract = {
        a.get(W + "abstractNumId"): {
            lvl.get(W + "ilvl"): (lvl.find(W + "numFmt").get(W + "val") or "bullet")
            for lvl in a.findall(W + "lvl")
            if lvl.find(W + "numFmt") is not None
        }
        for a in root.findall(W + "abstractNum")
    }
    found: dict[tuple[str, str], str] = {}
    for num in root.findall(W + "num"):
        ref = num.find(W + "abstractNumId")
        if ref is None:
            continue
        for ilvl, fmt in abstract.get(ref.get(W + "val"), {}).items():
            found[(num.get(W + "numId") or "", ilvl or "0")] = fmt
    return found


class _Package:
    """The document part's relationships: hyperlink targets and related parts' XML."""

    def __init__(self, document: Any, path: str) -> None:
        self.part = document.part
        self.path = path

    def url(self, rid: str) -> str:
        rel = self.part.rels.get(rid)
        return str(rel.target_ref) if rel is not None and rel.is_external else ""

    def xml(self, rid: str) -> Any:
        rel = self.part.rels.get(rid)
        if rel is None or rel.is_external:
            return None
        return _part_xml(rel.target_part, self.path)

    def by_type(self, kind: str) -> Any:
        for rel in self.part.rels.values():
            if rel.reltype == _REL + kind and not rel.is_external:
                return _part_xml(rel.target_part, self.path)
        return None


def _part_xml(part: Any, path: str) -> Any:
    element = getattr(part, "element", None)
    if element is not None:
        return element
    return parse_xml(part.blob, path, str(part.partname), "not a readable Word part")


class _Body:
    """Writes the body's blocks: headings, list items, code runs, paragraphs, tables."""

    def __init__(self, styles: _Styles, numbering: dict[tuple[str, str], str], ctx: Context):
        self.writer = MarkdownWriter()
        self.styles = styles
        self.numbering = numbering
        self.ctx = ctx
        self.code = CodeRun(self.writer)
        self.numbers: dict[tuple[str, int], int] = {}

    def _is_code(self, p: Any) -> bool:
        return self.styles.is_code_style(_style_id(p)) or is_code(p, self.ctx)

    def write(self, block: Any, where: SourceLocation) -> None:
        if block.tag == W + "tbl":
            self.code.flush()
            rows = table_rows(block, self.ctx)
            titles = title_rows(block, max(map(len, rows), default=0))
            for row in rows[:titles]:
                self.writer.block(escape_line(" ".join(" ".join(row).split())), where)
            self.writer.block(table_markdown(rows[titles:]), where)
            return
        level = self.styles.heading_level(_style_id(block))
        para = paragraph(block, self.ctx, plain=bool(level))
        if not level and para.text.strip() and self._is_code(block):
            raw = paragraph(block, dataclasses.replace(self.ctx, marks=False), plain=True)
            self.code.add(raw.text.rstrip(), lambda: where)
        else:
            self.code.flush()
            self._text(block, para.text.strip(), level, where)
        for item in para.anchored:
            if isinstance(item, str):
                self.writer.block(escape_line(item) if "\n" not in item else item, where)
            else:
                self.write(item, where)

    def _text(self, p: Any, text: str, level: int, where: SourceLocation) -> None:
        if not text:
            return
        if level:
            self.writer.block("#" * level + " " + " ".join(text.split()), where)
            return
        marker = self._marker(p)
        if marker is not None:
            self.writer.block(marker + " ".join(text.split()), where)
        else:
            lines = (escape_line(" ".join(ln.split())) for ln in text.split("\n"))
            self.writer.block("\n".join(ln for ln in lines if ln), where)

    def _marker(self, p: Any) -> str | None:
        """A list item's indent and marker (``   1. ``), or None for a paragraph."""
        num_pr = p.find(f"{W}pPr/{W}numPr")
        num_id_el = num_pr.find(W + "numId") if num_pr is not None else None
        if num_id_el is None:
            style = self.styles.name(_style_id(p)).lower()
            if style.startswith("list bullet"):
                return "- "
            return "1. " if style.startswith("list number") else None
        num_id = num_id_el.get(W + "val") or ""
        ilvl = num_pr.find(W + "ilvl") if num_pr is not None else None
        value = ilvl.get(W + "val", "0") if ilvl is not None else "0"
        indent = min(int(value), 8) if value.isdigit() and len(value) < 3 else 0
        fmt = self.numbering.get((num_id, str(indent)), "bullet")
        if fmt in ("bullet", "none"):
            marker = "-"
        else:  # the item's own number: "1." on every item would lose "2", "3"…
            key = (num_id, indent)
            self.numbers[key] = self.numbers.get(key, 0) + 1
            for deeper in [k for k in self.numbers if k[0] == num_id and k[1] > indent]:
                del self.numbers[deeper]  # a sub-list numbers from 1 again
            marker = f"{self.numbers[key]}."
        # Three spaces a level: CommonMark nests an item under "1. " only from the third
        # column (two spaces made the sub-list a new top-level list).
        return "   " * indent + marker + " "


def _notes_of(root: Any, tag: str, prefix: str, ctx: Context) -> list[tuple[str, str]]:
    """``(label, text)`` of each footnote or endnote of a notes part."""
    found = []
    for note in root.findall(W + tag):
        if note.get(W + "type") in _NOTE_SKIP:
            continue
        texts: list[str] = []
        for block in blocks(note):
            if block.tag == W + "tbl":
                texts.extend(c for row in table_rows(block, ctx) for c in row)
            else:
                texts.append(paragraph(block, ctx).text)
        text = " ".join(" ".join(t.split()) for t in texts if t.strip())
        if text:
            found.append((f"{prefix}{note.get(W + 'id', '')}", text))
    return found


def _comments(root: Any, ctx: Context) -> list[dict[str, str]]:
    comments = []
    for comment in root.findall(W + "comment"):
        text = " ".join(
            " ".join(paragraph(b, ctx, plain=True).text.split())
            for b in blocks(comment)
            if b.tag == W + "p"
        ).strip()
        if text:
            comments.append(
                {"id": comment.get(W + "id", ""), "author": comment.get(W + "author", ""),
                 "text": text}
            )  # fmt: skip
    return comments


def _why_empty(body: Any) -> str:
    if body.find(f".//{W}drawing") is not None or body.find(f".//{W}pict") is not None:
        return "no text: the document holds only pictures or drawings without text"
    return "no text: the document's body is empty (headers and footers are not indexed)"


def _extras(body: _Body, package: _Package, notes: Notes) -> dict[str, Any]:
    """Footnotes and endnotes written after the body; comments returned as metadata."""
    meta: dict[str, Any] = {}
    for kind, tag, prefix in (("footnotes", "footnote", ""), ("endnotes", "endnote", "e")):
        try:
            root = package.by_type(kind)
            for label, text in _notes_of(root, tag, prefix, body.ctx) if root is not None else ():
                body.writer.block(f"[^{label}]: {escape_line(text)}", SourceLocation(element=kind))
        except ConvertError:
            raise
        except Exception:  # a damaged notes part costs its notes only
            notes.skip(kind, "notes part")
    try:
        root = package.by_type("comments")
        comments = _comments(root, body.ctx) if root is not None else []
    except ConvertError:
        raise
    except Exception:
        notes.skip("comments", "comments part")
        comments = []
    if comments:
        meta["comments"] = comments  # anchored once the body's Markdown is done
    return meta


def convert_docx(data: bytes, path: str) -> Converted:
    """Convert a Word file to Markdown; each body block's location is its number (``p12``).

    Raises ``UnsafeFileError`` (zip bomb, DTD), ``PasswordProtectedError`` (encrypted) or
    ``ConvertError`` (not a Word package). A block that cannot be read is skipped with a note.
    """
    data = open_package(data, path, "Word")
    check_office_zip(data, path)
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
        body_element = document.element.body
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors…
        raise ConvertError(path, "not a readable Word file (no document part it can open)") from exc
    notes = Notes()
    package = _Package(document, path)
    styles = _Styles(document)
    ctx = Context(package.url, package.xml, styles.is_code_style, chart_markdown)
    body = _Body(styles, _numbering(document), ctx)
    anchors = Anchors()
    for number, block in enumerate(blocks(body_element), 1):
        try:
            anchors.read(block, number)
            body.write(block, SourceLocation(element=f"p{number}"))
        except (ConvertError, MemoryError, RecursionError):
            raise
        except Exception:  # one odd block must not cost the file
            kind = "table" if block.tag == W + "tbl" else "paragraph"
            notes.skip(f"block {number}", kind)
    body.code.flush()
    meta = _extras(body, package, notes)
    if body.writer.empty():
        notes.add(_why_empty(body_element))
    if notes:
        meta["notes"] = notes.lines()
    done = body.writer.result()
    if meta.get("comments"):
        meta["comments"] = anchor_comments(
            meta["comments"], anchors, done.markdown, done.provenance
        )
    return Converted(done.markdown, done.provenance, meta)
