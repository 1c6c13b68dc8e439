"""What the service refuses, as the front ends map it (400 and 404, tool errors)."""

from __future__ import annotations

from narezka.errors import ConfigError


class ServiceError(ConfigError):
    """A request the service refuses (bad argument, unknown id, path outside the corpus):
    the message is for the caller; nothing internal is in it."""


class NotFoundError(ServiceError):
    """The chunk id or file the request names is not in the index."""
