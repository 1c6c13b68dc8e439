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
from collections.abc import Sequence
from dataclasses import dataclass
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
    OLLAMA_DEFAULT_HOST,
    LengthRejected,
    RetryPolicy,
    TransientError,
    is_length_error,
    with_retries,
)
from narezka.embed.served import ServedEmbedder
from narezka.embed.servers import Servers
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


class OllamaEmbedder(ServedEmbedder):
    """An embedding model served by Ollama (``ollama:MODEL``)."""

    def __init__(
        self,
        model: str,
        *,
        host: str | None = None,
        counter: TokenCounter | None = None,
        retry: RetryPolicy | None = None,
        dispatch: DispatchPolicy | None = None,
        servers: Servers | None = None,
    ) -> None:
        """``host``, else ``servers``' (``OLLAMA_HOST`` as the top read it), else Ollama's
        usual address; ``servers`` also sizes the requests unless ``dispatch`` is given."""
        servers = servers or Servers()
        dispatch = dispatch or DispatchPolicy.of(servers)
        try:
            import ollama
        except ImportError as exc:
            raise MissingDependencyError("ollama", "ollama") from exc
        super().__init__(model, counter=counter, retry=retry, dispatch=dispatch)
        self.host = host or servers.ollama_host or DEFAULT_HOST
        self._ollama: Any = ollama
        self._client: Any = ollama.Client(host=self.host, timeout=self.retry.timeout)
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

    def _window(self) -> int | None:
        return self.info.window

    def _label(self) -> str:
        return f"ollama:{self.model}"

    def _known_dim(self) -> int | None:
        return self.info.dim

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
        self.record_drift(counts, response.prompt_eval_count)
        return l2_normalize(vectors)

    def _count_alone(self, text: str) -> int | None:
        count = self._embed_once([text]).prompt_eval_count  # num_ctx: _window asked first
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
