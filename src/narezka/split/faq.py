"""``faq``: one chunk per question and its answer, the question repeated in ``embed_text``.

The seed's document-specific strategy «для FAQ — по парам вопрос-ответ». A question is

* a heading whose title ends with ``?`` (``### Можно ли вернуть вскрытый чай?``),
* a paragraph or list item that opens with a bold question (``**Где мой трек-номер?**``), or
* a numbered line that is a question (``3. Сколько хранится заказ?``).

Its answer runs to the next question, or to the next heading at the question heading's level
or above (any heading, for a bold or numbered question): sub-headings under a question heading
stay in its pair. Each question becomes a section of its own (for a bold or numbered one, a
section under the enclosing headings), so every chunk of a pair has the question in its
breadcrumb line: a long answer is split between blocks, then sentences, lines and words like
``headings`` does, and each piece still starts with the question in ``embed_text`` (within
the breadcrumb's share of the budget, see :mod:`narezka.split.context`). Headings with nothing
of their own before their first question (``## Доставка`` right above ``### …?``) open that
question's chunk instead of making a chunk of one line. Text that is not a pair (an
introduction, a section without questions) is cut as ``headings`` cuts it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from narezka.parse.markdown import slugify
from narezka.split.base import MarkdownStrategy, SplitParams, context_for
from narezka.split.context import Section
from narezka.split.headings import pack_under_heading, structure_refiners
from narezka.tokens import TokenCounter
from narezka.types import Block, BlockKind, Chunk, Document

_ATTRS = re.compile(r"\s*\{[^{}]*\}\s*$")
"""A trailing ``{#anchor}`` or ``{ #anchor .class }`` left on a title."""
_BOLD = re.compile(r"[ \t]{0,3}(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?(\*\*|__)(.+?)\1(\??)")
_NUMBERED = re.compile(r"[ \t]{0,3}\d{1,3}[.)][ \t]+(.+)")
_ATX = re.compile(r"[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")
_TRAILERS = " \t*_:"

FAQ_MIN_QUESTIONS = 3
"""``auto`` calls a Markdown page an FAQ from this many question lines on..."""
FAQ_SHARE = 0.5
"""...when they are at least this share of its headings and question lines together."""


@dataclass(frozen=True, slots=True)
class Question:
    """Where a question starts, its text, and the heading level it answers under."""

    start: int
    text: str
    level: int
    """The question heading's level; 0 for a bold or numbered question."""


def is_question(title: str) -> bool:
    """A title or line that asks: ends with ``?`` once anchors and markup are stripped."""
    return _ATTRS.sub("", title).rstrip(_TRAILERS).endswith("?")


def question_line(line: str) -> str:
    """The question a bold or numbered line opens with, or ``""``."""
    bold = _BOLD.match(line)
    if bold is not None:
        text = bold.group(2).strip() + bold.group(3)
        return text if is_question(text) else ""
    numbered = _NUMBERED.match(line)
    if numbered is not None and is_question(numbered.group(1)):
        return numbered.group(1).strip().strip("*_").strip()
    return ""


def _first_line(doc: Document, block: Block) -> str:
    end = doc.text.find("\n", block.start, block.end)
    return doc.text[block.start : block.end if end < 0 else end]


def find_questions(doc: Document) -> list[Question]:
    """The document's questions in order: question headings, bold and numbered questions."""
    out = []
    for block in doc.blocks:
        if block.kind is BlockKind.HEADING:
            if is_question(block.title):
                out.append(Question(block.start, _ATTRS.sub("", block.title).strip(), block.level))
        elif block.kind in (BlockKind.PARAGRAPH, BlockKind.LIST_ITEM):
            text = question_line(_first_line(doc, block))
            if text:
                out.append(Question(block.start, text, 0))
    return out


def faq_score(text: str) -> tuple[int, int]:
    """(question lines, other headings) of Markdown text, outside fenced code: a line scan
    cheap enough for ``auto`` to run on every file."""
    questions = headings = 0
    fence = ""
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if opened is not None:
            fence = "" if fence and opened.group(1) == fence else fence or opened.group(1)
            continue
        if fence:
            continue
        atx = _ATX.match(line)
        if atx is not None:
            if is_question(atx.group(2)):
                questions += 1
            else:
                headings += 1
        elif question_line(line):
            questions += 1
    return questions, headings


def looks_like_faq(text: str) -> bool:
    """Whether ``auto`` should give a Markdown page to ``faq``: mostly questions."""
    questions, headings = faq_score(text)
    return questions >= FAQ_MIN_QUESTIONS and questions >= FAQ_SHARE * (questions + headings)


class FaqStrategy(MarkdownStrategy):
    """Question–answer pairs, each one chunk where it fits."""

    name = "faq"
    breadcrumbs = True

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        sections, bounds = faq_sections(doc, find_questions(doc), params.levels)
        ctx = context_for(self, doc, params, counter, sections=sections)
        refiners = structure_refiners(ctx)
        packer = ctx.packer(refiners)
        headings = {b.start: b for b in doc.blocks if b.kind is BlockKind.HEADING}
        ranges: list[tuple[int, int]] = []
        for start, end in itertools.pairwise([doc.body_start, *bounds, len(doc.text)]):
            piece = packer.pack(start, end)
            heading = headings.get(start)
            if heading is not None and len(piece) > 1 and piece[0] == (start, heading.end):
                piece = pack_under_heading(ctx, refiners, heading.end, start, end)
            ranges.extend(piece)
        return ctx.make_chunks(ranges)


def faq_sections(
    doc: Document, questions: Sequence[Question], levels: tuple[int, int] = (1, 6)
) -> tuple[list[Section], list[int]]:
    """Sections (headings plus one per question) and the offsets where chunks must start."""
    asks = {q.start: q for q in questions}
    sections: list[Section] = []
    bounds: list[int] = []
    stack: list[tuple[int, str, str]] = []
    inside = 0  # level of the question heading whose pair we are in, 0 when none
    for block in doc.blocks:
        question = asks.get(block.start)
        if block.kind is BlockKind.HEADING:
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.title, block.anchor))
            path = tuple(s[1] for s in stack)
            anchors = tuple(s[2] for s in stack)
            if question is not None:
                path = (*path[:-1], question.text)
            sections.append(Section(block.start, path, anchors))
            if inside and block.level > inside and question is None:
                continue  # a sub-heading of a question stays in its pair
            inside = block.level if question is not None else 0
            if question is not None or levels[0] <= block.level <= levels[1]:
                bounds.append(block.start)
        elif question is not None:
            path = tuple(s[1] for s in stack)
            anchors = tuple(s[2] for s in stack)
            anchors = (*anchors, slugify(question.text))
            sections.append(Section(block.start, (*path, question.text), anchors))
            inside = 0
            bounds.append(block.start)
    return _absorb_bare_headings(doc, sections, bounds, asks)


