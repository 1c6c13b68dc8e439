"""One query through the stages above the store: encode, filter, rank (the store returns the
dense and BM25 rankings, :mod:`narezka.search.fusion` fuses them), order ties, fold or map to
parents, expand."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import cast

from narezka.embed import Embedder
from narezka.errors import ConfigError
from narezka.search.expansion import expand_section, merged_text
from narezka.search.folding import Fold, check_fold, fold_neighbours, resolve_fold, to_parents
from narezka.search.fusion import DEFAULT, Fusion, hybrid_query
from narezka.search.hits import Filter, Hit, check_k
from narezka.search.relevance import NO_SIGNALS, calibrated, relevance, signals_for
from narezka.store import StoredHit, VectorStore
from narezka.store.base import Mode, SparseVector, Vector
from narezka.store.sparse import Bm25Encoder

MODES = ("dense", "bm25", "hybrid")
EXPANSIONS = (None, "section", "parent")
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
    ) -> None:
        self.store = store
        self.redact = redact
        """Redact secrets in text re-read from files (off only for a --no-redact index)."""
        self.corpus = corpus
        self.strategy = strategy
        self.embedder = embedder
        self.bm25 = bm25 or Bm25Encoder()
        # A sync in the same process writes one file's points under the writer side of this
        # guard: a query sees each file before or after, never half-written.
        self._reading = reading or nullcontext

    def search(
        self,
        query: str,
        *,
        k: int = 5,
        mode: str = "hybrid",
        filters: Filter | None = None,
        expand: str | None = None,
        fusion: Fusion | None = None,
        fold: Fold = "auto",
    ) -> list[Hit]:
        """The ``k`` best hits for ``query``; see :mod:`narezka.search`. ``fusion`` says how
        a hybrid search combines its two rankings (default: min-max score fusion); ``fold``
        which neighbouring chunks of a hit fold into it: those scoring at least ``fold`` times
        the hit (0: every neighbour that ranked; None: none; ``"auto"``, the default: 0.8 for
        hybrid score fusion, else 0)."""
        check_query_args(query, k, mode, expand, fusion)
        check_fold(fold)
        if expand == "parent" and self.strategy != "parent-child":
            raise ConfigError(
                "--expand parent needs an index built with --strategy parent-child; this one "
                f"was built with {self.strategy!r} (use --expand section, or re-index)"
            )
        where = filters or Filter()
        dense = sparse = None
        if mode in ("dense", "hybrid"):
            if self.embedder is None:
                raise ConfigError(
                    "the index was built with an embedder object: pass the same embedder"
                )
            dense = self.embedder.embed_queries([query])[0]
        if mode in ("bm25", "hybrid"):
            sparse = self.bm25.encode_query(query)
        wanted = k * CANDIDATES_PER_RESULT + (PATH_GLOB_EXTRA if where.path else 0)
        with self._reading():
            if mode == "hybrid":
                assert dense is not None and sparse is not None
                stored = hybrid_query(
                    self.store,
                    dense,
                    sparse,
                    k=wanted,
                    filter=where.store_filter(),
                    fusion=fusion or DEFAULT,
                )
            else:
                stored = self.store.query(
                    dense, sparse, filter=where.store_filter(), k=wanted, mode=cast(Mode, mode)
                )
        stored = [h for h in stored if where.matches_path(str(h.payload.get("file_path", "")))]
        stored.sort(key=_tie_order)
        hits = [Hit.from_stored(h, query) for h in stored]
        if expand == "parent":
            hits = to_parents(hits, query)
        elif (ratio := resolve_fold(fold, mode, (fusion or DEFAULT).method)) is not None:
            hits = fold_neighbours(hits, k, ratio=ratio)
        hits = self._with_relevance(hits[:k], dense, sparse or self.bm25.encode_query(query))
        if expand == "section":
            # The section holds the folded neighbours too: one read of the file serves both.
            return [expand_section(h, self.corpus, query, redact=self.redact) for h in hits]
        if expand is None:
            return [
                merged_text(h, self.corpus, query, redact=self.redact) if h.merged else h
                for h in hits
            ]
        return hits

    def _with_relevance(
        self, hits: list[Hit], dense: Vector | None, sparse: SparseVector
    ) -> list[Hit]:
        """The hits with their relevance: read from the stored vectors of these hits alone,
        so k and the other candidates do not change it."""
        if not hits:
            return hits
        with self._reading():
            found = signals_for(self.store, [h.chunk_id for h in hits], dense, sparse, self.bm25.k1)
        cosine = self.embedder is not None and calibrated(self.embedder.name)
        out = []
        for hit in hits:
            signals = found.get(hit.chunk_id, NO_SIGNALS)
            value = relevance(signals, cosine=cosine)
            out.append(dataclasses.replace(hit, relevance=value, signals=signals))
        return out


def check_query_args(
    query: str, k: int, mode: str, expand: str | None, fusion: Fusion | None = None
) -> None:
    """Refuse what no search can answer, before anything is embedded."""
    if not query.strip():
        raise ConfigError("the query is empty")
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    check_k(k)
    if expand not in EXPANSIONS:
        raise ConfigError(f"expand must be 'section' or 'parent', not {expand!r}")
    if fusion is not None:
        if not isinstance(fusion, Fusion):
            raise ConfigError(f"fusion must be a narezka.search.Fusion, not {fusion!r}")
        if mode != "hybrid" and fusion != DEFAULT:
            raise ConfigError(f"fusion ({fusion.label}) applies to hybrid search, not to {mode}")


def _tie_order(hit: StoredHit) -> tuple[float, str, int]:
    # Equal scores must come in one order, or a re-run could fold a different chunk in.
    return (-hit.score, str(hit.payload.get("file_path", "")), int(hit.payload.get("start", 0)))
