"""The block scanner's state and its leaf-block rules: headings, code, fences, table heads,
HTML blocks and reference definitions, each over character offsets of one container.

:mod:`narezka.parse.scanner` drives them (container rules, the interrupt checks, the fast
paths); the patterns both share live here.
"""

from __future__ import annotations

import re
from dataclasses import fields
from functools import lru_cache

from markdown_it.common.normalize_url import normalizeLink, validateLink
from markdown_it.common.utils import mdTrim, normalizeReference
from markdown_it.rules_block.html_block import HTML_SEQUENCES
from markdown_it.rules_block.table import escapedSplit

from narezka.parse.syntax import (
    LENIENT_FENCE,
    fence_lines,
    heading_title,
    mask_info_backticks,
    slugify,
)
from narezka.types import Block, BlockKind

# Patterns that find a *line* start with a literal "\n" prefix: sre skips ahead to the next
# newline at C speed, where a MULTILINE "^" would be tried at every character (3x slower).
_HOT = re.compile(r"\n[ \t]*(?:\n|[-#>`~=<*+_|:0-9])")  # a line that may end a paragraph
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_CODE_END = re.compile(r"\n {0,3}[^ \t\n]")  # first line no longer in a top-level code block
_BLANKS = re.compile(r"(?:[ \t]*\n)*")
_FENCE = re.compile(r"(`{3,}|~{3,})([^\n]*)")
_ATX = re.compile(r"#{1,6}(?=[ \t\n])")
_HR = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*\n")
_UNDERLINE = re.compile(r"(?:=+|-+)[ \t]*\n")
_ORDERED = re.compile(r"([0-9]{1,9})[.)](?=[ \t\n])")
_BULLET = re.compile(r"[-*+](?=[ \t\n])")
_DELIM = re.compile(r"(?:[|:][-|: \t]|-[-|:])[-|: \t]*\n")
_HEADER_CELL = re.compile(r"^:?-+:?$")
_LABEL_END = re.compile(r"[\[\]\\]")
_REFDEF = re.compile(r"\[([^\[\]\\\n]*)\]:[ \t]*([^\s<()\\\x00-\x1f\x7f]+)[ \t]*\n")
_TITLE_START = re.compile(r"[ \t]*[\"'(]")
_QUOTE = re.compile(r" {0,3}> ?")
_STARTERS = frozenset("`~>*-_+0123456789[<#")  # first characters of non-paragraph blocks
# A top-level paragraph or ATX heading in one match, for the common case that ``run`` takes
# many steps for: blank lines, then a heading line, or a line starting a paragraph and the
# lines _HOT does not stop at; then a blank line (the match ends there). Before a blank line
# the table check fails, and so would every rule tried before these two.
# Possessive repeats: when the block does not end at a blank line, the match fails after one
# pass instead of backtracking through every line and character it read.
_PLAIN_BLOCK = re.compile(
    r"(?:[ \t]*\n)*+(?:(?:(?P<hashes>#{1,6})(?=[ \t\n])(?P<title>[^\n]*+)\n"
    r"|(?P<para>[^ \t\n`~>*\-_+0-9\[<#][^\n]*+\n(?:[ \t]*+[^ \t\n\-#>`~=<*+_|:0-9][^\n]*+\n)*+))"
    r"(?=[ \t]*\n)|(?P<fence>```|~~~))"  # a fence: the match ends inside its first line
)
_MAX_LEVEL = 18  # markdown-it stops nesting at level 20; stay clear of it

_FIELDS = ("kind", "start", "end", "level", "title", "anchor", "fence", "fence_close")
if tuple(f.name for f in fields(Block)) != _FIELDS:  # _block below must follow Block
    raise ImportError("narezka.types.Block changed its fields; update leaf_blocks._block")
_S0, _S1, _S2, _S3, _S4, _S5, _S6, _S7 = (vars(Block)[name].__set__ for name in _FIELDS)
_new = object.__new__


def _block(kind: BlockKind, start: int, end: int, level: int, title: str, anchor: str,
           fence: str, close: str) -> Block:  # fmt: skip
    """``Block(...)`` at half the cost (a sizeable share of the scan): a frozen dataclass's
    ``__init__`` calls ``object.__setattr__`` per field; its slot descriptors store directly."""
    block: Block = _new(Block)
    _S0(block, kind)
    _S1(block, start)
    _S2(block, end)
    _S3(block, level)
    _S4(block, title)
    _S5(block, anchor)
    _S6(block, fence)
    _S7(block, close)
    return block


