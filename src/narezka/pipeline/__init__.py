"""The wiring between stages: the only package that crosses them (besides the CLI).

``chunking`` reads and splits files; ``indexing`` syncs chunks into a vector index;
``searching`` answers queries from it.
"""

from narezka.pipeline.chunking import (
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
