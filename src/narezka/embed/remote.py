"""What the HTTP embedders (Ollama, OpenAI-compatible) share: retries (with ``Retry-After``),
length-error recognition, token-count drift, and tokenizers by model family.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from narezka.embed.errors import BackendUnavailableError
from narezka.tokens import TokenCounter
from narezka.tokens.models import Utf8BoundCounter

OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434"
"""Where Ollama listens when ``OLLAMA_HOST`` is unset (the embedder and the context LLM)."""

T = TypeVar("T")

# Servers word it differently by version ("input length exceeds the context length",
# "the input length exceeds the context length", OpenAI's "maximum context length is …",
# llama.cpp's "input is too large to process"); all mean "too long, nothing was embedded".
_LENGTH_ERROR = re.compile(
    r"exceeds? (the )?(maximum )?context length|maximum context length|context length exceeded"
    r"|input is too large|too many tokens",
    re.IGNORECASE,
)
LENGTH_ERROR_STATUSES = frozenset({400, 413, 422, 500})


def is_length_error(status: int, message: str) -> bool:
    """Whether an HTTP error is the server refusing an input longer than its window."""
    return status in LENGTH_ERROR_STATUSES and bool(_LENGTH_ERROR.search(message))


class TransientError(Exception):
    """Raised inside a request function for a failure worth retrying (timeout, 5xx…);
    ``retry_after`` is the wait in seconds the server asked for (429/503 ``Retry-After``)."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # an HTTP date here is rare; the email package is 8 ms of start-up

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter for transient failures; ``timeout`` is per request."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    timeout: float = 120.0
    max_retry_after: float = 120.0
    """The longest ``Retry-After`` obeyed; a server asking for more is waited on this long."""

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based): "equal jitter"."""
        ceiling = min(self.max_delay, self.base_delay * 2**attempt)
        return float(ceiling / 2 + rng.uniform(0, ceiling / 2))


def with_retries(
    request: Callable[[], T],
    *,
    policy: RetryPolicy,
    host: str,
    model: str,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> T:
    """Call ``request`` until it succeeds; ``TransientError`` is retried, anything else raised.

    The wait before a retry is the backoff, or the server's ``Retry-After`` when longer.

    After ``policy.attempts`` transient failures raises ``BackendUnavailableError`` naming
    the host and model.
    """
    rng = rng or random.Random()
    last = ""
    for attempt in range(policy.attempts):
        try:
            return request()
        except TransientError as exc:
            last = str(exc)
            if attempt + 1 < policy.attempts:
                wait = policy.delay(attempt, rng)
                if exc.retry_after is not None:
                    wait = max(wait, min(exc.retry_after, policy.max_retry_after))
                sleep(wait)
    raise BackendUnavailableError(host, model, policy.attempts, last)


class LengthRejected(Exception):
    """Raised by a probe: the server refused the (sub-)batch as too long."""


@dataclass(slots=True)
class DriftStats:
    """Local token counts against the server's ``prompt_eval_count`` / ``prompt_tokens``."""

    requests: int = 0
    local_tokens: int = 0
    server_tokens: int = 0
    worst: list[tuple[int, int]] = field(default_factory=list)
    """Up to 10 single-input requests where the counts disagreed: (local, server)."""

    def record(self, local: Sequence[int], server: int | None) -> None:
        if server is None:
            return
        self.requests += 1
        self.local_tokens += sum(local)
        self.server_tokens += server
        if len(local) == 1 and local[0] != server and len(self.worst) < 10:
            self.worst.append((local[0], server))

    @property
    def ratio(self) -> float | None:
        """Server tokens per locally counted token; > 1 means the local count is too low."""
        return self.server_tokens / self.local_tokens if self.local_tokens else None


def counter_for_model(model: str) -> tuple[TokenCounter, bool]:
    """A local counter for a served model, and whether it is that model's tokenizer family.

    WordPiece (BERT uncased) for mxbai / nomic / MiniLM / arctic-embed, XLM-R for bge-m3 /
    multilingual-e5; otherwise a UTF-8 byte upper bound (never too low, often 2× too high).
    """
    name = model.lower()
    try:
        if any(k in name for k in ("mxbai", "nomic", "minilm", "arctic-embed")):
            from narezka.embed.minilm import MiniLMEmbedder

            return MiniLMEmbedder().counter, True
        if any(k in name for k in ("bge-m3", "e5", "multilingual", "xlm")):
            from narezka.embed.local import E5Embedder
            from narezka.tokens.models import PrefixFreeCounter

            return PrefixFreeCounter(E5Embedder().counter, name="xlmr"), True
    except ImportError:
        pass  # the family's tokenizer package is not installed: use the safe bound
    return Utf8BoundCounter(), False


__all__ = [
    "LENGTH_ERROR_STATUSES",
    "DriftStats",
    "LengthRejected",
    "RetryPolicy",
    "TransientError",
    "counter_for_model",
    "is_length_error",
    "retry_after_seconds",
    "with_retries",
]
