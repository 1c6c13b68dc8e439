"""Relevance: the chance that a hit answers its query, calibrated, the same at any k.

A hit's ``score`` is the ranking's own number (a fused min-max score, a cosine, a raw BM25
sum): it orders one result list and means nothing across queries. ``relevance`` is computed
from signals of the (query, chunk) pair alone, read back from the store for the returned
hits only, so neither k nor the other candidates change it:

* ``cosine``: the cosine of the query's and the chunk's dense vectors;
* ``term_cover``: the chunk's stored BM25 term weights (``tf·(k1+1)/(tf + norm)``) summed over
  the query's terms and divided by their maximum, ``(k1+1)·|query terms|``: 1 when every term
  is saturated in the chunk, 0 when none occurs;
* ``term_share``: the share of the query's terms the chunk contains.

A logistic regression over them (:data:`HYBRID`, or :data:`LEXICAL` when no dense vector of
the query exists, as in a bm25 search) gives the probability. Fitted by
``benchmarks/calibrate_relevance.py`` on the dev suite (``benchmarks/devsuite``): every top-5
hit of every question, labelled relevant when it contains the question's answer (its
``must_contain`` strings, or Chroma's reference range), every hit of a near or far
unanswerable question labelled irrelevant; measured corpus by corpus held out in
``benchmarks/results/relevance.md``.

An index with the quality tier (``rescore = "e5"``) reports each hit's e5 cosine too
(``Signals.second``), but relevance does not use it: fitted beside the three signals on the
tier's own hits (``calibrate_relevance.py fit --rescore``, leave-one-corpus-out), it moved
near-unanswerable AUROC by −0.012 to +0.010 per corpus (pooled 0.808 → 0.803) and raised the
calibration error (0.010 → 0.017): ``benchmarks/results/relevance_tier.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# The threshold the fit above chose; it lives with every other default.
from narezka.defaults import MIN_RELEVANCE as MIN_RELEVANCE
from narezka.store import VectorStore
from narezka.store.base import Vector
from narezka.types import SparseVector

# Fitted by `benchmarks/calibrate_relevance.py fit` (logistic regression, numpy Newton, L2
# 1e-3) on the 6,560 top-5 hits of 1,312 dev-suite questions, all nine corpora, USE vectors,
# default hybrid search (score fusion, dense weight 0.3); cross-validated by corpus in
# benchmarks/results/relevance.md.
HYBRID = (-5.964, 4.586, -2.783, 6.16)
"""Intercept, then the weights of cosine, term_cover and term_share."""
LEXICAL = (-4.647, 0.0, 1.077, 3.998)
"""The same without the cosine (weight 0): searches that embed no query (bm25 mode)."""
CALIBRATED_EMBEDDERS = ("use:",)
"""Embedders whose cosines HYBRID was fitted on. Another model's cosines spread differently
(e5's crowd near 0.8 for anything), so its hits get the LEXICAL model until it is fitted."""


@dataclass(frozen=True, slots=True)
class Signals:
    """The raw per-hit signals relevance is computed from (see the module text)."""

    cosine: float | None
    term_cover: float
    term_share: float
    second: float | None = None
    """The cosine of the query's and the chunk's second vectors (the quality tier's e5),
    for an index that stores them; None otherwise."""

    def to_json(self) -> dict[str, float | None]:
        """The signals as JSON-ready data (``second`` only for an index with the tier)."""
        out = {"cosine": self.cosine, "term_cover": self.term_cover, "term_share": self.term_share}
        if self.second is not None:
            out["second"] = self.second
        return out


def calibrated(embedder_name: str) -> bool:
    """Whether the cosine of this embedder's vectors was calibrated (:data:`HYBRID`)."""
    return embedder_name.startswith(CALIBRATED_EMBEDDERS)


def relevance(signals: Signals, *, cosine: bool = True) -> float:
    """The calibrated probability that the hit is relevant, in [0, 1]; ``cosine=False``
    leaves the cosine out (:data:`LEXICAL`), as for an embedder it was not calibrated on."""
    if signals.cosine is None or not cosine:
        b0, _, b2, b3 = LEXICAL
        z = b0 + b2 * signals.term_cover + b3 * signals.term_share
    else:
        b0, b1, b2, b3 = HYBRID
        z = b0 + b1 * signals.cosine + b2 * signals.term_cover + b3 * signals.term_share
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def signals_for(
    store: VectorStore,
    ids: Sequence[str],
    dense: Vector | None,
    sparse: SparseVector,
    k1: float,
    second: Vector | None = None,
) -> dict[str, Signals]:
    """Each stored chunk's signals for the query (``dense`` None: no cosine; ``second``: the
    query's second vector, for an index with the quality tier)."""
    points = store.get(list(dict.fromkeys(ids)), with_vectors=True)
    query_terms = set(sparse.indices)
    out = {}
    for point in points:
        cosine = _cosine(dense, point.dense) if dense is not None else None
        also = (
            _cosine(second, point.rescore)
            if second is not None and point.rescore is not None
            else None
        )
        cover = share = 0.0
        if query_terms and point.sparse is not None:
            weights = dict(zip(point.sparse.indices, point.sparse.values, strict=True))
            found = [weights[t] for t in query_terms if t in weights]
            cover = min(1.0, sum(found) / ((k1 + 1.0) * len(query_terms)))
            share = len(found) / len(query_terms)
        out[point.id] = Signals(cosine, cover, share, also)
    return out


def _cosine(a: Vector, b: Vector | None) -> float:
    if b is None:
        return 0.0
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm > 0 else 0.0


NO_SIGNALS = Signals(None, 0.0, 0.0)
"""For a hit whose chunk is no longer stored: nothing speaks for it."""
