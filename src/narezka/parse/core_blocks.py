"""The block scanner's answer from the native core, as the Python scanner's ``Block`` list.

The core (``narezka._core.scan_blocks``) walks the same rules as
:mod:`narezka.parse.scanner` and makes the blocks itself; what markdown-it's helpers or the
title rules decide (trimming, explicit anchors, slugs, fence lines inside containers) it
leaves as fix-ups, done here with the very functions the Python scanner calls, so both give
equal blocks.
"""

from __future__ import annotations

from markdown_it.common.utils import mdTrim

from narezka._native import core
from narezka.parse.leaf_blocks import _S2 as _SET_END
from narezka.parse.leaf_blocks import _S4 as _SET_TITLE
from narezka.parse.leaf_blocks import _S5 as _SET_ANCHOR
from narezka.parse.leaf_blocks import _S6 as _SET_FENCE
from narezka.parse.leaf_blocks import _S7 as _SET_CLOSE
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


def core_blocks(text: str, start: int, src: str, stop: int, body_end: int) -> list[Block] | None:
    """The blocks of ``src`` (``text[start:]`` plus a sentinel newline, lines ending before
    ``stop``) by the core, or None when it is not built or leaves the document to Python."""
    if core is None:
        return None
    found = core.scan_blocks(src, stop, start, Block, _KINDS)
    if found is None:
        return None
    blocks: list[Block] = found[0]
    fixes: list[tuple[int, str, str]] = found[1]
    for index, content, run in fixes:
        block = blocks[index]
        if run:  # a fence inside a container: its lines lose the container's markers
            fence, close = fence_lines(text, block.start, block.end, run)
            if not close and block.end == body_end:  # left open at the end of the body
                _SET_END(block, len(text))
            _SET_FENCE(block, fence)
            _SET_CLOSE(block, close)
        else:
            title, anchor = heading_title(mdTrim(content))
            _SET_TITLE(block, title)
            _SET_ANCHOR(block, anchor or slugify(title))
    return blocks
