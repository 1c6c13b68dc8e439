"""Markdown block map: leaf blocks with character offsets, and YAML front matter.

Block structure comes from markdown-it-py (CommonMark + GFM tables) with inline parsing
switched off: we need where blocks are, not what their inline content means.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import yaml
from markdown_it import MarkdownIt

from narezka.parse.scanner import scan_blocks
from narezka.parse.syntax import (
    LENIENT_FENCE,
    fence_lines,
    heading_title,
    mask_info_backticks,
    slugify,
)
from narezka.types import Block, BlockKind, Document, RawDocument, Secret

__all__ = [
    "block_at",
    "heading_title",
    "parse_blocks",
    "parse_blocks_reference",
    "parse_document",
    "plain_document",
    "slugify",
    "split_front_matter",
]

_FRONT_MATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)
_LEAF_KINDS = {
    "paragraph_open": BlockKind.PARAGRAPH,
    "fence": BlockKind.CODE,
    "code_block": BlockKind.CODE,
    "html_block": BlockKind.HTML,
    "table_open": BlockKind.TABLE,
    "hr": BlockKind.RULE,
}


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table")
    md.core.ruler.disable(["inline", "text_join"])
    return md


def split_front_matter(text: str) -> tuple[int, Mapping[str, Any], str]:
    """Return (body offset, parsed metadata, problem) for a leading ``---`` YAML block.

    A block that is not valid YAML mapping is still excluded from the body (it is metadata by
    position) and reported through ``problem`` so the caller can warn.
    """
    if not text.startswith("---\n"):
        return 0, {}, ""
    close = _FRONT_MATTER_CLOSE.search(text, 4)
    if close is None:
        return 0, {}, ""
    end = close.end()
    body = end + 1 if text[end : end + 1] == "\n" else end
    meta, problem = _load_front_matter(text[4 : close.start()])
    if problem:
        return body, {}, problem
    if meta is None:
        return body, {}, ""
    if not isinstance(meta, dict):
        return body, {}, "front matter is not a YAML mapping"
    return body, {str(k): _plain(v) for k, v in meta.items()}, ""


# Front matter is a few titles and tags. YAML aliases let a few hundred bytes stand for
# billions of values (and a cycle for infinitely many), which every later copy of the metadata
# would expand, so the composed tree is measured before anything is built from it.
FRONT_MATTER_VALUES = 10_000
FRONT_MATTER_DEPTH = 64


def _load_front_matter(raw: str) -> tuple[Any, str]:
    """The front matter's data, or a problem saying why it is refused."""
    try:
        node = yaml.compose(raw, Loader=yaml.SafeLoader)
        if node is None:
            return None, ""
        problem = _oversized(node)
        if problem:
            return None, problem
        return yaml.SafeLoader("").construct_document(node), ""
    except yaml.YAMLError as exc:
        return None, f"front matter is not valid YAML ({exc.__class__.__name__})"
    except RecursionError:
        return None, f"front matter nests deeper than {FRONT_MATTER_DEPTH} levels"
    except (ValueError, OverflowError) as exc:
        # Well-formed YAML whose value cannot be built: 2024-02-30, a 5,000-digit number.
        return None, f"front matter holds a value that cannot be read ({exc})"


def _oversized(root: yaml.Node) -> str:
    """Why the tree rooted at ``root`` is too big once its aliases are expanded, or ``""``.

    Walks the tree as the aliases expand it (a shared node counts each time it is reached), so
    a cycle or an alias bomb runs into the value budget instead of the machine's memory.
    """
    seen = 0
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > FRONT_MATTER_VALUES:
            return (
                f"front matter expands to more than {FRONT_MATTER_VALUES:,} values "
                "(YAML aliases repeat it)"
            )
        if depth > FRONT_MATTER_DEPTH:
            return f"front matter nests deeper than {FRONT_MATTER_DEPTH} levels"
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend(((key, depth + 1), (value, depth + 1)))
    return ""


