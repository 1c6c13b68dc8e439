"""The quality tier at search time: the first stage's candidates re-scored by a second model.

An index built with ``rescore = "e5"`` holds every chunk's e5 vector beside its first one
(USE). A search ranks as always (dense, BM25 or hybrid over the first vectors, fused), then
reads the second vectors of its best :data:`DEPTH` candidates, takes their cosine with the
e5 vector of the query, and fuses the two orders (:func:`rescored`). What the second model
cannot see it cannot change: a chunk outside the first stage's candidates stays out.

Fusion (``benchmarks/results/quality_tier.md`` measured both on the dev suite):

* ``score`` (the default): each side min-max normalized over the candidates, then
  ``(1 − WEIGHT) · first + WEIGHT · second`` (:data:`WEIGHT` 0.5). Scores keep their
  spread, so folding's score gate (a neighbour folds in at 0.8 of its hit's score) means what
  it means without the tier.
* ``rrf``: ``1/(60 + first rank) + 1/(60 + second rank)``, as the study of
  ``benchmarks/rescore.py`` did (``benchmarks/results/rescore_ru_devset.md``). On the suite it
  answered as many questions at rank 1 but returned 36 % more text: its flat scores pass the
  fold gate, so more neighbours fold in.

On the nine corpora of the dev suite ``score`` won Chroma's financial reports at hit@1
(+13/−0) and lost significantly nowhere (mean hit@1 0.721 → 0.751).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from narezka.store import StoredHit, VectorStore
from narezka.store.base import Vector

DEPTH = 20
"""Candidates re-scored, at least (a search fetches ``4 · k`` anyway): the study's depth
(hit@5 0.907 → 0.944 on the Russian dev set); 40 changed nothing on the KB and lost two
FastAPI answers at rank 1."""
METHOD = "score"
"""How the two orders are fused: ``score`` or ``rrf`` (see the module text)."""
WEIGHT = 0.5
"""The second model's share in ``score`` fusion. 0.7 answered more at rank 1 on the three
corpora it was tried on first (FastAPI, the KB, the Rust book) but fewer on the suite's other
corpora (javascript.info, Chroma's wikitexts): 0.5, set before any run, stays
(benchmarks/results/quality_tier.md)."""
RRF_K = 60


def second_cosines(store: VectorStore, ids: Sequence[str], query: Vector) -> dict[str, float]:
    """The cosine of the query's second vector with each stored point's (points without one
    are left out)."""
    points = store.get(list(dict.fromkeys(ids)), with_vectors=True)
    q = np.asarray(query, dtype=np.float64)
    q_norm = float(np.linalg.norm(q))
    out = {}
    for point in points:
        if point.rescore is None:
            continue
        v = np.asarray(point.rescore, dtype=np.float64)
        norm = q_norm * float(np.linalg.norm(v))
        out[point.id] = float(q @ v) / norm if norm > 0 else 0.0
    return out


def rescored(
    candidates: Sequence[StoredHit],
    cosines: Mapping[str, float],
    *,
    method: str | None = None,
    weight: float | None = None,
) -> list[StoredHit]:
    """The candidates (best first) in the fused order of their first-stage scores and their
    second cosines; a candidate with no second vector counts as the second model's worst."""
    method = method or METHOD
    weight = WEIGHT if weight is None else weight
    if not candidates:
        return []
    first = [h.score for h in candidates]
    second = [cosines.get(h.id, min(cosines.values(), default=0.0)) for h in candidates]
    if method == "rrf":
        order = sorted(range(len(candidates)), key=lambda i: -second[i])
        second_rank = {i: rank for rank, i in enumerate(order, start=1)}
        scores = [
            1.0 / (RRF_K + i + 1) + 1.0 / (RRF_K + second_rank[i]) for i in range(len(candidates))
        ]
    else:
        a, b = _normalized(first), _normalized(second)
        scores = [(1.0 - weight) * x + weight * y for x, y in zip(a, b, strict=True)]
    fused = [StoredHit(h.id, score, h.payload) for h, score in zip(candidates, scores, strict=True)]
    # Stable: equal fused scores keep the first stage's order.
    return sorted(fused, key=lambda h: -h.score)


def _normalized(values: Sequence[float]) -> list[float]:
    low, high = min(values), max(values)
    if high <= low:
        return [1.0] * len(values)
    return [(v - low) / (high - low) for v in values]


__all__ = ["DEPTH", "METHOD", "WEIGHT", "rescored", "second_cosines"]
