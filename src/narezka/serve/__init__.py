"""``narezka serve``: one process holding an index open for agents (MCP) and apps (HTTP),
keeping it fresh as the corpus changes. Needs the ``serve`` extra (``mcp``, ``starlette``,
``uvicorn``) for the front ends; :class:`Service` itself needs nothing more."""

from narezka.serve.errors import NotFoundError, ServiceError
from narezka.serve.service import DEFAULT_REPLY_TOKENS, Service

__all__ = ["DEFAULT_REPLY_TOKENS", "NotFoundError", "Service", "ServiceError"]
