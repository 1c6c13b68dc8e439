"""Any local sentence-transformers model directory (``st:PATH``), on CPU; extra ``st``.

sentence-transformers truncates silently past ``max_seq_length``; here inputs over it raise
``ContextLengthError`` instead, counted with the model's own tokenizer and its prompt
(the model's ``document``/``passage`` prompt for passages, ``query`` for queries).
Install torch as the CPU wheel ``torch==2.13.0``, never a plain ``torch`` (CUDA build).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from narezka.embed.base import Matrix, check_window, default_budget, empty_matrix, l2_normalize
from narezka.embed.errors import MissingModelPackageError
from narezka.errors import ConfigError
from narezka.tokens.models import file_digest

_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "config.json")


class TransformersCounter:
    """Counts with a Hugging Face tokenizer object: specials on, no truncation, a prompt."""

    def __init__(self, tokenizer: Any, *, prefix: str, name: str) -> None:
        self._tokenizer = tokenizer
        self._prefix = prefix
        self.name = name

    def count(self, text: str) -> int:
        return self.count_batch([text])[0]

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        encoded = self._tokenizer(
            [self._prefix + t for t in texts], add_special_tokens=True, truncation=False
        )
        return [len(ids) for ids in encoded["input_ids"]]


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local directory, never from a hub."""

    offline = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not (self.path / "modules.json").is_file() and not (self.path / "config.json").is_file():
            raise ConfigError(f"st:{path}: not a sentence-transformers model directory")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            # Plain `torch` from PyPI is the multi-GB CUDA build: ask for the CPU wheel first.
            raise MissingModelPackageError(
                "sentence-transformers",
                "st",
                "first install the CPU build of torch==2.13.0 (a +cpu wheel), never plain torch",
            ) from exc
        model: Any = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
        self._model = model
        prompts: dict[str, str] = dict(self._model.prompts or {})
        self._passage_prompt = next(
            (prompts[k] for k in ("document", "passage", "corpus") if k in prompts), ""
        )
        self._query_prompt = prompts.get("query", "")
        self.max_tokens: int | None = self._model.max_seq_length
        self.budget = default_budget(self.max_tokens) if self.max_tokens else 512
        get_dim = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        self.dim = int(get_dim())

    @cached_property
    def name(self) -> str:
        weights = next((self.path / f for f in _WEIGHTS if (self.path / f).is_file()), None)
        digest = file_digest(weights) if weights else "unknown"
        return f"st:{self.path.name}@{digest}"

    @cached_property
    def counter(self) -> TransformersCounter:
        return TransformersCounter(
            self._model.tokenizer, prefix=self._passage_prompt, name=f"hf:{self.name}"
        )

    @cached_property
    def query_counter(self) -> TransformersCounter:
        return TransformersCounter(
            self._model.tokenizer, prefix=self._query_prompt, name=f"hf:{self.name}+query"
        )

    def _encode(self, texts: Sequence[str], prompt: str) -> Matrix:
        vectors = self._model.encode(
            list(texts),
            prompt=prompt,
            batch_size=max(1, len(texts)),
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return l2_normalize(np.asarray(vectors, dtype=np.float32))

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return empty_matrix(self.dim)
        check_window(self.name, self.counter, self.max_tokens, texts)
        return self._encode(texts, self._passage_prompt)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return empty_matrix(self.dim)
        check_window(self.name, self.query_counter, self.max_tokens, texts)
        return self._encode(texts, self._query_prompt)


__all__ = ["SentenceTransformerEmbedder", "TransformersCounter"]
