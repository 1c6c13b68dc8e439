"""A range's ``embed_text`` is its breadcrumb, then its frame and redacted text sanitized as
one (narezka.split.context), and its pieces are counted as sanitizing leaves them, however
the document's dirt and secrets lie around them: the chunker skips sanitizing where it can
tell nothing would change, and this checks it."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from narezka.discover import normalize_newlines
from narezka.parse.markdown import parse_document
from narezka.parse.redaction import find_secrets
from narezka.parse.sanitize import sanitize
from narezka.split.context import DocumentContext
from narezka.tokens import TokenCounter, get_counter
from narezka.types import RawDocument

from markdown_gen import adversarial_markdown, markdown

DIRT = st.sampled_from(
    [
        "",
        "a" + " " * 12 + "b",
        "x\u200by",
        "\n\n\n\n\n\n",
        "=" * 230,
        "\ufeff",
        "password=Hunter2Hunter2",
        # A run of 198 characters that its longer marker makes one to shorten.
        " " + "z" * 180 + "_password=abcd1234 ",
    ]
)


CL100K = get_counter("tokens", "cl100k_base")


def context(text: str, counter: TokenCounter | None = None) -> DocumentContext:
    doc, _ = parse_document(RawDocument(source="doc.md", text=normalize_newlines(text)))
    doc = dataclasses.replace(doc, secrets=find_secrets(doc.text))
    return DocumentContext(
        doc,
        counter or get_counter("chars"),
        120,
        strategy="headings",
        fingerprint="f",
        breadcrumbs=True,
    )


@given(
    body=st.one_of(markdown(), adversarial_markdown()),
    dirt=st.lists(st.tuples(DIRT, st.integers(0, 10**6)), min_size=1, max_size=3),
    ranges=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 400)), max_size=8),
    trimmed=st.booleans(),
)
def test_embed_text_is_the_crumb_then_the_framed_redacted_text_sanitized(
    body: str, dirt: list[tuple[str, int]], ranges: list[tuple[int, int]], trimmed: bool
) -> None:
    for piece, at in dirt:
        at %= len(body) + 1
        body = body[:at] + piece + body[at:]
    ctx = context(body)
    lo, n = ctx.doc.body_start, len(ctx.text)
    for first, width in ranges:
        start = lo + first % (n - lo + 1)
        end = min(n, start + width)
        if trimmed:
            start, end = ctx.trim(start, end)
        if start >= end:
            continue
        before, after = ctx._atom_context(start, end)
        expected = ctx.crumb(start, end) + sanitize(before + ctx.span_text(start, end) + after)
        assert ctx.embed_text(start, end) == expected


@given(
    body=st.one_of(markdown(), adversarial_markdown()),
    dirt=st.lists(st.tuples(DIRT, st.integers(0, 10**6)), min_size=1, max_size=3),
    ranges=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 300)), max_size=6),
)
def test_a_range_is_counted_as_sanitizing_leaves_it(
    body: str, dirt: list[tuple[str, int]], ranges: list[tuple[int, int]]
) -> None:
    # Pieces are counted without a sanitize pass where no changed span meets them: the
    # counts must be those of the sanitized text all the same.
    for piece, at in dirt:
        at %= len(body) + 1
        body = body[:at] + piece + body[at:]
    ctx = context(body, CL100K)
    lo, n = ctx.doc.body_start, len(ctx.text)
    spans = []
    for first, width in ranges:
        start = lo + first % (n - lo + 1)
        start, end = ctx.trim(start, min(n, start + width))
        if start < end and (start, end) not in spans:
            spans.append((start, end))
    ctx.count_bodies(spans)  # a batch of two or more
    for start, end in spans:
        plain = ctx.text[start:end]
        if len(spans) > 1:
            assert ctx._body[start, end] == CL100K.count(plain if ctx.clean else sanitize(plain))
        redacted = ctx.span_text(start, end)
        fresh = context(body, CL100K)
        expected = CL100K.count(redacted if ctx.clean else sanitize(redacted))
        assert fresh.body_tokens(start, end) == expected
