"""The Markdown every converter writes, built block by block with its provenance map."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from narezka.types import ProvenanceSpan, SourceLocation

__all__ = [
    "Converted",
    "MarkdownWriter",
    "escape_line",
    "inline_text",
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


@dataclass(frozen=True, slots=True)
class Converted:
    """A converted file: its canonical Markdown, where each span came from, and metadata
    (e.g. the running headers and footers taken out of a PDF's text)."""

    markdown: str
    provenance: tuple[ProvenanceSpan, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)


def inline_text(text: str) -> str:
    """``text`` on one line: runs of spaces and line breaks become one space, controls go."""
    return _SPACES.sub(" ", _CONTROLS.sub("", text).replace("\n", " ").replace("\r", " ")).strip()


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

    def empty(self) -> bool:
        """Whether nothing was written yet."""
        return not self._parts

    def result(self, meta: Mapping[str, Any] | None = None) -> Converted:
        """The Markdown (ending in one newline) and its provenance map."""
        text = "".join(self._parts)
        if text:
            text += "\n"
        return Converted(text, tuple(self._spans), dict(meta or {}))
