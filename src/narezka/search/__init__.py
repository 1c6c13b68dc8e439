"""The search stage: query encoding, filters, fusion over the store's rankings, folding of
neighbouring chunks, section and parent expansion, snippets — everything between a query and
the hits, above :mod:`narezka.store` (which only stores and queries points). Hybrid search
fuses the store's two rankings by min-max score fusion by default (BM25 weighted 0.7), or as
a :class:`Fusion` says (:mod:`narezka.search.fusion`). A query's options are one table,
:mod:`narezka.search.options`; hits below the index's ``min_relevance`` are left out unless
the query says otherwise (:data:`INDEX_SETTING`).

Archived pages are left out unless asked for (an old returns page must not answer for the
current one). Overlapping or adjacent chunks of one section fold into the best-scoring hit,
which grows to cover them; ``expand="section"`` replaces a hit's text by its whole heading
section, read from the source file, and ``expand="parent"`` (for a ``parent-child`` index) by
its parent's stored text, one result per parent (small-to-big). A file is re-read only while
its content hash matches the index; otherwise the hit keeps the stored text and says
``stale``.
"""

from narezka.search.engine import SearchEngine
from narezka.search.folding import fold_neighbours, to_parents
from narezka.search.fusion import METHODS, Fusion, fuse
from narezka.search.hits import Filter, Hit, Hits, snippet
from narezka.search.options import (
    INDEX_SETTING,
    OPTIONS,
    Front,
    IndexSetting,
    Option,
    SearchOptions,
    shown_at,
)
from narezka.search.query import EXPANSIONS, MODES, Query

__all__ = [
    "EXPANSIONS",
    "INDEX_SETTING",
    "METHODS",
    "MODES",
    "OPTIONS",
    "Filter",
    "Front",
    "Fusion",
    "Hit",
    "Hits",
    "IndexSetting",
    "Option",
    "Query",
    "SearchEngine",
    "SearchOptions",
    "fold_neighbours",
    "fuse",
    "shown_at",
    "snippet",
    "to_parents",
]
