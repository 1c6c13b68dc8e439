"""Chat clients for the LLM that writes chunk context: Ollama and OpenAI-compatible servers.

Specs (``context_llm`` in :class:`~narezka.settings.Settings`), shaped like the embedder specs::

    ollama:MODEL            e.g. ollama:qwen2.5:3b (host: OLLAMA_HOST, else 127.0.0.1:11434)
    ollama:MODEL@HOST       e.g. ollama:qwen2.5:3b@http://gpu-box:11434
    openai:MODEL@URL        e.g. openai:qwen2.5-3b-instruct@http://127.0.0.1:8080/v1

Ollama is asked through the official ``ollama`` client (``POST /api/chat`` with
``"stream": false``; the reply is ``message.content``, errors are ``{"error": "..."}``); an
OpenAI-compatible server through httpx (``POST {URL}/chat/completions``; the reply is
``choices[0].message.content`` with ``usage``, errors ``{"error": {"message": ...}}``). Both
retry timeouts, broken connections, 429 and 5xx with the embedders' backoff
(:mod:`narezka.embed.remote`). Tested against a local fake server that implements these
documented shapes: no live LLM was available while this was written.

::

    NarezkaError
    └── ContextLLMError        one request for a chunk's context failed (the chunk is indexed
        │                      without context; the message names the server and model)
        ├── LLMUnavailableError  nobody listens at the address (connection refused past retries)
        ├── LLMModelNotFoundError  the server does not have the model (says how to get it)
        └── LLMReplyError        the server answered, but not with usable text (empty, not
                                 JSON, no message content)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from narezka.embed.errors import BackendUnavailableError
from narezka.embed.remote import OLLAMA_DEFAULT_HOST, RetryPolicy, TransientError, with_retries
from narezka.embed.servers import Servers
from narezka.errors import ConfigError, MissingDependencyError, NarezkaError

if TYPE_CHECKING:  # httpx comes with the ollama and openai extras, not with narezka itself
    import httpx

MAX_REPLY_TOKENS = 160
"""What the server may generate for one context (``num_predict`` / ``max_tokens``): two
sentences need ~60–100 tokens; the cap bounds the cost of a model that rambles."""
CONTEXT_WINDOW = 8192
"""``num_ctx`` asked of Ollama: the document excerpt (see ``llm_context.DOC_CHARS``) plus the
chunk must fit; Ollama's own default (2048–4096 by version) would cut long prompts silently."""


DEFAULT_RETRY = RetryPolicy()
"""The embedders' policy: 4 attempts with backoff, 120 s per request (a CPU model writing two
sentences takes seconds, a cold model load longer)."""


class ContextLLMError(NarezkaError):
    """One context request failed; the chunk is indexed without context."""


class LLMUnavailableError(ContextLLMError):
    """The server could not be reached (after retries): the run stops asking."""


class LLMModelNotFoundError(ContextLLMError):
    """The server does not know the model."""


class LLMReplyError(ContextLLMError):
    """The server answered 200 but with nothing usable as context."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What one chat call returned: the text and the server's token counts (when given)."""

    text: str
    prompt_tokens: int | None = None
    reply_tokens: int | None = None


class ChatClient(Protocol):
    """One non-streaming chat call: ``messages`` in, the assistant's reply out."""

    name: str
    """The model's identity (``ollama:qwen2.5:3b``; ``openai:MODEL@URL``, whose URL may name
    another server's model of the same name): the cache and the index fingerprint key on it."""

    def chat(self, messages: Sequence[Mapping[str, str]]) -> Reply: ...


@dataclass(frozen=True, slots=True)
class LLMSpec:
    """A parsed ``context_llm`` spec."""

    kind: str
    model: str
    url: str | None

    @property
    def name(self) -> str:
        """The spec as written back (the identity cached contexts are keyed on)."""
        return f"{self.kind}:{self.model}" + (f"@{self.url}" if self.url else "")


def parse_spec(spec: str) -> LLMSpec:
    """``ollama:MODEL[@HOST]`` or ``openai:MODEL@URL``; ``ConfigError`` for anything else."""
    kind, _, rest = spec.strip().partition(":")
    # Ollama model names hold ':' (qwen2.5:3b) and '/' but never '@': '@' starts the host.
    model, _, url = rest.partition("@")
    if kind not in ("ollama", "openai") or not model:
        raise ConfigError(
            f"context_llm {spec!r}: expected ollama:MODEL[@HOST] or openai:MODEL@URL (or off)"
        )
    if kind == "openai" and not url:
        raise ConfigError(f"context_llm {spec!r}: an OpenAI-compatible server needs @URL")
    if url and not url.startswith(("http://", "https://")):
        raise ConfigError(f"context_llm {spec!r}: {url!r} is not an http(s) URL")
    return LLMSpec(kind, model, url.rstrip("/") or None)


def open_client(
    spec: str, *, retry: RetryPolicy | None = None, servers: Servers | None = None
) -> ChatClient:
    """The chat client for a spec (nothing is sent until the first ``chat``): an Ollama
    spec without ``@HOST`` goes to ``servers``' host (``OLLAMA_HOST`` as the top read it),
    an OpenAI-compatible one sends ``servers``' ``OPENAI_API_KEY``; none: the defaults."""
    servers = servers or Servers()
    parsed = parse_spec(spec)
    if parsed.kind == "ollama":
        return OllamaChat(parsed.model, host=parsed.url or servers.ollama_host, retry=retry)
    assert parsed.url is not None
    return OpenAIChat(parsed.model, parsed.url, retry=retry, api_key=servers.openai_api_key)


