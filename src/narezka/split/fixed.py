"""``fixed``: naive windows of N units with no regard for structure (the seed's baseline)."""

from __future__ import annotations

from typing import ClassVar

from narezka.split.base import SplitParams, context_for
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document


class FixedStrategy:
    """Cuts every N characters or tokens; may cut sentences, tables and code."""

    name: ClassVar[str] = "fixed"
    breadcrumbs: ClassVar[bool] = False
    respects_atoms: ClassVar[bool] = False

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        ctx = context_for(self, doc, params, counter)
        packer = ctx.packer([])
        return ctx.make_chunks(packer.hard_split(doc.body_start, len(doc.text)))
