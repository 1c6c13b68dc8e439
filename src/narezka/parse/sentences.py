"""Sentence boundaries for Russian and English prose, in linear time.

A boundary is the offset just past a sentence's closing punctuation and any closing quotes or
brackets; whitespace after it belongs to the gap before the next sentence. The finder is
conservative: when a full stop may belong to an abbreviation, an initial or a list number, it
is not a boundary, because the chunker cuts at these offsets and must never split a sentence.

Offsets are judged against the whole ``text``: ``start`` and ``end`` only select which
boundaries are reported, so ``sentence_ends(text, s, e)`` equals the boundaries ``b`` of
``sentence_ends(text)`` with ``s < b <= e``.
"""

from __future__ import annotations

import re

from narezka._native import core

__all__ = ["sentence_ends", "sentence_spans"]

_PUNCT = ".!?…"
# Closers that may follow the punctuation; `*` and `_` close Markdown emphasis («**Стоп.**»).
_CLOSERS = "»\"”’)]'*_"
_RUN_CHARS = frozenset(_PUNCT + _CLOSERS)
# Characters, besides upper-case letters and digits, that can open a sentence.
_OPENERS = frozenset("«“„\"'‘([")

# One scan finds both kinds of candidate:
#   1. a run of end punctuation plus closers, capturing the whitespace gap after it;
#   2. a line break followed by a blank line or a list-item line; the boundary is right after
#      the last non-space character before it.
# Both start with a literal character, which lets `re` skip ahead quickly. Nothing in the
# pattern can fail after a run was consumed (the gap look-ahead matches even when empty), so a
# run of dots is matched once rather than retried from each of its characters, which would be
# quadratic; a break likewise swallows its whole whitespace run, so blank lines are one match.
_CANDIDATE = re.compile(
    r"[.!?…]++[»\"”’)\]'*_]*+(?=(\s*+))"
    r"|\n(?=[^\S\n]*+(?:\n|(?:[-*+•]|\d{1,3}(?:\.\d{1,3}){0,3}[.)])[^\S\n]))\s*+"
)
_WS = re.compile(r"\s*+")
# What may stand between the gap and the first letter of the next sentence: a dialogue dash
# with its space, and Markdown emphasis or code markers.
_LEAD = re.compile(r"(?:[—–][^\S\n]*+)?[*_`]{0,3}")

# fmt: off
_RU_ABBR = [
    "др", "пр", "гг", "вв", "руб", "коп", "тыс", "млн", "млрд", "ул", "кв", "стр", "им", "проф",
    "акад", "доц", "ст", "см", "рис", "табл", "напр", "мин", "макс", "ок", "прим", "кг", "пер",
    "пл", "просп", "обл", "гл", "ср", "изд", "ред", "вып", "зам", "зав", "тел", "англ", "лат",
    "нем", "фр", "нач", "кон",
]
_EN_ABBR = [
    "Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Mt", "Jr", "Sr", "Inc", "Ltd", "Co", "Corp", "No",
    "Fig", "fig", "Vol", "vol", "pp", "vs", "etc", "approx", "cf", "al", "Gen", "Col", "Lt",
    "Capt", "Rev",
]
# fmt: on
# Matching is case-sensitive so that names such as «Макс» still end sentences; capitalised
# Russian forms are added because an abbreviation may open a sentence («См. рис. 2»).
_ABBREVIATIONS = frozenset(
    _RU_ABBR + [w.capitalize() for w in _RU_ABBR if w not in {"макс", "мин", "ок"}] + _EN_ABBR
)
_MAX_WORD = 9  # longer than every abbreviation, so a longer letter run never matches
_MAX_NUMBER = 20  # how far back an ordinal such as «1.2.3.» may reach
_MAX_INDENT = 16
# Single lower-case letters before a dot are abbreviations («т. е.», «в.», «e.g.») except
# real one-letter words that can close a sentence.
_ONE_LETTER_WORDS = frozenset("я")


def _clamp(text: str, start: int, end: int | None) -> tuple[int, int]:
    """Clip ``start`` and ``end`` to the text so that ``0 <= start <= end <= len(text)``."""
    n = len(text)
    start = max(0, min(start, n))
    end = n if end is None else max(start, min(end, n))
    return start, end


def _skip_space(text: str, pos: int, endpos: int | None = None) -> int:
    """Return the first index at or after ``pos`` that is not whitespace, at most ``endpos``."""
    match = _WS.match(text, pos, len(text) if endpos is None else endpos)
    return match.end() if match else pos  # `\s*+` always matches; this satisfies the type


