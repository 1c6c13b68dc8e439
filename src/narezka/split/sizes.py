"""How big a range is as a chunk, from counts already made: the sums behind exact budgets.

A document is tokenized about once. Blocks and other pieces are counted as the packer meets
them; a group of pieces is sized from their counts, the counted breadcrumb and frame, and the
whitespace between them. For a tokenizer whose counts add up over whitespace joins
(``join_slack`` 0: SentencePiece, WordPiece) that sum *is* the exact count of the group's
``embed_text`` and is recorded as such; for one whose joins move the count a little (BPE) it
bounds the count, so only a group near the limit is tokenized to decide, and every chunk is
counted whole before it is emitted. :class:`~narezka.split.context.DocumentContext` provides
the state these methods read.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from narezka.parse.redaction import secrets_in
from narezka.parse.sanitize import sanitize
from narezka.split.word_end_sizes import WordEndSizes
from narezka.tokens import TokenCounter, blank_tokens, call_constant
from narezka.types import Secret

RAW_CHARS_PER_TOKEN = 8
"""Raw span length cap per budget token, so sanitization cannot hide a 300k-char blob."""


@lru_cache(maxsize=16)
def _constant_of(counter: TokenCounter) -> tuple[int, int]:
    return call_constant(counter), counter.count("")


def _constants(counter: TokenCounter) -> tuple[int, int]:
    """The counter's per-call constant and its count of "", asked once per counter."""
    try:
        return _constant_of(counter)  # type: ignore[arg-type]
    except TypeError:  # an unhashable counter: ask again
        return call_constant(counter), counter.count("")


