"""Embedders: texts to L2-normalized float32 vectors, measured in the model's own tokens.

``get_embedder(spec)`` builds one (``use`` — the bundled offline default —, ``e5``,
``minilm``, ``st:PATH``, ``ollama:MODEL``, ``openai:MODEL@URL``, ``hash[:DIM]``);
``embedder_specs()`` lists them. ``CachedEmbedder`` + ``EmbeddingCache`` add a sqlite cache;
``embed_all`` / ``embed_grouped`` batch and, given a ``resplit`` callback, re-split inputs a
model rejects as too long instead of truncating them; ``calibrate`` measures a served
model's token density when narezka cannot count its tokens exactly. ``HashEmbedder`` is a
deterministic test double for other stages' tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_exports

if TYPE_CHECKING:
    from narezka.embed.base import Embedder, HashEmbedder, Matrix, l2_normalize
    from narezka.embed.cache import (
        CachedEmbedder,
        CacheStats,
        EmbeddingCache,
        default_cache_path,
    )
    from narezka.embed.calibrate import Calibration, calibrate
    from narezka.embed.errors import (
        BackendUnavailableError,
        ContextLengthError,
        EmbedError,
        InputTooLongError,
        ModelNotFoundError,
    )
    from narezka.embed.registry import (
        DEFAULT_EMBEDDER,
        EmbedderSpec,
        cached_signal_embedder,
        embedder_specs,
        get_embedder,
    )
    from narezka.embed.resilient import Embedded, embed_all, embed_grouped, signal_embedder

# Each name loads its module on first use: the errors and the remote helpers (which the LLM
# client shares) need no numpy, and a process that only counts tokens or chunks (``chunk
# --jobs``, its fork server and workers) should not pay for it (some 0.12 s of CPU, and
# BLAS threads).
_HOMES = {
    "narezka.embed.base": "Embedder HashEmbedder Matrix l2_normalize",
    "narezka.embed.cache": "CachedEmbedder CacheStats EmbeddingCache default_cache_path",
    "narezka.embed.calibrate": "Calibration calibrate",
    "narezka.embed.errors": (
        "BackendUnavailableError ContextLengthError EmbedError InputTooLongError ModelNotFoundError"
    ),
    "narezka.embed.registry": (
        "DEFAULT_EMBEDDER EmbedderSpec cached_signal_embedder embedder_specs get_embedder"
    ),
    "narezka.embed.resilient": "Embedded embed_all embed_grouped signal_embedder",
}
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)

__all__ = [
    "DEFAULT_EMBEDDER",
    "BackendUnavailableError",
    "CacheStats",
    "CachedEmbedder",
    "Calibration",
    "ContextLengthError",
    "EmbedError",
    "Embedded",
    "Embedder",
    "EmbedderSpec",
    "EmbeddingCache",
    "HashEmbedder",
    "InputTooLongError",
    "Matrix",
    "ModelNotFoundError",
    "cached_signal_embedder",
    "calibrate",
    "default_cache_path",
    "embed_all",
    "embed_grouped",
    "embedder_specs",
    "get_embedder",
    "l2_normalize",
    "signal_embedder",
]