_AUTOCOMPLETED_CAP = 0x10000
"""markdown-it ends a table once its rows lack more than this many cells in all (it fills
them in); only a table with more rows × columns than this can get there."""


def _autocompleted(src: str, rows: list[tuple[int, int]], width: int) -> bool:
    """Whether markdown-it would end this table early: its rows, one by one, lack more than
    the cap of cells (a 50k-row table with every cell in place lacks none, and is scanned)."""
    missing = 0
    for p, e in rows:
        cols = escapedSplit(mdTrim(src[p:e]))
        if cols and cols[0] == "":
            cols.pop(0)
        if cols and cols[-1] == "":
            cols.pop()
        missing += width - len(cols)
        if missing > _AUTOCOMPLETED_CAP:
            return True
    return False


class _Bail(Exception):
    """The document holds a construct the scanner does not model exactly."""


@lru_cache(maxsize=256)
def _closer(run: str, indent: int) -> re.Pattern[str]:
    """The closing line of a fence opened with ``run`` in a container indented ``indent``.

    Inside a list item the fence also ends (unclosed) at a non-blank line indented less than
    the item's content; group 1 marks that case, group 2 a tab we will not expand.
    """
    marker = re.escape(run[0]) + "{" + str(len(run)) + r",}[ \t]*\n"
    if indent == 0:
        return re.compile(r"\n {0,3}" + marker)
    out, close = f" {{0,{indent - 1}}}[^ \\t\\n]", f" {{{indent},{indent + 3}}}"
    return re.compile(rf"\n(?:({out})|( *\t)|{close}{marker})")


