"""Running headers, footers and page numbers: found by place and repetition across pages."""

from __future__ import annotations

import math
import re

from narezka.convert.pdf.base import _DIGITS, _Line

_PAGE_NUMBER = re.compile(
    r"^[\s\-–—.·|•]*(?:(?:page|p\.|стр\.?|страница|с\.)\s*)?\d{1,5}"
    r"(?:\s*(?:/|of|из)\s*\d{1,5})?[\s\-–—.·|•]*$",
    re.IGNORECASE,
)
"""A page number line: ``12``, ``- 12 -``, ``Page 3 of 10``, ``стр. 4``, ``3/10``. Not a line
of code at a page's top that holds a number (``"80"]``)."""
_REPEAT_SHARE = 0.5
"""A margin line (digits ignored) on at least this share of the pages is a running header,
when its numbers are constant or count the pages (``_follows_pages``)."""
_PLACE = 4.0
"""Points of baseline within which a margin line is at the same place on two pages."""
_PLACED_REPEATS = 3
"""A margin line (digits ignored, numbers counting the pages) at one place on this many
pages is a running line, however long the document."""
_FOLIO = re.compile(r"^(\d{1,4})\s+\D.{0,80}$|^.{0,80}\D\s+(\d{1,4})$")
"""A running line with the page number at one end: ``12 Cancer Council``, ``Glossary 69``."""
_PAGE_OFFSET = 50
"""The largest difference between a printed page number and the page's place in the file
(front matter numbered apart, a chapter printed from page 31)."""


def _running_key(text: str) -> str:
    return _DIGITS.sub("#", " ".join(text.lower().split()))


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in _DIGITS.findall(text))


def _follows_pages(seen: list[tuple[int, tuple[int, ...]]]) -> bool:
    """Whether the numbers of one margin line as it recurs on pages (page, its numbers) are
    constant or count the pages (``Page 3 of 12``, ``- 14 -`` with a fixed offset): a running
    header's. Lines that differ otherwise are text (one invoice a page: ``Invoice 1001``,
    ``Invoice 1002``… with their totals)."""
    for values in zip(*(numbers for _, numbers in seen), strict=True):
        if len(set(values)) == 1:
            continue
        offsets = {value - page for value, (page, _) in zip(values, seen, strict=True)}
        if len(offsets) != 1 or abs(next(iter(offsets))) > _PAGE_OFFSET:
            return False
    return True


def _strip_running(pages: list[list[_Line]]) -> tuple[list[_Line], list[str]]:
    """All lines but running headers, footers and page numbers; and the texts removed. A
    page is never left empty by it: a page of such lines alone keeps them (but its page
    number)."""
    seen: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
    placed: dict[tuple[str, int], list[tuple[int, tuple[int, ...]]]] = {}
    # A page printed twice (a memo's copy, a form) repeats its body as well as its margins:
    # that says nothing of running lines, so each distinct page counts once.
    distinct: set[tuple[str, ...]] = set()
    for lines in pages:
        page_text = tuple(" ".join(ln.text.split()) for ln in lines)
        if page_text in distinct:
            continue
        distinct.add(page_text)
        for key, line in {_running_key(ln.text): ln for ln in lines if ln.margin}.items():
            seen.setdefault(key, []).append((line.page, _numbers(line.text)))
            spot = (key, round(line.baseline / _PLACE))
            placed.setdefault(spot, []).append((line.page, _numbers(line.text)))
    need = max(2, math.ceil(len(distinct) * _REPEAT_SHARE))
    running = {key for key, where in seen.items() if len(where) >= need and _follows_pages(where)}
    # A chapter's running head ("Diagnosis 13", "Diagnosis 15"…) or a footer on every other
    # page recurs on fewer pages, but at one place: enough there.
    need = min(need, _PLACED_REPEATS)
    running |= {
        key for (key, _), where in placed.items() if len(where) >= need and _follows_pages(where)
    }
    folios = _folio_places(placed, running)
    kept: list[_Line] = []
    removed: dict[str, str] = {}
    for lines in pages:
        page_kept, page_removed = _page_running(lines, running, folios, single=len(pages) == 1)
        for key, line in page_removed:
            removed.setdefault(key, line.text.strip())
        kept.extend(page_kept)
    return kept, list(removed.values())


def _folio_places(
    placed: dict[tuple[str, int], list[tuple[int, tuple[int, ...]]]], running: set[str]
) -> dict[int, int]:
    """Where the running lines print the page number, and its offset from the page's place
    in the file: {place: offset}."""
    found: dict[int, int] = {}
    for (key, place), where in placed.items():
        page, numbers = where[0]
        # One number (a "#" in the key may be printed: "Codes #" holds none).
        if key in running and key.count("#") == 1 and len(numbers) == 1 and len(where) >= 2:
            found.setdefault(place, numbers[0] - page)
    return found


def _is_folio_line(line: _Line, folios: dict[int, int]) -> bool:
    """A margin line that prints the page's number at its start or end at a place where
    running lines print it: a chapter's running head seen on two pages only
    (``Glossary 69``)."""
    offset = folios.get(round(line.baseline / _PLACE))
    if offset is None:
        return False
    match = _FOLIO.match(line.text.strip())
    number = match and (match.group(1) or match.group(2))
    return bool(number) and int(str(number)) == line.page + offset


def _is_page_number(line: _Line, single: bool) -> bool:
    """A margin line that only prints a page number. In a document of one page nothing
    repeats to confirm it, and a bare number that ends a memo or an invoice in its body is
    its text (``1500``): there only a number set at the page's edge is one (a page printed
    from a book: ``633``)."""
    return bool(_PAGE_NUMBER.match(line.text.strip())) and (line.edge or not single)


def _page_running(
    lines: list[_Line],
    running: set[str],
    folios: dict[int, int] | None = None,
    *,
    single: bool = False,
) -> tuple[list[_Line], list[tuple[str, _Line]]]:
    """One page's lines kept, and its running lines (with their keys) removed; a page of
    running lines alone keeps them, but its page number. ``single``: the document's only
    page."""
    page_kept = []
    page_removed: list[tuple[str, _Line]] = []
    for line in lines:
        key = _running_key(line.text)
        if line.margin and (
            key in running
            or _is_page_number(line, single)
            or _is_folio_line(line, folios or {})
            # Nothing repeats on a document's only page (a page cut from a paper): its
            # head is told by the page number set apart at its end.
            or (single and line.folio)
        ):
            page_removed.append((key, line))
        else:
            page_kept.append(line)
    if not page_kept:
        back = {id(ln) for _, ln in page_removed if not _PAGE_NUMBER.match(ln.text.strip())}
        page_kept = [ln for _, ln in page_removed if id(ln) in back]
        page_removed = [(k, ln) for k, ln in page_removed if id(ln) not in back]
    return page_kept, page_removed
