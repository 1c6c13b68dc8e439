"""``narezka serve``: one process holding an index open for agents (MCP) and apps (HTTP),
keeping it fresh as the corpus changes. Needs the ``serve`` extra (``mcp``, ``starlette``,
``uvicorn``) for the front ends; :class:`Service` itself needs nothing more."""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_face
from narezka.serve.errors import NotFoundError, ServiceError
from narezka.serve.service import DEFAULT_REPLY_TOKENS, Service

if TYPE_CHECKING:
    from narezka.serve.http_api import build_app
    from narezka.serve.mcp_server import build_mcp, serve_stdio

__getattr__, __dir__ = lazy_face(
    globals(), http_api="build_app", mcp_server="build_mcp serve_stdio"
)

__all__ = [
    "DEFAULT_REPLY_TOKENS",
    "NotFoundError",
    "Service",
    "ServiceError",
    "build_app",
    "build_mcp",
    "serve_stdio",
]
