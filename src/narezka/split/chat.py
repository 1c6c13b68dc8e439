"""``chat``: conversations split into groups of whole messages.

Input, told apart by the file name and a look at the text:

* JSON: an array of messages, or an object with a ``messages`` array (and maybe a ``title``);
* JSON Lines: one message object a line;
* transcripts: ``Name: text`` lines, also ``[12:01] Name: text`` and ``12:01 Name: text``;
  the lines that follow a turn belong to it.

A message is an object with a speaker (``role``, ``author``, ``name`` or ``from``), its text
(``content`` or ``text``, a string) and maybe a time (``time``, ``timestamp`` or ``date``).

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

Bad input: a ``.json`` or ``.jsonl`` file that is not valid JSON, or a message without text,
is a :class:`~narezka.errors.SourceError` naming the file, the line and column, and the
problem. One bad line fails the whole JSON Lines file rather than being taken as plain text:
a half-read chat would go unnoticed, and the JSON of the line would be embedded as prose.
Any other text that is not a chat (few ``Name:`` lines) is grouped by sentences instead.
An empty file or a chat without messages gives no chunks (the run reports it as empty).
``overlap`` is not applied: a message is a whole unit, and repeating one helps no search.
"""

from __future__ import annotations

import dataclasses
import json
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, ClassVar

from narezka.errors import SourceError
from narezka.parse.markdown import slugify
from narezka.parse.sanitize import sanitize
from narezka.split.base import SplitParams, context_for
from narezka.split.context import DocumentContext, Section
from narezka.split.packer import Packer, trim_whitespace
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document

CHAT_INCLUDE = ("**/*.json", "**/*.jsonl", "**/*.txt", "**/*.log")
ROLE_KEYS = ("role", "author", "name", "from")
CONTENT_KEYS = ("content", "text")
TIME_KEYS = ("time", "timestamp", "date")
TITLE_KEYS = ("title", "name", "subject")
SESSION_GAP = 30 * 60
"""Seconds of silence after which a new chunk prefers to start."""
LABEL_SHARE = 0.25
"""A speaker's name may take at most this share of the budget (longer ones are shortened)."""

_DECODER = json.JSONDecoder()
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_SURROGATE = re.compile("[\ud800-\udfff]")
_TURN = re.compile(
    r"^[ \t]*(?:\[(?P<stamp>[^\]\n]{1,40})\][ \t]*|(?P<clock>\d{1,2}:\d{2}(?::\d{2})?)[ \t]+)?"
    r"(?P<name>[^\W\d_][\w'’.\-]*(?:[ \t]+[\w'’.\-]+){0,3})[ \t]*:(?:[ \t]+|$)",
    re.M,
)
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")


@dataclass(frozen=True, slots=True)
class Turn:
    """One message: its raw span, who said what and when, and where its text is in the file."""

    start: int
    end: int
    role: str
    content: str
    """The text, decoded (JSON escapes resolved)."""
    time: str | int | float | None
    body_start: int
    body_end: int
    """The raw span of the text: inside the string literal's quotes, or after ``Name:``."""
    escaped: bool
    """The body is a JSON string literal, so raw and decoded offsets differ."""


@dataclass(frozen=True, slots=True)
class Conversation:
    turns: list[Turn]
    title: str = ""


def render_turn(role: str, content: str) -> str:
    """A message as the model sees it (before sanitizing): ``role: content``, the content
    without the blank space around it (as every piece of a split message is trimmed)."""
    content = content.strip()
    return f"{role}: {content}" if role else content


def looks_like_chat(source: str, text: str) -> bool:
    """Whether the text is a chat: JSON/JSONL role-and-content messages, or a transcript in
    which most lines are ``Name: text`` turns. Cheap: one JSON parse or one line scan."""
    suffix = PurePosixPath(source).suffix.lower()
    head = text.lstrip()[:1]
    if suffix in (".json", ".jsonl") or head in ("[", "{"):
        return _json_messages(text)
    return _transcript(text, min_share=0.5) is not None


def _json_messages(text: str) -> bool:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        lines = [line for line in text.splitlines() if line.strip()][:20]
        try:
            data = [json.loads(line) for line in lines]
        except (ValueError, RecursionError):
            return False
    if isinstance(data, dict):
        data = data.get("messages")
    if not isinstance(data, list) or not data:
        return False
    sample = data[:50]
    good = sum(
        1
        for m in sample
        if isinstance(m, dict)
        and any(k in m for k in ROLE_KEYS)
        and any(isinstance(m.get(k), str) for k in CONTENT_KEYS)
    )
    return good >= 0.8 * len(sample)


