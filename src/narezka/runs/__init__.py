"""Chunk runs: files read, parsed and split, one by one or in worker processes.

``file_chunks`` turns one file into its chunks (in this process or a worker's); ``workers``
keeps the worker pool; ``chunking`` builds the runs on them (``chunk_text``,
``chunk_documents``); ``contexts`` estimates what LLM-written contexts will cost. Nothing
here opens an index: :mod:`narezka.index` runs these and stores what they make.
"""

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

__all__ = [
    "DEFAULT_INCLUDE",
    "ChunkReport",
    "chunk_documents",
    "chunk_path",
    "chunk_raw",
    "chunk_text",
    "count_files",
    "make_params",
    "start_workers_early",
]
