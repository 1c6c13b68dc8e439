"""Headings: from the outline (bookmarks) when it agrees with the page, else from the page
itself: a size above the body text's, or a bold line that stands alone or is numbered."""

from __future__ import annotations

import re
from collections import Counter

from narezka.convert.pdf.base import _HEADING_RATIO, _MAX_HEADING, _WORDS, _Line

_NUMBERED_TITLE = re.compile(
    r"^(?:\d{1,2}(?:\.\d{1,2}){0,4}\.?|[IVX]{1,5}\.|[A-ZА-Я]\.|Глава\s+\d+\.?|Chapter\s+\d+\.?)"
    r"\s+\S",
)
"""A printed section number before a title: ``3.1 Overview``, ``IV. Results``,
``А. Приложение``, ``Глава 2``."""
_NUMBER_PREFIX = re.compile(r"^\s*(?:\d{1,2}(?:\.\d{1,2}){0,4}\.?|[IVX]{1,5}\.)\s+")
_NOT_A_TITLE_END = (".", ",", ";")
"""A title may end in ``?``, ``!`` or ``:``; a line ending so is a sentence's."""
_LEADER = re.compile(r"(?:\.\s?){4,}\s*\d+$|…\s*\d+$")
"""A contents entry's dot leader and page number: ``Diagnosis ........ 13``."""
_MAX_WORDS = 16
_MAX_RUN = 3
"""At most this many lines of one heading style in a row: more is a paragraph set large."""
_AGREE = 0.5
"""The share of outline titles that must be found on the pages for the outline to be used."""


def _title_key(title: str) -> str:
    """A heading's letters and digits, lowercased, its printed number left out: a title
    wrapped over lines, its hyphen joined or not, numbered on the page and not in the
    bookmark (or the other way round), still matches its bookmark."""
    return "".join(_WORDS.findall(_NUMBER_PREFIX.sub("", title).lower()))


def _outline(pdf: object) -> dict[str, int]:
    """Outline (bookmark) titles by ``_title_key``, with levels from 1."""
    titles: dict[str, int] = {}
    try:
        for mark in pdf.get_toc():  # type: ignore[attr-defined]
            title = _title_key(mark.get_title())
            if title:
                titles.setdefault(title, min(mark.level + 1, 6))
    except Exception:  # a broken outline costs headings, not the document
        return {}
    return titles


def _outline_matches(lines: list[_Line], outline: dict[str, int]) -> list[tuple[int, int, int]]:
    """(first line, last line, level) of each outline title found on the pages; a title
    may run over up to three lines."""
    found = []
    i = 0
    while i < len(lines):
        joined = ""
        for j in range(i, min(i + 3, len(lines))):
            joined += lines[j].text
            level = outline.get(_title_key(joined))
            if level:
                found.append((i, j, level))
                i = j
                break
        i += 1
    return found


def _mark_headings(lines: list[_Line], outline: dict[str, int]) -> None:
    """Set ``heading`` on lines that start a heading: outline titles when at least half of
    them are found on the pages, else the page's own signs (``_page_headings``)."""
    if len(outline) >= 2:
        found = _outline_matches(lines, outline)
        if len({_title_key(lines[i].text) for i, _, _ in found}) >= _AGREE * len(outline):
            for first, last, level in found:
                for k in range(first, last + 1):
                    lines[k].heading = level
            return
    _page_headings(lines)


def _body_size(lines: list[_Line]) -> float:
    weights: Counter[float] = Counter()
    for line in lines:
        weights[round(line.size, 1)] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def _looks_like_title(line: _Line) -> bool:
    text = line.text.strip()
    return (
        len(text) <= _MAX_HEADING
        and len(text.split()) <= _MAX_WORDS
        and any(ch.isalpha() for ch in text)
        and not text.endswith(_NOT_A_TITLE_END)
        and not _LEADER.search(text)
        and not line.cells
        and not line.mono
        and line.upright
    )


def _style(line: _Line, body: float) -> tuple[float, bool] | None:
    """The heading style a line is set in, or None for body text: a size at least
    ``_HEADING_RATIO`` above the body's, or the body's size in bold when the line is
    numbered like a section or stands alone between lines that are not bold."""
    if not _looks_like_title(line):
        return None
    size = round(line.size, 1)
    if size >= body * _HEADING_RATIO:
        return size, line.bold
    if line.bold and size >= body * 0.95:
        return size, True
    return None


def _page_headings(lines: list[_Line]) -> None:
    """Headings from the page when there is no outline to trust. OCR lines carry no font,
    tables and code are not headings."""
    typed = [ln for ln in lines if ln.paragraph is None]
    body = _body_size(typed)
    if not body:
        return
    styles = [_style(ln, body) for ln in typed]
    for i, style in enumerate(styles):
        if style is None or style[0] >= body * _HEADING_RATIO:
            continue
        # A bold line of body size: a heading when numbered, or alone (a bold paragraph's
        # lines, a bold term in a list, are not).
        before = styles[i - 1] if i else None
        after = styles[i + 1] if i + 1 < len(styles) else None
        numbered = bool(_NUMBERED_TITLE.match(typed[i].text.strip()))
        if not numbered and (before == style or after == style):
            styles[i] = None
    _drop_long_runs(styles)
    order = sorted({s for s in styles if s is not None}, key=lambda s: (-s[0], not s[1]))
    levels = {style: min(rank + 1, 6) for rank, style in enumerate(order)}
    for line, style in zip(typed, styles, strict=True):
        if style is not None:
            line.heading = levels[style]


def _drop_long_runs(styles: list[tuple[float, bool] | None]) -> None:
    """Unset runs of more than ``_MAX_RUN`` lines in one heading style."""
    start = 0
    for i in range(1, len(styles) + 1):
        if i == len(styles) or styles[i] != styles[start]:
            if styles[start] is not None and i - start > _MAX_RUN:
                styles[start:i] = [None] * (i - start)
            start = i
