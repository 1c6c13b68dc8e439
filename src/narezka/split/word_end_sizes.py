"""Exact group counts for a tokenizer whose counts split at word ends (cl100k_base).

A BPE join moves the count by a few tokens, so :class:`~narezka.split.sizes.Sizes` can only
bound a group from its pieces and must tokenize every group near the limit and every chunk
again. Where counts split exactly at word ends (:mod:`narezka.tokens.word_ends`), a group's
``embed_text`` is cut at the last word end before each join and the first one after it: the
long stretches between are the pieces' own text, counted already, and only the short
stretches across the joins (a word's last letters, the blank line, the next word's first
mark) are tokenized, most of them once per corpus. The result is the exact count, recorded
as such, so the packer decides exactly what a whole count would have decided.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from functools import cached_property

from narezka.parse.redaction import secrets_in
from narezka.parse.sanitize import changed_spans, needs_sanitizing, sanitize
from narezka.tokens import TokenCounter
from narezka.tokens.word_ends import WINDOW, first_word_end, last_word_end, line_start
from narezka.types import Secret

STRETCH = 4 * WINDOW
"""The longest stretch across joins counted on its own: past it, the group is counted whole."""


class WordEndSizes:
    """Word-end sums for one document; the attributes come from the context."""

    text: str
    counter: TokenCounter
    secrets: Sequence[Secret]
    word_ends: bool
    _pairs: dict[tuple[tuple[int, int], tuple[int, int]], int | None]
    _edge_terms: dict[tuple[str, int, int], int | None]
    _short: TokenCounter
    _body: dict[tuple[int, int], int]
    _tokens: dict[tuple[int, int], int]
    _extra: dict[str, int]
    _own: dict[tuple[int, int], int]

    @property
    def clean(self) -> bool:
        raise NotImplementedError

    def crumb(self, start: int, end: int) -> str:
        raise NotImplementedError

    def _atom_context(self, start: int, end: int) -> tuple[str, str]:
        raise NotImplementedError

    def group_word_end_count(self, ranges: Sequence[tuple[int, int]]) -> int | None:
        """:meth:`word_end_count` of neighbouring ranges, when each one's own text has a count:
        a piece's, or one derived from the exact count of a chunk-to-be."""
        bodies = []
        for r in ranges:
            body = self._body.get(r)
            if body is None:
                body = self._own.get(r)
            if body is None:
                whole = self._tokens.get(r)
                frame = self._sum((r,), (0,)) if whole is not None else None
                # A range with no word end near its edges is counted inside a stretch, so
                # the chunk's count says nothing about its own.
                if whole is None or frame is None or frame[1]:
                    return None
                body = self._own[r] = whole - frame[0]
            bodies.append(body)
        return self.word_end_count(ranges, bodies)

    def word_end_count(
        self, ranges: Sequence[tuple[int, int]], bodies: Sequence[int]
    ) -> int | None:
        """The exact count of the ``embed_text`` of ``ranges`` (neighbours, in order) as one
        chunk, from ``bodies``, their own texts' counts. Ranges without secrets only (the
        caller checks), where sanitizing changes nothing. None when a stretch across joins
        would be longer than :data:`STRETCH` (code of symbols, one long number): count the
        group whole."""
        summed = self._sum(ranges, bodies)
        return None if summed is None else summed[0]

    # complexity: the packer's hot loop: each size case answered without a call
    def _sum(
        self, ranges: Sequence[tuple[int, int]], bodies: Sequence[int]
    ) -> tuple[int, bool] | None:
        """:meth:`word_end_count`, and whether a range lies inside a stretch, its count then
        replaced by the stretch's (so the total does not move with it)."""
        text, count = self.text, self._short.count
        inside = False
        start, end = ranges[0][0], ranges[-1][1]
        before, after = self._atom_context(start, end)
        if not self.clean and not self._unchanged(start, end, before, after):
            return None
        head = self.crumb(start, end) + before
        total = sum(bodies)
        quick = self._quick_sum(ranges, head, after)
        if quick is not None:
            return total + quick, False
        # The open stretch: text outside the document it starts with, the document position it
        # continues from (None: nothing open), and the counts of its parts, which it replaces.
        outside, open_from, replaced = "", -1, 0
        if head:
            total += self._part_count(head)
            cut = last_word_end(head, 0, len(head))
            outside = head if cut is None else head[cut:]
            replaced = self._part_count(head) if cut is None else count(outside)
            open_from = start
        last = len(ranges) - 1
        for k, ((a, b), body) in enumerate(zip(ranges, bodies, strict=True)):
            # A word end at b needs the document's own next character after it in the chunk.
            limit = b - 1 if k == last and after else b
            if open_from >= 0:
                first = first_word_end(text, a, limit)
                if first is None:  # no word end near its start: the range joins the stretch
                    replaced += body
                    inside = True
                    if len(outside) + b - open_from > STRETCH:
                        return None
                    continue
                if len(outside) + first - open_from > STRETCH:
                    return None
                total += count(outside + text[open_from:first]) - replaced - count(text[a:first])
                outside, open_from = "", -1
            if k == last and not after:
                break
            cut = last_word_end(text, a, limit)
            if cut is None:
                cut = first_word_end(text, a, limit)
            if cut is None:
                if b - a > STRETCH:
                    return None
                open_from, replaced, inside = a, body, True
            else:
                open_from, replaced = cut, count(text[cut:b])
        if open_from < 0:
            return total, inside
        tail = outside + text[open_from:end]
        if after:
            total += self._part_count(after)
            first = first_word_end(after, 0, len(after))
            if first is None:
                replaced += self._part_count(after)
                tail += after
            else:
                replaced += count(after[:first])
                tail += after[:first]
        if len(tail) > STRETCH:
            return None
        return total + count(tail) - replaced, inside

    def _quick_sum(self, ranges: Sequence[tuple[int, int]], head: str, after: str) -> int | None:
        """What the joins, breadcrumb and frame add to the ranges' counts when every range
        has its word ends (no stretch runs over a whole range): terms kept per pair of
        neighbours and per edge, as candidate groups share them. None: take the long way."""
        pairs = self._pairs
        added = 0
        for k in range(len(ranges) - 1):
            key = (ranges[k], ranges[k + 1])
            if key in pairs:
                join = pairs[key]
            else:
                join = pairs[key] = self._pair_join(ranges[k], ranges[k + 1])
            if join is None:
                return None
            added += join
        if head:
            a, b = ranges[0]
            # (A word end at b with a frame after: the frame's term finds none and says so.)
            key_head = (head, a, b)
            if key_head in self._edge_terms:
                term = self._edge_terms[key_head]
            else:
                term = self._edge_terms[key_head] = self._head_term(head, a, b)
            if term is None:
                return None
            added += term
        if after:
            key_after = (after, *ranges[-1])
            if key_after in self._edge_terms:
                term = self._edge_terms[key_after]
            else:
                term = self._edge_terms[key_after] = self._after_term(after, *ranges[-1])
            if term is None:
                return None
            added += term
        return added

    def _pair_join(self, left: tuple[int, int], right: tuple[int, int]) -> int | None:
        """How two neighbours joined over the text between them count from their own counts:
        the stretch from the left one's last word end to the right one's first, counted,
        less its two ends counted alone."""
        text, short = self.text, self._short.count
        cut = last_word_end(text, *left) or first_word_end(text, *left)
        if cut is not None and line_start(text[right[0] - 1], text[right[0]]):
            # The stretch ends where the right one starts: its tail and the line feeds.
            if right[0] - cut > STRETCH:
                return None
            return short(text[cut : right[0]]) - short(text[cut : left[1]])
        first = first_word_end(text, *right)
        if cut is None or first is None or first - cut > STRETCH:
            return None
        return (
            self.counter.count(text[cut:first])
            - short(text[cut : left[1]])
            - short(text[right[0] : first])
        )

    def _head_term(self, head: str, start: int, limit: int) -> int | None:
        """What a breadcrumb (and a frame's opening) adds before the range from ``start``."""
        text, short = self.text, self._short.count
        if line_start(head[-1], text[start]):
            return self._part_count(head)
        cut = last_word_end(head, 0, len(head))
        outside = head if cut is None else head[cut:]
        first = first_word_end(text, start, limit)
        if first is None or len(outside) + first - start > STRETCH:
            return None
        replaced = self._part_count(head) if cut is None else short(outside)
        lead = text[start:first]
        return self._part_count(head) + self.counter.count(outside + lead) - replaced - short(lead)

    def _after_term(self, after: str, start: int, end: int) -> int | None:
        """What a frame's closing adds after the range that ends at ``end``."""
        text, short = self.text, self._short.count
        # The range's word end must be followed by its own character, not the frame's.
        cut = last_word_end(text, start, end - 1) or first_word_end(text, start, end - 1)
        if cut is None:
            return None
        first = first_word_end(after, 0, len(after))
        lead = after if first is None else after[:first]
        if end - cut + len(lead) > STRETCH:
            return None
        replaced = self._part_count(after) if first is None else short(lead)
        own = text[cut:end]
        return self._part_count(after) + self.counter.count(own + lead) - short(own) - replaced

    @cached_property
    def _changed(self) -> tuple[list[int], list[int]]:
        """Starts and ends of the spans sanitizing may change (``changed_spans``)."""
        spans = changed_spans(self.text)
        return [a for a, _ in spans], [b for _, b in spans]

    @property
    def changed(self) -> tuple[list[int], list[int]]:
        """Starts and ends of the spans sanitizing may change (the native packer's copy)."""
        return self._changed

    def piece_text(self, start: int, end: int) -> str:
        """The range's own text as a piece is counted (see :meth:`_sanitized`)."""
        return self._sanitized(start, end, self.text[start:end])

    def _meets_change(self, start: int, end: int) -> bool:
        """Whether a span sanitizing may change meets the range: if not, the range's text is
        its own sanitized form (``changed_spans``)."""
        starts, ends = self._changed
        k = bisect_right(ends, start)
        return k < len(starts) and starts[k] < end

    def _sanitized(self, start: int, end: int, raw: str) -> str:
        """``raw``, the range's text (redacted or not), as a piece is counted: as it is in a
        clean document, and where no changed span meets the range and no secret's marker
        can have changed it (no regex pass over it); else sanitized."""
        if self.clean:
            return raw
        if not self._meets_change(start, end) and not (
            self.secrets and secrets_in(self.secrets, start, end)
        ):
            return raw
        return sanitize(raw)

    def _unchanged(self, start: int, end: int, before: str, after: str) -> bool:
        """Whether sanitizing leaves the range's ``embed_text`` body as it is, in a document
        that needs it elsewhere: no changed span meets the range, the frame needs none, and
        a line break between frame and range keeps a run of one from running into the other
        (the range is trimmed: it neither starts nor ends with a blank line)."""
        if self._meets_change(start, end):
            return False
        if before and (not before.endswith("\n") or self.text[start] == "\n"):
            return False
        if after and (not after.startswith("\n") or self.text[end - 1] == "\n"):
            return False
        return not (before or after) or not needs_sanitizing(before + after)

    def _part_count(self, part: str) -> int:
        """The count of a breadcrumb with a frame, or of a closing fence, once per document
        (the packer's ``_extra`` table: a breadcrumb and frame counted together)."""
        cached = self._extra.get(part)
        if cached is None:
            cached = self._extra[part] = self._short.count(part)
        return cached
