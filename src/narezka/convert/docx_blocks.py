"""The blocks of a Word body read from its XML: paragraphs with their runs, links, content
controls, equations and the text boxes, SmartArt and charts anchored in them, and tables
with merged and odd cells, each laid on the table's grid by hand (python-docx's grid
refuses a whole file for one cell it cannot place)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from narezka.convert.markdown import link
from narezka.convert.omml import M, linear

__all__ = [
    "A",
    "Context",
    "Paragraph",
    "W",
    "blocks",
    "cell_text",
    "is_code",
    "paragraph",
    "table_rows",
    "title_rows",
]

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
# Wrappers whose children are read as if they stood in their place: content controls'
# content, custom XML, inserted or moved-to text, smart tags, simple fields, bidi runs.
_TRANSPARENT = frozenset(
    W + t
    for t in ("sdtContent", "customXml", "ins", "moveTo", "smartTag", "fldSimple", "dir", "bdo")
)
_GONE = frozenset((W + "del", W + "moveFrom", MC + "Fallback"))
_DRAWINGS = frozenset((W + "drawing", W + "pict", W + "object", MC + "AlternateContent"))
_MAX_SPAN = 63
"""Word's own limit on a table's columns: a cell claiming to span more (``w:gridSpan
w:val="50000000"``) is read as spanning this many."""
_OFF = ("0", "false", "off")
_MONO = re.compile(r"mono|courier|consol|menlo", re.IGNORECASE)


@dataclass
class Context:
    """What reading a paragraph needs from its document: hyperlink targets, related parts
    (SmartArt data, charts) by relationship id, whether a run is monospace."""

    url: Callable[[str], str]
    part: Callable[[str], Any]
    """The parsed XML of the part a relationship id names, or None."""
    is_mono_style: Callable[[str], bool]
    """Whether a character style id is a code style."""
    chart: Callable[[Any], str]
    """A chart part's XML as Markdown (its title and data table)."""
    marks: bool = True
    """Whether monospace runs are marked as code spans (not inside a code block)."""


@dataclass
class Paragraph:
    """A paragraph's Markdown inline text and what was anchored in it, to be written after
    it: the blocks (``w:p``, ``w:tbl``) of its text boxes and ready Markdown (SmartArt,
    charts)."""

    text: str = ""
    anchored: list[Any] = field(default_factory=list)


def blocks(container: Any) -> Iterator[Any]:
    """The ``w:p`` and ``w:tbl`` elements of a body, cell, note or text box in order,
    content controls and other wrappers opened."""
    for child in container:
        tag = child.tag
        if tag in (W + "p", W + "tbl"):
            yield child
        elif tag == W + "sdt":
            content = child.find(W + "sdtContent")
            if content is not None:
                yield from blocks(content)
        elif tag in _TRANSPARENT:
            yield from blocks(child)
        elif tag == MC + "AlternateContent":
            choice = child.find(MC + "Choice")
            if choice is not None:
                yield from blocks(choice)


def _on(props: Any, name: str) -> bool:
    found = props.find(W + name) if props is not None else None
    return found is not None and found.get(W + "val", "true").lower() not in _OFF


def _is_mono(run: Any, ctx: Context) -> bool:
    props = run.find(W + "rPr")
    if props is None:
        return False
    style = props.find(W + "rStyle")
    if style is not None and ctx.is_mono_style(style.get(W + "val") or ""):
        return True
    fonts = props.find(W + "rFonts")
    font = (fonts.get(W + "ascii") or fonts.get(W + "hAnsi") or "") if fonts is not None else ""
    return bool(_MONO.search(font))


