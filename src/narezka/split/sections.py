"""Sections: a heading's territory, its path of titles and anchors, and which a range covers."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from narezka.parse.redaction import DerivedRedactor
from narezka.parse.syntax import slugify
from narezka.types import Block, BlockKind


@dataclass(frozen=True, slots=True)
class Section:
    """A heading's territory, from its line to the next heading (or, for strategies that
    find their own structure, a class, function or article: see ``context_for``)."""

    start: int
    path: tuple[str, ...]
    anchors: tuple[str, ...]


def heading_sections(blocks: Sequence[Block]) -> list[Section]:
    """One section per heading, with the titles and anchors of the headings above it."""
    sections: list[Section] = []
    # (level, titles, anchors) of the open headings: each extends its parent's tuples.
    path: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []
    heading = BlockKind.HEADING
    for block in blocks:
        if block.kind is not heading:
            continue
        level = block.level
        while path and path[-1][0] >= level:
            path.pop()
        titles, anchors = (path[-1][1], path[-1][2]) if path else ((), ())
        titles, anchors = (*titles, block.title), (*anchors, block.anchor)
        path.append((level, titles, anchors))
        sections.append(Section(block.start, titles, anchors))
    return sections


def anchors_in(
    sections: Sequence[Section], starts: Sequence[int], start: int, end: int
) -> list[dict[str, Any]]:
    """Where each section the range covers starts in it (a document offset, at least
    ``start``), with its own anchor and title; empty when the range lies in one section.

    A chunk merged from short sections gets only their common parent as its own anchor; this
    list lets a search link the section that matched. Text before the first heading is an
    entry with an empty anchor and title. ``starts`` are the sections' start offsets.
    """
    first = bisect_right(starts, start) - 1
    last = bisect_right(starts, max(start, end - 1)) - 1
    if first == last:
        return []
    out: list[dict[str, Any]] = []
    for k in range(first, last + 1):
        section = sections[k] if k >= 0 else Section(start, (), ())
        out.append(
            {
                "start": max(start, section.start),
                "anchor": section.anchors[-1] if section.anchors else "",
                "title": section.path[-1] if section.path else "",
            }
        )
    return out


def redacted_sections(sections: Sequence[Section], redactor: DerivedRedactor) -> list[Section]:
    """The sections with the document's secrets gone from every title and anchor.

    A title's own slug becomes the slug of its redacted title; any other anchor (an explicit
    ``{#id}``, a legal point's ``article-3-point``, a code name) loses each secret it holds,
    as written or as slugged, the way :meth:`DerivedRedactor.anchor` says."""
    out = []
    for section in sections:
        titles = section.path
        path = tuple(redactor(title) for title in titles)
        anchors = tuple(
            _redacted_anchor(a, *((titles[k], path[k]) if k < len(path) else ("", "")), redactor)
            for k, a in enumerate(section.anchors)
        )
        out.append(Section(section.start, path, anchors))
    return out


def _redacted_anchor(anchor: str, title: str, redacted: str, redactor: DerivedRedactor) -> str:
    if redacted != title and anchor == slugify(title):
        return slugify(redacted)
    if redacted != title and anchor == title:
        return redacted  # code outlines: the anchor is the name itself
    return redactor.anchor(anchor, slugify)
