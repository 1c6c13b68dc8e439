"""Headings: from the outline (bookmarks) or from font sizes."""

from __future__ import annotations

from collections import Counter

from narezka.convert.pdf.base import _HEADING_RATIO, _MAX_HEADING, _WORDS, _Line


def _title_key(title: str) -> str:
    """A heading's letters and digits, lowercased: a title wrapped over lines, its hyphen
    joined or not, still matches its bookmark."""
    return "".join(_WORDS.findall(title.lower()))


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


def _mark_headings(lines: list[_Line], outline: dict[str, int]) -> None:
    """Set ``heading`` on lines that start a heading: outline titles if the PDF has them (a
    title may run over up to three lines), else sizes above the body text's."""
    if len(outline) >= 2:
        for i in range(len(lines)):
            joined = ""
            for j in range(i, min(i + 3, len(lines))):
                joined += lines[j].text
                level = outline.get(_title_key(joined))
                if level:
                    for k in range(i, j + 1):
                        lines[k].heading = level
                    break
        return
    lines = [line for line in lines if line.paragraph is None]  # OCR gives no font sizes
    weights: Counter[float] = Counter()
    for line in lines:
        weights[round(line.size, 1)] += len(line.text)
    if not weights:
        return
    body = weights.most_common(1)[0][0]
    sizes = sorted(
        {round(ln.size, 1) for ln in lines if ln.size >= body * _HEADING_RATIO}, reverse=True
    )
    levels = {size: min(i + 1, 6) for i, size in enumerate(sizes)}
    for line in lines:
        if len(line.text) <= _MAX_HEADING and round(line.size, 1) in levels:
            line.heading = levels[round(line.size, 1)]
