"""One call each, over an :class:`~narezka.index.Index`: ``indexing`` (index a corpus),
``searching`` (ask it once), ``maintenance`` (calibrate a served model's budget, push to a
server) and ``evaluating`` (``narezka eval``'s runs). The CLI and scripts call these; the
machinery they call lives below, in :mod:`narezka.index` and :mod:`narezka.runs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_face

if TYPE_CHECKING:
    from narezka.api.evaluating import evaluate, paths_inside
    from narezka.api.indexing import IndexReport
    from narezka.api.maintenance import calibrate_corpus, sync, watch

__getattr__, __dir__ = lazy_face(
    globals(),
    evaluating="evaluate paths_inside",
    indexing="IndexReport",
    maintenance="calibrate_corpus sync watch",
)

__all__ = [
    "IndexReport",
    "calibrate_corpus",
    "evaluate",
    "paths_inside",
    "sync",
    "watch",
]
