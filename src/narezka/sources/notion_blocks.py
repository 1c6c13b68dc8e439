"""Notion's blocks (what ``GET /v1/blocks/{id}/children`` answers) as Markdown.

Headings, paragraphs, bulleted and numbered lists, to-dos, toggles, quotes and callouts (as
quotes), code, tables, dividers, equations, bookmarks and the captions of images and files;
rich text keeps bold, italic, strikethrough, inline code and links. A block's children (a
nested list, a toggle's body, a table's rows) come from ``children(block_id)``, the caller's
paginated fetch. Child pages are not rendered here: the caller stages each as a page of its
own below this one (its breadcrumbs), and :func:`render` returns their ids. An inline
database (``child_database``) is a table of its rows, which ``table(database_id)`` reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Rendered", "plain_text", "render"]

MAX_DEPTH = 8
"""Nested blocks rendered at most this deep (a deeper toggle's body is left out)."""
MAX_BLOCKS = 20_000
"""Blocks one page may have read; past it the page ends where it got to."""

Children = Callable[[str], list[dict[str, Any]]]
Table = Callable[[str], list[list[str]]]
"""An inline database's rows as cells, its header first ([]: none to show)."""


@dataclass(slots=True)
class Rendered:
    """A page's Markdown and the child pages it holds."""

    lines: list[str] = field(default_factory=list)
    child_pages: list[str] = field(default_factory=list)
    blocks: int = 0

    @property
    def markdown(self) -> str:
        return "\n".join(self.lines).strip() + "\n"


def plain_text(rich: object) -> str:
    """The text of a rich-text array, without formatting."""
    if not isinstance(rich, list):
        return ""
    return "".join(str(part.get("plain_text", "")) for part in rich if isinstance(part, dict))


def _rich(rich: object) -> str:
    if not isinstance(rich, list):
        return ""
    out = []
    for part in rich:
        if not isinstance(part, dict):
            continue
        text = str(part.get("plain_text", ""))
        marks = part.get("annotations") if isinstance(part.get("annotations"), dict) else {}
        assert isinstance(marks, dict)
        if text.strip():
            if marks.get("code"):
                text = f"`{text}`"
            if marks.get("bold"):
                text = f"**{text}**"
            if marks.get("italic"):
                text = f"*{text}*"
            if marks.get("strikethrough"):
                text = f"~~{text}~~"
            href = part.get("href")
            if isinstance(href, str) and href.startswith(("http://", "https://")):
                text = f"[{text}]({href})"
        out.append(text)
    return "".join(out)


def render(
    blocks: list[dict[str, Any]], children: Children, table: Table | None = None
) -> Rendered:
    """``blocks`` (a page's top-level children) as Markdown; an inline database is its
    title and the table ``table`` reads (without one, its title alone)."""
    done = Rendered()
    _blocks(blocks, _Readers(children, table), done, "", 0)
    return done


@dataclass(frozen=True, slots=True)
class _Readers:
    children: Children
    table: Table | None


def _blocks(
    blocks: list[dict[str, Any]], read: _Readers, done: Rendered, indent: str, depth: int
) -> None:
    number = 0
    for block in blocks:
        if done.blocks >= MAX_BLOCKS:
            return
        done.blocks += 1
        kind = str(block.get("type", ""))
        number = number + 1 if kind == "numbered_list_item" else 0
        _block(block, kind, number, read, done, indent, depth)


_LIST_KINDS = frozenset({"bulleted_list_item", "numbered_list_item", "to_do", "toggle"})


def _block(
    block: dict[str, Any],
    kind: str,
    number: int,
    read: _Readers,
    done: Rendered,
    indent: str,
    depth: int,
) -> None:
    if kind == "child_page":
        done.child_pages.append(str(block.get("id", "")))
        return
    if kind == "table":
        _table(block, read.children, done, indent)
        return
    if kind == "child_database" and read.table is not None:
        _database(block, read.table, done, indent)
        return
    data = block.get(kind) if isinstance(block.get(kind), dict) else {}
    assert isinstance(data, dict)
    line = _markdown(kind, data, number)
    if line is not None and kind in _LIST_KINDS:
        done.lines.append(f"{indent}{line}")
    elif line is not None:
        _para(done, indent, line)
    if block.get("has_children") and depth < MAX_DEPTH:
        # A list item's children nest under it; a quote's stay in it; a column's or a synced
        # block's are the page's own text (indenting them would make a code block of them).
        nest = {"quote": "> ", "callout": "> "}.get(kind, "   " if kind in _LIST_KINDS else "")
        inner = indent + nest
        _blocks(read.children(str(block.get("id", ""))), read, done, inner, depth + 1)


def _markdown(kind: str, data: dict[str, Any], number: int) -> str | None:
    """One block's own line (its children aside); None for a kind that shows no text."""
    text = _rich(data.get("rich_text"))
    if kind.startswith("heading_") and kind[-1].isdigit():
        return f"{'#' * (int(kind[-1]) + 1)} {text}"
    if kind in _LIST_KINDS:
        mark = {"numbered_list_item": f"{number}."}.get(kind, "-")
        box = ("[x] " if data.get("checked") else "[ ] ") if kind == "to_do" else ""
        return f"{mark} {box}{text}"
    if kind in ("quote", "callout"):
        icon = data.get("icon")
        emoji = icon.get("emoji", "") if isinstance(icon, dict) else ""
        return f"> {emoji} {text}" if emoji else f"> {text}"
    if kind == "code":
        language = str(data.get("language") or "").replace("plain text", "")
        return f"```{language}\n{plain_text(data.get('rich_text'))}\n```"
    if kind in ("bookmark", "embed", "link_preview"):
        caption = _rich(data.get("caption"))
        return f"[{caption or data.get('url', '')}]({data.get('url', '')})"
    if kind in ("image", "file", "pdf", "video", "audio"):
        return _rich(data.get("caption")) or None
    simple = {
        "paragraph": text,
        "divider": "---",
        "equation": f"$$ {data.get('expression', '')} $$",
        "child_database": f"**{data.get('title', '')}** (a database)",
    }
    return simple.get(kind)


def _para(done: Rendered, indent: str, text: str) -> None:
    if text.strip():
        if done.lines and done.lines[-1].strip() not in ("", ">"):
            done.lines.append(indent.rstrip())  # a list before it ends here
        done.lines.extend((indent + text.replace("\n", "\n" + indent), indent.rstrip()))


def _table(block: dict[str, Any], children: Children, done: Rendered, indent: str) -> None:
    rows = []
    for row in children(str(block.get("id", ""))):
        cells = row.get("table_row", {}).get("cells", []) if isinstance(row, dict) else []
        rows.append([_rich(cell) for cell in cells])
    _grid(rows, done, indent)


def _database(block: dict[str, Any], table: Table, done: Rendered, indent: str) -> None:
    data = block.get("child_database") if isinstance(block.get("child_database"), dict) else {}
    assert isinstance(data, dict)
    _para(done, indent, f"**{data.get('title', '')}**")
    _grid(table(str(block.get("id", ""))), done, indent)


def _grid(cells: list[list[str]], done: Rendered, indent: str) -> None:
    """Rows of cells (the first the header) as a Markdown table."""
    rows = [[c.replace("|", "\\|").replace("\n", " ") for c in row] for row in cells]
    if not rows:
        return
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    table = [rows[0], ["---"] * width, *rows[1:]]
    done.lines.extend(f"{indent}| " + " | ".join(r) + " |" for r in table)
    done.lines.append("")
