"""``legal``: contracts, laws and codes split by their own units: articles, points, sub-points.

Units are found at line starts: «Приложение № 1», «Раздел I», «Подраздел», «Глава 2», «§ 3»,
«Статья 5.» (its title on the same line or not), numbered points «1.», «1.1», «1.1.1.», and
sub-points «1)», «а)». A Markdown heading whose title is such a unit
(``## Статья 5. Ответственность сторон``) is that unit; any other heading is a division of the
document. Every unit opens a section, so a chunk's ``section`` — and its breadcrumb — is the
path of units around it (``Договор поставки > Глава 2. … > Статья 5. Ответственность > 5.2``),
and its anchor a slug of the deepest one.

Every article and numbered point is a chunk of its own with its sub-points; one shorter than
``min_chars`` joins a neighbour under the same parent (a bare chapter title joins its first
article) when the result fits. A unit too long for the limit is cut at its sub-points, then
paragraphs, sentences, lines and words, its title line kept with the text under it; tables
and code blocks stay whole as everywhere. A chunk that opens with bare title lines («Глава 2»,
«Статья 3» and nothing else before point 3.1) has the section of the text they introduce.
``overlap`` is not applied: units are self-contained, as in ``headings``.

Telling a point from a number that merely starts a line:

* a point opens only at the start of the text, after a blank line, after a line that ends a
  sentence or clause (``. ; : ! ? …``), or right after another unit's line: a wrapped line that
  happens to begin with «5.» continues its sentence;
* a dotted number is a point only when an upper-case letter or an opening quote follows it
  («1.1. Поставщик…»). So «2.5 кг муки» at a line start is a quantity, not point 2.5 (a
  decided trade-off: a point whose text starts in lower case is not found; sub-points
  «1) поставку товара;» and «а) …» may start in lower case);
* numbers have no leading zeros and at most three digits per part, so «01.02.2024 г.» and
  «2024 год» are never points;
* «Статья 5 настоящего Договора…» is a reference, not an article: after an article's (or
  chapter's…) number must come a full stop, a colon, the end of the line or a capitalised
  title;
* lines inside tables, code and HTML blocks are never units.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from narezka.parse.markdown import slugify
from narezka.split.base import MarkdownStrategy, SplitParams, context_for
from narezka.split.context import DocumentContext, Section
from narezka.split.headings import pack_under_heading
from narezka.split.packer import Refiner
from narezka.tokens import TokenCounter
from narezka.types import BlockKind, Chunk, Document

LEGAL_THRESHOLD = 0.2
"""``legal_score`` at or above this means a text dominated by articles and points."""

_TITLE_MAX = 80
"""Longer unit titles are shortened in the breadcrumb (the span keeps them whole)."""

# Keyword units, outermost first: a unit closes the open ones of the same or a deeper rank.
_RANKS = {
    "приложение": 5,
    "раздел": 10,
    "подраздел": 15,
    "глава": 20,
    "§": 30,
    "параграф": 30,
    "статья": 40,
}
_MARKUP = re.compile(r"[ \t]*(?:#{1,6}[ \t]+)?(?:\*\*|__|\*|_)?")
_KEYWORD = re.compile(
    r"(?P<kw>(?i:приложение|подраздел|раздел|глава|параграф|статья)|§)[ \t]*"
    r"(?P<num>(?:№[ \t]*)?(?:[1-9]\d{0,3}(?:\.\d{1,3}){0,3}|[IVXLC]{1,8}))(?!\w)"
    r"(?P<rest>[^\n]*)"
)
_POINT = re.compile(
    r"[ \t]*(?:\*\*|__)?"
    r"(?P<label>[1-9]\d{0,2}(?:\.[1-9]\d{0,2}){0,3}\.?|[1-9]\d{0,2}\)|[а-яёa-z]\))"
    r"(?:\*\*|__)?[ \t]+(?P<first>\S)"
)
_CLAUSE_END = frozenset(".;:!?…")
_OPENERS = frozenset('«"“„(')
_MINOR = frozenset({"paren", "letter"})
_LABEL_GAPS = re.compile(r"\W+")
_SPACES = re.compile(r"\s*")


@dataclass(slots=True)
class Unit:
    """One structural unit: where its line starts and what it is called in a breadcrumb."""

    start: int
    line_end: int
    kind: str
    """``heading`` (a plain Markdown heading), ``keyword`` (article, chapter…), ``decimal``
    (1. / 1.1 / 1.1.1), ``paren`` (1)) or ``letter`` (а))."""
    rank: int
    """Keyword rank (outer first) or a decimal point's depth."""
    level: int
    """Markdown heading level; 0 for a unit written as plain text."""
    title: str
    """The unit's breadcrumb name: its title line, or a point's label («5.2», «а)»)."""
    title_line: bool
    """The line is a title only (no text of its own), so it stays with what follows."""
    anchor: str = ""
    path: tuple[str, ...] = ()
    anchors: tuple[str, ...] = ()
    key: tuple[int, ...] = ()
    """Indices of the enclosing units and this one: the family a chunk belongs to."""

    @property
    def major(self) -> bool:
        return self.kind not in _MINOR


