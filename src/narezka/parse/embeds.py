"""Obsidian's ``![[embeds]]`` of notes, resolved into the embedding note's text.

``![[Note]]`` stands for the note's body, ``![[Note#Heading]]`` for that section (down to the
next heading of the same or a higher level), ``![[Note#^id]]`` for the paragraph or list item
marked `` ^id``. The result is a new canonical text, as a converted document's is: chunks index
it, and :class:`Expanded` says which spans of it came from which note, so every chunk can say
what it carries from elsewhere.

Embedded headings become bold lines (``## Сроки`` → ``**Сроки**``): left as headings they would
put the embedding note's own text after the embed under another note's section.
An embed that cannot be resolved (no such note, several of that name, a cycle, too deep, too
much text) stays as written, with one warning naming the note being read and the target.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from narezka.parse.markdown import parse_blocks, split_front_matter
from narezka.parse.obsidian import WikiLink, wikilinks
from narezka.types import Block, BlockKind

MAX_DEPTH = 8
"""Embeds inside embeds are resolved this many levels deep; a deeper one stays a link."""
MAX_EMBEDS = 1_000
"""The most embeds resolved for one note (each level of a wide embed graph multiplies them)."""
MAX_CHARS = 2_000_000
"""The most characters a note grows to by its embeds: a note embedding one that embeds
another twice, eight levels down, would otherwise be 256 copies of it."""

_BLOCK_ID = re.compile(r"(?:^|[ \t])\^(?P<id>[A-Za-z0-9-]+)[ \t]*$", re.M)
# A line that holds only container marks before an embed: ``> ``, ``- ``, ``1. ``, spaces.
_CONTAINER = re.compile(r"[ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?")
_LIST_MARK = re.compile(r"[-*+]|\d{1,9}[.)]")


@dataclass(frozen=True, slots=True)
class Note:
    """What a name resolves to: a note's vault path and text, or the reason it did not."""

    source: str = ""
    text: str = ""
    problem: str = ""
    """Why the embed stays a link ("no note of that name"); empty when resolved, and empty
    with an empty ``source`` for an attachment (an image, a PDF: left as written, silently)."""


Resolve = Callable[[str, str], Note]
"""``resolve(target, embedding note's source)``: the note an embed names."""


@dataclass(frozen=True, slots=True)
class Expanded:
    """A note's text with its embeds resolved."""

    text: str
    origins: tuple[tuple[int, int, str], ...] = ()
    """``(start, end, origin)`` of each span of ``text`` that came from another note, sorted
    and disjoint; ``origin`` is ``Note.md``, ``Note.md#Heading`` or ``Note.md#^id`` (an embed
    inside an embed names the innermost note)."""
    warnings: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    """The names every embed met asked for (lowercased, without folder or ``.md``), resolved
    or not: a note with any of these names appearing, changing or going changes this text."""


def embed_name(target: str) -> str:
    """The name a dependency is recorded under: ``Folder/Note.md`` → ``note``."""
    name = target.rsplit("/", 1)[-1].strip().lower()
    return name[:-3] if name.endswith(".md") else name


@dataclass(slots=True)
class _Run:
    """One note's expansion: what it met and what it said."""

    source: str
    resolve: Resolve
    warnings: dict[str, None] = field(default_factory=dict)
    names: dict[str, None] = field(default_factory=dict)
    size: int = 0
    embeds: int = 0
    texts: dict[str, str] = field(default_factory=dict)
    """Each note met, by source: what ``![[#Heading]]`` inside it embeds from."""

    def warn(self, link: WikiLink, where: str, problem: str) -> None:
        written = f"![[{link.target}{'#' + link.heading if link.heading else ''}]]"
        inside = "" if where == self.source else f" (in {where})"
        self.warnings[f"{self.source}: {written}{inside}: {problem}; left as a link"] = None


def expand_embeds(source: str, text: str, resolve: Resolve) -> Expanded:
    """``text`` (the note ``source``, front matter included) with its note embeds resolved."""
    body = split_front_matter(text)[0]
    run = _Run(source, resolve, size=len(text), texts={source: text})
    pieces = [(text[:body], ""), *_expand(run, source, text[body:], "", ((source.lower(), ""),))]
    out: list[str] = []
    origins: list[tuple[int, int, str]] = []
    at = 0
    for piece, origin in pieces:
        if origin and piece:
            if origins and origins[-1][2] == origin and origins[-1][1] == at:
                origins[-1] = (origins[-1][0], at + len(piece), origin)
            else:
                origins.append((at, at + len(piece), origin))
        out.append(piece)
        at += len(piece)
    return Expanded("".join(out), tuple(origins), tuple(run.warnings), tuple(run.names))


def _expand(
    run: _Run, where: str, text: str, origin: str, stack: tuple[tuple[str, str], ...]
) -> list[tuple[str, str]]:
    """``text`` (of the note ``where``, labelled ``origin``) cut into pieces at its embeds,
    each embed's pieces put in its place; ``stack`` holds the (note, part) pairs being
    embedded around it, so a cycle is seen."""
    pieces: list[tuple[str, str]] = []
    at = 0
    for link in wikilinks(text):
        line_start = text.rfind("\n", 0, link.start) + 1
        # In a table row the embedded lines would end the table: left as written.
        if not link.embed or text[line_start : link.start].lstrip().startswith("|"):
            continue
        inner = _embedded(run, where, link, stack)
        if inner is None:
            continue
        inner = _inside_container(inner, text[line_start : link.start])
        pieces += [(text[at : link.start], origin), *inner]
        at = link.end
    pieces.append((text[at:], origin))
    return pieces


