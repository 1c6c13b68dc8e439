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

from markdown_it.common.utils import mdTrim
from markdown_it.rules_block.html_block import HTML_SEQUENCES

from narezka.parse.core_blocks import core_blocks
from narezka.parse.leaf_blocks import (
    _ATX,
    _AUTOCOMPLETED_CAP,
    _BLANK_LINE,
    _BLANKS,
    _BULLET,
    _HOT,
    _HR,
    _MAX_LEVEL,
    _ORDERED,
    _PLAIN_BLOCK,
    _QUOTE,
    _STARTERS,
    _UNDERLINE,
    LeafRules,
    _autocompleted,
    _Bail,
    _block,
)
from narezka.types import Block, BlockKind

_PARA, _TABLE, _LIST = 0, 1, 2  # which block asks whether a line interrupts it


class _Scan(LeafRules):
    """The container rules and the driver: markdown-it's block loop over ``LeafRules``."""

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

    # complexity: the scanner's hot loop: one branch per CommonMark block start, inline for speed
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

    # complexity: the scanner's hot loop: every way a paragraph or list item can end, inline
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

    # complexity: the scanner's hot loop: list item continuation rules of CommonMark, inline
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


def scan_blocks(text: str, start: int = 0, *, native: bool = True) -> list[Block] | None:
    """The leaf blocks ``parse_blocks(text, start)`` would return, or None when unsure.

    The native core answers first where it is built (``native=False`` skips it: the tests
    compare the two); what it leaves, this module's scanner tries.
    """
    body = text[start:] if start else text
    if "\r" in body or "\0" in body:  # markdown-it rewrites these, shifting its offsets
        return None
    tail = body.rfind("\n") + 1
    # markdown-it drops a last line of only spaces and tabs
    stop = tail if not body[tail:].strip(" \t") else len(body) + 1
    src = body + "\n"
    if native:
        end = len(body)
        while end and body[end - 1] == "\n":
            end -= 1
        blocks = core_blocks(text, start, src, stop, start + end)
        if blocks is not None:
            return blocks
    scan = _Scan(text, start, src, stop, True, 0)
    try:
        scan.run(0, 0, -1, 0, -1, 0, 0)
    except _Bail:
        return None
    return scan.out
