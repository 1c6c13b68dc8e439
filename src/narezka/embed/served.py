"""What every embedder behind a server (Ollama, OpenAI-compatible) is besides its requests:
the local counter and whether it is exact, the budget derived from the window, the
dispatcher that keeps several batches in flight, the drift between local and server counts,
and the never-truncate rule when the server refuses inputs as too long.

A backend subclasses :class:`ServedEmbedder` and gives four things: its window, the label
its errors carry, one batch's request (``_embed_batch``, on a dispatcher thread) and one text's
server token count (``_count_alone``, for ``narezka calibrate``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from narezka.embed.base import Matrix, default_budget, empty_matrix
from narezka.embed.dispatch import Dispatcher, DispatchPolicy, PartlyRejected
from narezka.embed.errors import ContextLengthError
from narezka.embed.remote import DriftStats, LengthRejected, RetryPolicy, counter_for_model
from narezka.tokens import TokenCounter

UNKNOWN_WINDOW = 512
"""The window assumed for a served model that does not say its own: the smallest common one
among embedding models, so chunks fit whichever it is."""


class ServedEmbedder:
    """The shared half of a remote embedder; see the module docstring."""

    offline = False

    def __init__(
        self,
        model: str,
        *,
        counter: TokenCounter | None,
        retry: RetryPolicy | None,
        dispatch: DispatchPolicy | None,
    ) -> None:
        self.model = model
        self.retry = retry or RetryPolicy()
        self.dispatcher = Dispatcher(dispatch or DispatchPolicy())
        self._lock = threading.Lock()
        if counter is None:
            counter, self.counter_exact = counter_for_model(model)
        else:
            self.counter_exact = True
        self.counter: TokenCounter = counter
        self.drift = DriftStats()

    # ---- what a backend gives ------------------------------------------------------------

    def _window(self) -> int | None:
        """The model's window in its own tokens (None: unknown); may ask the server once."""
        raise NotImplementedError

    def _label(self) -> str:
        """How errors name the model (``ollama:MODEL``, ``openai:MODEL@URL``)."""
        raise NotImplementedError

    def _known_dim(self) -> int | None:
        """The dimension when already known, without asking the server."""
        raise NotImplementedError

    def _embed_batch(self, texts: Sequence[str], counts: Sequence[int]) -> Matrix:
        """One request: the batch's normalized rows, or ``LengthRejected``."""
        raise NotImplementedError

    def _count_alone(self, text: str) -> int | None:
        """The server's token count for ``text`` sent alone, or ``LengthRejected``."""
        raise NotImplementedError

    # ---- shared ---------------------------------------------------------------------------

    @property
    def budget(self) -> int:
        # Without the model's own tokenizer the count is an upper bound: the full window
        # is then safe; with a family tokenizer keep the margin for version drift.
        window = self._window() or UNKNOWN_WINDOW
        return default_budget(window) if self.counter_exact else window

    @property
    def batch_hint(self) -> int:
        """Texts per ``embed`` call that keep every request slot busy."""
        return self.dispatcher.batch_hint

    def record_drift(self, counts: Sequence[int], server: int | None) -> None:
        """Note the server's count for a batch (from any dispatcher thread)."""
        with self._lock:
            self.drift.record(counts, server)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed passages; inputs the server finds too long raise ``ContextLengthError``
        carrying the vectors of the others."""
        if not texts:
            return empty_matrix(self._known_dim() or 0)
        window = self._window()
        counts = self.counter.count_batch(texts)
        try:
            return self.dispatcher.run(texts, counts, self._embed_batch)
        except PartlyRejected as exc:
            raise ContextLengthError(
                self._label(),
                exc.rejected,
                window=window,
                counts=[counts[i] for i in exc.rejected],
                detail=exc.detail,
                embedded=exc.rows,
            ) from None

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.embed(texts)

    def server_token_count(self, text: str) -> int | None:
        """Tokens the server counts for ``text`` alone, for calibration (None: it does not
        say); ``ContextLengthError`` when the server refuses it as too long."""
        window = self._window()
        try:
            return self._count_alone(text)
        except LengthRejected as exc:
            raise ContextLengthError(self._label(), [0], window=window, detail=str(exc)) from None


__all__ = ["UNKNOWN_WINDOW", "ServedEmbedder"]
