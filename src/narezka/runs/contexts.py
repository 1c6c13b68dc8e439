"""The estimate a sync with LLM-written chunk context (:mod:`narezka.enrich.llm_context`)
prints before it starts asking."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from narezka.discover import iter_files, read_document
from narezka.enrich.llm_context import ContextEstimate, ContextWriter
from narezka.errors import NarezkaError, SourceError
from narezka.runs.chunking import chunk_raw


def estimate_sync(
    syncer: Any,
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    paths: set[str] | None = None,
) -> ContextEstimate:
    """What a sync will ask the LLM: the files it would re-chunk (by the same stat test) are
    chunked once more here and looked up in the cache. A file that cannot be read is left to
    the sync, which reports it."""
    writer: ContextWriter = syncer.context

    def documents() -> Any:
        syncer.known.scan()  # the walk is sorted: the manifest is read in step with it
        try:
            for base, file in iter_files([root], globs, exclude, errors=[]):
                source = file.relative_to(base).as_posix()
                if paths is not None and source not in paths:
                    continue
                try:
                    if syncer.is_current(source, file.stat()):
                        continue
                    raw, _ = read_document(base, file, options=syncer.convert)
                    chunks = chunk_raw(raw, syncer.strategy, syncer.params, syncer.counter).chunks
                except (OSError, SourceError, NarezkaError):
                    continue
                yield raw.text, chunks
        finally:
            syncer.known.close()

    return writer.estimate(documents())


__all__ = ["estimate_sync"]
