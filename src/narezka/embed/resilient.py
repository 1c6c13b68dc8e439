"""Embedding many texts in batches without ever truncating one.

Two faces over one engine:

``embed_all(texts, embedder, batch_size=…) -> Matrix``
    One row per text. An input the model rejects as too long raises ``InputTooLongError``
    naming its index in ``texts``.

``embed_grouped(texts, embedder, resplit=…, batch_size=…) -> list[Embedded]``
    One ``Embedded`` per text, in order. When the model rejects text ``i`` (or a piece of
    it), ``resplit(i, rejected_text)`` is called and must return finer pieces that together
    cover the rejected text (the chunker cuts at exact boundaries, so nothing is lost).
    The pieces are embedded — and re-split again if still rejected, up to ``max_depth``
    levels — and returned, in order, in ``Embedded.texts`` with one vector each. A callback
    that returns no pieces, an empty piece, or the rejected text unchanged cannot make
    progress: that input raises ``InputTooLongError``.

Without a ``batch_size``, each ``embed`` call gets the embedder's ``batch_hint`` texts when it
has one (a remote embedder keeps several requests in flight within one call), else 32.

The pipeline wires ``resplit`` to the splitter so a chunk refused by a server (whose
tokenizer narezka could only approximate) becomes several exact sub-chunks, recorded as
re-split in their metadata, instead of losing its tail.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from narezka.embed.base import Embedder, Matrix, empty_matrix
from narezka.embed.errors import ContextLengthError, EmbedError, InputTooLongError

ProgressCallback = Callable[[int, int], None]
"""Called after every batch with (inputs fully embedded, total inputs)."""

Resplit = Callable[[int, str], Sequence[str]]
"""(index of the original input, the text that was rejected) -> finer pieces, in order."""


@dataclass(frozen=True, slots=True)
class Embedded:
    """The vectors of one input: a single row, or one row per piece when it was re-split."""

    index: int
    texts: tuple[str, ...]
    """The embedded texts: the input itself, or its pieces in document order."""
    vectors: Matrix
    """Shape (len(texts), dim)."""
    resplit: bool


@dataclass(slots=True)
class _Item:
    owner: int
    path: tuple[int, ...]  # position among the owner's pieces at each re-split level
    text: str


def embed_all(
    texts: Sequence[str],
    embedder: Embedder,
    *,
    batch_size: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> Matrix:
    """Embed ``texts`` in batches, one row each; a too-long input raises ``InputTooLongError``."""
    groups = embed_grouped(texts, embedder, batch_size=batch_size, on_progress=on_progress)
    if not groups:
        return empty_matrix(embedder.dim)
    return np.concatenate([g.vectors for g in groups]).astype(np.float32, copy=False)


def embed_grouped(
    texts: Sequence[str],
    embedder: Embedder,
    *,
    resplit: Resplit | None = None,
    batch_size: int | None = None,
    on_progress: ProgressCallback | None = None,
    max_depth: int = 4,
) -> list[Embedded]:
    """Embed ``texts`` in batches, re-splitting rejected inputs through ``resplit``.

    See the module docstring for the callback's contract. Without ``resplit``, a rejected
    input raises ``InputTooLongError``; so does one still rejected after ``max_depth``
    re-splits.
    """
    if batch_size is None:
        batch_size = preferred_batch(embedder)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    total = len(texts)
    pending = [1] * total  # items of each input not embedded yet
    done_vectors: dict[tuple[int, tuple[int, ...]], tuple[str, np.ndarray]] = {}
    queue = [_Item(i, (), t) for i, t in enumerate(texts)]
    finished = 0
    while queue:
        batch, queue = queue[:batch_size], queue[batch_size:]
        embedded, rejected, extra = _embed_batch(batch, embedder, resplit, max_depth)
        for item in rejected:  # replaced by its pieces, counted as they come
            pending[item.owner] -= 1
        for item in extra:
            pending[item.owner] += 1
        for item, vector in embedded:
            done_vectors[(item.owner, item.path)] = (item.text, vector)
            pending[item.owner] -= 1
            finished += pending[item.owner] == 0
        # Pieces go to the front: an input's pieces finish before later inputs start.
        queue = extra + queue
        if on_progress is not None:
            on_progress(finished, total)
    return _assemble(texts, done_vectors, embedder.dim)


def _embed_batch(
    batch: list[_Item], embedder: Embedder, resplit: Resplit | None, max_depth: int
) -> tuple[list[tuple[_Item, np.ndarray]], list[_Item], list[_Item]]:
    """One batch embedded: the items with their vectors, the items the backend rejected as
    too long, and those items' pieces (to embed next)."""
    rejected: list[_Item] = []
    extra: list[_Item] = []
    while batch:
        try:
            vectors = list(embedder.embed([item.text for item in batch]))
        except ContextLengthError as exc:
            refused = _rejected_items(exc, batch, embedder)
            for item in refused:
                pieces = _split(item, exc, embedder, resplit, max_depth)
                extra.extend(_Item(item.owner, (*item.path, k), p) for k, p in enumerate(pieces))
            rejected.extend(refused)
            kept = [k for k, item in enumerate(batch) if item not in refused]
            if exc.embedded is None or any(k not in exc.embedded for k in kept):
                batch = [batch[k] for k in kept]
                continue
            # The backend embedded the others already: keep their rows, send them not again.
            vectors = [exc.embedded[k] for k in kept]
            batch = [batch[k] for k in kept]
        return list(zip(batch, vectors, strict=True)), rejected, extra
    return [], rejected, extra


