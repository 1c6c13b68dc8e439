"""A range's ``embed_text`` is its breadcrumb, then its frame and redacted text sanitized as
one (narezka.split.context), however the document's dirt and secrets lie around it: the
chunker skips sanitizing where it can tell nothing would change, and this checks it."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from narezka.discover import normalize_newlines
from narezka.enrich.redaction import find_secrets
from narezka.parse.markdown import parse_document
from narezka.parse.sanitize import sanitize
from narezka.split.context import DocumentContext
from narezka.tokens import get_counter
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


def context(text: str) -> DocumentContext:
    doc, _ = parse_document(RawDocument(source="doc.md", text=normalize_newlines(text)))
    doc = dataclasses.replace(doc, secrets=find_secrets(doc.text))
    return DocumentContext(
        doc, get_counter("chars"), 120, strategy="headings", fingerprint="f", breadcrumbs=True
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