# ---- parsing -------------------------------------------------------------------------------


def parse_chat(source: str, text: str) -> Conversation | None:
    """The conversation in the text, or None when it is not a chat (plain text).

    ``.json`` and ``.jsonl`` files must be chats: their problems raise ``SourceError``.
    """
    suffix = PurePosixPath(source).suffix.lower()
    if not text.strip():
        return Conversation([])  # an empty file is empty whatever its kind, not broken
    if suffix == ".json":
        return _parse_json(source, text)
    if suffix == ".jsonl":
        return _parse_jsonl(source, text)
    if text.lstrip()[:1] in ("[", "{"):
        for parse in (_parse_json, _parse_jsonl):
            try:
                return parse(source, text)
            except SourceError:
                pass
    turns = _transcript(text, min_share=0.3)
    return Conversation(turns) if turns is not None else None


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - text.rfind("\n", 0, pos)
    return f"line {line}, column {column}"


def _parse_json(source: str, text: str) -> Conversation:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = " (one message a line is JSON Lines: name the file .jsonl)"
        hint = hint if exc.msg == "Extra data" else ""
        where = f"line {exc.lineno}, column {exc.colno}"
        raise SourceError(source, f"invalid JSON at {where}: {exc.msg}{hint}") from None
    except (ValueError, RecursionError) as exc:
        # Valid JSON that Python will not read: 5000-digit numbers, nesting past the stack.
        raise SourceError(source, f"unreadable JSON: {exc.__class__.__name__}: {exc}") from None
    pos = _skip(text, 0)
    title = ""
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        members, _ = _members(text, pos)
        pos = members["messages"][1]
        title = next((data[k] for k in TITLE_KEYS if isinstance(data.get(k), str)), "")
        title = _SURROGATE.sub("", title).strip()
    elif not isinstance(data, list):
        raise SourceError(
            source, 'expected an array of messages or an object with a "messages" array'
        )
    turns: list[Turn] = []
    pos = _skip(text, pos + 1)  # past the array's "["
    while text[pos] != "]":
        start = pos
        if text[pos] != "{":
            problem = f"message {len(turns) + 1} at {_where(text, start)} is not an object"
            raise SourceError(source, problem)
        members, pos = _members(text, pos)
        turns.append(_turn(source, text, len(turns) + 1, start, pos, members))
        pos = _skip(text, pos)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
    return Conversation(turns, title)


def _parse_jsonl(source: str, text: str) -> Conversation:
    turns: list[Turn] = []
    line_start = 0
    for number, line in enumerate(text.split("\n"), 1):
        pos = _skip(line, 0)
        if pos < len(line):
            if line[pos] != "{":
                raise SourceError(source, f"line {number}: expected a JSON object (one a line)")
            try:
                members, end = _members(line, pos)
            except RecursionError:
                raise SourceError(source, f"line {number}: JSON nested too deep") from None
            except json.JSONDecodeError as exc:
                where = f"line {number}, column {exc.pos + 1}"
                raise SourceError(source, f"invalid JSON at {where}: {exc.msg}") from None
            if _skip(line, end) < len(line):
                raise SourceError(source, f"line {number}: one JSON object a line expected")
            # Offsets so far are the line's own; the turn's are the file's.
            members = {k: (v, a + line_start, b + line_start) for k, (v, a, b) in members.items()}
            start = line_start + pos
            turns.append(_turn(source, text, len(turns) + 1, start, line_start + end, members))
        line_start += len(line) + 1
    return Conversation(turns)


def _skip(text: str, pos: int) -> int:
    match = _JSON_SPACE.match(text, pos)
    return match.end() if match else pos


Members = dict[str, tuple[Any, int, int]]
"""An object's keys with (value, raw start, raw end) of each value (the last duplicate wins)."""


def _members(text: str, pos: int) -> tuple[Members, int]:
    """Read the JSON object at ``pos``: its members with value spans, and its end offset."""
    members: Members = {}
    pos = _skip(text, pos + 1)
    while True:
        if text[pos : pos + 1] == "}":
            return members, pos + 1
        if text[pos : pos + 1] != '"':
            raise json.JSONDecodeError(
                "Expecting property name enclosed in double quotes", text, pos
            )
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text[pos : pos + 1] != ":":
            raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
        start = _skip(text, pos + 1)
        value, pos = _DECODER.raw_decode(text, start)
        members[key] = (value, start, pos)
        pos = _skip(text, pos)
        if text[pos : pos + 1] == ",":
            pos = _skip(text, pos + 1)
            if text[pos : pos + 1] != '"':
                raise json.JSONDecodeError("Expecting property name", text, pos)
        elif text[pos : pos + 1] != "}":
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)


