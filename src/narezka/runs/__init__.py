"""Chunk runs: files read, parsed and split, one by one or in worker processes.

``file_chunks`` turns one file into its chunks (in this process or a worker's); ``workers``
keeps the worker pool; ``chunking`` builds the runs on them (``chunk_text``,
``chunk_documents``); ``contexts`` estimates what LLM-written contexts will cost. Nothing
here opens an index: :mod:`narezka.index` runs these and stores what they make.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_face
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

__getattr__, __dir__ = lazy_face(globals(), config="ChunkConfig", stats="chunk_stats")

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
