"""The Markdown every converter writes, built block by block with its provenance map."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import astuple, dataclass, field
from typing import Any

from narezka.types import ProvenanceSpan, SourceLocation

__all__ = [
    "CodeRun",
    "Converted",
    "MarkdownWriter",
    "code_fence",
    "escape_line",
    "fenced",
    "inline_text",
    "link",
    "safe_url",
    "table_lines",
    "table_markdown",
]

_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
# A line that Markdown would read as a heading, quote, list item, rule or fence, if written
# as it is: its first character gets a backslash so the text stays a paragraph.
_BLOCK_START = re.compile(
    r"^(\s{0,3})(#{1,6}(?=\s|$)|>|[-+*](?=\s)|\d{1,9}[.)](?=\s)|```|~~~|=+\s*$)"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*):")
_TAB_OR_NEWLINE = {9: None, 10: None, 13: None}
_URL_EDGE = "".join(map(chr, (*range(0x21), *range(0x2000, 0x200B)))) + (
    "\u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# Characters that would end or break a Markdown link destination, percent-encoded.
_DESTINATION = {ord(c): f"%{ord(c):02X}" for c in " ()<>\\"} | {
    c: f"%{c:02X}" for c in (*range(0x20), 0x7F)
}


@dataclass(frozen=True, slots=True)
class Converted:
    """A converted file: its canonical Markdown, where each span came from, and metadata
    (e.g. the running headers and footers taken out of a PDF's text)."""

    markdown: str
    provenance: tuple[ProvenanceSpan, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def rest_json(self) -> dict[str, Any]:
        """Everything but the Markdown as JSON values: the provenance map as rows
        ``[start, end, page, slide, sheet, element]`` and the metadata (the conversion
        cache's and the converter child's one form)."""
        spans = [[s.start, s.end, *astuple(s.where)] for s in self.provenance]
        return {"spans": spans, "meta": dict(self.meta)}

    @classmethod
    def from_json(cls, markdown: str, rest: Mapping[str, Any]) -> Converted:
        """The conversion ``rest_json`` wrote, with its Markdown."""
        spans = tuple(ProvenanceSpan(s[0], s[1], SourceLocation(*s[2:])) for s in rest["spans"])
        return cls(markdown, spans, rest["meta"])


def inline_text(text: str) -> str:
    """``text`` on one line: runs of spaces and line breaks become one space, controls go."""
    return _SPACES.sub(" ", _CONTROLS.sub("", text).replace("\n", " ").replace("\r", " ")).strip()


def _url_view(url: str) -> str:
    """``url`` as the WHATWG URL parser sees it before reading a scheme: leading and trailing
    C0 controls and spaces stripped (Unicode spaces too, as other readers strip them), tabs
    and line breaks inside removed."""
    return url.strip(_URL_EDGE).translate(_TAB_OR_NEWLINE)


def safe_url(url: str) -> str | None:
    """``url`` as a link may keep it, or None: only ``http``, ``https``, ``mailto``, relative
    URLs and fragments pass. The scheme is read as a browser reads it (``JavaScript:``,
    `` javascript:``, ``java\\tscript:`` are ``javascript:``), in the value and in the value
    with HTML character references decoded once more (``java&Tab;script:``, which lxml's
    HTML4 entity table leaves as it is)."""
    kept = _url_view(url)
    for view in (kept, _url_view(html.unescape(url))):
        scheme = _SCHEME.match(view)
        if scheme and scheme.group(1).lower() not in _LINK_SCHEMES:
            return None
    return kept.translate(_DESTINATION)


def link(text: str, url: str) -> str:
    """``[text](url)`` for a link a document makes, or ``text`` alone when the URL's scheme
    may not be kept (``safe_url``) or it is empty; brackets in the text are escaped so that
    they cannot close the link early."""
    safe = safe_url(url)
    if not safe or not text:
        return text
    return "[" + text.replace("[", "\\[").replace("]", "\\]") + "](" + safe + ")"


def escape_line(line: str) -> str:
    """``line`` with a backslash before a start that would make it a Markdown block."""
    return _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line, count=1)


def _cell(text: str) -> str:
    return inline_text(text).replace("\\", "\\\\").replace("|", "\\|")


def table_markdown(rows: Sequence[Sequence[str]]) -> str:
    """A GFM table from rows of cell texts; the first row is the header, short rows padded."""
    width = max((len(r) for r in rows), default=0)
    return "\n".join(table_lines(rows, width))


def table_lines(rows: Iterable[Sequence[str]], width: int) -> Iterator[str]:
    """The lines of a GFM table ``width`` cells wide, one row at a time (the first row is the
    header; short rows padded): a table too big to hold twice is written as it is read."""
    if width == 0:
        return
    for number, row in enumerate(rows):
        cells = [_cell(c) for c in row[:width]]
        cells += [""] * (width - len(cells))
        yield "| " + " | ".join(cells) + " |"
        if number == 0:
            yield "|" + "---|" * width


def code_fence(body: str) -> str:
    """The fence for a code block of ``body``: tildes where the code holds backticks' fence,
    which would otherwise close the block early."""
    return "~~~~" if "```" in body else "```"


def fenced(body: str) -> str:
    """``body`` as one fenced code block."""
    fence = code_fence(body)
    return f"{fence}\n{body}\n{fence}"


class MarkdownWriter:
    """Appends blocks separated by a blank line and records the location of every piece."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._spans: list[ProvenanceSpan] = []

    def block(self, text: str, where: SourceLocation) -> None:
        """Append one block (a paragraph, heading, table, fenced code…) from ``where``."""
        self.pieces([(text, where)])

    def pieces(self, pieces: Sequence[tuple[str, SourceLocation]]) -> None:
        """Append one block made of ``pieces`` (e.g. a paragraph running over a page break)."""
        pieces = [(t, w) for t, w in pieces if t]
        if not pieces or not "".join(t for t, _ in pieces).strip():
            return
        if self._parts:
            self._append("\n\n", None)
        for text, where in pieces:
            self._append(text, where)

    def _append(self, text: str, where: SourceLocation | None) -> None:
        start = self._length
        self._parts.append(text)
        self._length += len(text)
        if where is None:
            return
        last = self._spans[-1] if self._spans else None
        # One span per run of the same location: the blank line between two blocks of one
        # page belongs to that page, so the map has no gaps inside a location.
        if last is not None and last.where == where:
            self._spans[-1] = ProvenanceSpan(last.start, self._length, where)
        else:
            self._spans.append(ProvenanceSpan(start, self._length, where))

    @property
    def length(self) -> int:
        """Characters of Markdown written so far (where the next block's text will end up
        after its blank line)."""
        return self._length

    def empty(self) -> bool:
        """Whether nothing was written yet."""
        return not self._parts

    def result(self, meta: Mapping[str, Any] | None = None) -> Converted:
        """The Markdown (ending in one newline) and its provenance map."""
        text = "".join(self._parts)
        if text:
            text += "\n"
        return Converted(text, tuple(self._spans), dict(meta or {}))


class CodeRun:
    """Code paragraphs in a row (Word, OpenDocument), written as one fenced block at the
    place of the first of them."""

    def __init__(self, writer: MarkdownWriter) -> None:
        self.writer = writer
        self.lines: list[str] = []
        self.at = SourceLocation()

    def add(self, line: str, where: Callable[[], SourceLocation]) -> None:
        """One more line; ``where`` is asked for the first line's place only (a converter
        that numbers its blocks counts the run as one)."""
        if not self.lines:
            self.at = where()
        self.lines.append(line)

    def flush(self) -> None:
        """Write the run gathered so far, if any, and start a new one."""
        if self.lines:
            self.writer.block(fenced("\n".join(self.lines)), self.at)
            self.lines.clear()