class LeafRules:
    """One pass over ``src`` (the body plus a sentinel newline); lines end before ``stop``."""

    def __init__(self, text: str, off: int, src: str, stop: int, lenient: bool, nest: int) -> None:
        self.text = text  # the caller's text: src[i] is text[i + off] on every line
        self.off = off
        # parse_blocks stretches a fence left open at the end of the body to the end of text
        end = len(src) - 1
        while end and src[end - 1] == "\n":
            end -= 1
        self.body_end = off + end if lenient else -1
        self.src = src
        self.stop = stop
        self.lenient = lenient
        self.nest = nest
        self.out: list[Block] = []
        self.markups: dict[int, str] = {}  # block index -> fence run, for quote remapping

    def lead(self, bol: int) -> tuple[int, int]:
        """(offset of the first non-blank character, its column with tabs expanded)."""
        src = self.src
        pos = bol
        col = 0
        while True:
            c = src[pos]
            if c == " ":
                col += 1
            elif c == "\t":
                col += 4 - col % 4
            else:
                return pos, col
            pos += 1

    def add(self, kind: BlockKind, bol: int, eol: int, level: int, title: str = "",
            anchor: str = "", markup: str = "") -> None:  # fmt: skip
        start, end = bol + self.off, eol + self.off
        fence = close = ""
        if markup:
            self.markups[len(self.out)] = markup
            fence, close = fence_lines(self.text, start, end, markup)
            if not close and end == self.body_end:
                end = len(self.text)
        self.out.append(_block(kind, start, end, level, title, anchor, fence, close))

    def heading(self, bol: int, eol: int, level: int, content: str) -> None:
        """A heading block with its title and anchor (explicit, else the slug)."""
        title, anchor = heading_title(content)
        self.add(BlockKind.HEADING, bol, eol, level, title, anchor or slugify(title))

    def lines(self, line: int, pos: int, end: int, blk: int, ov: bool) -> str:
        """markdown-it's ``getLines``: the lines before ``end``, minus ``blk`` columns, trimmed."""
        src = self.src
        parts = []
        k = line
        while k < end:
            e = src.find("\n", k)
            if ov and k == line:
                s = pos
            else:
                s = k
                while s < k + blk and src[s] == " ":
                    s += 1
                if blk and src[s] == "\t":
                    raise _Bail
            parts.append(src[s:e])
            k = e + 1
        return mdTrim("\n".join(parts))

    def code(self, line: int, nxt: int, blk: int, depth: int) -> int:
        """An indented code block: up to its last line indented 4+ beyond ``blk``."""
        src, stop = self.src, self.stop
        last = nxt - 1
        if blk == 0:
            m = _CODE_END.search(src, nxt - 1)
            e = stop - 1 if m is None else min(m.start(), stop - 1)
            while e > last:  # drop trailing blank lines
                b = src.rfind("\n", 0, e) + 1
                if src[b:e].strip(" \t"):
                    break
                e = b - 1
            last = max(e, last)
        else:
            k = nxt
            while k < stop:
                p, c = self.lead(k)
                e = src.find("\n", p)
                if src[p] != "\n":
                    if c - blk < 4:
                        break
                    last = e
                k = e + 1
        self.add(BlockKind.CODE, line, last, depth)
        return last + 1

    def fence_run(self, bol: int, pos: int) -> str:
        """The fence marker run opening a fence at ``pos``, or ''."""
        m = _FENCE.match(self.src, pos)
        if m is None:
            return ""
        run = m.group(1)
        if run[0] == "`" and "`" in m.group(2):
            # CommonMark says paragraph; parse_blocks masks some of these (raw lines only).
            if not self.lenient:
                return ""
            lenient = LENIENT_FENCE.match(self.src, bol)
            if lenient is None or mask_info_backticks(lenient) == lenient.group(0):
                return ""
        return run

    def fence(self, line: int, nxt: int, blk: int, depth: int, run: str) -> int:
        """A fenced code block opened with ``run``: up to its closing line, or where the
        container ends; returns the next line."""
        m = _closer(run, blk).search(self.src, nxt - 1)
        if m is None or m.start() >= self.stop:
            end = self.stop
        elif blk and m.group(2) is not None:
            raise _Bail
        elif blk and m.group(1) is not None:
            end = m.start() + 1  # an outdented line closes the item, and the fence with it
        elif not blk:
            # Outside containers both fence lines are whole lines: what fence_lines would
            # return is the lines stripped (the closer matched a run at least as long).
            src, end = self.src, m.end()
            self.markups[len(self.out)] = run
            fence, close = src[line : nxt - 1].strip(), src[m.start() + 1 : end - 1].strip()
            start, off = line + self.off, self.off
            self.out.append(
                _block(BlockKind.CODE, start, end - 1 + off, depth, "", "", fence, close)
            )
            return end
        else:
            end = m.end()
        self.add(BlockKind.CODE, line, max(end - 1, nxt - 1), depth, markup=run)
        return max(end, nxt)

    def table_head(self, pos: int, col: int, eol: int, nxt: int, blk: int) -> int:
        """Column count when this line and the next open a GFM table, else 0."""
        if col - blk >= 4:
            return 0
        src = self.src
        dp, dc = self.lead(nxt)
        if dc < blk or dc - blk >= 4 or not _DELIM.match(src, dp):
            return 0
        cells = src[dp : src.find("\n", dp)].split("|")
        aligns = 0
        for i, cell in enumerate(cells):
            t = mdTrim(cell)
            if not t:
                if i == 0 or i == len(cells) - 1:
                    continue
                return 0
            if not _HEADER_CELL.search(t):
                return 0
            aligns += 1
        head = mdTrim(src[pos:eol])
        if "|" not in head:
            return 0
        cols = escapedSplit(head)
        if cols and cols[0] == "":
            cols.pop(0)
        if cols and cols[-1] == "":
            cols.pop()
        return len(cols) if cols and len(cols) == aligns else 0

    def reference(self, pos: int, eol: int) -> bool:
        """A one-line link reference definition (no block); bail on anything fancier."""
        src = self.src
        m = _LABEL_END.search(src, pos + 1, eol)
        if m is None or m.group() == "\\":
            raise _Bail
        if m.group() == "[" or src[m.end()] != ":":
            return False
        r = _REFDEF.match(src, pos)
        if r is None or _TITLE_START.match(src, eol + 1):
            raise _Bail
        return bool(normalizeReference(r.group(1))) and validateLink(normalizeLink(r.group(2)))

    def html(self, line: int, pos: int, eol: int, blk: int, depth: int) -> int:
        """An HTML block of markdown-it's seven kinds, or -1: up to its end condition."""
        src, stop = self.src, self.stop
        text = src[pos:eol]
        close = next((end for start, end, _ in HTML_SEQUENCES if start.search(text)), None)
        if close is None:
            return -1
        on_blank = close.search("") is not None  # types 6 and 7 end before a blank line
        k = eol + 1
        if not close.search(text):
            if blk == 0 and on_blank:
                m = _BLANK_LINE.search(src, k - 1)
                k = stop if m is None else min(m.start() + 1, stop)
            while k < stop and not (blk == 0 and on_blank):
                p, c = self.lead(k)
                e = src.find("\n", p)
                if c < blk and (on_blank or src[p] != "\n"):
                    break
                t = src[p:e]
                if close.search(t):
                    if t:
                        k = e + 1
                    break
                k = e + 1
        self.add(BlockKind.HTML, line, k - 1, depth)
        return k
