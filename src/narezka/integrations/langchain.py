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
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, Field

from narezka.index import Index
from narezka.integrations import (
    chunk_metadata,
    chunk_text,
    declare_fields,
    hit_metadata,
    query_for,
)
from narezka.types import Chunk


class NarezkaRetriever(BaseRetriever):
    """``index.search`` as a LangChain retriever; the caller owns (and closes) the index.

    Its fields besides ``index`` are the search options the table gives retrievers
    (:data:`narezka.integrations.RETRIEVER_FIELDS`: ``k``, ``mode``, ``filters``, ``expand``,
    ``fusion``, ``fold``, ``min_relevance`` — the index's setting unless given —, ``rescore``
    and any added since), each with the table's type and default; ``invoke(query, k=2)``
    overrides any of them for one call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Index
    # The fields are declared by the table (narezka.search.options), not here: pydantic reads
    # a class body's namespace, which a class body may add to.
    declare_fields(locals(), lambda default, text: Field(default, description=text))

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        """The hits as Documents; ``invoke(query, k=2)`` (or any other field: ``mode``,
        ``filters``, ``expand``…) overrides the retriever's own setting for this call."""
        hits = self.index.search(query_for(query, self, **overrides))
        return [
            Document(page_content=h.text, metadata=hit_metadata(h), id=h.chunk_id) for h in hits
        ]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        # LangChain's default async path drops the per-call arguments: pass them on.
        return await run_in_executor(
            None,
            self._get_relevant_documents,
            query,
            run_manager=run_manager.get_sync(),
            **overrides,
        )


def chunks_to_documents(chunks: Iterable[Chunk]) -> list[Document]:
    """Chunks (``narezka.chunk_documents(...).chunks``) as LangChain Documents, for people who
    want only the chunking: metadata as the retriever's, without a score."""
    return [Document(page_content=chunk_text(c), metadata=chunk_metadata(c)) for c in chunks]
