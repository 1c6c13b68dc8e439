"""One decoded document to its chunks: the per-file core that ``chunk_documents``, the sync
and the ``--jobs`` workers all run (its own module, so the workers need not import the
pipeline that starts them)."""

from __future__ import annotations

import dataclasses
import warnings as warnings_module
from dataclasses import dataclass, field

from narezka.enrich.redaction import count_kinds, find_secrets
from narezka.errors import NarezkaWarning
from narezka.parse.markdown import parse_document, plain_document
from narezka.parse.sanitize import removed_characters
from narezka.split import Chooser, SplitParams, Strategy
from narezka.tokens import TokenCounter
from narezka.types import Chunk, RawDocument


@dataclass(frozen=True, slots=True)
class FileChunks:
    """One file's chunks, its warnings, what sanitization drops, and the strategy it got."""

    chunks: list[Chunk]
    warnings: list[str]
    removed: int
    strategy: str
    caught: list[warnings_module.WarningMessage] = field(default_factory=list)
    """The strategy's own warnings (also in ``warnings`` as text)."""
    secrets: dict[str, int] = field(default_factory=dict)
    """Secrets found in the file and redacted, by kind (empty with ``redact=False``)."""


def chunk_raw(
    raw: RawDocument, strategy: Strategy, params: SplitParams, counter: TokenCounter
) -> FileChunks:
    """Chunks of one decoded document; ``auto`` first picks the strategy for this file."""
    chosen = strategy.choose(raw) if isinstance(strategy, Chooser) else strategy
    if chosen.markdown:
        doc, warnings = parse_document(raw)
    else:
        doc, warnings = plain_document(raw), []
    if params.redact:
        # Once per document, over its whole text: every range the strategy tries reuses it.
        doc = dataclasses.replace(doc, secrets=find_secrets(doc.text))
    with warnings_module.catch_warnings(record=True) as caught:
        warnings_module.simplefilter("always", NarezkaWarning)
        chunks = chosen.split(doc, params, counter)
    notes = [*warnings, *(f"{raw.source}: {w.message}" for w in caught)]
    removed = removed_characters(doc.text[doc.body_start :])
    return FileChunks(chunks, notes, removed, chosen.name, caught, count_kinds(doc.secrets))
