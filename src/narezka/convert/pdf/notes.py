"""Footnotes apart from the body text: a page's last lines set smaller than the body, the
first of them starting with a note mark, are moved out of the sentence they interrupt (a
paragraph running on to the next page, a word hyphenated across it) to where that
paragraph ends, as paragraphs of their own."""

from __future__ import annotations

import re

from narezka.convert.pdf.base import _Line
from narezka.convert.pdf.headings import _body_size

__all__ = ["separate_notes"]

_NOTE_MARK = re.compile(r"^(?:\d{1,3}|[*†‡§¶]{1,3})\s*\S")
"""A footnote's start: its mark (``1``, ``*``, ``†``) then its text."""
_NOTE_SIZE = 0.92
"""Footnotes are set at most this share of the body's size (LaTeX: 9 on 10.95 points)."""


def _page_notes(lines: list[_Line], body: float) -> list[int]:
    """Indexes of the footnote lines at the end of one page's lines (empty if none)."""
    run: list[int] = []
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if line.size > body * _NOTE_SIZE or line.cells or line.paragraph is not None:
            break
        run.insert(0, i)
    # The run must start a note, and lie below the page's body text.
    while run and not _NOTE_MARK.match(lines[run[0]].text.strip()):
        run.pop(0)
    if not run or run[0] == 0:
        return []
    if lines[run[0]].baseline >= lines[run[0] - 1].baseline:
        return []
    return run


def separate_notes(lines: list[_Line], continues: object) -> list[_Line]:
    """``lines`` with each page's footnotes marked (``note``) and moved after the first
    line, from the page's end on, that does not continue the text before it
    (``continues(prev, line)``: the writer's own test)."""
    body = _body_size([ln for ln in lines if ln.paragraph is None])
    if not body:
        return lines
    pages: dict[int, list[int]] = {}
    for i, line in enumerate(lines):
        pages.setdefault(line.page, []).append(i)
    moved: dict[int, list[_Line]] = {}  # index of the line the notes go before -> notes
    taken: set[int] = set()
    for indexes in pages.values():
        page_lines = [lines[i] for i in indexes]
        run = _page_notes(page_lines, body)
        if not run:
            continue
        notes = [page_lines[k] for k in run]
        for note in notes:
            note.note = True
        taken.update(indexes[k] for k in run)
        after = _paragraph_end(lines, indexes[run[0]] - 1, taken, continues)
        moved.setdefault(after, []).extend(notes)
    if not moved:
        return lines
    out: list[_Line] = []
    for i, line in enumerate(lines):
        out.extend(moved.get(i, ()))
        if i not in taken:
            out.append(line)
    out.extend(moved.get(len(lines), ()))
    return out


def _paragraph_end(lines: list[_Line], last: int, taken: set[int], continues: object) -> int:
    """The index of the first body line after ``last`` that starts a new block."""
    prev = lines[last]
    for j in range(last + 1, len(lines)):
        if j in taken or lines[j].note:
            continue
        if not continues(prev, lines[j]):  # type: ignore[operator]
            return j
        prev = lines[j]
    return len(lines)
