"""The index folder and everything that lives in it: :class:`Index` is its face.

``handle`` holds :class:`Index`, the object a program keeps open: a face whose methods hand
the open index (``state``) to its rooms, ``lifecycle``, ``sync_steps``, ``maintenance``,
``querying`` and ``publishing``. Below them ``layout`` (the folder's files and generations),
``records`` (``index.json``), ``syncing`` (one file synced), ``changes`` (one pass over the
corpus), ``sharing`` (one open store per folder and process), ``compaction`` and
``integrity`` (``check``). Chunk runs live a floor lower, in
:mod:`narezka.runs`; the one-call helpers over an index a floor higher, in
:mod:`narezka.api`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_exports

if TYPE_CHECKING:
    from narezka.index.handle import Index, SyncReport, resolve_home
    from narezka.index.layout import CONVERT_CACHE_NAME, cache_file
    from narezka.index.querying import IndexStats, SourceInfo
    from narezka.index.syncing import Progress

# Loaded on first use: ``narezka.index.layout`` is imported by light callers (the CLI's
# cache commands) that need none of the store and embedders behind ``Index``.
_HOMES = {
    "narezka.index.handle": "Index SyncReport resolve_home",
    "narezka.index.querying": "IndexStats SourceInfo",
    "narezka.index.layout": "CONVERT_CACHE_NAME cache_file",
    "narezka.index.syncing": "Progress",
}

__getattr__, __dir__ = lazy_exports(globals(), _HOMES)

__all__ = [
    "CONVERT_CACHE_NAME",
    "Index",
    "IndexStats",
    "Progress",
    "SourceInfo",
    "SyncReport",
    "cache_file",
    "resolve_home",
]
