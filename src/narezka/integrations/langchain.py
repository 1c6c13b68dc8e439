"""A LangChain retriever over a :class:`narezka.Index` (``pip install 'narezka[langchain]'``).

::

    from narezka import Index
    from narezka.integrations.langchain import NarezkaRetriever

    retriever = NarezkaRetriever(index=Index.open("docs/"), k=4)
    docs = retriever.invoke("как вернуть чай")   # Documents; metadata: source, url,
                                                 # section, start_index, relevance, chunk_id…
"""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict

from narezka.index import Index
from narezka.integrations import chunk_metadata, chunk_text, hit_metadata, query_for
from narezka.search import Filter, Fusion
from narezka.search.folding import Fold
from narezka.types import Chunk


class NarezkaRetriever(BaseRetriever):
    """``index.search`` as a LangChain retriever; the caller owns (and closes) the index."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Index
    k: int = 5
    mode: str = "hybrid"
    filters: Filter | None = None
    expand: str | None = None
    fusion: Fusion | None = None
    fold: Fold = "auto"
    min_relevance: float | None = None
    """Hits less relevant than this are left out (None: the index's ``min_relevance``)."""
    rescore: bool = True
    """Re-score by the index's second vectors, when it has them (the quality tier)."""

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        mode: str | None = None,
        filters: Filter | None = None,
        expand: str | None = None,
    ) -> list[Document]:
        """The hits as Documents; ``invoke(query, k=2)`` (or ``mode``, ``filters``,
        ``expand``) overrides the retriever's own setting for this call."""
        asked = query_for(
            query, self, self.index.settings, k=k, mode=mode, filters=filters, expand=expand
        )
        hits = self.index.search(asked)
        return [
            Document(page_content=h.text, metadata=hit_metadata(h), id=h.chunk_id) for h in hits
        ]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        mode: str | None = None,
        filters: Filter | None = None,
        expand: str | None = None,
    ) -> list[Document]:
        # LangChain's default async path drops the per-call arguments: pass them on.
        return await run_in_executor(
            None,
            self._get_relevant_documents,
            query,
            run_manager=run_manager.get_sync(),
            k=k,
            mode=mode,
            filters=filters,
            expand=expand,
        )


def chunks_to_documents(chunks: Iterable[Chunk]) -> list[Document]:
    """Chunks (``narezka.chunk_documents(...).chunks``) as LangChain Documents, for people who
    want only the chunking: metadata as the retriever's, without a score."""
    return [Document(page_content=chunk_text(c), metadata=chunk_metadata(c)) for c in chunks]
