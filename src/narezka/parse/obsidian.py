"""Obsidian notes: ``[[wikilinks]]``, ``![[embeds]]``, tags and aliases, read as data.

The note's text is never changed (every offset indexes it as written): a link is read as its
target, heading and display text (the alias when given, as Obsidian shows it), and a note's
tags — front matter ``tags`` (a list, or a string of names) and inline ``#tags`` outside code —
become metadata a search filters by. Tags are compared as Obsidian does, without the ``#`` and
case-insensitively, so they are kept lowercased.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from narezka.types import Block, BlockKind, Document

_LINK = re.compile(
    r"(?P<embed>!?)\[\[(?P<target>[^\[\]\n|#^]*)(?:#(?P<heading>[^\[\]\n|]*))?"
    r"(?:\|(?P<alias>[^\[\]\n]*))?\]\]"
)
# Obsidian's tag: after a space or a line start, letters, digits, _ - / with at least one
# character that is not a digit (``#2024`` is not a tag; ``#y2024`` is).
_TAG = re.compile(r"(?:(?<=\s)|^)#(?P<tag>[\w/-]*[^\W\d][\w/-]*)", re.M)
_FENCE = re.compile(r"^(?P<f>`{3,}|~{3,})[^\n]*\n.*?(?:^(?P=f)[^\n]*$|\Z)", re.M | re.S)
_INLINE_CODE = re.compile(r"(`+)[^\n]*?\1")
_CALLOUT = re.compile(r"^>\s*\[!(?P<kind>[A-Za-z-]+)\][+-]?[ \t]*(?P<title>[^\n]*)$", re.M)


@dataclass(frozen=True, slots=True)
class WikiLink:
    """One ``[[target#heading|alias]]`` (``embed``: written ``![[…]]``) at ``start:end``."""

    target: str
    heading: str
    alias: str
    embed: bool
    start: int
    end: int

    @property
    def display(self) -> str:
        """What a reader sees: the alias, else ``target > heading``, else the target."""
        if self.alias:
            return self.alias
        if self.heading:
            return f"{self.target} > {self.heading}" if self.target else self.heading
        return self.target


def _blank_code(text: str) -> str:
    """``text`` with code (fenced blocks, inline spans) blanked out, offsets kept: a ``#``
    or ``[[`` in code is not a tag or a link."""

    def blank(found: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", found.group(0))

    return _INLINE_CODE.sub(blank, _FENCE.sub(blank, text))


def wikilinks(text: str) -> list[WikiLink]:
    """The wikilinks and embeds of ``text`` outside code, in order."""
    found = []
    for m in _LINK.finditer(_blank_code(text)):
        target = m["target"].strip()
        heading = (m["heading"] or "").strip()
        if not target and not heading:
            continue
        found.append(
            WikiLink(target, heading, (m["alias"] or "").strip(), bool(m["embed"]),
                     m.start(), m.end())
        )  # fmt: skip
    return found


def inline_tags(text: str) -> list[str]:
    """The ``#tags`` of ``text`` outside code and links, lowercased, first seen first."""
    plain = _LINK.sub(lambda m: " " * len(m.group(0)), _blank_code(text))
    return list(dict.fromkeys(normalize_tag(m["tag"]) for m in _TAG.finditer(plain)))


def callouts(text: str) -> Iterator[tuple[str, str, int]]:
    """``(kind, title, offset)`` of each callout (``> [!note] Title``) outside code."""
    for m in _CALLOUT.finditer(_blank_code(text)):
        yield m["kind"].lower(), m["title"].strip(), m.start()


def callout_spans(text: str, start: int = 0) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of each callout of ``text[start:]`` outside code: its
    ``> [!kind]`` line and the ``>`` lines that follow it, to the last one's end."""
    spans: list[tuple[int, int, str]] = []
    for kind, _, at in callouts(text):
        if at < start or (spans and at < spans[-1][1]):
            continue
        end = text.find("\n", at)
        while end != -1 and text.startswith(">", end + 1):
            end = text.find("\n", end + 1)
        spans.append((at, len(text) if end == -1 else end, kind))
    return spans


def with_callout_blocks(doc: Document) -> Document:
    """``doc`` with each callout one block: the splitter cuts between blocks first, so a
    callout that fits the budget is never cut (its paragraphs and items were blocks of their
    own). One holding a code block or a table keeps its blocks: those stay atoms."""
    spans = callout_spans(doc.text, doc.body_start)
    if not spans:
        return doc
    blocks: list[Block] = []
    k = 0
    for start, end, _ in spans:
        inside = [b for b in doc.blocks[k:] if start <= b.start < end]
        while k < len(doc.blocks) and doc.blocks[k].start < start:
            blocks.append(doc.blocks[k])
            k += 1
        k += len(inside)
        if not inside or any(b.is_atom or b.kind is BlockKind.HEADING for b in inside):
            blocks += inside
            continue
        blocks.append(Block(BlockKind.QUOTE, start, max(end, inside[-1].end)))
    blocks += doc.blocks[k:]
    return dataclasses.replace(doc, blocks=tuple(blocks))


def normalize_tag(tag: str) -> str:
    """A tag as it is stored and compared: without ``#`` or a trailing ``/``, lowercased."""
    return tag.strip().lstrip("#").rstrip("/").lower()


def _names(value: Any) -> list[str]:
    """Front matter ``tags``/``aliases`` as Obsidian reads them: a list, or one string of
    names separated by commas or spaces (tags) — ``None`` and other kinds give none."""
    if isinstance(value, str):
        return [v for v in re.split(r"[,\s]+", value) if v]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int) and str(v).strip()]
    return []


def note_meta(meta: Mapping[str, Any], body: str) -> dict[str, Any]:
    """What a note adds to its chunks' metadata: ``tags`` (front matter and inline, without
    ``#``, lowercased, deduplicated), ``aliases``, and the note's ``links`` (wikilink targets,
    embeds included, in order)."""
    tags = [normalize_tag(t) for t in _names(meta.get("tags", meta.get("tag")))]
    tags += inline_tags(body)
    aliases = [a.strip() for a in re.split(r",", meta["aliases"])] if isinstance(
        meta.get("aliases"), str
    ) else _names(meta.get("aliases"))  # fmt: skip
    links = list(dict.fromkeys(link.target for link in wikilinks(body) if link.target))
    out: dict[str, Any] = {"tags": list(dict.fromkeys(t for t in tags if t))}
    if aliases:
        out["aliases"] = aliases
    if links:
        out["links"] = links
    return out


def display_text(text: str) -> str:
    """``text`` with every wikilink shown as a reader sees it (``[[a#b|c]]`` → ``c``), for a
    title or a snippet; the note's own text is not changed by it."""
    out, at = [], 0
    for link in wikilinks(text):
        out += [text[at : link.start], link.display]
        at = link.end
    return "".join(out) + text[at:]
