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

from narezka.errors import ConfigError, NarezkaError, SourceError
from narezka.index import Index, IndexStats, SourceInfo, SyncReport
from narezka.pipeline import ChunkReport, chunk_documents, chunk_path, chunk_text
from narezka.search import Filter, Hit
from narezka.settings import Settings
from narezka.split import SplitParams, strategy_names
from narezka.types import Chunk, Document

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
