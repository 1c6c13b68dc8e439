"""HTML → Markdown through lxml, with the page's boilerplate and hidden text left out.

Boilerplate is found two ways: by markup (``nav``, ``aside``, page-level ``header`` and
``footer``, ARIA landmarks, cookie and menu classes) on each page, and across a crawl by
``repeated_blocks``: a block whose text is on many pages of one folder is a menu or a footer.
Text the page's CSS hides from a reader goes (``narezka.convert.css``). Scripts are never run:
the page is only parsed, and ``script``/``style`` are dropped.

The bytes are read as ``narezka.convert.charset`` says (BOM, a declared charset a browser
knows, else detection); a label no browser knows or bytes that needed replacing become a note
in the result's ``meta["notes"]``, which a run prints as a warning naming the file. Links
keep only ``http``, ``https``, ``mailto``, relative and fragment URLs
(``narezka.convert.markdown.safe_url``): the text of any other link stays, its URL goes.

A page is parsed by libxml2's HTML parser, which never loads a DTD nor expands an entity one
declares (``<!DOCTYPE html>`` is normal there); a DOCTYPE with an internal subset or an
``<!ENTITY`` anywhere in the page is still refused as an ``UnsafeFileError``: no page needs
one, and the page may reach an XML reader elsewhere.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Collection, Iterable
from typing import Any

from narezka.convert.charset import decode_page
from narezka.convert.css import hide
from narezka.convert.markdown import (
    Converted,
    MarkdownWriter,
    escape_line,
    fenced,
    inline_text,
    link,
    safe_url,
    table_markdown,
)
from narezka.errors import ConvertError, UnsafeFileError
from narezka.types import SourceLocation

__all__ = ["block_key", "convert_html", "page_block_keys", "parse_page", "repeated_blocks"]

_DROP = frozenset(
    "script style noscript template iframe object embed svg canvas form button input select "
    "textarea label dialog head title meta link".split()
)
_LANDMARKS = frozenset("nav aside".split())
_ROLES = frozenset("navigation banner contentinfo complementary search menu menubar".split())
_BOILER_NAME = re.compile(
    r"(?:^|[-_\s])(cookies?|consent|gdpr|navbar|nav|menu|breadcrumbs?|sidebar|site-header|"
    r"site-footer|footer|social|share|skip-link|subscribe|newsletter|banner)(?:[-_\s]|$)",
    re.IGNORECASE,
)
_BLOCKS = frozenset(
    "p div section article main body blockquote figure figcaption dl dt dd address details "
    "summary center".split()
)
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_DTD = re.compile(r"<!(?:doctype\s[^>\[]*\[|entity\s)", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_MIN_PAGES = 3
_MIN_SHARE = 0.5
_MAX_NEST = 150
"""Elements nested deeper than this are read as plain text: each level of the walk costs up
to three Python frames, and a generated page may nest thousands of ``<b>`` or ``<div>``."""
_PARSER_DEPTH = 2048
"""libxml2's nesting limit with ``huge_tree`` (256 without it, which real pages exceed)."""


def block_key(text: str) -> str:
    """A block's text as the key the cross-page count uses: case and spacing ignored."""
    norm = " ".join(text.lower().split())
    return hashlib.blake2b(norm.encode("utf-8"), digest_size=12).hexdigest()


def parse_page(data: bytes, path: str) -> tuple[Any, tuple[str, ...]]:
    """The page's tree and the notes on how its bytes were read."""
    import lxml.html
    from lxml import etree

    decoded = decode_page(data)
    if _DTD.search(decoded.text):
        raise UnsafeFileError(path, "page declares an XML DTD or entity (refused, not parsed)")
    # lxml refuses text that declares an encoding; the bytes were decoded above.
    text = _XML_DECLARATION.sub("", decoded.text.replace("\x00", ""), count=1)
    if not text.strip():
        raise ConvertError(path, "page is empty")
    try:
        # huge_tree raises only the nesting and text-node limits: the HTML parser expands no
        # declared entity either way, and a page with a DTD was refused above.
        parser = lxml.html.HTMLParser(
            no_network=True, remove_comments=True, remove_pis=True, huge_tree=True
        )
        root = lxml.html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise ConvertError(path, f"not a readable HTML page ({exc})") from exc
    notes = decoded.notes
    if any("Excessive depth" in entry.message for entry in parser.error_log):
        # libxml2 stops at the limit and keeps what came before: say so, never silently.
        notes += (
            f"elements nested deeper than {_PARSER_DEPTH}: "
            "the page's text after that point was not read",
        )
    return root, notes


