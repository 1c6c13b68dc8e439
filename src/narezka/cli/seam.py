"""The one place the commands reach below the packages' public faces: each name here is
loaded from its module when a command first uses it (``import narezka.cli`` loads none).

Every other module of :mod:`narezka.cli` imports only ``narezka``'s public names, a
package's face (``narezka.index``, ``narezka.search``…) and this seam —
``tests/test_layering.py`` holds them to it — so what the command line depends on inside
the library is this list, and a module moved below a face is mended here alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_exports

if TYPE_CHECKING:
    from narezka._native import implementation
    from narezka.api.evaluating import evaluate, paths_inside
    from narezka.api.indexing import IndexReport
    from narezka.api.maintenance import calibrate_corpus, sync, watch
    from narezka.convert.cache import ConvertCache
    from narezka.discover.kinds import describe_unread, special_kind
    from narezka.embed.cache import CacheStats
    from narezka.enrich.context_cache import ContextCache, context_cache_file
    from narezka.enrich.llm_context import ContextEstimate
    from narezka.evaluate.html import html_report
    from narezka.evaluate.report import refusal_table
    from narezka.evaluate.specs import parse_strategy
    from narezka.index.layout import CONVERT_CACHE_NAME, cache_file
    from narezka.index.syncing import Progress
    from narezka.parse.redaction import redacted_text
    from narezka.runs.config import ChunkConfig
    from narezka.runs.stats import chunk_stats
    from narezka.serve.http_api import build_app
    from narezka.serve.mcp_server import build_mcp, serve_stdio
    from narezka.serve.service import DEFAULT_REPLY_TOKENS, Service
    from narezka.store.cluster import ClusterParams
    from narezka.tokens.bm25 import ANALYZERS

_HOMES = {
    "implementation": "narezka._native",
    "evaluate": "narezka.api.evaluating",
    "paths_inside": "narezka.api.evaluating",
    "IndexReport": "narezka.api.indexing",
    "calibrate_corpus": "narezka.api.maintenance",
    "sync": "narezka.api.maintenance",
    "watch": "narezka.api.maintenance",
    "ConvertCache": "narezka.convert.cache",
    "describe_unread": "narezka.discover.kinds",
    "special_kind": "narezka.discover.kinds",
    "CacheStats": "narezka.embed.cache",
    "ContextCache": "narezka.enrich.context_cache",
    "context_cache_file": "narezka.enrich.context_cache",
    "ContextEstimate": "narezka.enrich.llm_context",
    "html_report": "narezka.evaluate.html",
    "refusal_table": "narezka.evaluate.report",
    "parse_strategy": "narezka.evaluate.specs",
    "CONVERT_CACHE_NAME": "narezka.index.layout",
    "cache_file": "narezka.index.layout",
    "Progress": "narezka.index.syncing",
    "redacted_text": "narezka.parse.redaction",
    "ChunkConfig": "narezka.runs.config",
    "chunk_stats": "narezka.runs.stats",
    "build_app": "narezka.serve.http_api",
    "build_mcp": "narezka.serve.mcp_server",
    "serve_stdio": "narezka.serve.mcp_server",
    "DEFAULT_REPLY_TOKENS": "narezka.serve.service",
    "Service": "narezka.serve.service",
    "ClusterParams": "narezka.store.cluster",
    "ANALYZERS": "narezka.tokens.bm25",
}

__getattr__, __dir__ = lazy_exports(globals(), _HOMES)

__all__ = [
    "ANALYZERS",
    "CONVERT_CACHE_NAME",
    "DEFAULT_REPLY_TOKENS",
    "CacheStats",
    "ChunkConfig",
    "ClusterParams",
    "ContextCache",
    "ContextEstimate",
    "ConvertCache",
    "IndexReport",
    "Progress",
    "Service",
    "build_app",
    "build_mcp",
    "cache_file",
    "calibrate_corpus",
    "chunk_stats",
    "context_cache_file",
    "describe_unread",
    "evaluate",
    "html_report",
    "implementation",
    "parse_strategy",
    "paths_inside",
    "redacted_text",
    "refusal_table",
    "serve_stdio",
    "special_kind",
    "sync",
    "watch",
]
