"""The search stage: query encoding, filters, fusion over the store's rankings, folding of
neighbouring chunks, section and parent expansion, snippets — everything between a query and
the hits, above :mod:`narezka.store` (which only stores and queries points). Hybrid search
fuses the store's two rankings by RRF by default, or as a :class:`Fusion` says.

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
from narezka.search.query import EXPANSIONS, MODES, Query

__all__ = [
    "EXPANSIONS",
    "METHODS",
    "MODES",
    "Filter",
    "Fusion",
    "Hit",
    "Hits",
    "Query",
    "SearchEngine",
    "fold_neighbours",
    "fuse",
    "snippet",
    "to_parents",
]