def _is_boilerplate(el: Any, in_content: bool) -> bool:
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag in _LANDMARKS or (el.get("role") or "").lower() in _ROLES:
        return True
    if in_content:  # an article's own header or footer (title, byline) is content
        return False
    if tag in ("header", "footer"):
        return True
    names = f"{el.get('id') or ''} {el.get('class') or ''}"
    return tag not in ("main", "article", "body") and bool(_BOILER_NAME.search(names))


_OWN_BLOCKS = frozenset({"pre", "table", "ul", "ol", "hr"})
"""Block tags besides headings that Markdown writes in a form of their own."""


class _Renderer:
    """Walks the cleaned tree and writes Markdown blocks, each located by the nearest id."""

    def __init__(self, skip: Collection[str]) -> None:
        self.writer = MarkdownWriter()
        self.skip = skip
        self.inline: list[str] = []
        self.where = SourceLocation()
        self.keys: list[str] = []
        self.removed = 0
        self.notes: tuple[str, ...] = ()
        self.level = 0
        self.in_bold = False

    def emit(self, text: str, key_text: str | None = None) -> None:
        key = block_key(key_text if key_text is not None else text)
        if not text.strip():
            return
        self.keys.append(key)
        if key in self.skip:
            self.removed += 1
            return
        self.writer.block(text, self.where)

    def flush(self) -> None:
        text = inline_text("".join(self.inline))
        self.inline.clear()
        if text:
            self.emit(escape_line(text), text)

    def walk(self, el: Any, in_content: bool, depth: int = 0) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if not tag or tag in _DROP or _is_boilerplate(el, in_content):
            self.tail(el)
            return
        if el.get("id"):
            self.where = SourceLocation(element=el.get("id"))
        in_content = in_content or tag in ("main", "article")
        if self.level >= _MAX_NEST:
            self.inline.append(" " + el.text_content() + " ")
            self.tail(el)
            return
        self.level += 1
        # The container case stays here, not in a helper: a frame per nesting level, as
        # deep pages recurse through it.
        if not self.own_form(el, tag, depth, in_content):
            block = tag in _BLOCKS or tag in ("header", "footer", "nav", "li")
            if block:
                self.flush()
            if el.text:
                self.inline.append(el.text)
            for child in el:
                self.walk(child, in_content, depth)
            if block:
                self.flush()
        self.level -= 1
        self.tail(el)

    def own_form(self, el: Any, tag: str, depth: int, in_content: bool) -> bool:
        """Render an element Markdown has a form of its own for; False for a container."""
        if tag in _HEADINGS or tag in _OWN_BLOCKS:
            self.flush()
            self.own_block(el, tag, depth, in_content)
        elif tag == "br":
            self.inline.append(" ")
        elif tag == "a" and safe_url(el.get("href") or ""):
            # A linked image (a logo, a badge) is named by its alt text.
            alts = " ".join(img.get("alt") or "" for img in el.iter("img"))
            text = inline_text(el.text_content()) or inline_text(alts)
            self.inline.append(link(text, el.get("href")))
        elif tag == "code":
            self.inline.append(f"`{inline_text(el.text_content())}`")
        elif tag in ("strong", "b"):
            self.bold(el, in_content, depth)
        elif tag == "img":
            self.inline.append(el.get("alt") or "")
        else:
            return False
        return True

    def own_block(self, el: Any, tag: str, depth: int, in_content: bool) -> None:
        """A heading, fenced code, a table or a list as Markdown (a rule: nothing)."""
        if tag in _HEADINGS:
            text = inline_text(el.text_content())
            self.emit("#" * _HEADINGS[tag] + " " + text, text)
        elif tag == "pre":
            body = el.text_content().strip("\n")
            self.emit(fenced(body), body)
        elif tag == "table":
            # What a table holds outside its cells (a table or text right in a row, a
            # caption) a browser shows before it: it is read there, not lost with the grid.
            for stray in _outside_cells(el):
                self.walk(stray, in_content, depth)
            self.flush()
            box = _layout_box(el)
            if box is not None:
                # One row of one cell lays a page out (a banner holding the site's <h1>, a
                # footer line): its content is read as the blocks it holds, not as a grid.
                self.walk(box, in_content, depth)
                self.flush()
                return
            rows = [r for r in table_grid(el) if any(r)]
            if rows:
                self.emit(table_markdown(rows), " ".join(" ".join(r) for r in rows))
        elif tag in ("ul", "ol"):
            self.list_items(el, tag == "ol", depth, in_content)

    def bold(self, el: Any, in_content: bool, depth: int) -> None:
        # Bold stays bold: a reader quotes "**до** запуска" as the page shows it. Bold inside
        # bold is the same bold: marked once, not once per tag.
        if self.in_bold:
            if el.text:
                self.inline.append(el.text)
            for child in el:
                self.walk(child, in_content, depth)
            return
        saved, self.inline, self.in_bold = self.inline, [], True
        if el.text:
            self.inline.append(el.text)
        try:
            for child in el:
                self.walk(child, in_content, depth)
        finally:
            self.in_bold = False
        inner, self.inline = "".join(self.inline), saved
        core = inner.strip()
        lead = inner[: len(inner) - len(inner.lstrip())]
        trail = inner[len(inner.rstrip()) :]
        self.inline.append(f"{lead}**{core}**{trail}" if core else inner)

    def tail(self, el: Any) -> None:
        if el.tail:
            self.inline.append(el.tail)

    def list_items(self, el: Any, ordered: bool, depth: int, in_content: bool) -> None:
        n = 0
        for li in el:
            if li.tag in ("ul", "ol"):
                # A list right in a list (no <li> around it, as browsers still show it):
                # nested under the item before it.
                self.list_items(li, li.tag == "ol", depth + 1, in_content)
                continue
            if li.tag != "li":
                continue
            n += 1
            nested = [c for c in li if c.tag in ("ul", "ol")]
            for sub in nested:
                li.remove(sub)  # rendered after the item's own text, one level deeper
            saved, self.inline = self.inline, []
            if li.text:
                self.inline.append(li.text)
            for child in li:
                self.walk(child, in_content, depth + 1)
            text = inline_text("".join(self.inline))
            self.inline = saved
            if text:
                marker = f"{n}." if ordered else "-"
                # Three spaces a level: CommonMark nests an item under "1. " only from there.
                self.emit("   " * depth + f"{marker} {text}", text)
            for sub in nested:
                self.list_items(sub, sub.tag == "ol", depth + 1, in_content)