def preferred_batch(embedder: Embedder, default: int = 32) -> int:
    """Texts per ``embed`` call: the embedder's ``batch_hint`` when it has one, else
    ``default``."""
    hint = getattr(embedder, "batch_hint", None)
    return hint if isinstance(hint, int) and hint > 0 else default


def _rejected_items(exc: ContextLengthError, batch: list[_Item], embedder: Embedder) -> list[_Item]:
    if not exc.indices or any(not 0 <= i < len(batch) for i in exc.indices):
        raise EmbedError(
            f"{embedder.name}: context-length error without valid input indices: {exc}"
        )
    return [batch[i] for i in sorted(set(exc.indices))]


def _split(
    item: _Item,
    exc: ContextLengthError,
    embedder: Embedder,
    resplit: Resplit | None,
    max_depth: int,
) -> list[str]:
    def too_long() -> InputTooLongError:
        tokens = embedder.counter.count(item.text)
        return InputTooLongError(embedder.name, item.owner, tokens=tokens, window=exc.window)

    if resplit is None or len(item.path) >= max_depth:
        raise too_long() from exc
    pieces = list(resplit(item.owner, item.text))
    if not pieces or any(not p for p in pieces) or pieces == [item.text]:
        raise too_long() from exc
    return pieces


def _assemble(
    texts: Sequence[str],
    done: dict[tuple[int, tuple[int, ...]], tuple[str, np.ndarray]],
    dim: int,
) -> list[Embedded]:
    by_owner: dict[int, list[tuple[tuple[int, ...], str, np.ndarray]]] = {}
    for (owner, path), (text, vector) in done.items():
        by_owner.setdefault(owner, []).append((path, text, vector))
    out: list[Embedded] = []
    for i in range(len(texts)):
        parts = sorted(by_owner.get(i, []), key=lambda p: p[0])
        vectors = np.stack([p[2] for p in parts]) if parts else empty_matrix(dim)
        out.append(
            Embedded(
                index=i,
                texts=tuple(p[1] for p in parts),
                vectors=vectors.astype(np.float32, copy=False),
                resplit=bool(parts) and parts[0][0] != (),
            )
        )
    return out


def signal_embedder(embedder: Embedder, *, batch_size: int = 32) -> Callable[[list[str]], Matrix]:
    """An embed function for strategies that read meaning while splitting (``semantic``).

    The vectors steer where to cut and are never stored, so an input over the model's budget
    is shortened to a prefix that fits instead of failing the file: its opening words carry
    enough of its meaning to compare with its neighbours.
    """
    counter, budget = embedder.counter, embedder.budget

    def fit(text: str) -> str:
        while len(text) > 1 and counter.count(text) > budget:
            text = text[: len(text) * 3 // 4]
        return text

    def embed(texts: list[str]) -> Matrix:
        # One batched count: most texts fit, and counting them one by one cost more than a
        # warm-cache run's whole lookup.
        counts = counter.count_batch(texts)
        fitted = [t if n <= budget else fit(t) for t, n in zip(texts, counts, strict=True)]
        return embed_all(fitted, embedder, batch_size=batch_size)

    return embed


__all__ = [
    "Embedded",
    "ProgressCallback",
    "Resplit",
    "embed_all",
    "embed_grouped",
    "preferred_batch",
    "signal_embedder",
]
