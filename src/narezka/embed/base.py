"""The ``Embedder`` protocol, shared helpers, and ``HashEmbedder``, a deterministic test double.

An embedder turns a batch of texts into a float32 matrix with one L2-normalized row per text.
It carries its model's own token counter, so chunk budgets are measured in the tokens the
model really sees, and it never truncates: an input over its window raises
``ContextLengthError`` naming the inputs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from narezka.embed.errors import ContextLengthError
from narezka.errors import ConfigError
from narezka.tokens import TokenCounter

Matrix = npt.NDArray[np.float32]
"""A (n_texts, dim) float32 matrix of L2-normalized rows."""


@runtime_checkable
class Embedder(Protocol):
    """Embeds batches of texts; see the module docstring for the guarantees."""

    @property
    def name(self) -> str:
        """Stable id: backend, model, and its revision or weights-file hash (a cache key)."""
        ...

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int | None:
        """The hard window in ``counter`` tokens, or None when the model has none."""
        ...

    @property
    def budget(self) -> int:
        """Default chunk size in ``counter`` tokens: the window minus a margin, or a soft cap."""
        ...

    @property
    def counter(self) -> TokenCounter:
        """Counts exactly what the model sees for a passage, prefixes and specials included."""
        ...

    @property
    def offline(self) -> bool:
        """True when the model runs in-process with no network."""
        ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed passages (documents, chunks)."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        """Embed search queries (models such as e5 encode them differently)."""
        ...


def default_budget(window: int) -> int:
    """Chunk budget for a hard window: a small margin absorbs tokenizer version drift."""
    return window - max(8, window // 32)


def l2_normalize(matrix: npt.ArrayLike) -> Matrix:
    """Rows scaled to unit length, as float32; zero rows stay zero."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {m.shape}")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    out: Matrix = np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)
    return out


def empty_matrix(dim: int) -> Matrix:
    """The result of embedding no texts."""
    return np.zeros((0, dim), dtype=np.float32)


def check_window(
    name: str, counter: TokenCounter, window: int | None, texts: Sequence[str]
) -> None:
    """Raise ``ContextLengthError`` for texts over ``window``; models that would truncate or
    silently window long inputs are guarded by this before the call."""
    if window is None:
        return
    counts = counter.count_batch(texts)
    over = [i for i, n in enumerate(counts) if n > window]
    if over:
        raise ContextLengthError(name, over, window=window, counts=[counts[i] for i in over])


_WORD = re.compile(r"\w+|[^\w\s]")
SLOTS_HELD = 200_000
"""Words whose slot a :class:`HashEmbedder` keeps (a few MB): hashing each word of each text
again was most of its time."""


class WordCounter:
    """Words and punctuation marks plus two specials: the ``HashEmbedder``'s tokenizer."""

    name = "words+2"

    def count(self, text: str) -> int:
        return len(_WORD.findall(text)) + 2

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]


class HashEmbedder:
    """Deterministic bag-of-words feature hashing: no model, same vectors in every process.

    Texts sharing words get similar vectors, so search tests behave plausibly. With
    ``max_tokens`` set it rejects longer inputs like a real windowed model, which lets tests
    exercise re-splitting. ``calls`` and ``texts_embedded`` count the work done.
    """

    offline = True

    def __init__(self, dim: int = 64, *, max_tokens: int | None = None) -> None:
        if dim < 2:
            raise ConfigError(f"HashEmbedder dim must be at least 2, not {dim}")
        self.dim = dim
        self.max_tokens = max_tokens
        self.budget = default_budget(max_tokens) if max_tokens else 256
        self.counter: TokenCounter = WordCounter()
        self.name = f"hash:d{dim}:v1"
        self.calls = 0
        self.texts_embedded = 0
        self._slots: dict[str, int] = {}
        """Each word's signed slot (see :meth:`_slot`), hashed once."""

    @classmethod
    def from_spec(cls, argument: str) -> HashEmbedder:
        """``hash[:DIM]``: the text after ``hash:`` (default dimension: 64)."""
        try:
            return cls(int(argument) if argument else 64)
        except ValueError as exc:
            raise ConfigError(f"hash:DIM needs an integer dimension, not {argument!r}") from exc

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        slots, signs = self._slots, []
        for w in _WORD.findall(text) or [""]:
            signed = slots.get(w)
            if signed is None:
                signed = self._slot(w.lower())
                if len(slots) < SLOTS_HELD:
                    slots[w] = signed
            signs.append(signed)
        # Each word adds ±1 to one slot: a sum of small integers, exact in float32 whatever
        # the order, so counting them at once gives the vector the word loop gave.
        order = np.fromiter(signs, dtype=np.int64, count=len(signs))
        counts = np.bincount(np.abs(order) - 1, weights=np.sign(order), minlength=self.dim)
        v = counts.astype(np.float32)
        if not v.any():  # words cancelled out: fall back to a fixed non-zero direction
            v[0] = 1.0
        return v

    def _slot(self, word: str) -> int:
        """The word's slot plus one, negative when the word subtracts."""
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "little") % self.dim + 1
        return slot if digest[4] & 1 else -slot

    def embed(self, texts: Sequence[str]) -> Matrix:
        check_window(self.name, self.counter, self.max_tokens, texts)
        self.calls += 1
        self.texts_embedded += len(texts)
        if not texts:
            return empty_matrix(self.dim)
        return l2_normalize(np.stack([self._vector(t) for t in texts]))

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.embed(texts)


__all__ = [
    "Embedder",
    "HashEmbedder",
    "Matrix",
    "WordCounter",
    "check_window",
    "default_budget",
    "empty_matrix",
    "l2_normalize",
]
