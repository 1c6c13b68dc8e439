"""Word ends: the places where a cl100k_base count splits exactly.

tiktoken cuts a text into pre-tokens with one regular expression and runs BPE inside each
pre-token alone, so a text's count is the sum of its pre-tokens' counts. At a *word end* ``p``
(``text[p - 1]`` a letter, ``text[p]`` not a letter) every pre-token ends at or before ``p`` or
starts at or after it, whatever surrounds the text:

- the only alternatives of cl100k_base's expression that take a letter are the letter run
  ``[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++`` and the contraction ``'(?i:[sdmt]|ll|ve|re)``; a run stops
  at the first non-letter, and a contraction that would reach past ``p`` needs a letter at
  ``p``;
- every other alternative stops at the first letter, before ``p``; none looks behind, and
  ``$`` only asks whether the text ends.

So ``count(text) == count(text[:p]) + count(text[p:])``, and a join of two texts moves the
count only through the few characters between the left one's last word end and the right
one's first.

A *line start* ``p`` (``text[p - 1]`` a line feed, ``text[p]`` a letter) splits so too: the
letter run cannot take a line feed as its one leading non-letter, the punctuation run takes
line feeds after it only up to the letter, and the whitespace alternatives end a run with its
last line feed (``\\s*[\\r\\n]``; alone, the text ends there and ``\\s++$`` takes the same run)
or stop before a blank that a non-blank follows. A join over a blank line before a word then
counts only the left one's tail with the line feeds: a short text that recurs.

The packer sizes a group exactly from its pieces' counts with both rules
(:meth:`narezka.split.sizes.Sizes.word_end_count`); tests/tokens/test_word_ends.py checks
them on md_corpus and on generated text.

"Letter" is kept to scripts whose letters have not changed in any Unicode version Python's
and tiktoken's tables may be at (Latin, Greek, Cyrillic, up to U+04FF) and "not a letter" to
ASCII, so the two regex engines cannot disagree about a character that decides a split.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

CL100K_PATTERN = (
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"
    r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s"
)
"""The pre-tokenizer the rule above was worked out for; any other expression gets none."""

WINDOW = 256
"""How far from a piece's edge its first or last word end is looked for (characters)."""

_LETTERS = "".join(
    c
    for c in map(chr, range(0x500))
    if (c.isascii() and c.isalpha()) or (c >= "\xc0" and unicodedata.category(c)[0] == "L")
)
_NON_LETTERS = "".join(c for c in map(chr, range(0x80)) if not c.isalpha())
_END = re.compile(f"[{re.escape(_LETTERS)}](?=[{re.escape(_NON_LETTERS)}])")
_LAST_END = re.compile(f"(?s:.*)[{re.escape(_LETTERS)}](?=[{re.escape(_NON_LETTERS)}])")


_LETTER_SET = frozenset(_LETTERS)


def line_start(before: str, first: str) -> bool:
    """Whether a text split between the character ``before`` and the character ``first``
    splits at a line start (see above): a line feed, then a trusted letter."""
    return before == "\n" and first in _LETTER_SET


def splits_at_word_ends(encoding: Any) -> bool:
    """Whether a tiktoken ``encoding`` pre-tokenizes with :data:`CL100K_PATTERN`."""
    return getattr(encoding, "_pat_str", None) == CL100K_PATTERN


def first_word_end(text: str, start: int, end: int) -> int | None:
    """The first word end ``p`` with ``start < p <= end`` and ``p < start + WINDOW``; the
    character after ``p`` is ``text[p]``, so a word end at ``end`` is one only where
    ``text[end]`` is what really follows (None past the text's end)."""
    found = _END.search(text, start, min(end, start + WINDOW) + 1)
    return found.end() if found is not None else None


def last_word_end(text: str, start: int, end: int) -> int | None:
    """The last word end ``p`` with ``start < p <= end`` and ``p > end - WINDOW`` (see
    :func:`first_word_end` for ``p == end``)."""
    found = _LAST_END.match(text, max(start, end - WINDOW), end + 1)
    return found.end() if found is not None else None


__all__ = [
    "CL100K_PATTERN",
    "WINDOW",
    "first_word_end",
    "last_word_end",
    "line_start",
    "splits_at_word_ends",
]
