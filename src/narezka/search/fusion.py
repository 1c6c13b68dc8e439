"""Hybrid fusion: one ranked list from the store's dense and BM25 rankings.

The store answers both rankings in one engine call (:meth:`VectorStore.rankings`); how they
are combined is a search decision, made here:

* ``rrf``: reciprocal-rank fusion, ``score = Σ 1/(rrf_k + rank)``, rank from 1,
  ``rrf_k = 60`` (Cormack et al.). Computed here rather than by the engines because they
  disagree on the formula (edge ranks from 0, qdrant-client's local mode differs again).
* ``weighted``: the same with the two terms weighted, ``dense_weight/(rrf_k + rank_dense) +
  (1 − dense_weight)/(rrf_k + rank_bm25)``; ``dense_weight = 0.5`` ranks as ``rrf`` does (at
  half the score).
* ``score`` (the default): each ranking's scores min-max normalized to [0, 1] over its
  candidates, then ``dense_weight · dense + (1 − dense_weight) · bm25`` with ``dense_weight``
  :data:`SCORE_DENSE_WEIGHT` (0.3) unless given; a point missing from one ranking gets 0
  there. Unlike the rank fusions it keeps how far apart the scores were.

A ranking whose weight is 0 takes no part at all, so ``dense_weight=1`` returns exactly the
dense ranking and ``0`` exactly BM25's. Ties keep first-seen order (dense before BM25); the
search engine then orders equal scores by file and offset.

Measured (``benchmarks/results/fusion_*.md``, ``folding_*.md``): with score-gated folding
(:data:`narezka.search.folding.AUTO_FOLD`) ``score`` answers hit@1 130 vs RRF's 122 of 162 on
the Russian dev set (p = 0.039), ties on the example KB (19 vs 20 of 40), and reaches Chroma's
recall 83.8 / IoU 7.6 where RRF with folding gives 83.4 / 6.1; so it is the default. On the
dev suite of issue #26 (nine corpora, ``benchmarks/results/devsuite_decisions.md``) BM25
weighted 0.7 (dense 0.3) won hit@1 on PubMed (+10/−1, p = 0.012) and lost significantly
nowhere, while RRF lost on three corpora; so score fusion stays and weighs BM25 0.7.
``Fusion("rrf")`` with ``fold=0`` searches as narezka did before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from narezka.errors import ConfigError
from narezka.store import Filter as StoreFilter
from narezka.store import StoredHit, VectorStore
from narezka.store.base import Vector
from narezka.types import SparseVector

Method: TypeAlias = Literal["rrf", "weighted", "score"]
METHODS: tuple[Method, ...] = ("rrf", "weighted", "score")
RRF_K = 60
"""The usual reciprocal-rank-fusion constant."""
EQUAL = 0.5
SCORE_DENSE_WEIGHT = 0.3
"""``score`` fusion's dense weight when none is given (chosen on the dev suite: see above)."""


@dataclass(frozen=True, slots=True)
class Fusion:
    """How a hybrid search combines its dense and BM25 rankings (see the module text)."""

    method: Method = "score"
    """The default, ``score``, won on the Russian dev set and on Chroma's benchmark and tied
    on the example KB (``benchmarks/results/fusion_*.md``, ``folding_*.md``)."""
    rrf_k: int = RRF_K
    """RRF's constant: larger flattens the rank differences (``rrf`` and ``weighted``)."""
    dense_weight: float | None = None
    """Weight of the dense ranking in [0, 1]; BM25 gets the rest (``weighted`` and ``score``).
    None (not given): the method's own, :data:`SCORE_DENSE_WEIGHT` for ``score`` and 0.5 for
    the rank fusions; a built Fusion always holds a number."""

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"unknown fusion {self.method!r}; use one of {', '.join(METHODS)}")
        if self.dense_weight is None:
            own = SCORE_DENSE_WEIGHT if self.method == "score" else EQUAL
            object.__setattr__(self, "dense_weight", own)  # frozen: set once, here
        if isinstance(self.rrf_k, bool) or not isinstance(self.rrf_k, int) or self.rrf_k < 0:
            raise ConfigError(f"the RRF k must be a whole number ≥ 0, got {self.rrf_k!r}")
        weight = self.dense_weight
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise ConfigError(f"the dense weight must be a number in [0, 1], got {weight!r}")
        if not math.isfinite(weight) or not 0.0 <= weight <= 1.0:
            raise ConfigError(
                f"the dense weight must lie in [0, 1] (BM25 gets 1 − it), got {weight!r}"
            )
        if self.method == "rrf" and weight != EQUAL:
            raise ConfigError(
                "plain rrf weighs both rankings equally: use fusion 'weighted' (or 'score') "
                f"to give the dense ranking weight {weight}"
            )
        if self.method == "score" and self.rrf_k != RRF_K:
            raise ConfigError("the RRF k applies to rrf and weighted fusion, not to 'score'")

    @property
    def label(self) -> str:
        """A short description, e.g. ``rrf k=60`` or ``score dense=0.3``."""
        if self.method == "rrf":
            return f"rrf k={self.rrf_k}"
        if self.method == "weighted":
            return f"weighted rrf k={self.rrf_k} dense={self.dense_weight:g}"
        return f"score dense={self.dense_weight:g}"


