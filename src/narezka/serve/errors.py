"""What the service refuses, as the front ends map it (400, 404 and 503, tool errors)."""

from __future__ import annotations

from narezka.errors import ConfigError, NarezkaError


class ServiceError(ConfigError):
    """A request the service refuses (bad argument, unknown id, path outside the corpus):
    the message is for the caller; nothing internal is in it."""


class NotFoundError(ServiceError):
    """The chunk id or file the request names is not in the index."""


class RequestTimeoutError(NarezkaError):
    """A request ran past the server's time limit and stopped where it was: nothing is
    wrong with the index, and the caller may ask again, narrower."""
