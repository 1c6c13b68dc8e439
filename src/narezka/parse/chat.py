"""Reading chats: JSON, JSON Lines and ``Name: text`` transcripts, with exact raw offsets.

Input, told apart by the file name and a look at the text:

* JSON: an array of messages, or an object with a ``messages`` array (and maybe a ``title``);
* JSON Lines: one message object a line;
* transcripts: ``Name: text`` lines, also ``[12:01] Name: text`` and ``12:01 Name: text``;
  the lines that follow a turn belong to it.

A message is an object with a speaker (``role``, ``author``, ``name`` or ``from``), its text
(``content`` or ``text``, a string) and maybe a time (``time``, ``timestamp`` or ``date``).

Every :class:`Turn` keeps the raw span of its message (the JSON object, or the transcript
lines) and of its text (inside the string literal's quotes, or after ``Name:``), so the
``chat`` strategy (:mod:`narezka.split.chat`) can cut the file exactly; :func:`decode_offsets`
maps decoded characters of a string literal back to raw offsets, never inside an escape.

Bad input: a ``.json`` or ``.jsonl`` file that is not valid JSON, or a message without text,
is a :class:`~narezka.errors.SourceError` naming the file, the line and column, and the
problem. One bad line fails the whole JSON Lines file rather than being taken as plain text:
a half-read chat would go unnoticed, and the JSON of the line would be embedded as prose.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from narezka.errors import SourceError
from narezka.parse.sanitize import trim_whitespace

CHAT_INCLUDE = ("**/*.json", "**/*.jsonl", "**/*.txt", "**/*.log")
ROLE_KEYS = ("role", "author", "name", "from")
CONTENT_KEYS = ("content", "text")
TIME_KEYS = ("time", "timestamp", "date")
TITLE_KEYS = ("title", "name", "subject")

_DECODER = json.JSONDecoder()
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
# One member of a flat object (a string, number or literal value) and what follows it; the
# fast path of the JSON Lines reader, used only on lines the json module has validated.
_FLAT_MEMBER = re.compile(
    r'[ \t\n\r]*("[^"\\]*(?:\\.[^"\\]*)*")[ \t\n\r]*:[ \t\n\r]*'
    r'("[^"\\]*(?:\\.[^"\\]*)*"|-?[0-9][0-9.eE+\-]*|true|false|null)[ \t\n\r]*([,}])',
    re.S,
)
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
SURROGATE = re.compile("[\ud800-\udfff]")
"""Lone surrogates (an unpaired ``\\ud83d`` escape): they cannot be counted or written as UTF-8."""
_TURN = re.compile(
    r"^[ \t]*(?:\[(?P<stamp>[^\]\n]{1,40})\][ \t]*|(?P<clock>\d{1,2}:\d{2}(?::\d{2})?)[ \t]+)?"
    r"(?P<name>[^\W\d_][\w'’.\-]*(?:[ \t]+[\w'’.\-]+){0,3})[ \t]*:(?:[ \t]+|$)",
    re.M,
)


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
        title = SURROGATE.sub("", title).strip()
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
        pos = 0 if line[:1] == "{" else _skip(line, 0)
        if pos < len(line):
            if line[pos] != "{":
                raise SourceError(source, f"line {number}: expected a JSON object (one a line)")
            # Offsets in the members are the file's, not the line's.
            read = _flat_line(line, pos, line_start)
            if read is None:
                read = _checked_line(source, number, line, pos, line_start)
            members, end = read
            start = line_start + pos
            turns.append(_turn(source, text, len(turns) + 1, start, end, members))
        line_start += len(line) + 1
    return Conversation(turns)


def _checked_line(source: str, number: int, line: str, pos: int, base: int) -> tuple[Members, int]:
    """One JSON Lines object read member by member, with the error a bad line deserves;
    offsets are moved by ``base`` (where the line starts in the file)."""
    try:
        members, end = _members(line, pos)
    except RecursionError:
        raise SourceError(source, f"line {number}: JSON nested too deep") from None
    except json.JSONDecodeError as exc:
        where = f"line {number}, column {exc.pos + 1}"
        raise SourceError(source, f"invalid JSON at {where}: {exc.msg}") from None
    except ValueError as exc:
        # Python refuses some valid JSON (an integer of more than 4300 digits).
        raise SourceError(source, f"line {number}: unreadable JSON value ({exc})") from None
    if _skip(line, end) < len(line):
        raise SourceError(source, f"line {number}: one JSON object a line expected")
    members = {k: (v, a + base, b + base) for k, (v, a, b) in members.items()}
    return members, end + base


def _flat_line(line: str, pos: int, base: int) -> tuple[Members, int] | None:
    """What :func:`_checked_line` reads, faster, when the line is one valid JSON object with
    no nested values (the common case); else None, and the careful reader decides (and words
    any error). The json module checks the line; a regex then finds where each value is."""
    try:
        data = _DECODER.decode(line)
    except (ValueError, RecursionError):
        return None
    if type(data) is not dict:
        return None
    members: Members = {}
    pos += 1
    if not data:
        end = _skip(line, pos)
        return (members, end + 1 + base) if line[end : end + 1] == "}" else None
    match = _FLAT_MEMBER.match
    while True:
        found = match(line, pos)
        if found is None:
            return None  # a nested value, NaN or Infinity: read the slow way
        raw_key, _, close = found.groups()
        key = raw_key[1:-1] if "\\" not in raw_key else json.loads(raw_key)
        if key not in data:
            return None
        start, stop = found.span(2)
        members[key] = (data[key], start + base, stop + base)
        pos = found.end()
        if close == "}":
            # Duplicate keys: the last one wins in both readers, value and span alike.
            return (members, pos + base) if len(members) == len(data) else None


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
    for key in CONTENT_KEYS:
        if key in members:
            break
    else:
        where = f"message {number} at {_where(text, start)}"
        raise SourceError(source, f'{where} has no "content" or "text"')
    content, value_start, value_end = members[key]
    if type(content) is not str:
        where = f"message {number} at {_where(text, start)}"
        kind = type(content).__name__
        raise SourceError(source, f'{where}: "{key}" is a JSON {kind}, not a string')
    role = ""
    for key in ROLE_KEYS:
        if key in members:
            role = _speaker(members[key][0])
            break
    time = None
    for key in TIME_KEYS:
        member = members.get(key)
        if member is not None and type(member[0]) in (str, int, float):
            time = member[0]
            break
    if type(time) is str:
        time = SURROGATE.sub("", time)
    return Turn(start, end, role, content, time, value_start + 1, value_end - 1, True)


def _speaker(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("name") or value.get("role") or value
    if not isinstance(value, str):
        value = "" if value is None else json.dumps(value, ensure_ascii=False)
    # A lone surrogate (an unpaired \\ud83d escape) cannot be counted or written as UTF-8.
    return SURROGATE.sub("", value).strip()


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


__all__ = [
    "CHAT_INCLUDE",
    "CONTENT_KEYS",
    "ROLE_KEYS",
    "SURROGATE",
    "TIME_KEYS",
    "TITLE_KEYS",
    "Conversation",
    "Turn",
    "decode_offsets",
    "looks_like_chat",
    "parse_chat",
]