def _plain(value: Any) -> Any:
    """YAML dates and other objects become JSON-friendly values."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def parse_blocks(text: str, start: int = 0) -> list[Block]:
    """Leaf blocks of ``text[start:]`` with offsets into ``text``, in document order.

    The fast line scanner answers for almost every document; when it is unsure it says so and
    markdown-it-py (:func:`parse_blocks_reference`, the oracle it is tested against) decides.
    """
    blocks = scan_blocks(text, start)
    return parse_blocks_reference(text, start) if blocks is None else blocks


def parse_blocks_reference(text: str, start: int = 0) -> list[Block]:
    """Leaf blocks of ``text[start:]`` by markdown-it-py: CommonMark plus GFM tables.

    A block spans whole lines, from its first line's start to its last line's end (without
    the newline), container markers (``>``, list bullets) included.
    """
    body = text[start:]
    line_starts = [0]
    find = body.find
    pos = find("\n")
    while pos != -1:
        line_starts.append(pos + 1)
        pos = find("\n", pos + 1)
    n_lines = len(line_starts)

    def span(first: int, last_exclusive: int) -> tuple[int, int]:
        last = min(last_exclusive, n_lines) - 1
        end = line_starts[last + 1] - 1 if last + 1 < n_lines else len(body)
        return start + line_starts[first], start + max(end, line_starts[first])

    blocks: list[Block] = []
    parser_input = body
    if "`" in body:
        parser_input = LENIENT_FENCE.sub(mask_info_backticks, body)
    tokens = _parser().parse(parser_input)
    list_depth = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif kind == "heading_open" and tok.map is not None:
            raw_title = tokens[i + 1].content if i + 1 < len(tokens) else ""
            title, anchor = heading_title(raw_title)
            s, e = span(*tok.map)
            blocks.append(
                Block(
                    BlockKind.HEADING,
                    s,
                    e,
                    level=int(tok.tag[1]),
                    title=title,
                    anchor=anchor or slugify(title),
                )
            )
        elif kind in _LEAF_KINDS and tok.map is not None:
            s, e = span(*tok.map)
            block_kind = _LEAF_KINDS[kind]
            if block_kind is BlockKind.PARAGRAPH and list_depth:
                block_kind = BlockKind.LIST_ITEM
            fence = fence_close = ""
            if kind == "fence":
                fence, fence_close = fence_lines(text, s, e, tok.markup)
                if not fence_close and e == start + len(body.rstrip("\n")):
                    # An unterminated fence owns the rest of the file, final newlines too:
                    # a chunk may not end between its last line and the end of the file.
                    e = len(text)
            blocks.append(
                Block(
                    block_kind,
                    s,
                    e,
                    level=list_depth,
                    fence=fence,
                    fence_close=fence_close,
                )
            )
            if kind in ("paragraph_open", "table_open"):
                i = _skip_to_close(tokens, i)
        i += 1
    return blocks


def _skip_to_close(tokens: list[Any], i: int) -> int:
    close = tokens[i].type.replace("_open", "_close")
    nesting = tokens[i].level
    while i < len(tokens) and not (tokens[i].type == close and tokens[i].level == nesting):
        i += 1
    return i


def parse_document(
    raw: RawDocument, secrets: tuple[Secret, ...] = ()
) -> tuple[Document, list[str]]:
    """Parse front matter and the block map; return the document (with ``secrets``, found
    in ``raw.text`` beforehand, if any) and warnings."""
    body_start, meta, problem = split_front_matter(raw.text)
    warnings = [f"{raw.source}: {problem}"] if problem else []
    blocks = parse_blocks(raw.text, body_start)
    doc = Document(
        source=raw.source,
        text=raw.text,
        body_start=body_start,
        meta=meta,
        blocks=tuple(blocks),
        encoding=raw.encoding,
        mtime=raw.mtime,
        secrets=secrets,
        provenance=raw.provenance,
    )
    return doc, warnings


def plain_document(raw: RawDocument, secrets: tuple[Secret, ...] = ()) -> Document:
    """The document as plain text: no front matter, no block map (code, chats)."""
    return Document(
        source=raw.source,
        text=raw.text,
        encoding=raw.encoding,
        mtime=raw.mtime,
        blocks=(),
        secrets=secrets,
        provenance=raw.provenance,
    )


def block_at(blocks: tuple[Block, ...] | list[Block], starts: list[int], pos: int) -> Block | None:
    """The block containing ``pos`` (given the blocks' sorted start offsets), if any."""
    k = bisect_right(starts, pos) - 1
    if k >= 0 and blocks[k].start <= pos < blocks[k].end:
        return blocks[k]
    return None
