"""Lines grouped into Markdown blocks (paragraphs, code blocks, tables, headings)."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterator

from narezka.convert.markdown import MarkdownWriter, code_fence, escape_line, table_markdown
from narezka.convert.pdf.base import _BULLET, _CODE_GAP, _HYPHENS, _NUMBERED, _PARAGRAPH_GAP, _Line
from narezka.types import SourceLocation

_WRAP_SLACK = 0.0
"""Characters of slack when telling whether the next line's first word would have fitted.
A code box ends a little left of the prose's edge, so a line that fills it exactly and a
line wrapped there look alike (``RUN pip install … requirements.txt`` then ``COPY``, or
``"--workers",`` then ``"4"]``); none is taken: a wrapped line read as two cuts quoted
strings, two lines read as one keep every string."""


def _mark_wrapped(lines: list[_Line]) -> None:
    """Mark code lines that a renderer wrapped at the page's width (a browser prints ``pre``
    with ``white-space: pre-wrap``): a line whose next line's first word would not have
    fitted before the text's right edge, the rightmost end of the document's prose lines
    (text wraps there). A document of code alone has no such edge and is left as it is."""
    edges = [ln.runs[-1][1] for ln in lines if ln.runs and not ln.mono and not ln.cells]
    if not edges:
        return
    edge = max(edges)
    for prev, line in itertools.pairwise(lines):
        if not (prev.mono and line.mono and prev.extent[1] > prev.extent[0]):
            continue
        words = line.text.split()
        if not words or line.text[:1].isspace():
            continue  # an indented line is a line of its own
        if prev.text.rstrip().endswith((".", "!", "?")) and words[0][:1].isupper():
            continue  # a sentence ends and the next begins: lines of their own (text in code)
        per_char = (prev.extent[1] - prev.extent[0]) / max(len(prev.text.strip()), 1)
        room = edge - prev.extent[1]
        prev.wraps = room < per_char * (1 + len(words[0]) - _WRAP_SLACK)


def _joins_apart(prev: _Line, line: _Line) -> bool | None:
    """Whether ``line`` continues ``prev`` when either was read by OCR or is a table row
    (None when neither is)."""
    if prev.note or line.note:  # footnotes: each its own paragraph, apart from the body
        return prev.note and line.note and prev.page == line.page and not line.text[:1].isdigit()
    if prev.paragraph is not None or line.paragraph is not None:  # read by OCR
        return prev.paragraph == line.paragraph and prev.page == line.page
    if prev.table or line.table:  # rows of one ruled table
        return prev.table == line.table and prev.page == line.page
    if prev.cells or line.cells:  # rows of one table: as many cells, on one page
        return len(prev.cells) == len(line.cells) and prev.page == line.page
    return None


def _joins(prev: _Line, line: _Line, leading: float = 0.0) -> bool:
    """Whether ``line`` continues ``prev``'s paragraph; ``leading`` is the document's body
    line spacing in font sizes (``_body_leading``), 0 when unknown."""
    apart = _joins_apart(prev, line)
    if apart is not None:
        return apart
    if prev.heading != line.heading or prev.mono != line.mono:
        return False
    if prev.wraps:  # a code line the renderer wrapped, maybe over a page break
        return True
    if line.heading:
        return prev.page == line.page
    if _BULLET.match(line.text.lstrip()) or _NUMBERED.match(line.text.lstrip()):
        return False
    ends = prev.baseline if prev.last_baseline is None else prev.last_baseline
    if prev.page != line.page or line.baseline > ends:
        # A page or column break: a sentence that runs on continues in lower case.
        return not prev.text.rstrip().endswith((".", "!", "?", ":")) and line.text[:1].islower()
    # Baselines: lines of a paragraph lie 1.15-1.4 font sizes apart; a paragraph's spacing
    # or a blank line adds at least half a line more.
    gap = _CODE_GAP if line.mono else _PARAGRAPH_GAP  # a code block's blank line stays in it
    if leading > 0 and not line.mono:
        # Set tight (LaTeX's 1.2), a document parts paragraphs or list items by less than
        # 1.6 sizes: a gap clearly wider than its own line spacing parts them.
        gap = min(gap, _LEADING_STEP * leading)
    return 0 < ends - line.baseline < gap * max(prev.size, 1.0)


_LEADING_STEP = 1.2
"""A baseline gap this many times the body's line spacing or more parts paragraphs. Items
set 1.5 sizes apart in a text set at 1.2 (``fr_olap.pdf``'s ``q1``…``q3``) are 1.25 times
it; a line spaced out by a tall formula or a superscript stays under."""


def _body_leading(lines: list[_Line]) -> float:
    """The document's usual gap between the baselines of two lines of one paragraph, in font
    sizes: the median over neighbouring plain lines of one size on one page that lie less
    than ``_PARAGRAPH_GAP`` apart; 0 when fewer than 20 pairs tell."""
    ratios = []
    for prev, line in itertools.pairwise(lines):
        plain = not (
            prev.heading or line.heading or prev.mono or line.mono or prev.cells or line.cells
            or prev.table or line.table or prev.note or line.note
            or prev.paragraph is not None or line.paragraph is not None
        )  # fmt: skip
        if not plain or prev.page != line.page or abs(prev.size - line.size) > 0.1:
            continue
        ends = prev.baseline if prev.last_baseline is None else prev.last_baseline
        ratio = (ends - line.baseline) / max(prev.size, 1.0)
        if 0 < ratio < _PARAGRAPH_GAP:
            ratios.append(ratio)
    return statistics.median(ratios) if len(ratios) >= _LEADING_PAIRS else 0.0


_LEADING_PAIRS = 20


def _groups(lines: list[_Line]) -> Iterator[list[_Line]]:
    leading = _body_leading(lines)
    group: list[_Line] = []
    for line in lines:
        if group and not _joins(group[-1], line, leading):
            yield group
            group = []
        group.append(line)
    if group:
        yield group


def _indents(group: list[_Line], starts: list[bool]) -> list[int]:
    """Spaces before each line of a code block: its left edge's offset from the block's, in
    characters: PDFium's text keeps one blank of many (or none), the glyphs' places keep
    them all. -1 where the line keeps its own text's blanks: it continues a wrapped one
    (``starts`` False) or its place is unknown."""
    known = [ln for ln, s in zip(group, starts, strict=True) if s and ln.extent[1] > ln.extent[0]]
    widths = sorted(
        (ln.extent[1] - ln.extent[0]) / len(ln.text.strip())
        for ln in known
        if len(ln.text.strip()) >= 4
    )
    if not widths or widths[len(widths) // 2] <= 0:
        return [-1] * len(group)
    per_char = widths[len(widths) // 2]
    left = min(ln.extent[0] for ln in known)
    return [
        max(0, round((ln.extent[0] - left) / per_char)) if s and ln.extent[1] > ln.extent[0] else -1
        for ln, s in zip(group, starts, strict=True)
    ]


def _broken_mark(text: str, piece: str) -> str | None:
    """The mark (`` ` `` or ``**``) that closes ``text`` and opens the next line's ``piece``
    when a line end cut one code span or bold run in two (`` `uv add` `python-dotenv` ``)."""
    for mark in ("**", "`"):
        if text.endswith(mark) and piece.startswith(mark):
            if mark == "`" and (text.endswith("``") or piece.startswith("``")):
                return None
            return mark
    return None


def _write_code(writer: MarkdownWriter, group: list[_Line]) -> None:
    """A group of monospaced lines as one fenced block, each line located on its page."""
    first = group[0]
    body = "\n".join(line.text for line in group)
    fence = code_fence(body)
    pieces = [(fence + "\n", SourceLocation(page=first.page))]
    # A line the renderer wrapped runs on into the next: one line again.
    ends = [" " if line.wraps else "\n" for line in group[:-1]] + ["\n"]
    starts = [True] + [not line.wraps for line in group[:-1]]
    indents = _indents(group, starts)
    pieces += [
        (
            (line.text if indent < 0 else " " * indent + line.text.lstrip()).replace("\ufffe", "-")
            + end,
            SourceLocation(page=line.page),
        )
        for line, end, indent in zip(group, ends, indents, strict=True)
    ]
    pieces[-1] = (pieces[-1][0] + fence, pieces[-1][1])
    writer.pieces(pieces)


def _paragraph_head(text: str) -> str:
    """A paragraph's first piece: a bullet as a Markdown list item, a number kept, any other
    start that Markdown would read as a block escaped."""
    bullet = _BULLET.match(text)
    if bullet:
        return "- " + text[bullet.end() :]
    if _NUMBERED.match(text):
        return text
    return escape_line(text)


def _write(writer: MarkdownWriter, group: list[_Line]) -> None:
    first = group[0]
    if first.cells and len(group) > 1:
        table = table_markdown([line.cells for line in group])
        writer.block(table, SourceLocation(page=first.page))
        return
    if first.mono and not first.heading:
        _write_code(writer, group)
        return
    parts: list[tuple[str, SourceLocation]] = []
    text = ""
    for line in group:
        piece = line.text.strip()
        if text:
            if text.endswith(_HYPHENS) and text[-2:-1].isalpha() and piece[:1].islower():
                text = text[:-1]  # a word hyphenated at the line end, joined
                parts[-1] = (parts[-1][0][:-1], parts[-1][1])
            elif text.endswith("\ufffe"):
                pass  # PDFium's hyphen before a capital or digit: one word (Content-Disposition)
            elif (mark := _broken_mark(text, piece)) is not None:
                # A code span or bold run the line end cut in two: one again.
                text = text[: -len(mark)]
                parts[-1] = (parts[-1][0][: -len(mark)], parts[-1][1])
                piece = " " + piece[len(mark) :]
            else:
                piece = " " + piece
        text += piece
        parts.append((piece, SourceLocation(page=line.page)))
    if first.heading:
        # A heading's weight is the heading's own: bold marks inside it are noise.
        parts = [(text.replace("**", ""), where) for text, where in parts]
        parts[0] = ("#" * first.heading + " " + parts[0][0], parts[0][1])
    else:
        parts[0] = (_paragraph_head(parts[0][0]), parts[0][1])
    writer.pieces([(t.replace("\x02", "-").replace("\ufffe", "-"), w) for t, w in parts])