def _turn(source: str, text: str, number: int, start: int, end: int, members: Members) -> Turn:
    key = next((k for k in CONTENT_KEYS if k in members), None)
    if key is None:
        where = f"message {number} at {_where(text, start)}"
        raise SourceError(source, f'{where} has no "content" or "text"')
    content, value_start, value_end = members[key]
    if not isinstance(content, str):
        where = f"message {number} at {_where(text, start)}"
        kind = type(content).__name__
        raise SourceError(source, f'{where}: "{key}" is a JSON {kind}, not a string')
    role = next((_speaker(members[k][0]) for k in ROLE_KEYS if k in members), "")
    time = next((members[k][0] for k in TIME_KEYS if _is_time(members.get(k))), None)
    if isinstance(time, str):
        time = _SURROGATE.sub("", time)
    return Turn(start, end, role, content, time, value_start + 1, value_end - 1, True)


def _speaker(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("name") or value.get("role") or value
    if not isinstance(value, str):
        value = "" if value is None else json.dumps(value, ensure_ascii=False)
    # A lone surrogate (an unpaired \\ud83d escape) cannot be counted or written as UTF-8.
    return _SURROGATE.sub("", value).strip()


def _is_time(member: tuple[Any, int, int] | None) -> bool:
    return member is not None and type(member[0]) in (str, int, float)


def _transcript(text: str, min_share: float) -> list[Turn] | None:
    """``Name: text`` turns, when at least ``min_share`` of the non-blank lines open one and
    it takes two to talk: two speakers or more, one of them speaking twice («Итого:» or
    «Примечание:» lines in prose are one «speaker» each)."""
    matches = list(_TURN.finditer(text))
    lines = sum(1 for line in text.splitlines() if line.strip())
    said = Counter(m.group("name") for m in matches)
    if len(said) < 2 or max(said.values()) < 2 or len(matches) < min_share * lines:
        return None
    turns: list[Turn] = []
    first = trim_whitespace(text, 0, matches[0].start())
    if first[0] < first[1]:
        turns.append(Turn(*first, "", text[slice(*first)], None, *first, False))
    for k, match in enumerate(matches):
        nxt = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        start, end = trim_whitespace(text, match.start(), nxt)
        body_start, body_end = trim_whitespace(text, match.end(), end)
        body_start = min(body_start, end)
        body_end = max(body_end, body_start)
        time = match.group("stamp") or match.group("clock")
        role = match.group("name")
        turns.append(
            Turn(start, end, role, text[body_start:body_end], time, body_start, body_end, False)
        )
    return turns


def decode_offsets(text: str, start: int, end: int) -> tuple[str, list[int]]:
    """Decode the JSON string literal body ``text[start:end]`` (between its quotes) and give
    the raw offset where each decoded character begins, plus ``end``: a cut between decoded
    characters ``i - 1`` and ``i`` is the raw offset ``offsets[i]``, never inside an escape."""
    out: list[str] = []
    offsets: list[int] = []
    pos = start
    while pos < end:
        slash = text.find("\\", pos, end)
        if slash == -1:
            slash = end
        if slash > pos:
            out.append(text[pos:slash])
            offsets.extend(range(pos, slash))
            pos = slash
            continue
        kind = text[pos + 1]
        offsets.append(pos)
        if kind != "u":
            out.append(_ESCAPES[kind])
            pos += 2
            continue
        code = int(text[pos + 2 : pos + 6], 16)
        pos += 6
        # A high surrogate followed by an escaped low one is one character, as json decodes it.
        if 0xD800 <= code < 0xDC00 and text.startswith("\\u", pos) and pos + 6 <= end:
            low = int(text[pos + 2 : pos + 6], 16)
            if 0xDC00 <= low < 0xE000:
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                pos += 6
        out.append(chr(code))
    offsets.append(end)
    return "".join(out), offsets


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


@dataclass(frozen=True, slots=True)
class _Piece:
    """What one chunk holds before spans are tiled: where it starts, what it embeds."""

    start: int
    embed: str
    meta: dict[str, Any]


class ChatStrategy:
    """Groups whole messages; splits one only when it alone is over the limit."""

    name: ClassVar[str] = "chat"
    breadcrumbs: ClassVar[bool] = False
    # No Markdown atoms here; a chat's own atom, the message, is kept whole.
    respects_atoms: ClassVar[bool] = False
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
        crumbs = self.breadcrumbs if params.breadcrumbs is None else params.breadcrumbs
        ctx = _RenderedContext(
            doc,
            counter,
            params.size,
            strategy=self.name,
            fingerprint=params.fingerprint(self.name),
            breadcrumbs=crumbs,
            sections=sections,
        )
        pieces = _Splitter(ctx, chat).pieces()
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
        ctx.rendered[span] = piece.embed
    chunks = ctx.make_chunks(ranges)
    return [
        dataclasses.replace(c, meta={**c.meta, **piece.meta})
        for c, piece in zip(chunks, pieces, strict=True)
    ]


class _Splitter:
    """Packs one conversation's turns under the budget through the shared packer."""

    def __init__(self, ctx: _RenderedContext, chat: Conversation) -> None:
        self.ctx = ctx
        self.counter = ctx.counter
        self.turns = chat.turns
        self.starts = [t.start for t in chat.turns]
        self.index = {t.start: k for k, t in enumerate(chat.turns)}
        self.prefix = ctx.prefix(ctx.common_section(0, 1)[0])
        self._labels: dict[str, str] = {}
        self._group: dict[tuple[int, int], str] = {}
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

    def render(self, first: int, last: int) -> str:
        """Sanitized rendering of turns ``first..last`` (no breadcrumb)."""
        key = (first, last)
        cached = self._group.get(key)
        if cached is None:
            lines = [
                render_turn(self.label(t.role), _SURROGATE.sub("", t.content))
                for t in self.turns[first : last + 1]
            ]
            cached = sanitize("\n".join(lines))
            if len(self._group) > 4096:
                self._group.clear()  # groups are tried left to right: old ones are done
            self._group[key] = cached
        return cached

    def turn_range(self, start: int, end: int) -> tuple[int, int]:
        return self.index[start], bisect_left(self.starts, end) - 1

    def group_cost(self, start: int, end: int) -> int:
        return self.counter.count(self.prefix + self.render(*self.turn_range(start, end)))

    def body_cost(self, start: int, end: int) -> int:
        key = self.turn_range(start, end)
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

        chars = self.ctx.chars
        packer = Packer(
            self.ctx.text,
            self.ctx.budget,
            self.group_cost,
            [cuts_in(self.gaps), cuts_in(self.starts)],
            max_probe=self.ctx.max_probe(),
            estimate=None if chars else self.body_cost,
            overhead=lambda s, e: self.counter.count(self.prefix),
        )
        first, last = self.turns[run[0]], self.turns[run[-1]]
        out = []
        for start, end in packer.pack(first.start, last.end):
            a, b = self.turn_range(start, end)
            group = self.turns[a : b + 1]
            embed = self.prefix + self.render(a, b)
            out.append(_Piece(start, embed, _meta(group)))
        return out

    def split_turn(self, turn: Turn) -> list[_Piece]:
        """Pieces of one message too long alone, cut in its decoded text and mapped back."""
        content = turn.content
        offsets: Sequence[int] = range(turn.body_start, turn.body_end + 1)
        if turn.escaped:
            content, offsets = decode_offsets(self.ctx.text, turn.body_start, turn.body_end)
        label = self.label(turn.role)
        head = self.prefix + render_turn(label, "")

        def embed(a: int, b: int) -> str:
            return self.prefix + sanitize(render_turn(label, _SURROGATE.sub("", content[a:b])))

        def cost(a: int, b: int) -> int:
            return self.counter.count(embed(a, b))

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
            estimate=None if self.ctx.chars else inner.body_tokens,
            overhead=lambda a, b: self.counter.count(head),
        )
        ranges = packer.pack(0, len(content)) or [(0, 0)]
        out = []
        for k, (a, b) in enumerate(ranges):
            start = turn.start if k == 0 else offsets[a]
            meta = {**_meta([turn]), "part": k + 1, "parts": len(ranges)}
            out.append(_Piece(start, embed(a, b), meta))
        return out


def _meta(turns: list[Turn]) -> dict[str, Any]:
    speakers = list(dict.fromkeys(t.role for t in turns if t.role))
    meta: dict[str, Any] = {"speakers": speakers, "turns": len(turns)}
    times = [t.time for t in turns if t.time is not None]
    if times:
        meta["time_from"], meta["time_to"] = times[0], times[-1]
    return meta


__all__ = [
    "CHAT_INCLUDE",
    "ChatStrategy",
    "Conversation",
    "Turn",
    "decode_offsets",
    "looks_like_chat",
    "parse_chat",
    "render_turn",
]