def legal_score(text: str) -> float:
    """Share of non-blank lines that open a legal unit (0.0–1.0), for choosing ``legal``.

    Articles, chapters and dotted points («1.1») always count; plain numbered lines («1.»,
    «1)», «а)») count only in a text with at least two of those, so an ordinary numbered
    list in a how-to page does not make it law. Fenced code is skipped. A line scan, no
    Markdown parse.
    """
    strong = weak = total = 0
    fence = ""
    for line in itertools.islice(text.splitlines(), 4000):
        stripped = line.strip()
        if not stripped:
            continue
        if fence:
            if stripped.startswith(fence):
                fence = ""
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        total += 1
        kind = _line_kind(line)
        if kind in ("keyword", "decimal+"):
            strong += 1
        elif kind:
            weak += 1
    if total == 0:
        return 0.0
    return (strong + (weak if strong >= 2 else 0)) / total


def _line_kind(line: str) -> str:
    """``keyword``, ``decimal+`` (a dotted point), ``decimal``, ``paren``, ``letter`` or ''."""
    keyword = _match_keyword(line)
    if keyword is not None:
        return "keyword"
    point = _match_point(line)
    if point is None:
        return ""
    kind, depth, _ = point
    return "decimal+" if kind == "decimal" and depth > 1 else kind


def _match_keyword(line: str) -> tuple[int, str] | None:
    """(rank, title) when the line opens an article, chapter, section…"""
    markup = _MARKUP.match(line)
    pos = markup.end() if markup else 0
    m = _KEYWORD.match(line, pos)
    if m is None:
        return None
    word = m.group("kw").lower()
    rest = m.group("rest").strip().strip("*_").strip()
    if word != "приложение" and rest and rest[0] not in ".:—–-" and not _opens_text(rest[0]):
        return None
    return _RANKS[word], _clean_title(line[pos:])


def _match_point(line: str) -> tuple[str, int, str] | None:
    """(kind, depth, label) when the line opens a numbered point or a sub-point."""
    m = _POINT.match(line)
    if m is None:
        return None
    label = m.group("label")
    if label.endswith(")"):
        return ("paren" if label[0].isdigit() else "letter"), 1, label
    if "." not in label or not _opens_text(m.group("first")):
        return None
    return "decimal", label.rstrip(".").count(".") + 1, label


def _opens_text(char: str) -> bool:
    return char.isupper() or char in _OPENERS


