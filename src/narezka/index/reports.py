"""What a sync reports (:class:`IndexReport`, the ``SyncReport`` of :meth:`narezka.Index.sync`)
and the callbacks a caller passes to follow one (:class:`Progress`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from narezka.errors import SourceError


@dataclass(slots=True)
class IndexReport:
    """What a sync did, file by file and chunk by chunk, and where the time went."""

    files_new: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_kept: int = 0
    chunks_deleted: int = 0
    skipped: list[SourceError] = field(default_factory=list)
    not_read: list[str] = field(default_factory=list)
    """Files of a document type narezka does not read (``.pdf``…) in the corpus."""
    unmatched: list[str] = field(default_factory=list)
    """Indexed files still in the corpus that the include/exclude patterns no longer match:
    removed from the index with ``prune``, else kept (and named in a warning)."""
    warnings: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"chunk": 0.0, "embed": 0.0, "store": 0.0, "total": 0.0}
    )
    cache_hits: int = 0
    cache_misses: int = 0
    embedder: str = ""
    store: str = ""
    secrets: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per file chunked in this run: secrets redacted, by kind (``--no-redact``: none)."""
    context: dict[str, Any] = field(default_factory=dict)
    """With ``context_llm``: what the LLM context step did (``ContextStats.as_dict``)."""
    source: dict[str, Any] = field(default_factory=dict)
    """For a corpus staged from a source (git): the version read and the files fetched,
    moved and removed by its refresh (empty for a folder)."""

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (what ``index --json`` prints)."""
        data = {k: getattr(self, k) for k in self.__slots__}
        data["skipped"] = [{"path": e.path, "problem": e.problem} for e in self.skipped]
        return data


@dataclass(frozen=True, slots=True)
class Progress:
    """Callbacks a caller may pass to follow a sync (any of them may be None).

    ``on_stage(stage, source)`` names what the sync waits for now: ``chunking`` (reading and
    chunking, in workers), ``embedding`` or ``writing``, and the file."""

    on_file: Callable[[str], None] | None = None
    on_bytes: Callable[[int], None] | None = None
    on_total: Callable[[int], None] | None = None
    on_stage: Callable[[str, str], None] | None = None
    on_rate: Callable[[float], None] | None = None
    """Called after each file that embedded chunks: chunks embedded per second so far."""
    on_context_estimate: Callable[[Any], None] | None = None
    """With ``context_llm``: called once with the ``ContextEstimate`` before any LLM call."""
    on_context_call: Callable[[], None] | None = None
    """With ``context_llm``: called after each LLM request."""
