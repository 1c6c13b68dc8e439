"""Which section of a chunk a query matched: the anchor a search hit should link to.

A chunk merged from short sections (``headings --min-chars``) carries, in
``meta["anchors"]``, where each section it covers starts, with the section's anchor and title.
Its own ``anchor`` is their common parent's (often just the page), so a hit linking it would
send the reader to the top of the page; :func:`anchor_for` picks the section whose text
shares most query words instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Terms = Callable[[str], Iterable[str]]
"""Text in, its comparable terms out (e.g. ``Bm25Encoder().tokens``: Snowball stems)."""

_WORD = re.compile(r"[^\W_]+")
STEM_CHARS = 5
"""The default terms keep this many leading letters: «вопрос», «вопроса», «вопросы» meet."""


def prefix_terms(text: str) -> list[str]:
    """Lower-cased words cut to their first few letters, ё read as е: a stemmer-free stand-in
    that lets Russian word forms match; words of one or two letters carry no topic."""
    words = _WORD.findall(text.lower().replace("ё", "е"))
    return [w[:STEM_CHARS] for w in words if len(w) > 2]


def anchor_for(
    anchors: Sequence[Mapping[str, Any]],
    chunk_text: str,
    chunk_start: int,
    query: str,
    *,
    default: str = "",
    terms: Terms = prefix_terms,
) -> str:
    """The anchor of the section of the chunk whose text best matches ``query``.

    ``anchors`` is the chunk's ``meta["anchors"]`` (``start`` offsets index the document, so
    ``chunk_start`` places them in ``chunk_text``). The best section shares most distinct
    query terms with its text, then with its title; the earlier one wins a tie. ``default``
    (the chunk's own anchor) comes back when no section shares a term, when the best one has
    no anchor of its own (text before the first heading), or when ``anchors`` is empty.
    """
    wanted = set(terms(query))
    if not anchors or not wanted:
        return default
    best: tuple[int, int] = (0, 0)
    chosen = default
    for k, entry in enumerate(anchors):
        begin = max(0, int(entry["start"]) - chunk_start)
        end = int(anchors[k + 1]["start"]) - chunk_start if k + 1 < len(anchors) else None
        found = wanted & set(terms(chunk_text[begin:end]))
        score = (len(found), len(wanted & set(terms(str(entry.get("title", ""))))))
        if score > best:
            best, chosen = score, str(entry.get("anchor") or "") or default
    return chosen
