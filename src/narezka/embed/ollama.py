"""Embeddings from an Ollama server through the official ``ollama`` Python client.

Every request is ``POST /api/embed`` with a batched ``input``, ``truncate=False`` (the
client's default leaves the server truncating silently) and ``options.num_ctx`` set to the
model's window, read once from ``POST /api/show`` (``model_info["<arch>.context_length"]``).
The host comes from ``host=`` or ``OLLAMA_HOST``. Several batches are in flight at once
(:mod:`narezka.embed.dispatch`); Ollama runs ``OLLAMA_NUM_PARALLEL`` of them and queues the
rest. Its client does not expose response headers, so a 503 "server busy" is retried with
backoff alone.

Tested against a local fake server implementing the documented contract: no live Ollama
server was available while this was written.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

from narezka import environment
from narezka.embed.base import Matrix, default_budget, empty_matrix, l2_normalize
from narezka.embed.dispatch import (
    Dispatcher,
    DispatchPolicy,
    PartlyRejected,
    batch_limit_error,
)
from narezka.embed.errors import ContextLengthError, EmbedError, ModelNotFoundError
from narezka.embed.remote import (
    OLLAMA_DEFAULT_HOST,
    DriftStats,
    LengthRejected,
    RetryPolicy,
    TransientError,
    counter_for_model,
    is_length_error,
    with_retries,
)
from narezka.errors import MissingDependencyError
from narezka.tokens import TokenCounter

DEFAULT_HOST = OLLAMA_DEFAULT_HOST


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What ``/api/show`` says about a model."""

    architecture: str
    window: int | None
    dim: int | None
    fingerprint: str
    """A hash of the show response: changes when the model's blob (named in the Modelfile),
    parameters or template change, so cached vectors of an old revision are not reused."""


