"""``chat``: conversations split into groups of whole messages.

The messages come from :mod:`narezka.parse.chat`, which reads JSON, JSON Lines and
``Name: text`` transcripts and keeps the raw offsets of each message and of its text.

Chunks are runs of consecutive messages up to the size limit; a run prefers to end where the
conversation paused (a gap of :data:`SESSION_GAP` seconds, when messages carry times). A
message is split only when it alone is too long: at sentences, then lines, then words.

Spans stay exact. A chunk's span is a range of the raw file: the messages' JSON objects (or
transcript lines), and for JSON the brackets, commas and keys around them too, so the chunks
tile the file and nothing is lost. A piece of a split message is an exact sub-range of its
JSON string literal (escapes such as ``\\n``, ``\\"`` and ``\\ud83d\\ude00`` are never cut);
the first piece also holds the object's opening, the last its end. ``embed_text`` is not
raw JSON but one ``role: content`` line per message with escapes decoded, sanitized like all
narezka text; size limits apply to it. Each chunk's ``meta`` names its ``speakers``, its
``turns`` and, when messages have times, ``time_from`` and ``time_to``; a piece of a split
message says which ``part`` of how many ``parts`` it is.

Bad input (a ``.json`` or ``.jsonl`` file that is not valid JSON, a message without text) is
a :class:`~narezka.errors.SourceError` from the reader; see :mod:`narezka.parse.chat`.
Any other text that is not a chat (few ``Name:`` lines) is grouped by sentences instead.
An empty file or a chat without messages gives no chunks (the run reports it as empty).
``overlap`` is not applied: a message is a whole unit, and repeating one helps no search.

Each message is rendered and sanitized once; a group's ``embed_text`` is the join of its
messages' lines (see :meth:`_Splitter.render` for why that equals sanitizing the joined
text), so a size in characters is arithmetic and a size in tokens is counted once per group.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import accumulate
from typing import Any, ClassVar

from narezka.parse.chat import (
    CHAT_INCLUDE,
    SURROGATE,
    Conversation,
    Turn,
    decode_offsets,
    looks_like_chat,
    parse_chat,
)
from narezka.parse.markdown import slugify
from narezka.parse.redaction import find_secrets, redact, redact_span
from narezka.parse.sanitize import sanitize, trim_whitespace
from narezka.split.base import SplitParams, context_for, context_of
from narezka.split.context import DocumentContext, Section
from narezka.split.packer import Packer
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document

SESSION_GAP = 30 * 60
"""Seconds of silence after which a new chunk prefers to start."""
LABEL_SHARE = 0.25
"""A speaker's name may take at most this share of the budget (longer ones are shortened)."""

_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")


def render_turn(role: str, content: str) -> str:
    """A message as the model sees it (before sanitizing): ``role: content``, the content
    without the blank space around it (as every piece of a split message is trimmed)."""
    content = content.strip()
    return f"{role}: {content}" if role else content


def _seconds(value: str | int | float | None) -> float | None:
    """A message time in seconds (epoch, or of the day for a bare clock), when it reads."""
    if isinstance(value, int | float):
        return value / 1000 if value > 1e11 else float(value)  # epoch milliseconds
    if not isinstance(value, str):
        return None
    clock = _CLOCK.fullmatch(value.strip())
    if clock is not None:
        h, m, s = clock.groups()
        return int(h) * 3600 + int(m) * 60 + int(s or 0)
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


# ---- splitting -----------------------------------------------------------------------------


class _RenderedContext(DocumentContext):
    """A context whose chunks embed a rendering of their messages, not their raw span."""

    rendered: dict[tuple[int, int], str]

    def embed_text(self, start: int, end: int) -> str:
        return self.rendered[(start, end)]

    def render_as(self, span: tuple[int, int], embed: str, tokens: int | None) -> None:
        """Have the chunk of ``span`` embed ``embed``, whose exact size, when already
        counted (``counter.count(embed)``), is ``tokens``."""
        self.rendered[span] = embed
        if tokens is not None and not self.chars:
            self._tokens[span] = tokens


@dataclass(frozen=True, slots=True)
class _Piece:
    """What one chunk holds before spans are tiled: where it starts, what it embeds."""

    start: int
    embed: str
    meta: dict[str, Any]
    tokens: int | None = None
    """``counter.count(embed)`` when it was counted already, else None."""


class ChatStrategy:
    """Groups whole messages; splits one only when it alone is over the limit."""

    name: ClassVar[str] = "chat"
    breadcrumbs: ClassVar[bool] = False
    markdown: ClassVar[bool] = False
    include: ClassVar[tuple[str, ...]] = CHAT_INCLUDE

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        chat = parse_chat(doc.source, doc.text)
        if chat is None:
            ctx = context_for(self, doc, params, counter)
            packer = ctx.packer([ctx.sentence_cuts, ctx.line_cuts, ctx.word_cuts])
            return ctx.make_chunks(packer.pack(doc.body_start, len(doc.text)))
        if not chat.turns:
            return []
        sections = [Section(0, (chat.title,), (slugify(chat.title),))] if chat.title else None
        # No overlap is applied (see the module docstring): the pieces pack to the full size.
        ctx = context_of(_RenderedContext, self, doc, params, counter, sections)
        pieces = _Splitter(ctx, chat, redact=params.redact).pieces()
        return _chunks(ctx, pieces)


