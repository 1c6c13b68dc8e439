"""The time limit of a served request. A thread cannot be interrupted: the request's loops
call :func:`on_time` (or iterate through :func:`checked`), which raises
:class:`~narezka.serve.errors.RequestTimeoutError` once the limit set by
:func:`request_limit` (or a :func:`limited` method) has passed."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from narezka.serve.errors import RequestTimeoutError

__all__ = ["REQUEST_SECONDS", "checked", "limited", "on_time", "request_limit"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

REQUEST_SECONDS = 30.0
"""How long one request may work (a thread cannot be interrupted: its loops check the time)."""

_deadline: ContextVar[tuple[float, float] | None] = ContextVar("narezka_deadline", default=None)


def on_time() -> float:
    """Seconds left to the current request's limit (infinite outside a request); a
    :class:`RequestTimeoutError` once it has passed."""
    limit = _deadline.get()
    if limit is None:
        return float("inf")
    left = limit[0] - time.monotonic()
    if left <= 0:
        raise RequestTimeoutError(
            f"the request took longer than the server's limit of {limit[1]:.0f} s and was "
            "stopped (narrow it: a more specific path glob, a smaller k)"
        )
    return left


@contextlib.contextmanager
def request_limit(seconds: float) -> Iterator[None]:
    """Within it, :func:`on_time` counts down from ``seconds``."""
    token = _deadline.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _deadline.reset(token)


def limited(method: F) -> F:
    """A method serving one request: its work stops at its object's ``request_seconds``."""

    @functools.wraps(method)
    def within_limit(self: Any, *args: Any, **kwargs: Any) -> Any:
        with request_limit(self.request_seconds):
            return method(self, *args, **kwargs)

    return within_limit  # type: ignore[return-value]


def checked(items: Iterable[T], every: int = 256) -> Iterator[T]:
    """``items``, checking the request's time limit every ``every`` of them."""
    for count, item in enumerate(items):
        if count % every == 0:
            on_time()
        yield item