MAX_TABLE_COLUMNS = 1000
"""A table is read this many grid columns wide at most (HTML itself caps one cell's
``colspan`` there): a few bytes of spans cannot make a grid the size of memory."""


def _span(value: str | None, rows_left: int) -> int:
    """A ``colspan``/``rowspan`` attribute as a count; ``rowspan="0"`` means the rest."""
    try:
        count = int((value or "1").strip())
    except ValueError:
        return 1
    if count == 0 and rows_left:
        return rows_left
    return min(max(count, 1), MAX_TABLE_COLUMNS)


def table_grid(table: Any) -> list[list[str]]:
    """The table's own rows as a grid of cell texts, a cell spanning columns or rows repeated
    in every slot it covers: each value then sits under its own header, and a row read
    alone (a split table) still has its row header. A table nested in a cell is that cell's
    text, not rows."""
    own = [r for r in table.iter("tr") if next(r.iterancestors("table"), None) is table]
    carried: dict[int, tuple[int, str]] = {}  # column -> (rows still covered, text)
    grid: list[list[str]] = []
    for number, tr in enumerate(own):
        row = {col: text for col, (_, text) in carried.items()}
        carried = {col: (left - 1, text) for col, (left, text) in carried.items() if left > 1}
        col = 0
        for cell in (c for c in tr if c.tag in ("td", "th")):
            while col in row:
                col += 1
            if col >= MAX_TABLE_COLUMNS:
                break
            text = _cell_text(cell)
            down = _span(cell.get("rowspan"), len(own) - number)
            for slot in range(col, min(col + _span(cell.get("colspan"), 0), MAX_TABLE_COLUMNS)):
                row[slot] = text
                if down > 1:
                    carried[slot] = (down - 1, text)
            col += 1
        width = max(row, default=-1) + 1
        grid.append([row.get(slot, "") for slot in range(width)])
    heads = 0
    while heads < len(own) and _is_header_row(own[heads]):
        heads += 1
    return _merged_header(grid, heads) if heads > 1 else grid


def _layout_box(table: Any) -> Any:
    """The only cell of a table of one row and one cell, else None."""
    rows = [
        cells
        for r in table.iter("tr")
        if next(r.iterancestors("table"), None) is table
        and (cells := [c for c in r if c.tag in ("td", "th")])
    ]
    return rows[0][0] if len(rows) == 1 and len(rows[0]) == 1 else None


_TABLE_PARTS = frozenset("tr td th thead tbody tfoot colgroup col".split())


