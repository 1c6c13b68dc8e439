"""Reference-span golden sets and Chroma's span metrics (recall, precision, IoU, hit_full).

A span golden set pairs each question with reference excerpts given as half-open offset
ranges ``[start, end)`` into a named document. Retrieval is scored on the ranges themselves,
not on strings, following Chroma's technical report "Evaluating Chunking Strategies for
Retrieval" (Smith & Troynikov, 2024) and its reference code (``chunking_evaluation``,
``BaseEvaluation._scores_from_dataset_and_retrievals``):

* ``hits``      = |(union of retrieved chunks in the question's documents) ∩ (union of
  references)|, each shared unit counted once;
* ``recall``    = hits / |union of references|;
* ``precision`` = hits / Σ |retrieved chunk| — the denominator sums every retrieved chunk's
  length, so a unit covered by two overlapping chunks counts twice and chunks from other
  documents count too (that is what the reference code does, and the paper's numbers come
  from it);
* ``iou``       = hits / (Σ |retrieved chunk| + |references not covered by any chunk|).

Pass ``count_repeats=False`` for the textbook set version: the precision and IoU
denominators then use the union of the retrieved ranges (|R|, |R ∪ T|).

The unit is whatever the offsets count. Chroma's report speaks of tokens but its code, and the
Chroma benchmark data, use character offsets; :func:`span_metrics` on character spans
reproduces the published numbers. :func:`to_token_span` / :func:`span_metrics_tokens` map
character spans onto token ranges (a token is counted when it overlaps the range) for a
token-level variant.

``hit_full`` is true when every reference excerpt lies wholly inside one retrieved chunk of its
document (each excerpt may use a different chunk). A question without references scores 0 on
every metric and ``hit_full`` is false.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Range = tuple[int, int]


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """A half-open range ``[start, end)`` of offsets in document ``doc``."""

    doc: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"bad span {self.doc!r} [{self.start}, {self.end})")

    def __len__(self) -> int:
        return self.end - self.start

    def contains(self, other: Span) -> bool:
        """Whether ``other`` lies wholly inside this span (same document)."""
        return self.doc == other.doc and self.start <= other.start and other.end <= self.end


@dataclass(frozen=True, slots=True)
class SpanQuestion:
    """A question answered by reference excerpts (spans into the corpus documents)."""

    q: str
    references: tuple[Span, ...]
    line: int = 0
    """1-based data row in the source file (0 for questions built in code)."""


@dataclass(frozen=True, slots=True)
class SpanScores:
    """Per-question span metrics; each in [0, 1] (``hit_full`` a bool)."""

    recall: float
    precision: float
    iou: float
    hit_full: bool


@dataclass(frozen=True, slots=True)
class SpanSummary:
    """Span metrics averaged over questions (``hit_full`` as the share of questions)."""

    recall: float
    precision: float
    iou: float
    hit_full: float


def summarize(scores: Sequence[SpanScores]) -> SpanSummary:
    """Mean of each metric over per-question scores (macro average, as Chroma reports)."""
    n = len(scores)
    if not n:
        return SpanSummary(0.0, 0.0, 0.0, 0.0)
    return SpanSummary(
        recall=sum(s.recall for s in scores) / n,
        precision=sum(s.precision for s in scores) / n,
        iou=sum(s.iou for s in scores) / n,
        hit_full=sum(s.hit_full for s in scores) / n,
    )


def overlaps(a: Span, b: Span) -> bool:
    """Whether two spans share at least one offset (same document, non-empty intersection)."""
    return a.doc == b.doc and max(a.start, b.start) < min(a.end, b.end)


def merge_ranges(ranges: Iterable[Range]) -> list[Range]:
    """Sorted, disjoint, non-touching ranges covering exactly the same offsets.

    Ranges are half-open ``(start, end)``; empty ranges (``start >= end``) cover nothing and
    are dropped; touching ranges (``(0, 5)``, ``(5, 9)``) are joined.
    """
    merged: list[Range] = []
    for start, end in sorted(r for r in ranges if r[0] < r[1]):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def ranges_length(ranges: Iterable[Range]) -> int:
    """Total length of the ranges as given (overlaps counted as many times as they occur)."""
    return sum(max(0, end - start) for start, end in ranges)


def intersect_merged(a: Sequence[Range], b: Sequence[Range]) -> list[Range]:
    """Intersection of two outputs of :func:`merge_ranges` (itself merged)."""
    out: list[Range] = []
    i = j = 0
    while i < len(a) and j < len(b):
        start = max(a[i][0], b[j][0])
        end = min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _by_doc(spans: Iterable[Span]) -> dict[str, list[Range]]:
    grouped: dict[str, list[Range]] = defaultdict(list)
    for span in spans:
        grouped[span.doc].append((span.start, span.end))
    return grouped


def span_metrics(
    retrieved: Sequence[Span], references: Sequence[Span], *, count_repeats: bool = True
) -> SpanScores:
    """Recall, precision, IoU and hit_full of retrieved chunks against reference excerpts.

    See the module docstring for the exact definitions; ``count_repeats`` (default, Chroma's
    convention) sums the retrieved chunks' lengths in the precision and IoU denominators
    instead of taking the length of their union.
    """
    ref_by_doc = {doc: merge_ranges(rs) for doc, rs in _by_doc(references).items()}
    ret_by_doc = {doc: merge_ranges(rs) for doc, rs in _by_doc(retrieved).items()}
    ref_total = sum(ranges_length(rs) for rs in ref_by_doc.values())
    hits = 0
    for doc, refs in ref_by_doc.items():
        hits += ranges_length(intersect_merged(refs, ret_by_doc.get(doc, [])))
    if count_repeats:
        retrieved_total = sum(len(span) for span in retrieved)
    else:
        retrieved_total = sum(ranges_length(rs) for rs in ret_by_doc.values())
    union_total = retrieved_total + (ref_total - hits)
    hit_full = bool(references) and all(
        any(chunk.contains(ref) for chunk in retrieved) for ref in references
    )
    return SpanScores(
        recall=hits / ref_total if ref_total else 0.0,
        precision=hits / retrieved_total if retrieved_total else 0.0,
        iou=hits / union_total if union_total else 0.0,
        hit_full=hit_full,
    )


def to_token_span(span: Span, token_ends: Sequence[int]) -> Span:
    """The token range ``[first, last + 1)`` of the tokens that overlap a character span.

    ``token_ends`` holds, for each token of the span's document in order, the character offset
    where it ends (non-decreasing; token ``i`` covers ``[token_ends[i-1], token_ends[i])``). An
    empty character span maps to an empty token range at the token that contains its start.
    """
    first = bisect_right(token_ends, span.start)
    if span.end <= span.start:
        return Span(span.doc, first, first)
    last = min(bisect_left(token_ends, span.end), len(token_ends) - 1)
    return Span(span.doc, first, max(first, last + 1))


def span_metrics_tokens(
    retrieved: Sequence[Span],
    references: Sequence[Span],
    token_ends: Mapping[str, Sequence[int]],
    *,
    count_repeats: bool = True,
) -> SpanScores:
    """:func:`span_metrics` with every character span first mapped to its token range.

    ``token_ends`` maps each document name to its token end offsets (see
    :func:`to_token_span`); build it with :func:`narezka.evaluate.chroma.token_ends`.
    """
    ret = [to_token_span(s, token_ends[s.doc]) for s in retrieved]
    ref = [to_token_span(s, token_ends[s.doc]) for s in references]
    return span_metrics(ret, ref, count_repeats=count_repeats)