class OllamaEmbedder:
    """An embedding model served by Ollama (``ollama:MODEL``)."""

    offline = False

    def __init__(
        self,
        model: str,
        *,
        host: str | None = None,
        counter: TokenCounter | None = None,
        retry: RetryPolicy | None = None,
        dispatch: DispatchPolicy | None = None,
    ) -> None:
        try:
            import ollama
        except ImportError as exc:
            raise MissingDependencyError("ollama", "ollama") from exc
        self.model = model
        self.host = host or environment.current().ollama_host or DEFAULT_HOST
        self.retry = retry or RetryPolicy()
        self.dispatcher = Dispatcher(dispatch or DispatchPolicy.from_env())
        self._lock = threading.Lock()
        self._ollama: Any = ollama
        self._client: Any = ollama.Client(host=self.host, timeout=self.retry.timeout)
        if counter is None:
            counter, self.counter_exact = counter_for_model(model)
        else:
            self.counter_exact = True
        self.counter: TokenCounter = counter
        self.drift = DriftStats()
        self._info: ModelInfo | None = None

    # ---- model facts (one /api/show, lazily) ---------------------------------------------

    @property
    def info(self) -> ModelInfo:
        if self._info is None:
            self._info = self._call(lambda: self._client.show(self.model), parse=_model_info)
        return self._info

    @property
    def name(self) -> str:
        return f"ollama:{self.model}@{self.info.fingerprint}"

    @property
    def max_tokens(self) -> int | None:
        return self.info.window

    @property
    def budget(self) -> int:
        # Without the model's own tokenizer the count is an upper bound: the full window
        # is then safe; with a family tokenizer keep the margin for version drift.
        window = self.info.window or 512
        return default_budget(window) if self.counter_exact else window

    @property
    def batch_hint(self) -> int:
        """Texts per ``embed`` call that keep every request slot busy."""
        return self.dispatcher.batch_hint

    @property
    def dim(self) -> int:
        if self.info.dim is None:
            probe = self.embed(["dimension probe"])
            self._info = _replace_dim(self.info, probe.shape[1])
        assert self.info.dim is not None
        return self.info.dim

    # ---- requests ---------------------------------------------------------------------------

    def _call(self, request: Any, *, parse: Any = None, batch: int = 1) -> Any:
        """One request with retries; errors mapped to narezka's (see module docstring)."""

        def attempt() -> Any:
            try:
                result = request()
            except self._ollama.ResponseError as exc:
                status, message = exc.status_code, str(exc.error)
                if status == 404:
                    raise ModelNotFoundError(
                        f"ollama {self.host}", self.model, f"run: ollama pull {self.model}"
                    ) from None
                if (too_big := batch_limit_error(status, message, batch)) is not None:
                    raise too_big from None
                if is_length_error(status, message):
                    raise LengthRejected(message) from None
                if status >= 500 or status == 429:
                    raise TransientError(f"HTTP {status}: {message}") from None
                raise EmbedError(
                    f"ollama {self.host} (model {self.model!r}): HTTP {status}: {message}"
                ) from None
            except (ConnectionError, httpx.TransportError) as exc:
                # ollama turns ConnectError into ConnectionError; timeouts and broken
                # connections surface as httpx transport errors.
                raise TransientError(f"{type(exc).__name__}: {exc}") from None
            return parse(result) if parse else result

        return with_retries(attempt, policy=self.retry, host=self.host, model=self.model)

    def _embed_once(self, texts: Sequence[str]) -> Any:
        options = {"num_ctx": self._info.window} if self._info and self._info.window else None
        return self._call(
            lambda: self._client.embed(
                model=self.model, input=list(texts), truncate=False, options=options
            ),
            batch=len(texts),
        )

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed passages; inputs the server finds too long raise ``ContextLengthError``."""
        if not texts:
            return empty_matrix(self.info.dim or 0)
        info = self.info
        counts = self.counter.count_batch(texts)
        try:
            return self.dispatcher.run(texts, counts, self._embed_batch)
        except PartlyRejected as exc:
            raise ContextLengthError(
                f"ollama:{self.model}",
                exc.rejected,
                window=info.window,
                counts=[counts[i] for i in exc.rejected],
                detail=exc.detail,
                embedded=exc.rows,
            ) from None

    def _embed_batch(self, texts: Sequence[str], counts: Sequence[int]) -> Matrix:
        """One request (on a dispatcher thread): the batch's normalized rows."""
        info = self.info
        response = self._embed_once(texts)
        vectors = np.asarray(response.embeddings, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise EmbedError(
                f"ollama {self.host} (model {self.model!r}): expected {len(texts)} embeddings, "
                f"got shape {vectors.shape}"
            )
        if info.dim is not None and vectors.shape[1] != info.dim:
            raise EmbedError(
                f"ollama {self.host} (model {self.model!r}): embedding dimension "
                f"{vectors.shape[1]} differs from the model's {info.dim}"
            )
        with self._lock:
            self.drift.record(counts, response.prompt_eval_count)
        return l2_normalize(vectors)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.embed(texts)

    def server_token_count(self, text: str) -> int | None:
        """Tokens the server counts for ``text`` alone (``prompt_eval_count``), for calibration."""
        self.info  # noqa: B018 - num_ctx needs the window
        try:
            response = self._embed_once([text])
        except LengthRejected as exc:
            raise ContextLengthError(
                f"ollama:{self.model}", [0], window=self.info.window, detail=str(exc)
            ) from None
        count = response.prompt_eval_count
        return int(count) if count is not None else None


def _model_info(show: Any) -> ModelInfo:
    info: dict[str, Any] = dict(show.modelinfo or {})
    arch = str(info.get("general.architecture", ""))
    window = info.get(f"{arch}.context_length")
    dim = info.get(f"{arch}.embedding_length")
    payload = {
        "modelfile": show.modelfile,
        "parameters": show.parameters,
        "template": show.template,
        "details": show.details.model_dump() if show.details else None,
        "model_info": info,
    }
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
    return ModelInfo(
        architecture=arch,
        window=int(window) if window else None,
        dim=int(dim) if dim else None,
        fingerprint=digest[:12],
    )


def _replace_dim(info: ModelInfo, dim: int) -> ModelInfo:
    return ModelInfo(info.architecture, info.window, dim, info.fingerprint)


__all__ = ["DEFAULT_HOST", "ModelInfo", "OllamaEmbedder"]
