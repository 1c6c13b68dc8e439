"""A LlamaIndex retriever over a :class:`narezka.Index` (``pip install 'narezka[llamaindex]'``).

::

    from narezka import Index
    from narezka.integrations.llamaindex import NarezkaRetriever

    retriever = NarezkaRetriever(Index.open("docs/"), k=4)
    nodes = retriever.retrieve("как вернуть чай")  # NodeWithScore; node.start_char_idx and
                                                   # end_char_idx are the exact span
"""

from __future__ import annotations

from collections.abc import Iterable

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from narezka.index import Index
from narezka.integrations import chunk_metadata, chunk_text, hit_metadata
from narezka.search import Filter
from narezka.types import Chunk


class NarezkaRetriever(BaseRetriever):
    """``index.search`` as a LlamaIndex retriever; the caller owns (and closes) the index."""

    def __init__(
        self,
        index: Index,
        *,
        k: int = 5,
        mode: str = "hybrid",
        filters: Filter | None = None,
        expand: str | None = None,
    ) -> None:
        super().__init__()
        self.index = index
        self.k, self.mode, self.filters, self.expand = k, mode, filters, expand

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.index.search(
            query_bundle.query_str, k=self.k, mode=self.mode, filters=self.filters,
            expand=self.expand,
        )  # fmt: skip
        return [
            NodeWithScore(
                node=TextNode(
                    id_=h.chunk_id,
                    text=h.text,
                    start_char_idx=h.start,
                    end_char_idx=h.end,
                    metadata=hit_metadata(h),
                ),
                score=h.score,
            )
            for h in hits
        ]


def chunks_to_nodes(chunks: Iterable[Chunk]) -> list[TextNode]:
    """Chunks (``narezka.chunk_documents(...).chunks``) as LlamaIndex TextNodes with their
    exact start/end character offsets, for people who want only the chunking."""
    return [
        TextNode(
            text=chunk_text(c),
            start_char_idx=c.start,
            end_char_idx=c.end,
            metadata=chunk_metadata(c),
        )
        for c in chunks
    ]
