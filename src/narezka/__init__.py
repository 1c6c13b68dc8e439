r"""narezka: Markdown-aware chunking for retrieval, with an exact chunk contract, and an
index that keeps a folder chunked, embedded and searchable.

>>> import narezka
>>> chunks = narezka.chunk_text("# Доставка\n\nКурьером за 1–2 дня.", "headings", size=200)
>>> chunks[0].section
('Доставка',)

An index is one object (see :class:`narezka.Index`)::

    with narezka.Index.create("docs/", narezka.Settings(embedder="use")) as index:
        index.sync()
        for hit in index.search("как вернуть чай", k=3):
            print(hit.score, hit.url, hit.text)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_exports

if TYPE_CHECKING:
    from narezka.errors import ConfigError, NarezkaError, SourceError
    from narezka.index import Index, IndexStats, SourceInfo, SyncReport
    from narezka.runs import ChunkReport, chunk_documents, chunk_path, chunk_text
    from narezka.search import Filter, Hit, Query
    from narezka.settings import Settings
    from narezka.split import SplitParams, strategy_names
    from narezka.types import Chunk, Document

# Each public name loads its module on first use: a process that imports one stage (a
# ``--jobs`` worker imports the chunking stage only) does not pay for the index, the store
# and the embedders behind ``Index`` (some 0.4 s of CPU).
_HOMES = {
    "narezka.errors": "ConfigError NarezkaError SourceError",
    "narezka.index": "Index IndexStats SourceInfo SyncReport",
    "narezka.runs": "ChunkReport chunk_documents chunk_path chunk_text",
    "narezka.search": "Filter Hit Query",
    "narezka.settings": "Settings",
    "narezka.split": "SplitParams strategy_names",
    "narezka.types": "Chunk Document",
}


__getattr__, __dir__ = lazy_exports(globals(), _HOMES)


__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "ChunkReport",
    "ConfigError",
    "Document",
    "Filter",
    "Hit",
    "Index",
    "IndexStats",
    "NarezkaError",
    "Query",
    "Settings",
    "SourceError",
    "SourceInfo",
    "SplitParams",
    "SyncReport",
    "__version__",
    "chunk_documents",
    "chunk_path",
    "chunk_text",
    "strategy_names",
]
