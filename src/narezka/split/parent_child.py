"""``parent-child``: small chunks for search, each pointing at the larger span it came from.

Small chunks match a question precisely; the model answering it wants the surrounding text
(small-to-big retrieval). Parents are cut first, exactly as ``headings`` cuts them at
``parent_size`` (a heading section, or a piece of one when the section is longer); children are
packed inside each parent at ``size`` by blocks, sentences, lines and words, so a child never
straddles two parents. Each child carries ``meta["parent"]``: the parent's index, span and size,
which the index stores with the child and ``search --expand parent`` returns.

Children obey the whole chunk contract (they are what gets embedded); parents are spans of
the same document and are never embedded, so ``parent_size`` may exceed the model's window.
Overlap is not applied: a child repeating its neighbour's tail would blur which parent it
answers for, and the parent already gives the context overlap is meant to give.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from narezka.parse.redaction import redacted_text
from narezka.split.base import MarkdownStrategy, SplitParams, context_for
from narezka.split.headings import HeadingsStrategy, merge_short, structure_refiners
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document

PARENT_FACTOR = 4
"""Parents default to this many times the child size: a section of a few paragraphs."""


def parent_size(params: SplitParams) -> int:
    """The parents' limit in ``params.unit``: ``parent_size`` or four children's worth."""
    return params.parent_size or params.size * PARENT_FACTOR


class ParentChildStrategy(MarkdownStrategy):
    """Children packed inside heading-section parents; see the module docstring."""

    name = "parent-child"
    breadcrumbs = True

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        big = dataclasses.replace(params, size=parent_size(params), overlap=0)
        parents = HeadingsStrategy().split(doc, big, counter)
        ctx = context_for(self, doc, params, counter)
        packer = ctx.packer(structure_refiners(ctx))
        ranges: list[tuple[int, int]] = []
        owners: list[Chunk] = []
        for parent in parents:
            children = merge_short(ctx, packer.pack(parent.start, parent.end), params.min_chars)
            ranges.extend(children)
            owners.extend(parent for _ in children)
        chunks = ctx.make_chunks(ranges)
        return [_with_parent(child, parent) for child, parent in zip(chunks, owners, strict=True)]


def _with_parent(child: Chunk, parent: Chunk) -> Chunk:
    # The parent's text is part of what the index stores for the child, so an edit elsewhere
    # in the parent must change the child's hash, or sync would keep a stale parent.
    digest = hashlib.sha256(
        f"{child.content_hash}\0{parent.text}".encode("utf-8", "surrogatepass")
    ).hexdigest()[:32]
    parent_meta: dict[str, Any] = {
        "index": parent.index,
        "start": parent.start,
        "end": parent.end,
        "section": list(parent.section),
        "anchor": parent.anchor,
        "tokens": parent.tokens,
        # Stored as the child's parent_text: redacted like everything the index keeps.
        "text": redacted_text(parent),
    }
    return dataclasses.replace(
        child, content_hash=digest, meta={**child.meta, "parent": parent_meta}
    )


__all__ = ["PARENT_FACTOR", "ParentChildStrategy", "parent_size"]