def _absorb_bare_headings(
    doc: Document, sections: list[Section], bounds: list[int], asks: dict[int, Question]
) -> tuple[list[Section], list[int]]:
    """Let a question's section start at the headings right above it that hold nothing else,
    so ``## Доставка`` opens the first pair's chunk (with the question in its breadcrumb)
    instead of being a one-line chunk."""
    ends = {b.start: b.end for b in doc.blocks}
    starts = set(asks)  # where a question's section starts, moved up as headings are absorbed
    out = list(sections)
    cuts = set(bounds)
    for k in range(len(out) - 2, -1, -1):
        head, nxt = out[k], out[k + 1]
        if head.start in starts or nxt.start not in starts:
            continue
        if doc.text[ends[head.start] : nxt.start].strip():
            continue
        if nxt.path[: len(head.path)] != head.path:
            continue
        out[k : k + 2] = [Section(head.start, nxt.path, nxt.anchors)]
        starts = (starts - {nxt.start}) | {head.start}
        cuts = (cuts - {nxt.start}) | {head.start}
    return out, sorted(cuts)


__all__ = [
    "FAQ_MIN_QUESTIONS",
    "FAQ_SHARE",
    "FaqStrategy",
    "Question",
    "faq_score",
    "faq_sections",
    "find_questions",
    "is_question",
    "looks_like_faq",
    "question_line",
]