def _embedded(
    run: _Run, where: str, link: WikiLink, stack: tuple[tuple[str, str], ...]
) -> list[tuple[str, str]] | None:
    """The pieces an embed stands for, or None where it stays a link (warned)."""
    if link.target:
        run.names[embed_name(link.target)] = None
        note = run.resolve(link.target, where)
    else:  # ``![[#Heading]]``: a part of the note it stands in
        note = Note(where, run.texts.get(where, ""))
    if not note.source:
        if note.problem:
            run.warn(link, where, note.problem)
        return None
    run.texts.setdefault(note.source, note.text)
    key = (note.source.lower(), link.heading.lower())
    if key in stack:
        run.warn(link, where, f"{note.source} embeds it back (a cycle)")
        return None
    if len(stack) > MAX_DEPTH:
        run.warn(link, where, f"embeds nested more than {MAX_DEPTH} deep")
        return None
    if run.embeds >= MAX_EMBEDS:
        run.warn(link, where, f"more than {MAX_EMBEDS} embeds in one note")
        return None
    part = _part(note.text, link.heading)
    if part is None:
        run.warn(link, where, f"{note.source} has no {_kind(link.heading)} {link.heading!r}")
        return None
    if run.size + len(part) > MAX_CHARS:
        run.warn(link, where, f"the note would grow past {MAX_CHARS} characters")
        return None
    run.size += len(part)
    run.embeds += 1
    label = f"{note.source}#{link.heading}" if link.heading else note.source
    return _expand(run, note.source, part, label, (*stack, key))


def _kind(heading: str) -> str:
    return "block" if heading.startswith("^") else "heading"


def _part(text: str, heading: str) -> str | None:
    """The body of a note, or its section or block ``heading`` names, as it is embedded:
    headings made bold lines, a block's own ``^id`` dropped, blank lines around trimmed."""
    body_start = split_front_matter(text)[0]
    blocks = parse_blocks(text, body_start)
    start, end = body_start, len(text)
    if heading.startswith("^"):
        found = _block(text, blocks, heading[1:])
        if found is None:
            return None
        start, end = found
    elif heading:
        found = _section(blocks, heading, len(text))
        if found is None:
            return None
        start, end = found
    out, at = [], start
    for block in blocks:
        if block.kind is BlockKind.HEADING and start <= block.start and block.end <= end:
            out += [text[at : block.start], f"**{block.title}**" if block.title else ""]
            at = block.end
    out.append(text[at:end])
    # A block's ``^id`` is an address, hidden when Obsidian shows the note: not its text.
    return _BLOCK_ID.sub("", "".join(out)).strip("\n").rstrip()


def _section(blocks: list[Block], heading: str, end_of_text: int) -> tuple[int, int] | None:
    """``[start, end)`` of the section under ``heading`` (``A#B``: B under A), heading line
    included, to the next heading of the same or a higher level."""
    headings = [b for b in blocks if b.kind is BlockKind.HEADING]
    wanted = [h.strip().lower() for h in heading.split("#") if h.strip()]
    k, level = 0, 0
    for i, h in enumerate(headings):
        if k and h.level <= level:
            return None  # left the section the path so far named
        if _same_title(h.title, wanted[k]) and h.level > level:
            k, level = k + 1, h.level
            if k == len(wanted):
                ends = (n.start for n in headings[i + 1 :] if n.level <= level)
                return h.start, next(ends, end_of_text)
    return None


def _same_title(title: str, wanted: str) -> bool:
    # Obsidian compares a heading link loosely: case aside, and its ``[[links]]`` as shown.
    return title.strip().lower() == wanted or _plain(title) == wanted


def _plain(title: str) -> str:
    return re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", title).strip().lower()


def _block(text: str, blocks: list[Block], block_id: str) -> tuple[int, int] | None:
    """``[start, end)`` of the block marked `` ^block_id`` without the mark: the paragraph
    or list item it ends, or the block before a line holding only the mark."""
    for m in _BLOCK_ID.finditer(text):
        if m["id"].lower() != block_id.lower():
            continue
        pos = m.start("id") - 1
        before = [b for b in blocks if b.start <= pos]
        if not before:
            return None
        block = before[-1]
        if text[block.start : pos].strip() == "" and len(before) > 1:  # the mark alone
            return before[-2].start, before[-2].end
        return block.start, m.start()
    return None


def _inside_container(pieces: list[tuple[str, str]], prefix: str) -> list[tuple[str, str]]:
    """Embedded pieces continued inside the quote, callout or list item the embed stands
    in: ``> ![[Note]]`` keeps every embedded line in the quote."""
    marks = _CONTAINER.fullmatch(prefix)
    if marks is None or not prefix:
        return pieces
    cont = _LIST_MARK.sub(lambda m: " " * len(m.group(0)), prefix)
    return [(piece.replace("\n", "\n" + cont), origin) for piece, origin in pieces]
