"""Sanitization of the text a model sees (``embed_text``); chunk spans are never altered.

The rules follow the production pipeline narezka was specified from: replacement characters,
control and invisible format characters carry no meaning for an embedding model, and long
unbroken runs (base64, hashes) or runs of blank space only burn the token budget.
"""

from __future__ import annotations

import re
from typing import cast

from narezka._native import core

LONG_RUN = 200
"""Long non-space runs are shortened to this many characters plus ``...``."""

# C0 controls except \t and \n, DEL and C1 controls, the replacement character, and
# zero-width / invisible format characters (ZWSP, ZWNJ, ZWJ, LRM/RLM, bidi embeddings and
# isolates, word joiner and invisible operators, BOM, soft hyphen).
_DROP = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd\u00ad\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff]+"
)
# Runs of up to LONG_RUN + 3 stay: shortening them would not make them shorter.
_LONG_RUN = re.compile(rf"(?<!\S)\S{{{LONG_RUN + 4},}}")  # tried at run starts only: linear
_SPACE_RUN = re.compile(r"[ \t]{10,}")
_NEWLINE_RUN = re.compile(r"\n{5,}")


def sanitize(text: str) -> str:
    """Return ``text`` cleaned for embedding: see the module docstring for the rules."""
    if _DROP.search(text) is not None:
        text = _DROP.sub("", text)
    if len(text) > LONG_RUN and _has_long_run(text):
        text = _LONG_RUN.sub(lambda m: m.group(0)[:LONG_RUN] + "...", text)
    if "  " in text or "\t" in text:
        text = _SPACE_RUN.sub(" ", text)
    if "\n\n\n\n\n" in text:
        text = _NEWLINE_RUN.sub("\n\n", text)
    return text


_SPACES = " " * 10
_MORE_SPACES = re.compile(" *")


def changed_spans(text: str) -> list[tuple[int, int]]:
    """Disjoint, ordered spans of ``text`` outside which :func:`sanitize` changes nothing: a
    slice of ``text`` that meets none of them is its own sanitized form. Each rule's match
    in the whole text covers any match in a slice (a slice's run is part of a run of the
    text), and a dropped character that would make two runs one lies in a span itself.
    A rule's pattern runs only where the quick tests of :func:`needs_sanitizing` find it."""
    found: list[tuple[int, int]] = []
    if _has_dropped(text):
        found += (m.span() for m in _DROP.finditer(text))
    if len(text) > LONG_RUN and _has_long_run(text):
        found += (m.span() for m in _LONG_RUN.finditer(text))
    if "\t" in text:
        found += (m.span() for m in _SPACE_RUN.finditer(text))
    else:  # runs of spaces alone: found by substring search, at C speed
        at = text.find(_SPACES)
        while at >= 0:
            more = _MORE_SPACES.match(text, at + len(_SPACES))
            end = more.end() if more else at + len(_SPACES)
            found.append((at, end))
            at = text.find(_SPACES, end)
    if "\n\n\n\n\n" in text:
        found += (m.span() for m in _NEWLINE_RUN.finditer(text))
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def needs_sanitizing(text: str) -> bool:
    """Whether :func:`sanitize` would change ``text`` (a quick check: fast substring tests
    first, regex passes only when they cannot rule a rule out)."""
    return (
        "\n\n\n\n\n" in text
        or " " * 10 in text
        or ("\t" in text and _SPACE_RUN.search(text) is not None)
        or _has_dropped(text)
        or (len(text) > LONG_RUN and _has_long_run(text))
    )


_PROBE_STEP = (LONG_RUN + 4) // 2
_PROBE = re.compile(rf"\S{{{_PROBE_STEP + 1}}}")
_BLANK = re.compile(r"\s")


