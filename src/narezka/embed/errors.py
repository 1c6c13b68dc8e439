"""Errors raised by the embedding stage, all under ``narezka.errors.NarezkaError``.

::

    NarezkaError
    └── EmbedError                 an embedding backend failed
        ├── ContextLengthError     the backend rejected inputs as longer than its window
        ├── InputTooLongError      an input could not be embedded whole nor re-split smaller
        ├── ModelNotFoundError     the backend does not know the model (says how to get it)
        └── BackendUnavailableError timeouts, connection errors or 5xx persisted past retries
    MissingDependencyError
    └── MissingModelPackageError   an extra alone cannot install it: the message says how
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from narezka.errors import MissingDependencyError, NarezkaError


class EmbedError(NarezkaError):
    """An embedding backend failed; the message names the embedder."""


class ContextLengthError(EmbedError):
    """The backend refused inputs longer than its context window.

    ``indices`` are positions in the batch that was passed to ``embed()``; ``counts`` holds
    their local token counts when known (same order), ``window`` the model window if known.
    Nothing was truncated: the caller decides what to do (see ``embed_grouped``).
    ``embedded`` holds the rows of the other inputs by batch position when the backend
    embedded them anyway (None: it did not), so they need not be sent again.
    """

    def __init__(
        self,
        embedder: str,
        indices: Sequence[int],
        *,
        window: int | None = None,
        counts: Sequence[int] | None = None,
        detail: str = "",
        embedded: Mapping[int, np.ndarray] | None = None,
    ) -> None:
        self.embedder = embedder
        self.indices = tuple(indices)
        self.embedded = embedded
        self.window = window
        self.counts = tuple(counts) if counts is not None else None
        self.detail = detail
        shown = ", ".join(str(i) for i in self.indices[:10])
        more = "…" if len(self.indices) > 10 else ""
        limit = f" (window {window} tokens)" if window else ""
        extra = f": {detail}" if detail else ""
        super().__init__(
            f"{embedder}: input(s) {shown}{more} exceed the context length{limit}{extra}"
        )


class InputTooLongError(EmbedError):
    """Input ``index`` of an ``embed_all`` call is over the window and was not re-split."""

    def __init__(self, embedder: str, index: int, *, tokens: int | None, window: int | None):
        self.embedder = embedder
        self.index = index
        self.tokens = tokens
        self.window = window
        size = f"{tokens} tokens" if tokens is not None else "too long"
        limit = f", window {window}" if window else ""
        super().__init__(
            f"{embedder}: input #{index} is {size}{limit}; it was not truncated — split it "
            "smaller (pass resplit= to embed_grouped to do that automatically)"
        )


class ModelNotFoundError(EmbedError):
    """The backend does not have the model; ``hint`` says how to get it."""

    def __init__(self, embedder: str, model: str, hint: str) -> None:
        self.embedder = embedder
        self.model = model
        self.hint = hint
        super().__init__(f"{embedder}: model {model!r} not found; {hint}")


class BackendUnavailableError(EmbedError):
    """A remote backend kept failing (timeouts, connection errors, 5xx) after retries."""

    def __init__(self, host: str, model: str, attempts: int, last: str) -> None:
        self.host = host
        self.model = model
        self.attempts = attempts
        super().__init__(
            f"embedding server {host} (model {model!r}) failed {attempts} time(s); "
            f"last error: {last}"
        )


class MissingModelPackageError(MissingDependencyError):
    """A package the extra cannot pull in safely; ``step`` is the extra command to run."""

    def __init__(self, package: str, extra: str, step: str) -> None:
        super().__init__(package, extra)
        self.step = step
        message = f"{package} is not installed: pip install 'narezka[{extra}]', then {step}"
        # ImportError's str() is its ``msg``, not ``args``: set both.
        self.msg = message
        self.args = (message,)


__all__ = [
    "BackendUnavailableError",
    "ContextLengthError",
    "EmbedError",
    "InputTooLongError",
    "MissingModelPackageError",
    "ModelNotFoundError",
]