class Sizes(WordEndSizes):
    """Sums of counts for one document; the attributes come from the context."""

    text: str
    counter: TokenCounter
    secrets: Sequence[Secret]
    budget: int
    slack: int | None
    _base: int
    _empty: int
    _cost: dict[tuple[int, int], int]
    _tokens: dict[tuple[int, int], int]
    _body: dict[tuple[int, int], int]
    _extra: dict[str, int]
    _short: TokenCounter
    _prefix_tokens: dict[str, int]
    _gaps: dict[str, int | None]
    _density: tuple[int, int]

    def prefix(self, path: tuple[str, ...]) -> str:
        raise NotImplementedError

    def crumb(self, start: int, end: int) -> str:
        raise NotImplementedError

    def _atom_context(self, start: int, end: int) -> tuple[str, str]:
        raise NotImplementedError

    def span_text(self, start: int, end: int) -> str:
        raise NotImplementedError

    def cost(self, start: int, end: int) -> int:
        raise NotImplementedError

    def max_probe(self) -> int:
        raise NotImplementedError

    def _crumb_tokens(self, crumbs: list[str], line: str) -> int:
        """Tokens of a breadcrumb line; with an additive counter summed from its titles, each
        counted once per document (paths share their parents' titles)."""
        lead = line.startswith("… > ")
        if self.slack != 0 or not crumbs or line != ("… > " if lead else "") + " > ".join(crumbs):
            # Counted once: the loops that shorten a line ask about the last one twice.
            return self._count_line(line)
        own = [self._bare(t) for t in crumbs]
        marks = [self._bare(">"), self._bare("…")]
        if min(own) < 0 or min(marks) < 0:
            return self._count_line(line)
        total = self._base + sum(own) + (len(crumbs) - 1) * marks[0]
        return total + (marks[1] + marks[0] if lead else 0)

    def _count_line(self, line: str) -> int:
        return self._short.count(line)

    def _bare(self, text: str) -> int:
        """Tokens of ``text`` less the per-call constant, counted once per process (titles
        recur across files); -1 when the count is ambiguous (see ``_empty``)."""
        counted = self._short.count(text)
        return counted - self._base if counted != self._empty else -1

    # complexity: the packer's hot loop: each size case answered without a call
    def group_bounds(self, pieces: list[tuple[int, int]], i: int, j: int) -> tuple[int, int] | None:
        """Bounds on the cost of pieces ``i..j`` as one chunk from their counted bodies, the
        counted overhead and the gaps' own tokens, each whitespace join off by at most the
        counter's slack (benchmarks/join_bounds.py measures it). With slack 0 the sum is the
        exact count of the chunk's ``embed_text`` and is recorded as such, untokenized; so is
        a counter's that splits at word ends (``word_end_count``).

        None (count the group whole) when a piece was not counted, the document needs
        sanitizing (it may change text across a join), a secret lies in the group (its
        marker is one, its pieces' two), or a join is not over whitespace."""
        if self.slack is None:
            return None
        start, end = pieces[i][0], pieces[j][1]
        key = (start, end)
        if key in self._cost:
            known = self._cost[key]
            return known, known
        if self.secrets and secrets_in(self.secrets, start, end):
            return None
        if self.word_ends:
            exact = self.group_word_end_count(pieces[i : j + 1])
            if exact is not None:
                value = self._record_exact(key, exact)
                return value, value
        # Sanitizing drops characters and shortens runs word by word, and collapses blank runs,
        # which only a count that ignores whitespace (slack 0) is blind to.
        if self.slack and not self.clean:
            return None
        before, after = self._atom_context(start, end)
        prefix = self.crumb(start, end)
        if (before and not before[-1].isspace()) or (after and not after[0].isspace()):
            return None
        if prefix and not prefix[-1].isspace():
            return None
        base, empty, text, bodies = self._base, self._empty, self.text, self._body
        total = self._overhead(prefix, before, after) if before or after or prefix else base
        gaps, gap_tokens = self._gaps, self._gap_tokens
        for k in range(i, j + 1):
            body = bodies.get(pieces[k])
            if body is None or (body == empty != base):
                return None
            total += body - base
            if k < j:
                blank = text[pieces[k][1] : pieces[k + 1][0]]
                gap = gaps.get(blank, -1)
                if gap == -1:
                    gap = gap_tokens(blank)
                if gap is None:
                    return None
                total += gap
        if self.slack == 0:
            value = self._record_exact(key, total)
            return value, value
        floor = -(-(end - start) // RAW_CHARS_PER_TOKEN)
        # Joins between the pieces, and around the body: breadcrumb, header or fence lines.
        margin = self.slack * (j - i + 3)
        return max(total - margin, floor), max(total + margin, floor)

    def summed_cost(self, start: int, end: int) -> int | None:
        """The exact count of the range's ``embed_text`` with an additive counter: its own
        text counted (and kept as a piece count) plus the breadcrumb and frame, counted once
        per document; the breadcrumb is not tokenized again with every chunk. None otherwise."""
        if self.slack != 0 or (self.secrets and secrets_in(self.secrets, start, end)):
            return None
        key = (start, end)
        body = self._body.get(key)
        if body is None:
            body = self.counter.count(self._sanitized(start, end, self.text[start:end]))
            # Not in the density ``likely_fits`` reads: that guess decides which ranges are
            # tried whole, and so where chunks end.
            self._body[key] = body
        if body == self._empty != self._base:
            return None
        return self._frame_tokens(start, end) + body - self._base

    def joined_cost(self, left: tuple[int, int], right: tuple[int, int]) -> int:
        """The cost of two neighbouring ranges as one chunk: with an additive counter summed
        from their exact counts (each less its own overhead), else counted whole."""
        start, end = left[0], right[1]
        key = (start, end)
        if key in self._cost:
            return self.cost(start, end)
        if self.word_ends and not secrets_in(self.secrets, start, end):
            exact = self.group_word_end_count((left, right))
            if exact is not None:
                return self._record_exact(key, exact)
        if self.slack != 0:
            return self.cost(start, end)
        a, b = self._tokens.get(left), self._tokens.get(right)
        gap = self._gap_tokens(self.text[left[1] : right[0]])
        if a is None or b is None or gap is None or secrets_in(self.secrets, start, end):
            return self.cost(start, end)
        if self._empty != self._base and self._empty in (a, b):
            return self.cost(start, end)
        frame = self._frame_tokens
        total = frame(start, end) + a - frame(*left) + b - frame(*right) + gap
        return self._record_exact(key, total)

    def known_counts(self, ranges: Sequence[tuple[int, int]], counts: Sequence[int]) -> None:
        """Exact counts of the ranges' ``embed_text`` made elsewhere (the native packer), kept
        as chunk counts: the chunks are not tokenized again."""
        self._tokens.update(zip(ranges, counts, strict=True))

    def _record_exact(self, key: tuple[int, int], exact: int) -> int:
        """Keep a range's exact count, summed untokenized, as its chunk's count and as its
        cost (never under the raw-length floor); the cost is returned."""
        self._tokens[key] = exact
        value = self._cost[key] = max(exact, -(-(key[1] - key[0]) // RAW_CHARS_PER_TOKEN))
        return value

    def _frame_tokens(self, start: int, end: int) -> int:
        """What ``embed_text`` adds to the range's own text, as a summand of an exact sum:
        the overhead's count, or with no overhead the per-call constant alone (a count of
        "" may hold more: e5's prefix space is a token only without text after it)."""
        before, after = self._atom_context(start, end)
        prefix = self.crumb(start, end)
        if before or after or prefix:
            return self._overhead(prefix, before, after)
        return self._base

    def _gap_tokens(self, gap: str) -> int | None:
        """Tokens of the whitespace between two pieces, or None if it holds no space, tab or
        line break (a join without one may fuse the pieces' edge tokens)."""
        cached = self._gaps.get(gap, -1)
        if cached != -1:
            return cached
        value = None
        if not gap.strip() and ("\n" in gap or " " in gap or "\t" in gap):
            blank = gap if self.clean else sanitize(gap)
            value = blank_tokens(self._short, blank, self._base)
        self._gaps[gap] = value
        return value

    def overhead_tokens(self, start: int, end: int) -> int:
        """Tokens of what ``embed_text`` adds around the range: breadcrumb, atom context."""
        before, after = self._atom_context(start, end)
        return self._overhead(self.crumb(start, end), before, after)

    def _overhead(self, prefix: str, before: str, after: str) -> int:
        """Tokens of a breadcrumb and an atom's frame together (see ``overhead_tokens``)."""
        known = self._prefix_tokens.get(prefix)
        if known is not None:  # an additive counter: the breadcrumb is counted already
            frame = self._bare(before + after) if before or after else 0
            if frame >= 0:
                return known + frame
        return self._part_count(prefix + before + after)

    def body_tokens(self, start: int, end: int) -> int:
        """Tokens of the range's own text (no breadcrumb): a summand for group estimates.
        A range past the raw-length cap is never grouped: its floor says so uncounted."""
        key = (start, end)
        cached = self._body.get(key)
        if cached is None:
            if end - start > self.max_probe():
                return -(-(end - start) // RAW_CHARS_PER_TOKEN)
            raw = self.span_text(start, end)
            cached = self.counter.count(self._sanitized(start, end, raw))
            self._body[key] = cached
            self._density = (self._density[0] + len(raw), self._density[1] + cached)
        return cached

    def likely_fits(self, start: int, end: int) -> bool:
        """Whether the range is short for its budget at the characters-per-token seen so far
        in this document (2 until a few blocks were counted): a guess, never a decision."""
        chars, tokens = self._density
        per_token = chars / tokens if tokens >= 100 else 2.0
        return end - start <= 0.8 * self.budget * per_token

    def count_bodies(self, ranges: Sequence[tuple[int, int]]) -> None:
        """Count the ranges' own tokens in one batch: the pieces one merge will group."""
        cap = self.max_probe()
        todo = [r for r in ranges if r not in self._body and r[1] - r[0] <= cap]
        if len(todo) > 1:
            texts = [self.text[s:e] for s, e in todo]
            counted = texts
            if not self.clean:
                counted = [self._sanitized(s, e, t) for (s, e), t in zip(todo, texts, strict=True)]
            counts = self.counter.count_batch(counted)
            self._body.update(zip(todo, counts, strict=True))
            seen_chars, seen_tokens = self._density
            self._density = (seen_chars + sum(map(len, texts)), seen_tokens + sum(counts))