def _chunks(ctx: _RenderedContext, pieces: list[_Piece]) -> list[Chunk]:
    """Tile the text with the pieces' spans (each runs to the next one's start) and chunk."""
    text = ctx.text
    ranges = []
    ctx.rendered = {}
    for k, piece in enumerate(pieces):
        lo = 0 if k == 0 else piece.start
        hi = pieces[k + 1].start if k + 1 < len(pieces) else len(text)
        span = trim_whitespace(text, lo, hi)
        ranges.append(span)
        ctx.render_as(span, piece.embed, piece.tokens)
    chunks = ctx.make_chunks(ranges)
    return [
        dataclasses.replace(c, meta={**c.meta, **piece.meta})
        for c, piece in zip(chunks, pieces, strict=True)
    ]


class _Splitter:
    """Packs one conversation's turns under the budget through the shared packer."""

    def __init__(self, ctx: _RenderedContext, chat: Conversation, *, redact: bool) -> None:
        self.ctx = ctx
        self.redact = redact
        self._raw: dict[int, str] = {}
        self.counter = ctx.counter
        self.chars = ctx.chars
        self.turns = chat.turns
        self.starts = [t.start for t in chat.turns]
        self.index = {t.start: k for k, t in enumerate(chat.turns)}
        self.prefix = ctx.prefix(ctx.common_section(0, 1)[0])
        self.prefix_cost = self.counter.count(self.prefix)
        self._labels: dict[str, str] = {}
        # Every turn rendered and sanitized once: a group is the join of its lines.
        self.lines = [sanitize(self.raw_line(turn)) for turn in self.turns]
        # Prefix sums over the lines: their lengths, and how many cannot simply be joined.
        self.length_before = [0, *accumulate(len(line) for line in self.lines)]
        self.odd_before = [0, *accumulate(not _joinable(line) for line in self.lines)]
        self._odd: dict[tuple[int, int], str] = {}
        self._cost: dict[tuple[int, int], int] = {}
        self._body: dict[tuple[int, int], int] = {}
        self.gaps = self._gaps()

    def label(self, role: str) -> str:
        """The speaker's name as rendered: shortened when it alone would crowd the budget."""
        cached = self._labels.get(role)
        if cached is None:
            cap = int(self.ctx.budget * LABEL_SHARE)
            cached = role
            if self.counter.count(role + ": ") > cap:
                while cached and self.counter.count(cached + "…: ") > cap:
                    cached = cached[: len(cached) * 3 // 4]
                cached = cached + "…" if cached else ""
            self._labels[role] = cached
        return cached

    def raw_line(self, turn: Turn) -> str:
        """A turn's line before sanitizing, its secrets redacted (found once per turn in the
        decoded content, where JSON escapes no longer hide them)."""
        cached = self._raw.get(turn.start)
        if cached is None:
            cached = render_turn(self.label(turn.role), SURROGATE.sub("", turn.content))
            if self.redact:
                cached = redact(cached)[0]
            self._raw[turn.start] = cached
        return cached

    def render(self, first: int, last: int) -> str:
        """Sanitized rendering of turns ``first..last`` (no breadcrumb): the sanitized text
        of their lines joined by line breaks.

        That is the join of the lines sanitized one by one when every line is non-empty and
        neither starts nor ends with a line break once sanitized (:func:`_joinable`): each
        rule but one works inside a line (dropped characters, long runs, runs of spaces), and
        the one that does not, five line breaks or more become two, then never meets a run
        that crosses a line boundary. Groups with another line are sanitized whole.
        """
        if first == last:
            return self.lines[first]
        if self.odd_before[last + 1] == self.odd_before[first]:
            return "\n".join(self.lines[first : last + 1])
        key = (first, last)
        cached = self._odd.get(key)
        if cached is None:
            lines = [self.raw_line(t) for t in self.turns[first : last + 1]]
            cached = sanitize("\n".join(lines))
            if len(self._odd) > 4096:
                self._odd.clear()  # groups are tried left to right: old ones are done
            self._odd[key] = cached
        return cached

    def turn_range(self, start: int, end: int) -> tuple[int, int]:
        return self.index[start], bisect_left(self.starts, end) - 1

    def render_cost(self, first: int, last: int) -> int:
        """Exact size of ``prefix + render(first, last)``, counted once per group."""
        key = (first, last)
        cached = self._cost.get(key)
        if cached is None:
            if self.chars and self.odd_before[last + 1] == self.odd_before[first]:
                lines = self.length_before[last + 1] - self.length_before[first]
                cached = len(self.prefix) + lines + last - first
            else:
                cached = self.counter.count(self.prefix + self.render(first, last))
            self._cost[key] = cached
        return cached

    def group_cost(self, start: int, end: int) -> int:
        return self.render_cost(*self.turn_range(start, end))

    def body_cost(self, start: int, end: int) -> int:
        key = self.turn_range(start, end)
        if not self.prefix:
            return self.render_cost(*key)  # the same text
        cached = self._body.get(key)
        if cached is None:
            cached = self.counter.count(self.render(*key))
            self._body[key] = cached
        return cached

    def _gaps(self) -> list[int]:
        """Turn starts after a pause of at least :data:`SESSION_GAP` seconds."""
        cuts = []
        previous = None
        for turn in self.turns:
            now = _seconds(turn.time)
            if now is not None and previous is not None and now - previous >= SESSION_GAP:
                cuts.append(turn.start)
            previous = now if now is not None else previous
        return cuts

    def pieces(self) -> list[_Piece]:
        out: list[_Piece] = []
        run: list[int] = []
        for k, turn in enumerate(self.turns):
            if self.group_cost(turn.start, turn.end) <= self.ctx.budget:
                run.append(k)
                continue
            out.extend(self.pack_run(run))
            run = []
            out.extend(self.split_turn(turn))
        out.extend(self.pack_run(run))
        return out

    def pack_run(self, run: list[int]) -> list[_Piece]:
        """Group consecutive turns that each fit: at pauses first, else at any turn."""
        if not run:
            return []

        def cuts_in(offsets: list[int]) -> Callable[[int, int], list[int]]:
            return lambda s, e: offsets[bisect_right(offsets, s) : bisect_left(offsets, e)]

        packer = Packer(
            self.ctx.text,
            self.ctx.budget,
            self.group_cost,
            [cuts_in(self.gaps), cuts_in(self.starts)],
            max_probe=self.ctx.max_probe(),
            estimate=None if self.chars else self.body_cost,
            overhead=lambda s, e: self.prefix_cost,
        )
        first, last = self.turns[run[0]], self.turns[run[-1]]
        out = []
        for start, end in packer.pack(first.start, last.end):
            a, b = self.turn_range(start, end)
            group = self.turns[a : b + 1]
            embed = self.prefix + self.render(a, b)
            out.append(_Piece(start, embed, _meta(group), self._cost.get((a, b))))
        return out

    def split_turn(self, turn: Turn) -> list[_Piece]:
        """Pieces of one message too long alone, cut in its decoded text and mapped back."""
        content = turn.content
        offsets: Sequence[int] = range(turn.body_start, turn.body_end + 1)
        if turn.escaped:
            content, offsets = decode_offsets(self.ctx.text, turn.body_start, turn.body_end)
        secrets = find_secrets(content) if self.redact else ()
        label = self.label(turn.role)
        head = self.prefix + render_turn(label, "")
        head_cost = self.counter.count(head)
        costs: dict[tuple[int, int], int] = {}

        def embed(a: int, b: int) -> str:
            piece = redact_span(content, secrets, a, b) if secrets else content[a:b]
            return self.prefix + sanitize(render_turn(label, SURROGATE.sub("", piece)))

        def cost(a: int, b: int) -> int:
            cached = costs.get((a, b))
            if cached is None:
                cached = self.counter.count(embed(a, b))
                costs[(a, b)] = cached
            return cached

        # A context over the message's own text lends its sentence, line and word cuts.
        inner = DocumentContext(
            Document(self.ctx.doc.source, content),
            self.counter,
            self.ctx.budget,
            strategy=self.ctx.strategy,
            fingerprint=self.ctx.fingerprint,
            breadcrumbs=False,
        )
        packer = Packer(
            content,
            self.ctx.budget,
            cost,
            [inner.sentence_cuts, inner.line_cuts, inner.word_cuts],
            max_probe=self.ctx.max_probe(),
            estimate=None if self.chars else inner.body_tokens,
            overhead=lambda a, b: head_cost,
        )
        ranges = packer.pack(0, len(content)) or [(0, 0)]
        out = []
        for k, (a, b) in enumerate(ranges):
            start = turn.start if k == 0 else offsets[a]
            meta = {**_meta([turn]), "part": k + 1, "parts": len(ranges)}
            out.append(_Piece(start, embed(a, b), meta, costs.get((a, b))))
        return out


def _joinable(line: str) -> bool:
    """Whether a sanitized line joins others without sanitizing the group again: it is not
    empty and has no line break at either end (see :meth:`_Splitter.render`)."""
    return bool(line) and line[0] != "\n" and line[-1] != "\n"


def _meta(turns: list[Turn]) -> dict[str, Any]:
    speakers = list(dict.fromkeys(t.role for t in turns if t.role))
    meta: dict[str, Any] = {"speakers": speakers, "turns": len(turns)}
    times = [t.time for t in turns if t.time is not None]
    if times:
        meta["time_from"], meta["time_to"] = times[0], times[-1]
    return meta


__all__ = [
    "CHAT_INCLUDE",
    "SESSION_GAP",
    "ChatStrategy",
    "looks_like_chat",
    "render_turn",
]
