"""One query through the stages above the store: encode, filter, rank (the store returns the
dense and BM25 rankings, :mod:`narezka.search.fusion` fuses them), order ties, fold or map to
parents, expand."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import cast

from narezka.convert.options import DEFAULT as NO_OPTIONS
from narezka.convert.options import ConvertOptions
from narezka.embed import Embedder
from narezka.embed.rescore import RescoreModel
from narezka.errors import ConfigError
from narezka.search import rescoring
from narezka.search.expansion import Reread, expand_section, merged_text
from narezka.search.folding import fold_neighbours, resolve_fold, to_parents
from narezka.search.fusion import DEFAULT, hybrid_query, tie_order
from narezka.search.hits import Hit
from narezka.search.query import Query
from narezka.search.relevance import NO_SIGNALS, calibrated, relevance, signals_for
from narezka.search.rescoring import rescored, second_cosines
from narezka.store import StoredHit, VectorStore
from narezka.store.base import Mode, Vector
from narezka.tokens.bm25 import Bm25Encoder
from narezka.types import SparseVector

CANDIDATES_PER_RESULT = 4
"""Candidates fetched per wanted result: neighbours fold together and a path glob drops some."""
PATH_GLOB_EXTRA = 20


class SearchEngine:
    """Searches one open store; the caller (``Index``) owns the store and the embedder."""

    def __init__(
        self,
        store: VectorStore,
        *,
        corpus: Path,
        strategy: str,
        embedder: Embedder | None = None,
        bm25: Bm25Encoder | None = None,
        reading: Callable[[], AbstractContextManager[object]] | None = None,
        redact: bool = True,
        convert_cache: Path | None = None,
        rescore: RescoreModel | None = None,
        convert: ConvertOptions = NO_OPTIONS,
    ) -> None:
        self.store = store
        self.rescore = rescore
        """The quality tier's model: the candidates are re-scored by their second vectors
        (None: an index without them, or a query that turned it off)."""
        self.reread = Reread(corpus, redact, convert_cache, convert)
        """How a hit's file is read again for its section or its merged neighbours: as the
        index read it (``redact``, its ``convert_cache``, ``convert``'s OCR and limits)."""
        self.corpus = corpus
        self.strategy = strategy
        self.embedder = embedder
        self.bm25 = bm25 or Bm25Encoder()
        # A sync in the same process writes one file's points under the writer side of this
        # guard: a query sees each file before or after, never half-written.
        self._reading = reading or nullcontext

    def search(self, query: Query) -> list[Hit]:
        """The best hits for ``query`` (checked when it was built); see :mod:`narezka.search`.
        Relevance is computed for every hit; dropping those below ``query.min_relevance`` is
        the caller's (``Index.search``), which also reports the best of them."""
        text, k, mode, expand, fusion = query.text, query.k, query.mode, query.expand, query.fusion
        if expand == "parent" and self.strategy != "parent-child":
            raise ConfigError(
                "--expand parent needs an index built with --strategy parent-child; this one "
                f"was built with {self.strategy!r} (use --expand section, or re-index)"
            )
        dense, sparse = self._encoded(text, mode)
        second = self.rescore.query(text)[0] if self.rescore is not None else None
        stored = self._candidates(query, dense, sparse, second)
        hits = [Hit.from_stored(h, text) for h in stored]
        if expand == "parent":
            hits = to_parents(hits, text)
        elif (ratio := resolve_fold(query.fold, mode, (fusion or DEFAULT).method)) is not None:
            hits = fold_neighbours(hits, k, ratio=ratio)
        hits = self._with_relevance(hits[:k], dense, sparse or self.bm25.encode_query(text), second)
        return self._with_text(hits, query)

    def _encoded(self, text: str, mode: str) -> tuple[Vector | None, SparseVector | None]:
        """The query's dense vector and sparse vector, each only when the mode uses it."""
        dense = sparse = None
        if mode in ("dense", "hybrid"):
            if self.embedder is None:
                raise ConfigError(
                    "the index was built with an embedder object: pass the same embedder"
                )
            dense = self.embedder.embed_queries([text])[0]
        if mode in ("bm25", "hybrid"):
            sparse = self.bm25.encode_query(text)
        return dense, sparse

    def _candidates(
        self,
        query: Query,
        dense: Vector | None,
        sparse: SparseVector | None,
        second: Vector | None,
    ) -> list[StoredHit]:
        """The store's candidates in rank order: enough of them for folding and for the
        path filter the store cannot apply, re-scored by the second vector if there is one."""
        where, mode = query.filters, query.mode
        wanted = query.k * CANDIDATES_PER_RESULT + (PATH_GLOB_EXTRA if where.path else 0)
        if second is not None:
            wanted = max(wanted, rescoring.DEPTH)
        with self._reading():
            if mode == "hybrid":
                assert dense is not None and sparse is not None
                stored = hybrid_query(
                    self.store,
                    dense,
                    sparse,
                    k=wanted,
                    filter=where.store_filter(),
                    fusion=query.fusion or DEFAULT,
                )
            else:
                stored = self.store.query(
                    dense, sparse, filter=where.store_filter(), k=wanted, mode=cast(Mode, mode)
                )
        stored = [h for h in stored if where.matches_path(str(h.payload.get("file_path", "")))]
        stored.sort(key=tie_order)
        if second is not None and stored:
            with self._reading():
                cosines = second_cosines(self.store, [h.id for h in stored], second)
            stored = rescored(stored, cosines)
            stored.sort(key=tie_order)
        return stored

    def _with_text(self, hits: list[Hit], query: Query) -> list[Hit]:
        """The hits' text as the query asks: their sections, or folded neighbours merged, cut
        to ``max_chars``."""
        text, expand = query.text, query.expand
        if expand in ("section", None):
            # The section holds the folded neighbours too: one read of the file serves both.
            section = expand == "section"
            grow = expand_section if section else merged_text
            hits = [grow(h, text, self.reread) if section or h.merged else h for h in hits]
        if (limit := query.max_chars) is not None:
            # Last: what was searched, folded, expanded and scored is the whole text.
            hits = [
                dataclasses.replace(h, text=h.text[:limit], snippet=h.snippet[:limit]) for h in hits
            ]
        return hits

    def _with_relevance(
        self,
        hits: list[Hit],
        dense: Vector | None,
        sparse: SparseVector,
        second: Vector | None = None,
    ) -> list[Hit]:
        """The hits with their relevance: read from the stored vectors of these hits alone,
        so k and the other candidates do not change it."""
        if not hits:
            return hits
        with self._reading():
            found = signals_for(
                self.store, [h.chunk_id for h in hits], dense, sparse, self.bm25.k1, second
            )
        cosine = self.embedder is not None and calibrated(self.embedder.name)
        out = []
        for hit in hits:
            signals = found.get(hit.chunk_id, NO_SIGNALS)
            value = relevance(signals, cosine=cosine)
            out.append(dataclasses.replace(hit, relevance=value, signals=signals))
        return out