def _has_long_run(text: str) -> bool:
    """Whether ``_LONG_RUN`` matches somewhere in ``text``.

    A run of ``LONG_RUN + 4`` non-blanks holds a multiple of ``_PROBE_STEP`` with
    ``_PROBE_STEP`` more non-blanks after it, so only those positions are probed: one match
    per hundred characters, most failing at the first blank, where a search tries every
    blank (md_corpus: 0.13 s, now 0.03 s). A probe that holds is settled by the
    pattern itself on the run it lies in, which starts less than a step before it (else the
    probe before would have held)."""
    probe, step = _PROBE.match, _PROBE_STEP
    at, last = 0, len(text) - step - 1
    while at <= last:
        if probe(text, at) is None:
            at += step
            continue
        blank = _BLANK.search(text, at + step + 1)
        run_end = len(text) if blank is None else blank.start()
        if _LONG_RUN.search(text, max(0, at - step), run_end) is not None:
            return True
        at = -(-run_end // step) * step
    return False


_last_scan: tuple[str, bool] = ("", False)
"""The text of the latest ``_DROP`` scan and its answer: the chunker asks
:func:`needs_sanitizing` and then :func:`removed_characters` about the same body, and this
scan is a sizeable share of either. One entry holds one reference to one text."""


def _has_dropped(text: str) -> bool:
    """Whether ``text`` holds a character sanitization drops (the latest answer reused)."""
    global _last_scan
    last, found = _last_scan
    # An equal text (another slice of the same body) costs a memcmp, not a scan.
    if text is last or (len(text) == len(last) and text == last):
        return found
    found = _drop_candidates(text) and _DROP.search(text) is not None
    _last_scan = (text, found)
    return found


_ASCII_DROPPED = bytes([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F])


def _drop_candidates(text: str) -> bool:
    """False when ``text`` surely holds no character ``_DROP`` matches, found at C speed.

    Every such character is a control or format character, which ``str.isprintable`` rejects,
    or U+FFFD. So text that is printable once its newlines and tabs are spaces holds none; the
    few texts that are not (no-break spaces, zero-width joiners) get the regex. ASCII text
    goes through ``bytes.translate``. Three to four times faster than the regex alone."""
    if text.isascii():
        return len(text.encode("ascii").translate(None, _ASCII_DROPPED)) != len(text)
    if "\ufffd" in text:
        return True
    return not text.replace("\n", " ").replace("\t", " ").isprintable()


def removed_characters(text: str) -> int:
    """How many characters of ``text`` sanitization drops outright (control/invisible)."""
    if not _has_dropped(text):
        return 0
    return len(text) - len(_DROP.sub("", text))


_last_body: tuple[str, int, tuple[bool, int] | None] = ("", 0, None)
"""The core's answer about the latest body: the context asks whether it needs sanitizing,
the chunker then how many characters it drops (one entry, one reference to one text)."""


def _body_scan(text: str, start: int) -> tuple[bool, int] | None:
    """The core's (needs sanitizing, characters dropped) of ``text[start:]`` in one pass,
    or None on pure Python or for a text the core leaves to Python."""
    global _last_body
    if core is None:
        return None
    held, at, found = _last_body
    if text is held and at == start:
        return found
    found = cast("tuple[bool, int] | None", core.body_scan(text, start))
    _last_body = (text, start, found)
    return found


def body_needs_sanitizing(text: str, start: int) -> bool:
    """``needs_sanitizing(text[start:])``, for a document's body, without slicing it."""
    found = _body_scan(text, start)
    return needs_sanitizing(text[start:]) if found is None else found[0]


def body_removed_characters(text: str, start: int) -> int:
    """``removed_characters(text[start:])``, for a document's body, without slicing it."""
    found = _body_scan(text, start)
    return removed_characters(text[start:]) if found is None else found[1]


_WHITESPACE = frozenset(" \t\n\r\f\v\u00a0\u2028\u2029\u3000\u2000\u2001\u2002\u2003\u2009")


def trim_whitespace(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink a range so it neither starts nor ends with whitespace."""
    while start < end and (text[start] in _WHITESPACE or text[start].isspace()):
        start += 1
    while end > start and (text[end - 1] in _WHITESPACE or text[end - 1].isspace()):
        end -= 1
    return start, end
