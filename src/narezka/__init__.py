r"""narezka: Markdown-aware chunking for retrieval, with an exact chunk contract.

>>> import narezka
>>> chunks = narezka.chunk_text("# Доставка\n\nКурьером за 1–2 дня.", "headings", size=200)
>>> chunks[0].section
('Доставка',)
"""

from narezka.errors import ConfigError, NarezkaError, SourceError
from narezka.pipeline import ChunkReport, chunk_documents, chunk_path, chunk_text
from narezka.split import SplitParams, strategy_names
from narezka.types import Chunk, Document

__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "ChunkReport",
    "ConfigError",
    "Document",
    "NarezkaError",
    "SourceError",
    "SplitParams",
    "__version__",
    "chunk_documents",
    "chunk_path",
    "chunk_text",
    "strategy_names",
]
