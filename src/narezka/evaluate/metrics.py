"""Retrieval metrics over per-question results: hit@k, MRR, the ceiling, size statistics and a
paired sign test between two strategies.

Matching is plain case-insensitive substring search (``str.lower``), as in the seed: a chunk
answers a question when it contains every one of the question's strings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def contains_all(text: str, strings: Iterable[str]) -> bool:
    """True when ``text`` contains every string, ignoring case."""
    lowered = text.lower()
    return all(s.lower() in lowered for s in strings)


def first_hit_rank(texts: Sequence[str], strings: Sequence[str]) -> int | None:
    """1-based rank of the first text containing all ``strings``, or None."""
    for rank, text in enumerate(texts, start=1):
        if contains_all(text, strings):
            return rank
    return None


def hit_at(rank: int | None, k: int) -> bool:
    """Whether a first-hit rank counts as a hit in the top ``k``."""
    return rank is not None and rank <= k


def hit_rate(ranks: Sequence[int | None], k: int) -> float:
    """Share of questions hit in the top ``k`` (0.0 for no questions)."""
    return sum(hit_at(r, k) for r in ranks) / len(ranks) if ranks else 0.0


def mean_reciprocal_rank(ranks: Sequence[int | None]) -> float:
    """Mean of 1/rank, a miss counting 0; ranks beyond the retrieved depth are misses."""
    return sum(1.0 / r for r in ranks if r is not None) / len(ranks) if ranks else 0.0


def answerable(strings: Sequence[str], chunk_texts_lower: Sequence[str]) -> bool:
    """Whether some single chunk (given lower-cased) contains all the strings."""
    wanted = [s.lower() for s in strings]
    return any(all(w in text for w in wanted) for text in chunk_texts_lower)


def ceiling(questions: Sequence[Sequence[str]], chunk_texts: Sequence[str]) -> float:
    """Share of questions whose strings all lie inside one chunk: the best hit@k possible."""
    if not questions:
        return 0.0
    lowered = [t.lower() for t in chunk_texts]
    return sum(answerable(q, lowered) for q in questions) / len(questions)


@dataclass(frozen=True, slots=True)
class SizeStats:
    """Mean and 95th percentile of chunk sizes."""

    mean: float
    p95: float


def size_stats(values: Sequence[int]) -> SizeStats:
    """Mean and nearest-rank 95th percentile (a real chunk size, not an interpolation)."""
    if not values:
        return SizeStats(0.0, 0.0)
    ordered = sorted(values)
    rank = max(1, math.ceil(0.95 * len(ordered)))
    return SizeStats(sum(ordered) / len(ordered), float(ordered[rank - 1]))


@dataclass(frozen=True, slots=True)
class SignTest:
    """A paired sign test: questions only A hit, only B hit, both or neither, and the p-value."""

    a_only: int
    b_only: int
    ties: int
    p_value: float


def sign_test(a: Sequence[bool], b: Sequence[bool]) -> SignTest:
    """Exact two-sided binomial sign test on paired per-question outcomes; ties are dropped.

    Under the null each discordant question favours A or B with probability 1/2, so
    p = min(1, 2 · P(X ≤ min(a_only, b_only))) for X ~ Binomial(a_only + b_only, 1/2).
    """
    if len(a) != len(b):
        raise ValueError(f"paired outcomes differ in length: {len(a)} and {len(b)}")
    a_only = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    b_only = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    n = a_only + b_only
    if n == 0:
        return SignTest(0, 0, len(a), 1.0)
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1))
    # Integer arithmetic up to the one division keeps small p-values exact.
    p = min(1.0, 2 * tail / 2**n)
    return SignTest(a_only, b_only, len(a) - n, p)


__all__ = [
    "SignTest",
    "SizeStats",
    "answerable",
    "ceiling",
    "contains_all",
    "first_hit_rank",
    "hit_at",
    "hit_rate",
    "mean_reciprocal_rank",
    "sign_test",
    "size_stats",
]