def _clean_title(line: str) -> str:
    title = line.strip().rstrip("#").strip().strip("*_").strip()
    if len(title) > _TITLE_MAX:
        cut = title.rfind(" ", 0, _TITLE_MAX)
        title = title[: cut if cut > _TITLE_MAX // 2 else _TITLE_MAX].rstrip(" ,;:") + "…"
    return title


def _skip_space(text: str, pos: int) -> int:
    match = _SPACES.match(text, pos)
    return match.end() if match else pos


def _ends_clause(line: str) -> bool:
    tail = line.rstrip().rstrip('*_»"”)').rstrip()
    return bool(tail) and tail[-1] in _CLAUSE_END


def find_units(doc: Document) -> list[Unit]:
    """The document's units in order, each with its path of enclosing units."""
    text = doc.text
    headings = {b.start: b for b in doc.blocks if b.kind is BlockKind.HEADING}
    # Lines inside atoms are never units; lines of a heading after its first (a setext
    # underline) are not either.
    skip = [(b.start, b.end) for b in doc.blocks if b.is_atom or b.kind is BlockKind.HEADING]
    skip_starts = [s for s, _ in skip]
    units: list[Unit] = []
    prev_ok = True  # the text's start counts as a unit boundary
    pos = doc.body_start
    n = len(text)
    while pos <= n:
        nl = text.find("\n", pos)
        end = n if nl == -1 else nl
        line = text[pos:end]
        unit: Unit | None = None
        heading = headings.get(pos)
        k = bisect_right(skip_starts, pos) - 1
        inside = k >= 0 and skip[k][0] <= pos < skip[k][1] and heading is None
        if heading is not None:
            unit = _heading_unit(pos, end, heading.level, heading.title, heading.anchor)
        elif not inside and line.strip():
            unit = _line_unit(pos, end, line, prev_ok)
        if unit is not None:
            units.append(unit)
        # A point may open after a blank line, a finished clause or another unit's line.
        prev_ok = unit is not None or inside or not line.strip() or _ends_clause(line)
        if nl == -1:
            break
        pos = nl + 1
    _link(units)
    return units


def _heading_unit(start: int, end: int, level: int, title: str, anchor: str) -> Unit:
    keyword = _match_keyword(title)
    if keyword is not None:
        return Unit(start, end, "keyword", keyword[0], level, keyword[1], True, anchor)
    point = _match_point(title)
    if point is not None and point[0] == "decimal":
        return Unit(start, end, "decimal", point[1], level, _clean_title(title), True, anchor)
    return Unit(start, end, "heading", 0, level, _clean_title(title), True, anchor)


def _line_unit(start: int, end: int, line: str, prev_ok: bool) -> Unit | None:
    keyword = _match_keyword(line)
    if keyword is not None:
        return Unit(start, end, "keyword", keyword[0], 0, keyword[1], True)
    point = _match_point(line) if prev_ok else None
    if point is None:
        return None
    kind, depth, label = point
    body = line.strip().strip("*_")
    if kind == "decimal" and len(body) <= _TITLE_MAX and not _ends_clause(body):
        # «1. ПРЕДМЕТ ДОГОВОРА»: a section title written as a point.
        return Unit(start, end, kind, depth, 0, _clean_title(line), True)
    name = label.rstrip(".") if kind == "decimal" and depth > 1 else label
    return Unit(start, end, kind, depth, 0, name, False)


def _closes(new: Unit, top: Unit) -> bool:
    """Whether the major unit ``new`` ends ``top`` (a sibling or an outer unit's sibling)."""
    if top.kind in _MINOR:
        return True
    if new.kind == "heading":
        return top.level == 0 or top.level >= new.level
    if new.kind == "decimal":
        if top.kind == "decimal":
            return top.rank >= new.rank
        return top.kind == "heading" and new.level > 0 and top.level >= new.level
    # A keyword unit: points never enclose it; among keywords the rank decides; against a
    # plain heading only a keyword heading can be a sibling (a keyword line nests in it).
    if top.kind == "decimal":
        return True
    if top.kind == "keyword":
        return top.rank >= new.rank
    return new.level > 0 and top.level >= new.level


def _link(units: list[Unit]) -> None:
    """Give every unit its path, anchors and key from a stack of the open units."""
    stack: list[int] = []
    for index, unit in enumerate(units):
        if unit.major:
            while stack and _closes(unit, units[stack[-1]]):
                stack.pop()
        else:
            # A sub-point of a kind already open is that one's sibling: «б)» closes «а)» and
            # whatever opened inside it.
            for depth in range(len(stack) - 1, -1, -1):
                open_unit = units[stack[depth]]
                if open_unit.major:
                    break
                if open_unit.kind == unit.kind:
                    del stack[depth:]
                    break
        parent = units[stack[-1]] if stack else None
        if not unit.anchor:
            own = slugify(unit.title) if unit.title_line else _LABEL_GAPS.sub("-", unit.title)
            own = own.strip("-") or "unit"
            unit.anchor = f"{parent.anchor}-{own}" if parent and not unit.title_line else own
        unit.path = (*(parent.path if parent else ()), unit.title)
        unit.anchors = (*(parent.anchors if parent else ()), unit.anchor)
        unit.key = (*(parent.key if parent else ()), index)
        stack.append(index)


class LegalStrategy(MarkdownStrategy):
    """Splits contracts and laws by article and point, breadcrumbs on."""

    name = "legal"
    breadcrumbs = True

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        units = find_units(doc)
        bare = _bare_titles(doc.text, units)
        # A bare title's territory is the text it introduces: a chunk that opens with
        # «Глава 2» and «Статья 3» lines and holds point 3.1 is about point 3.1.
        content = list(range(len(units)))
        for k in range(len(units) - 2, -1, -1):
            if bare[k]:
                content[k] = content[k + 1]
        sections = [
            Section(u.start, units[content[k]].path, units[content[k]].anchors)
            for k, u in enumerate(units)
        ]
        ctx = context_for(self, doc, params, counter, sections=sections)
        minor_starts = [u.start for u in units if not u.major]
        majors = [u for u in units if u.major]
        bare_starts = {u.start for u, b in zip(units, bare, strict=True) if b}
        starts = [doc.body_start, *(u.start for u in majors)]
        owners: list[Unit | None] = [None, *majors]
        if len(starts) > 1 and starts[1] == starts[0]:
            del starts[0], owners[0]
        refiners = _refiners(ctx, minor_starts)
        packer = ctx.packer(refiners)
        items: list[_Item] = []
        for (start, end), owner in zip(
            itertools.pairwise([*starts, len(doc.text)]), owners, strict=True
        ):
            ranges = packer.pack(start, end)
            key: tuple[int, ...] = ()
            if owner is not None:
                key = owner.key
                if owner.title_line and len(ranges) > 1 and ranges[0][1] <= owner.line_end:
                    # The title line was left alone: glue it to the start of what follows.
                    ranges = pack_under_heading(ctx, refiners, owner.line_end, start, end)
            items.extend(_Item(s, e, key, start in bare_starts) for s, e in ranges)
        return ctx.make_chunks(_merge_small(ctx, items, params.min_chars))


def _bare_titles(text: str, units: list[Unit]) -> list[bool]:
    """Which units are a title line and nothing else: another major unit follows at once."""
    return [
        unit.major
        and unit.title_line
        and k + 1 < len(units)
        and units[k + 1].major
        and units[k + 1].start == _skip_space(text, unit.line_end)
        for k, unit in enumerate(units)
    ]


def _refiners(ctx: DocumentContext, minor_starts: list[int]) -> list[Refiner]:
    def sub_points(start: int, end: int) -> list[int]:
        lo = bisect_right(minor_starts, start)
        return minor_starts[lo : bisect_left(minor_starts, end)]

    return [sub_points, ctx.block_cuts, ctx.sentence_cuts, ctx.line_cuts, ctx.word_cuts]


def _related(before: tuple[int, ...], after: tuple[int, ...]) -> bool:
    """Whether two neighbouring ranges may merge: one unit, a unit and its first child, or
    two children of one parent (the text before any unit, ``()``, encloses everything)."""
    if after[: len(before)] == before:
        return True
    return bool(before) and bool(after) and before[:-1] == after[:-1]


def _common(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


@dataclass(frozen=True, slots=True)
class _Item:
    start: int
    end: int
    key: tuple[int, ...]
    bare: bool
    """Only a title line: it goes down into the unit that follows whatever its size."""


def _merge_small(ctx: DocumentContext, items: list[_Item], min_chars: int) -> list[tuple[int, int]]:
    """Glue bare titles to what follows, then merge each range shorter than ``min_chars`` into
    a related neighbour when the result fits, the next one first."""
    out = list(items)

    def join(i: int) -> bool:
        a, b = out[i], out[i + 1]
        if not _related(a.key, b.key) or ctx.cost(a.start, b.end) > ctx.budget:
            return False
        out[i : i + 2] = [_Item(a.start, b.end, _common(a.key, b.key), b.bare)]
        return True

    i = 0
    while i + 1 < len(out):
        if not (out[i].bare and join(i)):
            i += 1
    i = 0
    while min_chars > 0 and i < len(out):
        if out[i].end - out[i].start < min_chars:
            if i + 1 < len(out) and join(i):
                continue
            if i > 0 and join(i - 1):
                i -= 1
                continue
        i += 1
    return [(item.start, item.end) for item in out]


__all__ = ["LEGAL_THRESHOLD", "LegalStrategy", "Unit", "find_units", "legal_score"]