DEFAULT = Fusion()


def fuse(
    dense: Sequence[StoredHit],
    sparse: Sequence[StoredHit],
    k: int,
    fusion: Fusion = DEFAULT,
) -> list[StoredHit]:
    """The ``k`` best points of the two rankings (each best first) under ``fusion``."""
    # The engine returns equal scores in no fixed order, and a rank fusion turns that order
    # into different scores: equal scores are ranked by their file and place in it.
    dense, sparse = sorted(dense, key=tie_order), sorted(sparse, key=tie_order)
    weight = cast(float, fusion.dense_weight)  # never None once built (__post_init__)
    weights = ((weight, dense), (1.0 - weight, sparse))
    if fusion.method == "rrf":
        # Weight 1 each, not 0.5: the scores stay those RRF has always printed.
        scores = _rank_scores(((1.0, dense), (1.0, sparse)), fusion.rrf_k)
    elif fusion.method == "weighted":
        scores = _rank_scores(weights, fusion.rrf_k)
    else:
        scores = _normalized_scores(weights)
    payloads: dict[str, Mapping[str, Any]] = {}
    for ranking in (dense, sparse):
        for hit in ranking:
            payloads.setdefault(hit.id, hit.payload)
    # sorted() is stable and dict order is first-seen order (dense before BM25, each in the
    # order above), so equal fused scores keep one order: the better dense rank first.
    ordered = sorted(scores.items(), key=lambda item: -item[1])[:k]
    return [StoredHit(pid, score, payloads[pid]) for pid, score in ordered]


def tie_order(hit: StoredHit) -> tuple[float, str, int]:
    """Best score first; equal scores in the order of their files and places in them, so a
    query asked twice gets its hits in one order whatever order the engine found them in."""
    return (-hit.score, str(hit.payload.get("file_path", "")), int(hit.payload.get("start", 0)))


def _rank_scores(
    weighted: Sequence[tuple[float, Sequence[StoredHit]]], rrf_k: int
) -> dict[str, float]:
    scores: dict[str, float] = {}
    for weight, ranking in weighted:
        if weight == 0.0:
            continue  # a ranking weighted 0 takes no part: not even its points come in
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + weight / (rrf_k + rank)
    return scores


def _normalized_scores(weighted: Sequence[tuple[float, Sequence[StoredHit]]]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for weight, ranking in weighted:
        if weight == 0.0 or not ranking:
            continue
        lo = min(h.score for h in ranking)
        span = max(h.score for h in ranking) - lo
        for hit in ranking:
            # All scores equal (one candidate, say): each is as good as the best, not the worst.
            scaled = (hit.score - lo) / span if span > 0 else 1.0
            scores[hit.id] = scores.get(hit.id, 0.0) + weight * scaled
    return scores


def depth(k: int) -> int:
    """How many candidates each ranking contributes to fusion for ``k`` results."""
    return max(4 * k, 50)


def hybrid_query(
    store: VectorStore,
    dense: Vector,
    sparse: SparseVector,
    *,
    k: int,
    filter: StoreFilter | None = None,
    fusion: Fusion = DEFAULT,
) -> list[StoredHit]:
    """Both rankings from ``store`` in one call, fused: the top ``k`` of a hybrid query."""
    rankings = store.rankings(dense, sparse, filter=filter, k=depth(k))
    return fuse(rankings.dense, rankings.sparse, k, fusion)
