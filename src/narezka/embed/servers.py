"""Where the embedding and LLM servers are and how hard to press them: ``OLLAMA_HOST``,
``OPENAI_API_KEY`` and ``NAREZKA_EMBED_CONCURRENCY`` / ``_BATCH`` / ``_BATCH_TOKENS``, read
from the environment at the top (:meth:`Servers.of`) and handed down to
:func:`narezka.embed.get_embedder` and the context LLM's client. Those read no environment:
given no ``Servers``, they use the defaults (``Servers()``: Ollama on its usual address, no
key, the dispatcher's own concurrency and batch)."""

from __future__ import annotations

from dataclasses import dataclass, field

from narezka.environment import Environment


@dataclass(frozen=True, slots=True)
class Servers:
    """What the environment says about the servers narezka sends text to (None: not set)."""

    ollama_host: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    embed_concurrency: int | None = None
    embed_batch: int | None = None
    embed_batch_tokens: int | None = None

    @classmethod
    def of(cls, env: Environment) -> Servers:
        """The servers ``env`` names (already parsed and checked)."""
        return cls(
            ollama_host=env.ollama_host,
            openai_api_key=env.openai_api_key,
            embed_concurrency=env.embed_concurrency,
            embed_batch=env.embed_batch,
            embed_batch_tokens=env.embed_batch_tokens,
        )


__all__ = ["Servers"]
