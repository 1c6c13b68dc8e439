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
    from narezka.index.handle import Index, IndexStats, SourceInfo, SyncReport, resolve_home

# Loaded on first use: ``narezka.index.layout`` is imported by light callers (the CLI's
# cache commands) that need none of the store and embedders behind ``Index``.
_HOMES = {
    name: "narezka.index.handle"
    for name in ("Index", "IndexStats", "SourceInfo", "SyncReport", "resolve_home")
}

__getattr__, __dir__ = lazy_exports(globals(), _HOMES)

__all__ = ["Index", "IndexStats", "SourceInfo", "SyncReport", "resolve_home"]
