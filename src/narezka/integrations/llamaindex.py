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
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from narezka.index import Index
from narezka.integrations import (
    bookkeeping_keys,
    chunk_metadata,
    chunk_text,
    hit_metadata,
    query_for,
    retriever_values,
)
from narezka.types import Chunk


class NarezkaRetriever(BaseRetriever):
    """``index.search`` as a LlamaIndex retriever; the caller owns (and closes) the index."""

    def __init__(self, index: Index, **options: Any) -> None:
        """``options``: the search options the table gives retrievers
        (:data:`narezka.integrations.RETRIEVER_FIELDS`: ``k``, ``mode``, ``filters``,
        ``expand``, ``fusion``, ``fold``, ``min_relevance`` — the index's setting unless
        given —, ``rescore``…), each kept as an attribute of the same name."""
        super().__init__()
        self.index = index
        for name, value in retriever_values(options).items():
            setattr(self, name, value)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.index.search(query_for(query_bundle.query_str, self))
        return [
            NodeWithScore(
                node=_node(h.text, h.start, h.end, hit_metadata(h), h.chunk_id), score=h.score
            )
            for h in hits
        ]


def chunks_to_nodes(chunks: Iterable[Chunk]) -> list[TextNode]:
    """Chunks (``narezka.chunk_documents(...).chunks``) as LlamaIndex TextNodes with their
    exact start/end character offsets, for people who want only the chunking."""
    return [_node(chunk_text(c), c.start, c.end, chunk_metadata(c)) for c in chunks]


def _node(
    text: str, start: int, end: int, metadata: dict[str, Any], node_id: str | None = None
) -> TextNode:
    """A TextNode whose prompt and embedding text carry only source, url and section: ids,
    offsets and scores stay in ``metadata`` for the program."""
    hidden = bookkeeping_keys(metadata)
    return TextNode(
        **({"id_": node_id} if node_id else {}),
        text=text,
        start_char_idx=start,
        end_char_idx=end,
        metadata=metadata,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
    )