def _retried(request: Callable[[], Reply], retry: RetryPolicy, host: str, model: str) -> Reply:
    try:
        return with_retries(request, policy=retry, host=host, model=model)
    except BackendUnavailableError as exc:
        last = str(exc).rpartition("last error: ")[2]
        message = (
            f"context LLM {host} (model {model!r}) failed {exc.attempts} time(s); "
            f"last error: {last}"
        )
        # Nobody listening stops the run; a 5xx or a timeout may be this prompt's alone.
        unreachable = last.startswith(("ConnectError", "ConnectionError"))
        raise (LLMUnavailableError if unreachable else ContextLLMError)(message) from None


def _text(content: Any, where: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise LLMReplyError(f"{where}: the reply has no text ({content!r:.80})")
    return content


class OllamaChat:
    """``POST /api/chat`` on an Ollama server, through the official client."""

    def __init__(
        self, model: str, *, host: str | None = None, retry: RetryPolicy | None = None
    ) -> None:
        try:
            import ollama
        except ImportError as exc:
            raise MissingDependencyError("ollama", "ollama") from exc
        import httpx  # the ollama client's own transport

        self._transport_error = httpx.TransportError
        self.model = model
        self.host = host or OLLAMA_DEFAULT_HOST
        # The model tag is the identity, not the address: Ollama moved to another host writes
        # the same contexts, and the cache and the index fingerprint must not ask again.
        self.name = f"ollama:{model}"
        self.retry = retry or DEFAULT_RETRY
        self._ollama: Any = ollama
        self._client: Any = ollama.Client(host=self.host, timeout=self.retry.timeout)

    def chat(self, messages: Sequence[Mapping[str, str]]) -> Reply:
        """The assistant's reply; ``ContextLLMError`` subclasses on failure."""
        where = f"context LLM ollama {self.host} (model {self.model!r})"

        def attempt() -> Reply:
            try:
                response = self._client.chat(
                    model=self.model,
                    messages=[dict(m) for m in messages],
                    stream=False,
                    options={
                        "temperature": 0,
                        "num_predict": MAX_REPLY_TOKENS,
                        "num_ctx": CONTEXT_WINDOW,
                    },
                )
            except self._ollama.ResponseError as exc:
                status, message = exc.status_code, str(exc.error)
                if status == 404:
                    raise LLMModelNotFoundError(
                        f"{where}: model not found; run: ollama pull {self.model}"
                    ) from None
                if status >= 500 or status == 429:
                    raise TransientError(f"HTTP {status}: {message}") from None
                raise ContextLLMError(f"{where}: HTTP {status}: {message}") from None
            except (ConnectionError, self._transport_error) as exc:
                raise TransientError(f"{type(exc).__name__}: {exc}") from None
            except ValueError as exc:  # a 200 whose body is not the documented JSON
                raise LLMReplyError(f"{where}: the reply is not chat JSON ({exc!s:.120})") from None
            said = getattr(response, "message", None)
            return Reply(
                _text(getattr(said, "content", None), where),
                getattr(response, "prompt_eval_count", None),
                getattr(response, "eval_count", None),
            )

        return _retried(attempt, self.retry, self.host, self.model)


class OpenAIChat:
    """``POST {url}/chat/completions`` on an OpenAI-compatible server (llama.cpp, vLLM…).

    ``api_key`` (``OPENAI_API_KEY``, handed down) is sent as a bearer token, as for
    embeddings."""

    def __init__(
        self,
        model: str,
        url: str,
        *,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        api_key: str | None = None,
    ) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise MissingDependencyError("httpx", "openai") from exc
        self._transport_error = httpx.TransportError
        self.model = model
        self.url = url.rstrip("/")
        self.name = f"openai:{model}@{self.url}"
        self.retry = retry or DEFAULT_RETRY
        headers = {"Content-Type": "application/json"}
        if key := api_key:
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(timeout=self.retry.timeout, headers=headers, transport=transport)

    def chat(self, messages: Sequence[Mapping[str, str]]) -> Reply:
        """The assistant's reply; ``ContextLLMError`` subclasses on failure."""
        from narezka.embed.openai import error_text  # needs httpx, which __init__ checked

        where = f"context LLM {self.url} (model {self.model!r})"
        body = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": 0,
            "max_tokens": MAX_REPLY_TOKENS,
            "stream": False,
        }

        def attempt() -> Reply:
            try:
                r = self._http.post(f"{self.url}/chat/completions", json=body)
            except self._transport_error as exc:
                raise TransientError(f"{type(exc).__name__}: {exc}") from None
            if r.status_code != 200:
                message = error_text(r)
                if r.status_code == 404:
                    raise LLMModelNotFoundError(f"{where}: the server answered 404: {message}")
                if r.status_code >= 500 or r.status_code == 429:
                    raise TransientError(f"HTTP {r.status_code}: {message}")
                raise ContextLLMError(f"{where}: HTTP {r.status_code}: {message}")
            try:
                payload = r.json()
                content = payload["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise LLMReplyError(
                    f"{where}: the reply is not a chat completion ({type(exc).__name__}: "
                    f"{r.text[:80]!r})"
                ) from None
            usage = payload.get("usage") if isinstance(payload, dict) else None
            usage = usage if isinstance(usage, dict) else {}
            return Reply(
                _text(content, where), usage.get("prompt_tokens"), usage.get("completion_tokens")
            )

        return _retried(attempt, self.retry, self.url, self.model)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()


__all__ = [
    "CONTEXT_WINDOW",
    "DEFAULT_RETRY",
    "MAX_REPLY_TOKENS",
    "ChatClient",
    "ContextLLMError",
    "LLMModelNotFoundError",
    "LLMReplyError",
    "LLMSpec",
    "LLMUnavailableError",
    "OllamaChat",
    "OpenAIChat",
    "Reply",
    "open_client",
    "parse_spec",
]
