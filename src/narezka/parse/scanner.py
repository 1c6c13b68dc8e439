"""Fast block scanner: the same leaf blocks as ``parse_blocks``, or None when unsure.

``scan_blocks`` re-implements the subset of markdown-it's block rules that real documentation
uses (paragraphs, ATX/setext headings, fenced and indented code, HTML blocks, GFM tables, rules,
lists, simple blockquotes, one-line link reference definitions) over character offsets. Plain
paragraph lines are skipped in bulk with one regex search for the next line that could end a
paragraph; fence bodies are skipped with one search for the closing fence. Whatever it does not
model exactly (lazy quotes, tabs in list indentation, multi-line reference definitions, ...)
makes it give up and return None, so the caller falls back to markdown-it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
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
_PARA, _TABLE, _LIST = 0, 1, 2  # which block asks whether a line interrupts it
_MAX_LEVEL = 18  # markdown-it stops nesting at level 20; stay clear of it

_FIELDS = ("kind", "start", "end", "level", "title", "anchor", "fence", "fence_close")
if tuple(f.name for f in fields(Block)) != _FIELDS:  # _block below must follow Block
    raise ImportError("narezka.types.Block changed its fields; update scanner._block")
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


class _Scan:
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

    def run(self, line: int, blk: int, li: int, depth: int, ov: int, ovp: int, ovc: int) -> int:
        """markdown-it's ``tokenize`` for one container: blocks from ``line`` while indented
        at least ``blk``; line ``ov`` is an item's first line whose content is at ``ovp`` in
        column ``ovc``. Returns where the container stopped (a non-blank line or ``stop``)."""
        if self.nest + 2 * depth >= _MAX_LEVEL:
            raise _Bail
        src, stop = self.src, self.stop
        plain = _PLAIN_BLOCK.match if ov == -1 else None  # a document, not a list item
        while True:
            if plain is not None:
                line = self.plain_blocks(plain, line)
            if line == ov and src[ovp] != "\n":
                pos, col = ovp, ovc
            else:
                if line == ov:  # the item's first line holds only its marker
                    line = ovp + 1
                c = src[line] if line < stop else "\n"
                if c == "\n" or c == " " or c == "\t":
                    m = _BLANKS.match(src, line)
                    line = m.end() if m else line
                    if line >= stop:
                        return stop
                    c = src[line]
                if c == " " or c == "\t":
                    pos, col = self.lead(line)
                else:
                    pos, col = line, 0
            if col < blk:
                return line
            line = self.block(line, pos, col, blk, li, depth, line == ov)

    def plain_blocks(self, plain: Callable[[str, int], re.Match[str] | None], line: int) -> int:
        """Top-level paragraphs and headings from ``line`` while ``_PLAIN_BLOCK`` matches;
        returns the line the general rules go on from."""
        src, stop, off, out = self.src, self.stop, self.off, self.out
        m = plain(src, line)
        while m is not None and m.end() < stop:
            if m.lastgroup == "fence":  # block's steps for a fence in column 0
                bol = m.start("fence")
                nxt = src.find("\n", bol) + 1
                run = "" if nxt < stop and src[nxt] in "|-: \t" else self.fence_run(bol, bol)
                if not run:  # perhaps a table, or a paragraph: the general rules decide
                    return bol
                line = self.fence(bol, nxt, 0, 0, run)
                m = plain(src, line)
                continue
            line = m.end()
            hashes = m.group("hashes")
            if hashes is None:
                para = m.start("para") + off
                out.append(_block(BlockKind.PARAGRAPH, para, line - 1 + off, 0, "", "", "", ""))
            else:
                raw = m.group("title").rstrip(" \t")
                bare = raw.rstrip("#")
                if bare and bare[-1] in " \t":  # closing #s count only after a space
                    raw = bare
                self.heading(m.start("hashes"), line - 1, len(hashes), mdTrim(raw))
            m = plain(src, line)
        return line

    def block(self, line: int, pos: int, col: int, blk: int, li: int, depth: int,
              ov: bool) -> int:  # fmt: skip
        """Try the block rules in markdown-it's order at a block start; return the next line."""
        src = self.src
        eol = src.find("\n", pos)
        nxt = eol + 1
        if col - blk >= 4:
            return self.code(line, nxt, blk, depth)
        if nxt < self.stop and src[nxt] in "|-: \t":
            end = self.table(line, pos, col, eol, nxt, blk, li, depth)
            if end >= 0:
                return end
        c = src[pos]
        if c not in _STARTERS:
            return self.paragraph(line, pos, eol, blk, li, depth, ov)
        if c in "`~":
            run = self.fence_run(line, pos)
            if run:
                return self.fence(line, nxt, blk, depth, run)
        elif c == ">":
            return self.quote(line, blk, depth)
        if c in "*-_" and _HR.match(src, pos):
            self.add(BlockKind.RULE, line, eol, depth)
            return nxt
        if c in "*-+" or "0" <= c <= "9":
            end = self.list(line, pos, col, blk, li, depth)
            if end >= 0:
                return end
        elif c == "[":
            if self.reference(pos, eol):
                return nxt
        elif c == "<":
            end = self.html(line, pos, eol, blk, depth)
            if end >= 0:
                return end
        elif c == "#":
            m = _ATX.match(src, pos)
            if m is not None:
                raw = src[m.end() : eol].rstrip(" \t")
                bare = raw.rstrip("#")
                if bare and bare[-1] in " \t":  # closing #s count only after a space
                    raw = bare
                self.heading(line, eol, m.end() - pos, mdTrim(raw))
                return nxt
        return self.paragraph(line, pos, eol, blk, li, depth, ov)

    def heading(self, bol: int, eol: int, level: int, content: str) -> None:
        title, anchor = heading_title(content)
        self.add(BlockKind.HEADING, bol, eol, level, title, anchor or slugify(title))

    def term(self, bol: int, pos: int, col: int, blk: int, li: int, mode: int, eol: int) -> bool:
        """Whether this line interrupts a paragraph, a table or a list (silent rules)."""
        if col - blk >= 4:
            return False
        src = self.src
        c = src[pos]
        if c in "`~":
            return bool(self.fence_run(bol, pos))
        if c == ">" or (c in "*-_" and _HR.match(src, pos)):
            return True
        if mode == _LIST:
            return False
        if c in "*-+" or "0" <= c <= "9":
            if li >= 0 and col - li >= 4 and col < blk:
                return False
            para = mode == _PARA and col >= blk
            m = _ORDERED.match(src, pos)
            if m is not None:
                if para and int(m.group(1)) != 1:
                    return False
            else:
                m = _BULLET.match(src, pos)
                if m is None:
                    return False
            return not para or bool(src[m.end() : eol].strip(" \t"))
        if c == "<":
            text = src[pos:eol]
            for start, _, interrupts in HTML_SEQUENCES:
                if start.search(text):
                    return interrupts
            return False
        return c == "#" and _ATX.match(src, pos) is not None

    def paragraph(self, line: int, pos: int, eol: int, blk: int, li: int, depth: int,
                  ov: bool) -> int:  # fmt: skip
        """A paragraph, or a setext heading when an underline comes first (lheading)."""
        src, stop = self.src, self.stop
        k = eol + 1
        while k < stop:
            m = _HOT.search(src, k - 1)
            h = stop if m is None else m.start() + 1
            if h >= stop:
                k = stop
                break
            if src[h] == "\n":
                k = h
                break
            hp, hc = self.lead(h)
            ch = src[hp]
            if h > k and ch in "|-:":  # the plain line above may head a table
                p = src.rfind("\n", 0, h - 1) + 1
                pp, pc = self.lead(p)
                if pc - blk <= 3 and self.table_head(pp, pc, h - 1, h, blk):
                    k = p
                    break
            if ch == "\n":
                k = h
                break
            he = src.find("\n", hp)
            if hc - blk > 3:  # lazy continuation, whatever it looks like
                k = he + 1
                continue
            if hc >= blk and ch in "=-" and _UNDERLINE.match(src, hp):
                self.heading(line, he, 1 if ch == "=" else 2, self.lines(line, pos, h, blk, ov))
                return he + 1
            if (he + 1 < stop and self.table_head(hp, hc, he, he + 1, blk)) or self.term(
                h, hp, hc, blk, li, _PARA, he
            ):
                k = h
                break
            k = he + 1
        kind = BlockKind.LIST_ITEM if depth else BlockKind.PARAGRAPH
        off = self.off
        self.out.append(_block(kind, line + off, k - 1 + off, depth, "", "", "", ""))
        return k

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

    def table(self, line: int, pos: int, col: int, eol: int, nxt: int, blk: int, li: int,
              depth: int) -> int:  # fmt: skip
        width = self.table_head(pos, col, eol, nxt, blk)
        if not width:
            return -1
        src, stop = self.src, self.stop
        k = src.find("\n", nxt) + 1
        rows: list[tuple[int, int]] = []
        while k < stop:
            p, c = self.lead(k)
            e = src.find("\n", p)
            if c < blk or self.term(k, p, c, blk, li, _TABLE, e) or not mdTrim(src[p:e]):
                break
            if c - blk >= 4:
                break
            rows.append((p, e))
            k = e + 1
        if len(rows) * width > _AUTOCOMPLETED_CAP and _autocompleted(src, rows, width):
            raise _Bail
        self.add(BlockKind.TABLE, line, k - 1, depth)
        return k

    def list(self, line: int, pos: int, col: int, blk: int, li: int, depth: int) -> int:
        """A bullet or ordered list: its items' blocks, one level deeper; -1 if not a list."""
        src, stop = self.src, self.stop
        if li >= 0 and col - li >= 4 and col < blk:
            return -1
        m = _ORDERED.match(src, pos)
        pattern = _ORDERED
        if m is None:
            m = _BULLET.match(src, pos)
            pattern = _BULLET
            if m is None:
                return -1
        mark = src[m.end() - 1]
        k = line
        while True:
            if "\t" in src[k:pos]:
                raise _Bail
            after = m.end()
            q = after
            while src[q] == " ":
                q += 1
            if src[q] == "\t":
                raise _Bail
            spaces = q - after
            initial = col + after - pos
            empty = src[q] == "\n"
            indent = initial + (1 if empty or spaces > 4 else spaces)
            if empty and (q + 1 >= stop or _BLANK_LINE.match(src, q)):
                # an empty item followed by a blank line is closed two lines down
                k = q + 1 if q + 1 >= stop else src.find("\n", q + 1) + 1
                k = min(k, stop)
            elif empty or spaces > 4 or (end := self.one_line_item(k, q, indent, blk, depth)) < 0:
                k = self.run(k, indent, blk, depth + 1, k, q, initial + spaces)
            else:
                k = end
            if k >= stop:
                return stop
            pos, col = self.lead(k)
            e = src.find("\n", pos)
            if col < blk or col - blk >= 4 or self.term(k, pos, col, blk, li, _LIST, e):
                return k
            m = pattern.match(src, pos)
            if m is None or src[m.end() - 1] != mark:
                return k

    def one_line_item(self, bol: int, q: int, indent: int, blk: int, depth: int) -> int:
        """The end of an item whose content is one plain line (at ``q``, in column
        ``indent``) followed by the next item's marker, or by blank lines and then a line
        outside the item, with its block added; -1 otherwise.

        What ``run`` would find, in a few steps instead of many: a blank line ends the
        paragraph, and so does the marker line (it is no lazy continuation: it sits less
        than 4 columns past the list's indent), whether or not it also heads a table; the
        content line cannot head one, as the line after it is blank or outdented."""
        src, stop = self.src, self.stop
        if src[q] in _STARTERS or self.nest + 2 * (depth + 1) >= _MAX_LEVEL:
            return -1
        nxt = src.find("\n", q) + 1
        if nxt >= stop:
            return -1
        blanks = _BLANKS.match(src, nxt)
        end = blanks.end() if blanks else nxt
        if end >= stop:
            end = stop
        else:
            pos, col = self.lead(end)
            if col >= indent:
                return -1
            if end == nxt:
                c = src[pos]
                if col - blk >= 4 or not (c in "*-+" or "0" <= c <= "9"):
                    return -1
                if _ORDERED.match(src, pos) is None and _BULLET.match(src, pos) is None:
                    return -1
        off = self.off
        self.out.append(
            _block(BlockKind.LIST_ITEM, bol + off, nxt - 1 + off, depth + 1, "", "", "", "")
        )
        return end

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

    def quote(self, line: int, blk: int, depth: int) -> int:
        """A top-level blockquote whose every line starts with ``>``: its content is scanned
        as a document of its own and mapped back to whole outer lines."""
        if blk or depth:
            raise _Bail
        src, stop = self.src, self.stop
        parts: list[str] = []
        bols: list[int] = []
        eols: list[int] = []
        k = line
        while k < stop:
            e = src.find("\n", k)
            m = _QUOTE.match(src, k)
            if m is None:
                if src[k:e].strip(" \t"):  # lazy continuation or an interrupting block
                    raise _Bail
                break
            inner = src[m.end() : e]
            if "\t" in inner[: len(inner) - len(inner.lstrip(" \t"))]:
                raise _Bail
            parts.append(inner)
            bols.append(k)
            eols.append(e)
            k = e + 1
        if eols[-1] == len(src) - 1 and not parts[-1].strip(" \t"):
            raise _Bail  # an empty quoted line at EOF trips an IndexError exit in markdown-it
        text = "\n".join(parts)
        sub = _Scan(text, 0, text + "\n", len(text) + 1, False, self.nest + 1)
        sub.run(0, 0, -1, 0, -1, 0, 0)
        starts = [0]
        for part in parts[:-1]:
            starts.append(starts[-1] + len(part) + 1)
        for i, b in enumerate(sub.out):
            first = bols[bisect_right(starts, b.start) - 1]
            last = eols[bisect_right(starts, b.end) - 1]
            self.add(b.kind, first, last, b.level, b.title, b.anchor, sub.markups.get(i, ""))
        return k


def scan_blocks(text: str, start: int = 0) -> list[Block] | None:
    """The leaf blocks ``parse_blocks(text, start)`` would return, or None when unsure."""
    body = text[start:] if start else text
    if "\r" in body or "\0" in body:  # markdown-it rewrites these, shifting its offsets
        return None
    tail = body.rfind("\n") + 1
    # markdown-it drops a last line of only spaces and tabs
    stop = tail if not body[tail:].strip(" \t") else len(body) + 1
    scan = _Scan(text, start, body + "\n", stop, True, 0)
    try:
        scan.run(0, 0, -1, 0, -1, 0, 0)
    except _Bail:
        return None
    return scan.out
