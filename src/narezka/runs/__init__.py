"""Chunk runs: files read, parsed and split, one by one or in worker processes.

``file_chunks`` turns one file into its chunks (in this process or a worker's); ``workers``
keeps the worker pool; ``chunking`` builds the runs on them (``chunk_text``,
``chunk_documents``); ``contexts`` estimates what LLM-written contexts will cost. Nothing
here opens an index: :mod:`narezka.index` runs these and stores what they make.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_exports
from narezka.runs.chunking import (
    DEFAULT_INCLUDE,
    ChunkReport,
    chunk_documents,
    chunk_path,
    chunk_raw,
    chunk_text,
    count_files,
    make_params,
    start_workers_early,
)

if TYPE_CHECKING:
    from narezka.runs.config import ChunkConfig
    from narezka.runs.stats import chunk_stats

# The names below this face that the commands use, loaded on first use: importing the
# face must not import what they need (an extra, a store, an LLM client).
_LAZY = {
    "ChunkConfig": "narezka.runs.config",
    "chunk_stats": "narezka.runs.stats",
}
__getattr__, __dir__ = lazy_exports(globals(), _LAZY)

__all__ = [
    "DEFAULT_INCLUDE",
    "ChunkConfig",
    "ChunkReport",
    "chunk_documents",
    "chunk_path",
    "chunk_raw",
    "chunk_stats",
    "chunk_text",
    "count_files",
    "make_params",
    "start_workers_early",
]