def _run_text(run: Any, anchored: list[Any], ctx: Context) -> str:
    out: list[str] = []
    for child in run:
        tag = child.tag
        if tag == W + "t":
            out.append(child.text or "")
        elif tag in (W + "tab", W + "ptab"):
            out.append("\t")
        elif tag in (W + "br", W + "cr"):
            # A page or column break is layout; a line break separates words.
            out.append(" " if child.get(W + "type") in ("page", "column") else "\n")
        elif tag == W + "noBreakHyphen":
            out.append("-")
        elif tag in (W + "footnoteReference", W + "endnoteReference"):
            prefix = "" if tag == W + "footnoteReference" else "e"
            out.append(f"[^{prefix}{child.get(W + 'id', '')}]")
        elif tag in _DRAWINGS:
            _drawing(child, anchored, ctx)
    return "".join(out)


# complexity: a dispatch over WordprocessingML's inline kinds (runs, links, controls, math…)
def _inline(
    node: Any,
    pieces: list[tuple[str, bool]],
    anchored: list[Any],
    ctx: Context,
    linked: bool = False,
) -> None:
    """Append ``node``'s children as (text, bold) pieces; monospace runs become code (unless
    ``ctx`` reads a code block). Inside a link (``linked``) a link is its text: pandoc nests
    a bare URL's hyperlink in another."""
    for child in node:
        tag = child.tag
        if tag == W + "r":
            text = _run_text(child, anchored, ctx)
            if ctx.marks and text.strip() and _is_mono(child, ctx) and "\n" not in text:
                pieces.append((f"`{text}`", False))
            else:
                pieces.append((text, _on(child.find(W + "rPr"), "b")))
        elif tag == W + "hyperlink" and linked:
            _inline(child, pieces, anchored, ctx, linked)
        elif tag == W + "hyperlink":
            inner: list[tuple[str, bool]] = []
            _inline(child, inner, anchored, ctx, linked=True)
            text = "".join(t for t, _ in inner)
            rid = child.get(R + "id")
            url = ctx.url(rid) if rid else ""
            anchor = child.get(W + "anchor")
            if url and text.strip():
                pieces.append((link(text.strip(), url + (f"#{anchor}" if anchor else "")), False))
            else:
                pieces.append((text, False))
        elif tag == W + "sdt":
            content = child.find(W + "sdtContent")
            if content is not None:
                _inline(content, pieces, anchored, ctx, linked)
        elif tag in _TRANSPARENT:
            _inline(child, pieces, anchored, ctx, linked)
        elif tag in (M + "oMath", M + "oMathPara"):
            pieces.append((linear(child), False))
        elif tag == MC + "AlternateContent":
            choice = child.find(MC + "Choice")
            if choice is not None:
                _inline(choice, pieces, anchored, ctx, linked)


def _bolded(pieces: list[tuple[str, bool]]) -> str:
    """Pieces joined, each run of consecutive bold pieces one ``**…**``."""
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
            out.append(f"{lead}**{core}**{trail}" if core and "\n" not in core else run)
            bold.clear()
        out.append(text)
    return "".join(out)


def paragraph(p: Any, ctx: Context, *, plain: bool = False) -> Paragraph:
    """A ``w:p``'s text (bold marked unless ``plain``, e.g. in a heading) and what is
    anchored in it."""
    result = Paragraph()
    pieces: list[tuple[str, bool]] = []
    _inline(p, pieces, result.anchored, ctx)
    if plain:
        pieces = [(t, False) for t, _ in pieces]
    result.text = _bolded(pieces)
    return result


def is_code(p: Any, ctx: Context) -> bool:
    """Whether every run of ``p`` holding text is monospace (a line of code)."""
    runs = [r for r in p.iter(W + "r") if "".join(t.text or "" for t in r.iter(W + "t")).strip()]
    return bool(runs) and all(_is_mono(r, ctx) for r in runs)


def _outermost(root: Any, tag: str) -> Iterator[Any]:
    """``tag`` elements under ``root`` not inside another one, nor in a fallback copy."""
    stack = list(reversed(root))
    while stack:
        node = stack.pop()
        if node.tag in _GONE:
            continue
        if node.tag == tag:
            yield node
            continue
        stack.extend(reversed(node))


