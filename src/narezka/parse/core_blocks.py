"""The block scanner's answer from the native core, as the Python scanner's ``Block`` list.

The core (``narezka._core.scan_blocks``) walks the same rules as
:mod:`narezka.parse.scanner` and returns plain rows; what markdown-it's helpers or the title
rules decide (trimming, explicit anchors, slugs, fence lines inside containers) is done here
with the very functions the Python scanner calls, so both give equal blocks.
"""

from __future__ import annotations

from markdown_it.common.utils import mdTrim

from narezka._native import core
from narezka.parse.leaf_blocks import _block
from narezka.parse.syntax import fence_lines, heading_title, slugify
from narezka.types import Block, BlockKind

_KINDS = (
    BlockKind.PARAGRAPH,
    BlockKind.LIST_ITEM,
    BlockKind.HEADING,
    BlockKind.CODE,
    BlockKind.TABLE,
    BlockKind.RULE,
    BlockKind.HTML,
)
"""The core's kind codes, in order (native/src/scanner.rs)."""
_HEADING, _CODE = BlockKind.HEADING, BlockKind.CODE


def core_blocks(text: str, start: int, src: str, stop: int, body_end: int) -> list[Block] | None:
    """The blocks of ``src`` (``text[start:]`` plus a sentinel newline, lines ending before
    ``stop``) by the core, or None when it is not built or leaves the document to Python."""
    if core is None:
        return None
    rows = core.scan_blocks(src, stop)
    if rows is None:
        return None
    out: list[Block] = []
    append = out.append
    for code, s, e, level, content, run, fence_end, close_start, close_end in rows:
        kind = _KINDS[code]
        first, last = s + start, e + start
        if kind is _HEADING:
            title, anchor = heading_title(mdTrim(content))
            append(_block(kind, first, last, level, title, anchor or slugify(title), "", ""))
        elif kind is _CODE and run:
            if fence_end:  # a closed top-level fence: both its lines are whole lines
                fence = text[first : fence_end + start].strip()
                close = text[close_start + start : close_end + start].strip()
            else:
                fence, close = fence_lines(text, first, last, run)
                if not close and last == body_end:  # left open at the end of the body
                    last = len(text)
            append(_block(kind, first, last, level, "", "", fence, close))
        else:
            append(_block(kind, first, last, level, "", "", "", ""))
    return out
