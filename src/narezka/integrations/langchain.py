"""A LangChain retriever over a :class:`narezka.Index` (``pip install 'narezka[langchain]'``).

::

    from narezka import Index
    from narezka.integrations.langchain import NarezkaRetriever

    retriever = NarezkaRetriever(index=Index.open("docs/"), k=4)
    docs = retriever.invoke("как вернуть чай")   # Documents; metadata: source, url,
                                                 # section, start_index, score, chunk_id…
"""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from narezka.index import Index
from narezka.integrations import chunk_metadata, chunk_text, hit_metadata
from narezka.search import Filter
from narezka.types import Chunk


class NarezkaRetriever(BaseRetriever):
    """``index.search`` as a LangChain retriever; the caller owns (and closes) the index."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Index
    k: int = 5
    mode: str = "hybrid"
    filters: Filter | None = None
    expand: str | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = self.index.search(
            query, k=self.k, mode=self.mode, filters=self.filters, expand=self.expand
        )
        return [
            Document(page_content=h.text, metadata=hit_metadata(h), id=h.chunk_id) for h in hits
        ]


def chunks_to_documents(chunks: Iterable[Chunk]) -> list[Document]:
    """Chunks (``narezka.chunk_documents(...).chunks``) as LangChain Documents, for people who
    want only the chunking: metadata as the retriever's, without a score."""
    return [Document(page_content=chunk_text(c), metadata=chunk_metadata(c)) for c in chunks]
