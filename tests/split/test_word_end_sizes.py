"""A group's cl100k count summed from its pieces at word ends is its exact count
(narezka.split.word_end_sizes), in clean documents and in ones that need sanitizing elsewhere."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from narezka.discover import normalize_newlines
from narezka.parse.markdown import parse_document
from narezka.parse.sanitize import changed_spans, sanitize
from narezka.split.context import DocumentContext
from narezka.tokens import TokenCounter, get_counter
from narezka.types import RawDocument

from markdown_gen import adversarial_markdown, markdown

CL100K = get_counter("tokens", "cl100k_base")

# What makes a document need sanitizing, put into it somewhere.
DIRT = st.sampled_from(
    ["", "", "a" + " " * 12 + "b", "x\u200by", "\n\n\n\n\n\n", "=" * 230, "\ufeff"]
)


class Calls:
    """A counter that tells how many characters it was asked to count."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        self.name = inner.name
        self.word_ends = True
        self.join_slack = 6
        self.counted = 0

    def count(self, text: str) -> int:
        self.counted += len(text)
        return self.inner.count(text)

    def count_batch(self, texts: list[str]) -> list[int]:
        return [self.count(t) for t in texts]


def context(text: str, counter: TokenCounter = CL100K, size: int = 64) -> DocumentContext:
    # As every source is read: line breaks normalized first.
    doc, _ = parse_document(RawDocument(source="doc.md", text=normalize_newlines(text)))
    return DocumentContext(
        doc, counter, size, strategy="headings", fingerprint="f", breadcrumbs=True
    )


def pieces_of(ctx: DocumentContext, cuts: list[int]) -> list[tuple[int, int]]:
    """The trimmed, non-empty ranges between block edges and the drawn cuts."""
    edges = sorted({ctx.doc.body_start, *[b.end for b in ctx.blocks], *cuts, len(ctx.text)})
    out = []
    for a, b in itertools.pairwise(edges):
        s, e = ctx.trim(max(a, ctx.doc.body_start), b)
        if s < e:
            out.append((s, e))
    return out


@given(
    text=st.tuples(st.one_of(markdown(), adversarial_markdown()), DIRT, st.integers(0, 10**6)),
    cuts=st.lists(st.integers(0, 10**6), max_size=12),
    span=st.tuples(st.integers(0, 200), st.integers(1, 8)),
)
def test_a_group_summed_at_word_ends_is_counted_exactly(
    text: tuple[str, str, int], cuts: list[int], span: tuple[int, int]
) -> None:
    body, dirt, at = text
    at %= len(body) + 1
    ctx = context(body[:at] + dirt + body[at:])
    pieces = pieces_of(ctx, [c % (len(ctx.text) + 1) for c in cuts])
    if not pieces or ctx.secrets:
        return
    first = span[0] % len(pieces)
    group = pieces[first : first + span[1]]
    bodies = [CL100K.count(sanitize(ctx.text[s:e])) for s, e in group]
    summed = ctx.word_end_count(group, bodies)
    if summed is not None:
        assert summed == CL100K.count(ctx.embed_text(group[0][0], group[-1][1]))


def test_prose_is_sized_from_its_pieces_without_counting_groups_whole() -> None:
    words = "Доставка курьером занимает два дня, the order ships within days. "
    text = "# Title\n\n## Part\n\n" + "\n\n".join(words * (k % 3 + 1) for k in range(40))
    counter = Calls(CL100K)
    ctx = context(text, counter)
    pieces = pieces_of(ctx, [])
    bodies = [CL100K.count(ctx.text[s:e]) for s, e in pieces]
    for first in range(0, len(pieces) - 4, 3):
        group = pieces[first : first + 4]
        summed = ctx.word_end_count(group, bodies[first : first + 4])
        assert summed == CL100K.count(ctx.embed_text(group[0][0], group[-1][1]))
    # Joins and the breadcrumb are counted over a few characters each, not per group.
    assert counter.counted < len(text) // 4, counter.counted


def test_a_piece_without_a_word_end_is_counted_inside_the_stretch_around_it() -> None:
    text = "# T\n\nFirst words here.\n\n///\n\n12345 67890\n\n---\n\nLast words there.\n"
    ctx = context(text)
    pieces = pieces_of(ctx, [])
    group = pieces[1:]
    assert [ctx.text[s:e] for s, e in group][1] == "///"
    bodies = [CL100K.count(ctx.text[s:e]) for s, e in group]
    summed = ctx.word_end_count(group, bodies)
    assert summed == CL100K.count(ctx.embed_text(group[0][0], group[-1][1]))


def test_a_range_that_sanitizing_would_change_is_not_summed() -> None:
    clean = "Some words here.\n\nMore words there."
    dirty = "Some" + " " * 12 + "words.\n\nMore words there."
    for text, summable in [(clean + "\n\n" + dirty, True), (dirty + "\n\n" + clean, False)]:
        ctx = context(text)
        pieces = pieces_of(ctx, [])
        group = pieces[:2]
        bodies = [CL100K.count(sanitize(ctx.text[s:e])) for s, e in group]
        summed = ctx.word_end_count(group, bodies)
        assert (summed is not None) == summable
        if summed is not None:
            assert summed == CL100K.count(ctx.embed_text(group[0][0], group[-1][1]))


@given(
    text=st.lists(
        st.sampled_from(["word", " ", "  ", " " * 11, "\t", "\n", "\n" * 5, "\u200b", "x" * 60]),
        max_size=30,
    ).map("".join),
    start=st.integers(0, 2000),
    length=st.integers(0, 2000),
)
def test_a_slice_that_meets_no_changed_span_is_its_own_sanitized_form(
    text: str, start: int, length: int
) -> None:
    start %= len(text) + 1
    end = min(len(text), start + length)
    if not any(a < end and b > start for a, b in changed_spans(text)):
        assert sanitize(text[start:end]) == text[start:end]
    assert (changed_spans(text) == []) == (sanitize(text) == text)


class Framed(DocumentContext):
    """A context whose every range gets a frame that runs into its text: no real frame does
    (fences and table headers are lines), but the sum must not lean on that."""

    def _atom_context(self, start: int, end: int) -> tuple[str, str]:
        # "walk" + "ing" is one token, and "Frame:" + "Title" may be too.
        return "Frame:", "ing's end"


@given(
    parts=st.lists(
        st.sampled_from(["walk", "test", "Title", "c", " ", "\n\n", ".", "'s", "Жу"]),
        min_size=1,
        max_size=30,
    ),
    step=st.integers(2, 12),
)
def test_a_frame_that_runs_into_the_text_is_counted_with_it(parts: list[str], step: int) -> None:
    text = "".join(parts)
    doc, _ = parse_document(RawDocument(source="doc.md", text=text))
    ctx = Framed(doc, CL100K, 64, strategy="headings", fingerprint="f", breadcrumbs=False)
    pieces = pieces_of(ctx, list(range(0, len(text), step)))
    for first in range(len(pieces)):
        group = pieces[first : first + 3]
        bodies = [CL100K.count(ctx.text[s:e]) for s, e in group]
        summed = ctx.word_end_count(group, bodies)
        if summed is not None:
            assert summed == CL100K.count(ctx.embed_text(group[0][0], group[-1][1]))