def _drawing(node: Any, anchored: list[Any], ctx: Context) -> None:
    """What a drawing holds, in order: text boxes (their blocks), SmartArt text, charts."""
    for box in _outermost(node, W + "txbxContent"):
        anchored.extend(blocks(box))
    for data in _outermost(node, A + "graphicData"):
        uri = data.get("uri", "")
        if uri.endswith("/diagram"):
            ids = data.find(_DGM + "relIds")
            root = ctx.part(ids.get(R + "dm", "")) if ids is not None else None
            if root is not None:
                texts = ("".join(t.text or "" for t in p.iter(A + "t")) for p in root.iter(A + "p"))
                anchored.extend(t.strip() for t in texts if t.strip())
        elif uri.endswith("/chart"):
            ref = data.find(_C + "chart")
            root = ctx.part(ref.get(R + "id", "")) if ref is not None else None
            if root is not None:
                anchored.append(ctx.chart(root))


def _texts(block: Any, ctx: Context, texts: list[str]) -> None:
    if block.tag == W + "tbl":
        texts.extend(c for row in table_rows(block, ctx) for c in row)
        return
    para = paragraph(block, ctx)
    texts.append(para.text)
    for item in para.anchored:
        if isinstance(item, str):
            texts.append(item)
        else:
            _texts(item, ctx, texts)


def cell_text(tc: Any, ctx: Context) -> str:
    """A cell's paragraphs (those of its text boxes and nested tables too) joined by spaces:
    a nested table's cells must not run together ("namestrthe")."""
    texts: list[str] = []
    for block in blocks(tc):
        _texts(block, ctx, texts)
    return " ".join(" ".join(t.split()) for t in texts if t.strip())


def _rows(table: Any) -> Iterator[Any]:
    for child in table:
        if child.tag == W + "tr":
            yield child
        elif child.tag in (W + "sdt", *_TRANSPARENT):
            yield from _rows(child.find(W + "sdtContent") if child.tag == W + "sdt" else child)


def _cells(row: Any) -> Iterator[Any]:
    for child in row:
        if child.tag == W + "tc":
            yield child
        elif child.tag in (W + "sdt", *_TRANSPARENT):
            inner = child.find(W + "sdtContent") if child.tag == W + "sdt" else child
            if inner is not None:
                yield from _cells(inner)


def _number(node: Any, path: str, default: int) -> int:
    found = node.find(path)
    value = found.get(W + "val", "") if found is not None else ""
    return min(max(int(value), 0), _MAX_SPAN) if value.isdigit() and len(value) < 4 else default


def table_rows(table: Any, ctx: Context) -> list[list[str]]:
    """A ``w:tbl``'s rows of cell texts on its grid: a cell spanning columns fills the first
    and leaves the others empty; a cell merged down repeats the text of the cell it
    continues, so each row reads whole; cells a row skips (``w:gridBefore``) are empty."""
    rows: list[list[str]] = []
    above: dict[int, str] = {}
    for tr in _rows(table):
        row = [""] * _number(tr, f"{W}trPr/{W}gridBefore", 0)
        for tc in _cells(tr):
            span = max(_number(tc, f"{W}tcPr/{W}gridSpan", 1), 1)
            merge = tc.find(f"{W}tcPr/{W}vMerge")
            column = len(row)
            if merge is not None and merge.get(W + "val", "continue") == "continue":
                text = above.get(column, "")
            else:
                text = cell_text(tc, ctx)
                above[column] = text
            row.append(text)
            row.extend([""] * (span - 1))
        rows.append(row)
    return rows


def title_rows(table: Any, width: int) -> int:
    """How many leading rows of ``table`` are one cell spanning all ``width`` columns: a
    title or caption over the table, not its header (a split table repeats its header)."""
    count = 0
    rows = list(_rows(table))
    for tr in rows[:-1]:
        cells = list(_cells(tr))
        if width < 2 or len(cells) != 1:
            break
        if _number(cells[0], f"{W}tcPr/{W}gridSpan", 1) < width:
            break
        count += 1
    return count