def _not_end_dot(text: str, dot: int) -> bool:
    """Whether the single full stop at ``dot`` belongs to an abbreviation, initial or ordinal."""
    lo = max(0, dot - _MAX_WORD)
    j = dot
    while j > lo and text[j - 1].isalpha():
        j -= 1
    if j < dot:
        word = text[j:dot]
        if len(word) == 1:
            # An upper-case letter is an initial («А. С. Пушкин», «J. R. R. Tolkien»).
            return word not in _ONE_LETTER_WORDS
        return word in _ABBREVIATIONS
    # A list number («1.», «2.3.») alone at the start of a line is no sentence end.
    lo = max(0, dot - _MAX_NUMBER)
    j = dot
    while j > lo and (text[j - 1].isdigit() or text[j - 1] == "."):
        j -= 1
    if j == dot or not text[j].isdigit():
        return False
    lo = max(0, j - _MAX_INDENT)
    while j > lo and text[j - 1] in " \t":
        j -= 1
    return j == 0 or text[j - 1] == "\n"


def _is_punct_end(text: str, first: int, after: int, gap_end: int) -> bool:
    """Whether the run ``text[first:after]``, then whitespace up to ``gap_end``, ends a sentence."""
    n = len(text)
    if gap_end == n:
        return True
    char = text[gap_end]
    if char in "—–" and "\n" in text[after:gap_end]:
        return True  # a dialogue line opens a new sentence whatever follows the dash
    lead = _LEAD.match(text, gap_end)
    lead_end = lead.end() if lead else gap_end
    if lead_end == n:
        return True
    char = text[lead_end]
    if not (char.isupper() or char.isdigit() or char in _OPENERS):
        return False
    # Only a bare full stop can be part of an abbreviation; «?», «!» and «…» always end.
    return not (after - first == 1 and text[first] == "." and _not_end_dot(text, first))


def sentence_ends(
    text: str, start: int = 0, end: int | None = None, *, native: bool = True
) -> list[int]:
    """Return the sorted sentence boundaries ``b`` with ``start < b <= end``.

    Each boundary is just past a sentence's closing punctuation and closing quotes or brackets,
    or past the last non-space character before a paragraph break, before a list-item line, or
    before the end of the whole text. Cutting ``text`` at any returned offset never splits a
    sentence. Runs in time linear in ``end - start`` plus the whitespace around the range.

    The native core answers where it is built and knows every character of ``text``
    (``native=False`` skips it: the tests compare the two).
    """
    start, end = _clamp(text, start, end)
    if native and core is not None:
        found: list[int] | None = core.sentence_ends(text, start, end)
        if found is not None:
            return found
    return _sentence_ends(text, start, end)


# complexity: a hot loop over every candidate end; the Russian and English exceptions inline
def _sentence_ends(text: str, start: int, end: int) -> list[int]:
    """The Python reference of :func:`sentence_ends` (``start`` and ``end`` clamped)."""
    n = len(text)
    if start >= end:
        return []
    # A punctuation run may begin before `start` and still end inside the range.
    pos = start
    while pos > 0 and text[pos - 1] in _RUN_CHARS:
        pos -= 1
    # Look past `end` only as far as the look-aheads need: the gap there and a list marker.
    endpos = min(n, _skip_space(text, end) + 32)
    ends: list[int] = []
    for match in _CANDIDATE.finditer(text, pos, endpos):
        first = match.start()
        if text[first] == "\n":
            bound = first
            # Back over trailing spaces; a break swallows its whole run, so only a line break
            # before `pos` can stop this early, and then `bound <= start` drops it.
            while bound > 0 and text[bound - 1] != "\n" and text[bound - 1].isspace():
                bound -= 1
        else:
            bound, gap_end = match.span(1)
            if bound > end:
                break
            # «2.5», «example.com», «т.е»: no gap, so the text goes on.
            if gap_end == bound < n or not _is_punct_end(text, first, bound, gap_end):
                continue
        if start < bound <= end and (not ends or ends[-1] != bound):
            ends.append(bound)
    # The end of the text closes the last sentence, punctuated or not.
    if _skip_space(text, end) == n:
        last = end
        while last > start and text[last - 1].isspace():
            last -= 1
        if last > start and (not ends or ends[-1] != last):
            ends.append(last)
    return ends


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Return the ``(begin, end)`` spans of the sentences in ``text[start:end]``, in order.

    Spans have surrounding whitespace trimmed and together cover every non-space character of
    the range exactly once; the first and last may be parts of sentences cut by the range.
    """
    start, end = _clamp(text, start, end)
    spans: list[tuple[int, int]] = []
    left = start
    for bound in [*sentence_ends(text, start, end), end]:
        begin = _skip_space(text, left, bound)
        stop = bound
        while stop > begin and text[stop - 1].isspace():
            stop -= 1
        if begin < stop:
            spans.append((begin, stop))
        left = bound
    return spans
