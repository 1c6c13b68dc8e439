"""Folding ranked chunks: neighbours of one section into one hit, children into parents."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from narezka.errors import ConfigError
from narezka.formats import place
from narezka.search.hits import Hit, snippet
from narezka.types import SourceLocation

AUTO_FOLD = 0.8
"""The fold ratio a hybrid search with ``score`` fusion uses by default: measured on Chroma's
benchmark it keeps most of folding's recall at nearly the unfolded IoU (83.8 / 7.6 against
85.5 / 6.3 folding everything and 80.7 / 8.5 not folding). Rank fusion and the single-ranking
modes fold every neighbour by default, as before: the gate was not measured there (under RRF
it hardly bites, fused ranks being compressed)."""

AUTO: Final = "auto"
"""The fold setting that leaves the ratio to the search (the default): :data:`AUTO_FOLD`
for hybrid score fusion, else 0 (see :func:`resolve_fold`)."""
Fold = float | None | Literal["auto"]
"""A fold setting: a ratio in [0, 1], None (no folding), or :data:`AUTO`."""


def resolve_fold(fold: Fold, mode: str, method: str) -> float | None:
    """The ratio ``fold`` means for a search in ``mode`` with fusion ``method``."""
    if not isinstance(fold, str):  # AUTO is the one word a checked Fold holds
        return fold
    return AUTO_FOLD if mode == "hybrid" and method == "score" else 0.0


def check_fold(fold: Any) -> Fold:
    """``fold`` if it is a ratio in [0, 1] (as a float), None (no folding) or :data:`AUTO`;
    else a ConfigError."""
    if fold is None or fold == AUTO:
        return AUTO if fold is not None else None
    if isinstance(fold, bool) or not isinstance(fold, int | float) or not 0.0 <= fold <= 1.0:
        raise ConfigError(
            f"fold must be a score ratio in [0, 1] (0 folds every neighbour, None none, "
            f"{AUTO!r} the default), got {fold!r}"
        )
    return float(fold)


def fold_neighbours(
    hits: Sequence[Hit], limit: int | None = None, *, ratio: float = 0.0
) -> list[Hit]:
    """Fold overlapping or adjacent chunks of one section into the best of them (hits come
    best first): its span grows to cover them all, so the neighbour that holds the rest of an
    answer is returned with it instead of dropped. The search then reads the grown span's
    text from the source file.

    With ``limit``, folding stops at the first hit that would be result ``limit + 1``: a
    neighbour ranked below everything that is returned stays out, so a result grows only by
    chunks that earned their rank.

    With ``ratio`` > 0 a neighbour folds in only when its score is at least ``ratio`` times
    the hit's; one further behind stands as a result of its own (as without folding), so a
    hit grows only by text that scored nearly as well as it did."""
    check_fold(ratio)
    kept: list[Hit] = []
    for hit in hits:
        for i, best in enumerate(kept):
            same_section = best.file_path == hit.file_path and best.section == hit.section
            near = {best.chunk_index, *best.merged}
            close = hit.score >= ratio * best.score
            if close and same_section and any(abs(hit.chunk_index - n) <= 1 for n in near):
                kept[i] = dataclasses.replace(
                    _replace_merged(best, (*best.merged, hit.chunk_index)),
                    start=min(best.start, hit.start),
                    end=max(best.end, hit.end),
                    covers=joined_place(best, hit),
                )
                break
        else:
            if limit is not None and len(kept) >= limit:
                break
            kept.append(hit)
    return kept


def to_parents(hits: Sequence[Hit], query: str) -> list[Hit]:
    """Each hit replaced by its parent span and text; children of one parent fold into the
    best of them (hits come best first), so k results are k different parents."""
    best: dict[tuple[str, int], Hit] = {}
    for hit in hits:
        parent = hit.record.parent
        if parent is None:
            # Not a parent-child point: it stands for itself (negative keys never clash).
            best.setdefault((hit.file_path, -1 - hit.chunk_index), hit)
            continue
        key = (hit.file_path, parent.index)
        if key in best:
            joined = dataclasses.replace(best[key], covers=joined_place(best[key], hit))
            best[key] = _replace_merged(joined, (*best[key].merged, hit.chunk_index))
            continue
        best[key] = dataclasses.replace(
            hit,
            text=parent.text,
            snippet=snippet(parent.text, query),
            start=parent.start,
            end=parent.end,
            section=parent.section or hit.section,
        )
    return list(best.values())


def joined_place(a: Hit, b: Hit) -> dict[str, Any]:
    """The place keys of two hits' texts taken together: the pages of both, the cells of both
    on one sheet (``A1:D20`` and ``A21:D40``: ``A1:D40``), and the slide, sheet or element of
    the one that comes first in the file."""
    first, second = (a, b) if a.start <= b.start else (b, a)
    joined = {**second.place, **first.place}
    if isinstance(first.place.get("element"), str) and isinstance(first.place.get("sheet"), str):
        both = [_location(h.place) for h in (first, second)]
        joined["element"] = place(*both)["element"]
    pages = [p for h in (a, b) for p in (h.place.get("page_start"), h.place.get("page_end"))]
    numbers = [p for p in pages if isinstance(p, int)]
    if numbers:
        joined["page_start"], joined["page_end"] = min(numbers), max(numbers)
    return joined


def _location(keys: Mapping[str, Any]) -> SourceLocation:
    sheet, element = keys.get("sheet"), keys.get("element")
    return SourceLocation(
        sheet=sheet if isinstance(sheet, str) else None,
        element=element if isinstance(element, str) else None,
    )


def _replace_merged(hit: Hit, merged: tuple[int, ...]) -> Hit:
    return dataclasses.replace(hit, merged=tuple(sorted(set(merged))))