def _outside_cells(table: Any) -> list[Any]:
    """The elements of ``table``'s own structure that are no row, row group or cell: its
    caption, and what broken markup left right in a row or a row group (``<tr><table>``)."""
    found = []
    for el in (table, *table.findall("thead"), *table.findall("tbody"), *table.findall("tfoot")):
        for child in el:
            if isinstance(child.tag, str) and child.tag not in _TABLE_PARTS:
                found.append(child)
            elif child.tag == "tr":
                found.extend(
                    c for c in child if isinstance(c.tag, str) and c.tag not in _TABLE_PARTS
                )
    return found


def _is_header_row(tr: Any) -> bool:
    cells = [c for c in tr if c.tag in ("td", "th")]
    return bool(cells) and (tr.getparent().tag == "thead" or all(c.tag == "th" for c in cells))


def _merged_header(grid: list[list[str]], heads: int) -> list[list[str]]:
    """The first ``heads`` rows (all headers) as one row: a Markdown table has one header
    row, and "2023 Q1" says what "Q1" alone does not."""
    width = max(len(r) for r in grid[:heads])
    merged: list[str] = []
    for slot in range(width):
        names: list[str] = []
        for row in grid[:heads]:
            name = row[slot] if slot < len(row) else ""
            if name and (not names or names[-1] != name):
                names.append(name)
        merged.append(" ".join(names))
    return [merged, *grid[heads:]]


_CELL_BREAKS = frozenset("table tr td th p div br li ul ol dl dt dd".split())


def _cell_text(cell: Any) -> str:
    """A cell's text on one line, its blocks and nested cells kept apart by spaces
    (``text_content`` ran a nested table's cells together: "namestrИдентификационное")."""
    parts: list[str] = []

    def visit(el: Any) -> None:
        parts.append(el.text or "")
        for child in el:
            if not isinstance(child.tag, str) or child.tag in _DROP:
                parts.append(child.tail or "")  # a script's code is not the cell's text
                continue
            apart = isinstance(child.tag, str) and child.tag in _CELL_BREAKS
            parts.append(" " if apart else "")
            visit(child)
            parts.append(" " if apart else "")
            parts.append(child.tail or "")

    visit(cell)
    return inline_text("".join(parts))


def _content_root(root: Any) -> Any:
    mains = root.xpath("//main | //*[@role='main']")
    if len(mains) == 1:
        return mains[0]
    articles = root.xpath("//article")
    if len(articles) == 1:
        return articles[0]
    body = root.find("body")
    return body if body is not None else root


def _render(data: bytes, path: str, skip: Collection[str], book: bool = False) -> _Renderer:
    root, notes = parse_page(data, path)
    renderer = _Renderer(skip)
    renderer.notes = notes
    try:
        hide(root)
        content = _content_root(root)
        # A book's page has no site around it: all of it is content, so class and id names
        # are not guessed at (Project Gutenberg's licence sits in "pg-footer"); landmark tags
        # and ARIA roles still mark what is not the text.
        renderer.walk(content, book or content.tag in ("main", "article"))
        renderer.flush()
    except RecursionError as exc:
        raise ConvertError(path, "HTML nested too deeply to convert") from exc
    return renderer


def page_block_keys(data: bytes, path: str) -> set[str]:
    """The block keys of one page, for ``repeated_blocks``."""
    return set(_render(data, path, frozenset()).keys)


def repeated_blocks(
    pages: Iterable[set[str]], min_pages: int = _MIN_PAGES, min_share: float = _MIN_SHARE
) -> frozenset[str]:
    """Keys of blocks on at least ``min_pages`` pages and ``min_share`` of them: a crawl's
    menus, footers and notices, whatever their markup."""
    counts: Counter[str] = Counter()
    total = 0
    for keys in pages:
        counts.update(keys)
        total += 1
    need = max(min_pages, total * min_share)
    return frozenset(k for k, n in counts.items() if n >= need)


def convert_html(
    data: bytes, path: str, boilerplate: Collection[str] = frozenset(), *, book: bool = False
) -> Converted:
    """Convert an HTML page to Markdown without its boilerplate; blocks whose key is in
    ``boilerplate`` (from ``repeated_blocks`` over the page's folder) are left out too.
    ``book``: a chapter of a book (EPUB), where only landmark tags and ARIA roles mark
    boilerplate, never class or id names, nor ``header`` and ``footer`` tags."""
    renderer = _render(data, path, boilerplate, book)
    meta: dict[str, Any] = {"repeated_blocks_removed": renderer.removed}
    if renderer.notes:
        meta["notes"] = list(renderer.notes)
    return renderer.writer.result(meta)
