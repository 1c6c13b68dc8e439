"""Several batched requests to an embedding server in flight at once, results in order.

A remote embedder hands :class:`Dispatcher` the whole ``embed(texts)`` call and a ``send``
function that makes one request (with its own retries, see :func:`with_retries`). The
dispatcher cuts the texts into batches that fit the server's limits — at most ``max_batch``
texts and ``max_batch_tokens`` tokens each —, keeps at most ``concurrency`` of them in flight
on worker threads, and writes each answer into its rows of the result, so order never depends
on which request finished first. Batches are cut lazily: only those in flight exist as
request bodies (back-pressure), and a slow or retrying request holds one worker while the
others carry on.

A server that refuses a batch as too large (TEI's "batch size 64 > maximum allowed batch size
32", OpenAI's "max 300000 tokens per request", a bare 413) teaches the dispatcher a smaller
limit; the refused batch is re-sent in parts and later batches are cut to the new size.

A batch refused because some input is longer than the model's window is bisected to find
those inputs; the vectors of the others are kept, so they are not embedded again, and the
call raises :class:`ContextLengthError` carrying them (the never-truncate rule: the caller
re-splits the rejected inputs).

Defaults come from ``NAREZKA_EMBED_CONCURRENCY``, ``NAREZKA_EMBED_BATCH`` and
``NAREZKA_EMBED_BATCH_TOKENS`` when set. Eight in flight was chosen from
``benchmarks/bench_remote_embed.py``: against a server answering any batch in 100 ms it gave
7.6x the sequential throughput, 0.92 of its bound, on 2 idle cores (6.6x and 0.78 with the
cores shared with ten other jobs); 16 gained 5-80 % between runs at 0.37-0.83 of its bound
(this client's CPU is the limit there), and a real server runs a handful of batches at once
(Ollama's ``OLLAMA_NUM_PARALLEL`` is 1 or 4 by default): more only queue there.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from narezka.embed.base import Matrix
from narezka.embed.remote import LengthRejected, is_length_error
from narezka.environment import Environment
from narezka.errors import ConfigError

if TYPE_CHECKING:
    from narezka.embed.servers import Servers

DEFAULT_CONCURRENCY = 8
DEFAULT_MAX_BATCH = 32

# How servers say "this batch is too big" (not "this input is too long"): TEI answers 413
# "batch size 64 > maximum allowed batch size 32"; OpenAI 400 "Too many inputs. The max
# number of inputs is 2048" or "Requested 320000 tokens, max 300000 tokens per request".
_BATCH_COUNT = re.compile(
    r"maximum allowed batch size (\d+)|max(?:imum)? number of inputs is (\d+)"
    r"|max(?:imum)? batch size (?:is |of )?(\d+)",
    re.IGNORECASE,
)
_BATCH_UNNAMED = re.compile(r"too many inputs|batch (?:is )?too large", re.IGNORECASE)
_BATCH_TOKENS = re.compile(r"max(?:imum)? (\d+) tokens per request", re.IGNORECASE)
BATCH_LIMIT_STATUSES = frozenset({400, 413, 422})


class BatchTooLarge(Exception):
    """Raised by a request function: the server refused the batch for its size, not for any
    one input; ``max_batch`` / ``max_tokens`` carry the limit when the server named it."""

    def __init__(self, message: str, *, max_batch: int | None, max_tokens: int | None) -> None:
        super().__init__(message)
        self.max_batch = max_batch
        self.max_tokens = max_tokens


def batch_limit_error(status: int, message: str, batch: int) -> BatchTooLarge | None:
    """The ``BatchTooLarge`` an HTTP error means, or None when it is about something else.

    A bare 413 for a batch of several texts counts as too large: the body limit is hit before
    any input is read."""
    if batch < 2 or status not in BATCH_LIMIT_STATUSES:
        return None
    if found := _BATCH_TOKENS.search(message):
        return BatchTooLarge(message, max_batch=None, max_tokens=int(found.group(1)))
    if found := _BATCH_COUNT.search(message):
        named = next(int(g) for g in found.groups() if g)
        return BatchTooLarge(message, max_batch=named, max_tokens=None)
    if _BATCH_UNNAMED.search(message) or (status == 413 and not is_length_error(status, message)):
        return BatchTooLarge(message, max_batch=None, max_tokens=None)
    return None


@dataclass(frozen=True, slots=True)
class DispatchPolicy:
    """How many requests may be in flight and how big one may be (None: no token limit)."""

    concurrency: int = DEFAULT_CONCURRENCY
    max_batch: int = DEFAULT_MAX_BATCH
    max_batch_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.max_batch < 1:
            raise ConfigError(
                f"embedding concurrency and batch size must be at least 1, got "
                f"{self.concurrency} and {self.max_batch}"
            )
        if self.max_batch_tokens is not None and self.max_batch_tokens < 1:
            raise ConfigError(f"max tokens per request must be positive: {self.max_batch_tokens}")

    @classmethod
    def of(cls, env: Environment | Servers) -> DispatchPolicy:
        """The defaults, overridden by ``env``'s ``NAREZKA_EMBED_CONCURRENCY`` / ``_BATCH`` /
        ``_BATCH_TOKENS`` (checked where the environment is read)."""
        return cls(
            concurrency=env.embed_concurrency or DEFAULT_CONCURRENCY,
            max_batch=env.embed_batch or DEFAULT_MAX_BATCH,
            max_batch_tokens=env.embed_batch_tokens,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> DispatchPolicy:
        """:meth:`of` the variables ``environ`` holds; a value that is not a positive integer
        is a ``ConfigError`` naming the variable."""
        return cls.of(Environment.read(environ))


Send = Callable[[Sequence[str], Sequence[int]], Matrix]
"""One request for (texts, their token counts): their rows, or ``LengthRejected`` /
``BatchTooLarge``."""


class PartlyRejected(Exception):
    """Some inputs of a dispatch were refused as too long; the others were embedded."""

    def __init__(self, rejected: list[int], rows: dict[int, np.ndarray], detail: str) -> None:
        super().__init__(detail)
        self.rejected = rejected
        self.rows = rows
        self.detail = detail


class Dispatcher:
    """Runs one ``embed`` call as concurrent batched requests (see the module docstring)."""

    def __init__(self, policy: DispatchPolicy) -> None:
        self.policy = policy
        self.max_batch = policy.max_batch
        self.max_tokens = policy.max_batch_tokens
        self._lock = threading.Lock()
        # Shared by every run: calls on several threads (a prefetch and the caller) together
        # still keep at most ``concurrency`` requests in flight.
        self._slots = threading.BoundedSemaphore(policy.concurrency)

    @property
    def batch_hint(self) -> int:
        """How many texts one ``embed`` call should get to keep every request slot busy."""
        return 2 * self.policy.concurrency * self.max_batch

    def run(self, texts: Sequence[str], counts: Sequence[int], send: Send) -> Matrix:
        """The rows of ``texts`` in order; ``counts`` are their token counts.

        Raises ``PartlyRejected`` when inputs were too long (after every other batch ran) and
        the first other failure of any batch (the batches in flight are let finish)."""
        rows: dict[int, np.ndarray] = {}
        rejected: list[int] = []
        detail = ""
        batches = self._batches(counts)
        pending: set[Future[tuple[dict[int, np.ndarray], list[int], str]]] = set()

        def one(batch: Sequence[str], batch_counts: Sequence[int]) -> Matrix:
            with self._slots:
                return send(batch, batch_counts)

        def job(first: int, stop: int) -> tuple[dict[int, np.ndarray], list[int], str]:
            return self._send_fitting(texts, counts, first, stop, one)

        # Threads start as batches are submitted: a one-batch call starts one.
        slots = self.policy.concurrency
        with ThreadPoolExecutor(max_workers=slots, thread_name_prefix="embed") as pool:
            failure: Exception | None = None
            while True:
                while failure is None and len(pending) < self.policy.concurrency:
                    span = next(batches, None)
                    if span is None:
                        break
                    pending.add(pool.submit(job, *span))
                if not pending:
                    break
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    try:
                        got, refused, why = future.result()
                    except Exception as exc:  # re-raised once the batches in flight settle
                        failure = failure or exc
                        continue
                    rows.update(got)
                    rejected.extend(refused)
                    detail = detail or why
            if failure is not None:
                raise failure
        if rejected:
            raise PartlyRejected(sorted(rejected), rows, detail)
        return np.stack([rows[i] for i in range(len(texts))]).astype(np.float32, copy=False)

    def _batches(self, counts: Sequence[int]) -> Iterator[tuple[int, int]]:
        """``(first, stop)`` spans within the current limits, cut only when asked for."""
        first = 0
        while first < len(counts):
            stop, tokens = first, 0
            limit, max_tokens = self.max_batch, self.max_tokens
            while stop < len(counts) and stop - first < limit:
                if max_tokens is not None and stop > first and tokens + counts[stop] > max_tokens:
                    break
                tokens += counts[stop]
                stop += 1
            yield first, stop
            first = stop

    def _learn(self, exc: BatchTooLarge, size: int, tokens: int) -> None:
        with self._lock:
            if exc.max_tokens is not None:
                self.max_tokens = min(self.max_tokens or exc.max_tokens, exc.max_tokens)
            elif exc.max_batch is not None and exc.max_batch < size:
                self.max_batch = max(1, min(self.max_batch, exc.max_batch))
            else:
                # Unnamed limit: halve what was refused, by count and by tokens.
                self.max_batch = max(1, min(self.max_batch, size // 2))
                if tokens > 1:
                    self.max_tokens = min(self.max_tokens or tokens, max(1, tokens // 2))

    def _send_fitting(
        self, texts: Sequence[str], counts: Sequence[int], first: int, stop: int, send: Send
    ) -> tuple[dict[int, np.ndarray], list[int], str]:
        """Send ``texts[first:stop]``, in smaller parts if the server says it is too big."""
        try:
            return _send_or_bisect(texts, counts, first, stop, send)
        except BatchTooLarge as exc:
            size, tokens = stop - first, sum(counts[first:stop])
            self._learn(exc, size, tokens)
            if size < 2:
                raise
        rows: dict[int, np.ndarray] = {}
        rejected: list[int] = []
        detail = ""
        for a, b in self._sub_spans(counts, first, stop, size):
            got, refused, why = self._send_fitting(texts, counts, a, b, send)
            rows.update(got)
            rejected.extend(refused)
            detail = detail or why
        return rows, rejected, detail

    def _sub_spans(
        self, counts: Sequence[int], first: int, stop: int, refused: int
    ) -> list[tuple[int, int]]:
        """``[first, stop)`` cut to the learnt limits, always into at least two parts."""
        limit = min(self.max_batch, max(1, refused // 2)) if refused > 1 else 1
        spans: list[tuple[int, int]] = []
        a = first
        while a < stop:
            b, tokens = a, 0
            while b < stop and b - a < limit:
                if self.max_tokens is not None and b > a and tokens + counts[b] > self.max_tokens:
                    break
                tokens += counts[b]
                b += 1
            spans.append((a, b))
            a = b
        return spans


def _send_or_bisect(
    texts: Sequence[str], counts: Sequence[int], first: int, stop: int, send: Send
) -> tuple[dict[int, np.ndarray], list[int], str]:
    """Rows of ``texts[first:stop]`` by index, and the indices refused as too long.

    A length error does not say which input overflowed, so halves are re-sent: O(k·log n)
    extra requests for k rejected inputs, paid only when a rejection happened, and the
    vectors of every accepted half are kept."""
    try:
        matrix = send(texts[first:stop], counts[first:stop])
    except LengthRejected as exc:
        if stop - first == 1:
            return {}, [first], str(exc)
        mid = (first + stop) // 2
        rows, rejected, detail = _send_or_bisect(texts, counts, first, mid, send)
        more, refused, why = _send_or_bisect(texts, counts, mid, stop, send)
        rows.update(more)
        return rows, rejected + refused, detail or why or str(exc)
    return {first + i: row for i, row in enumerate(matrix)}, [], ""


__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_BATCH",
    "BatchTooLarge",
    "DispatchPolicy",
    "Dispatcher",
    "PartlyRejected",
    "batch_limit_error",
]
