"""Headings: from the outline (bookmarks) when it agrees with the page, else from the page
itself: a size above the body text's, or a bold line that stands alone or is numbered."""

from __future__ import annotations

import ctypes
import re
from collections import Counter
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class _Mark:
    """An outline entry: its title as written, its level (from 1) and the page it points
    to (from 1; 0 when unknown)."""

    title: str
    level: int
    page: int


def _outline(pdf: object) -> dict[str, _Mark]:
    """Outline (bookmark) entries by ``_title_key`` of their titles."""
    titles: dict[str, _Mark] = {}
    try:
        for mark in pdf.get_toc():  # type: ignore[attr-defined]
            title = _title_of(mark)
            key = _title_key(title)
            if key and key not in titles:
                level = min(mark.level + 1, 6)
                titles[key] = _Mark(" ".join(title.split()), level, _mark_page(mark))
    except Exception:  # a broken outline costs headings, not the document
        return {}
    return titles


def _title_of(mark: object) -> str:
    """An outline entry's title. pypdfium2 decodes it strictly, and a title holding half
    an emoji (a lone UTF-16 surrogate) would cost the whole outline: read again, the half
    dropped, as PDFium's page text calls drop it."""
    try:
        return str(mark.get_title())  # type: ignore[attr-defined]
    except UnicodeDecodeError:
        import pypdfium2.raw as raw

        handle = mark.raw  # type: ignore[attr-defined]
        size = int(raw.FPDFBookmark_GetTitle(handle, None, 0))
        buffer = ctypes.create_string_buffer(size)
        raw.FPDFBookmark_GetTitle(handle, buffer, size)
        return buffer.raw[: max(size - 2, 0)].decode("utf-16-le", "ignore")


def _mark_page(mark: object) -> int:
    """The page (from 1) an outline entry points to; 0 when it points nowhere readable."""
    try:
        dest = mark.get_dest()  # type: ignore[attr-defined]
        index = dest.get_index() if dest is not None else None
    except Exception:  # a damaged destination costs the entry's page, not the outline
        return 0
    return index + 1 if isinstance(index, int) and index >= 0 else 0


def _outline_matches(lines: list[_Line], outline: dict[str, _Mark]) -> list[tuple[int, int, _Mark]]:
    """(first line, last line, entry) of each outline title found on the pages; a title
    may run over up to three lines."""
    found = []
    i = 0
    while i < len(lines):
        joined = ""
        for j in range(i, min(i + 3, len(lines))):
            joined += lines[j].text
            mark = outline.get(_title_key(joined))
            if mark:
                found.append((i, j, mark))
                i = j
                break
        i += 1
    return found


def _mark_headings(lines: list[_Line], outline: dict[str, _Mark]) -> list[_Line]:
    """The lines, ``heading`` set on those that start a heading: outline titles when at
    least half of them are found on the pages, else the page's own signs
    (``_page_headings``). An outline none of whose titles is printed on the page it points
    to, only elsewhere (a deck's contents frame: beamer prints no section title on its
    frames), gives each section a heading where its page starts, the page's own signs the
    rest."""
    if len(outline) >= 2:
        found = _outline_matches(lines, outline)
        if len({_title_key(lines[i].text) for i, _, _ in found}) >= _AGREE * len(outline):
            home = {_title_key(m.title) for i, _, m in found if lines[i].page == m.page}
            # None at home: a manual whose titles differ a little on their pages (a few
            # found there) keeps the outline's matches, as before.
            if not home and all(m.page for m in outline.values()):
                return _sections_at_pages(lines, outline)
            for first, last, mark in found:
                for k in range(first, last + 1):
                    lines[k].heading = mark.level
            return lines
    _page_headings(lines)
    return lines


def _sections_at_pages(lines: list[_Line], outline: dict[str, _Mark]) -> list[_Line]:
    """The page's own headings, one level under the outline's deepest, and each outline
    entry as a heading line of its own before the first line of its page."""
    _page_headings(lines, below=max(m.level for m in outline.values()))
    starts: dict[int, list[_Mark]] = {}
    for mark in outline.values():
        starts.setdefault(mark.page, []).append(mark)
    out: list[_Line] = []
    for line in lines:
        for mark in starts.pop(line.page, []):
            out.append(
                _Line(
                    mark.title, line.page, line.size, False, False, line.baseline, False, mark.level
                )
            )
        out.append(line)
    return out


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


def _page_headings(lines: list[_Line], below: int = 0) -> None:
    """Headings from the page when there is no outline to trust (levels from ``below`` + 1).
    OCR lines carry no font, tables and code are not headings."""
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
    levels = {style: min(below + rank + 1, 6) for rank, style in enumerate(order)}
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
