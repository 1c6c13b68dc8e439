"""``Index``: the one object a program holds — a corpus's index, open between calls.

::

    with narezka.Index.open("docs/") as index:        # or Index.create(corpus, settings)
        report = index.sync()                            # SyncReport
        hits = index.search("как вернуть чай", k=5)      # list[Hit]

An ``Index`` keeps the store, the embedder and its cache open, so a search costs the query's
embedding and one engine call, not a model load and an engine open. Within one process every
``Index`` of one folder shares one open store (the embedded engine admits one process per
shard); a sync writes each file's points under a lock that searches take too, so a search sees
every file as it was before or after, never half-written. Another process that opens a held
index gets :class:`~narezka.store.IndexInUseError` naming the holder's PID (``narezka search``
waits a few seconds for a short ``sync`` to finish first).

``Index`` is the face only: what it holds is an :class:`~narezka.index.state.OpenIndex`, and
each method hands it to one room — ``lifecycle`` (create, open, close), ``sync_steps`` (plan,
fill, commit), ``maintenance`` (compact, check), ``querying`` (search and the reads) and
``publishing`` (the index on a server, push).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from narezka import environment
from narezka.embed import Embedder
from narezka.index import lifecycle, publishing, sync_steps
from narezka.index.lifecycle import resolve_home
from narezka.index.state import OpenIndex
from narezka.index.syncing import IndexReport, Progress
from narezka.runs.config import ChunkConfig
from narezka.settings import Settings
from narezka.sources import Source
from narezka.store import VectorStore
from narezka.store.cluster import ClusterParams
from narezka.store.collections import DEFAULT_COLLECTION

# Reading (the search stack) and maintenance load when first asked for: an ``index`` run
# needs neither, and they are a tenth of its start-up.
if TYPE_CHECKING:
    from narezka.index.compaction import CompactReport
    from narezka.index.integrity import CheckReport
    from narezka.index.querying import IndexStats, SourceInfo
    from narezka.search import Hit, Hits, Query


def __getattr__(name: str) -> object:
    if name in ("IndexStats", "SourceInfo"):
        from narezka.index import querying

        return getattr(querying, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Index", "IndexStats", "SourceInfo", "SyncReport", "resolve_home"]

SyncReport = IndexReport
"""What a sync did: files new/changed/unchanged/deleted, chunks embedded/reused/deleted,
skipped files with reasons, warnings, seconds per stage."""


class Index:
    """A corpus's index, open between calls; see the module docstring. Make one with
    :meth:`create` or :meth:`open`, and close it (or use it as a context manager)."""

    def __init__(self, state: OpenIndex) -> None:
        self._state = state

    @property
    def home(self) -> Path | None:
        """The index folder; None for an index opened by its server URL (read-only)."""
        return self._state.home

    @property
    def corpus(self) -> Path:
        """The corpus folder the index reads."""
        return self._state.corpus

    @property
    def settings(self) -> Settings:
        """The settings the index follows (as recorded, with the flags :meth:`open` took)."""
        return self._state.settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        # A library user's own change, taken by the next sync (which records it) and
        # resolved into a new chunking once.
        self._state.settings = value

    @property
    def source(self) -> Source | None:
        """Where the corpus is staged from (a git repository, a site); None: a folder."""
        return self._state.source

    @property
    def url(self) -> str | None:
        """The Qdrant server holding the points, or None for the embedded engine."""
        return self._state.url

    @property
    def collection(self) -> str:
        """A server index's name: the alias ``NAME`` readers query, on one of its collections
        ``NAME_gN``, and its record in ``NAME-record``."""
        return self._state.collection

    @property
    def cluster(self) -> ClusterParams:
        """A server index's cluster settings as given (unset ones sized by each new
        collection's expected points: :mod:`narezka.store.cluster`)."""
        return self._state.cluster

    @cluster.setter
    def cluster(self, value: ClusterParams) -> None:
        self._state.cluster = value

    # ---- opening ------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        corpus: str | Path | Source,
        settings: Settings | None = None,
        *,
        store: str | Path | None = None,
        url: str | None = None,
        collection: str | None = None,
        embedder: Embedder | None = None,
        cluster: ClusterParams | None = None,
    ) -> Index:
        """An index of ``corpus`` with ``settings`` (default: :meth:`Settings.load` of the
        corpus), kept in ``store`` (default ``corpus/.narezka``), its points on a Qdrant
        server at ``url`` if given, in collections named ``collection`` (default
        ``narezka``; one name per index on a server) laid out as ``cluster`` says (default:
        what the index recorded, else the rule by size). Nothing is written until
        :meth:`sync`; a store that would put the user's files at risk, an unknown embedder
        or bad settings fail here.

        ``corpus`` may be a source (``git+https://host/org/repo@branch``, a site's URL, or a
        :class:`~narezka.sources.Source`): each sync stages it into narezka's cache first,
        and the index lives beside it there unless ``store`` says otherwise."""
        state = lifecycle.create(
            corpus, settings, store=store, url=url, collection=collection,
            embedder=embedder, cluster=cluster,
        )  # fmt: skip
        return cls(state)

    @classmethod
    def open(
        cls,
        location: str | Path,
        *,
        embedder: Embedder | None = None,
        corpus: str | Path | None = None,
        collection: str = DEFAULT_COLLECTION,
        follow_symlinks: bool | None = None,
        context_llm: str | None = None,
    ) -> Index:
        """The index in ``location``: its folder, a corpus folder holding ``.narezka/``, or
        the URL of the Qdrant server holding it (``collection`` names which index there).

        ``embedder`` is needed only for an index built with an embedder object; ``corpus``
        says where the corpus is now if it moved away from its index (the next sync records
        it). ``follow_symlinks`` and ``context_llm`` are the user's flags over what the index
        records (None: as recorded; ``"off"`` stops the context LLM), taken into its settings
        here, the one way they change after the index was built; the next :meth:`sync`
        records them. An index opened by URL is read-only (search, get, neighbours, chunks,
        sources, stats, push): it is synced from its folder on the machine that holds the
        corpus, and reads the record that machine's last sync published on the server."""
        return cls(
            lifecycle.open_index(
                location,
                embedder=embedder,
                corpus=corpus,
                collection=collection,
                follow_symlinks=follow_symlinks,
                context_llm=context_llm,
            )
        )

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the store (closed when the last ``Index`` of this folder closes)."""
        lifecycle.close(self._state)

    def chunk_config(self) -> ChunkConfig:
        """The chunking this index follows: its settings resolved with its embedder (what
        :meth:`sync` cuts the corpus by, and how ``narezka chunk`` would cut it alike).
        Resolved once for an open index, not again by each sync of a watcher or a server."""
        return self._state.chunk_config()

    # ---- writing ------------------------------------------------------------------------

    def sync(
        self,
        paths: Sequence[str | Path] | None = None,
        *,
        rebuild: bool = False,
        progress: Progress | None = None,
        jobs: int | None = None,
        prune: bool = False,
    ) -> SyncReport:
        """Bring the index up to date with the corpus: new and changed files are chunked
        and embedded (only chunks whose content changed), deleted files lose their points.

        ``paths`` limits the work to those files (a watcher's events); ``rebuild`` builds a
        fresh generation beside the live one and swaps it in when complete. ``jobs`` worker
        processes read and chunk files while this one embeds (default: ``NAREZKA_JOBS``, else
        the machine's cores, for a megabyte of changed files or more). Indexed files still in
        the corpus that the include/exclude patterns no longer match are kept, and named in
        the report's ``unmatched``, unless ``prune`` removes them.

        Three steps, under the index folder's writer lock (:mod:`narezka.index.sync_steps`):
        plan where the points go (the live generation, or a fresh one), fill it with the
        files, and commit: record it and, for a fresh one, swap it in."""
        if jobs is None:
            jobs = environment.current().jobs  # NAREZKA_JOBS counts as jobs=N
        return sync_steps.sync(
            self._state, paths, rebuild=rebuild, progress=progress, jobs=jobs, prune=prune
        )

    def compact(self) -> CompactReport:
        """Rewrite the index into a fresh generation holding only its live points, and
        retire the old one with every byte it held: text deleted from the corpus leaves no
        trace in the index folder (the engine keeps deleted payloads in its log and pages,
        SQLite keeps deleted manifest rows). Nothing is embedded again, and searches answer
        from the live generation until the swap (:mod:`narezka.index.compaction`)."""
        from narezka.index import maintenance

        return maintenance.compact(self._state)

    def check(self, *, repair: bool = False) -> CheckReport:
        """Compare the store with the manifest, reading every point back: chunks missing,
        unreadable, or unknown to the manifest (:mod:`narezka.index.integrity`). With
        ``repair``, re-index the damaged files (vectors from the embedding cache), or build
        a fresh generation where only that repairs it."""
        from narezka.index import maintenance

        return maintenance.check(self._state, repair=repair)

    # ---- reading ------------------------------------------------------------------------

    def search(self, query: str | Query, **options: Any) -> Hits:
        """The best hits for ``query``: a :class:`~narezka.search.Query`, or its text with
        the query's fields as keywords (``k=5``, ``mode="bm25"``, ``filters=Filter(...)``,
        ``expand="section"``, ``fusion=Fusion("rrf")``, ``fold=None``, ``min_relevance=0.3``;
        every option: :mod:`narezka.search.options`).

        ``dense``, ``bm25`` or ``hybrid`` search (min-max score fusion, or as ``fusion``
        says), narrowed by ``filters``, neighbours folded (those scoring at least ``fold``
        times their hit; None: no folding; ``"auto"``: 0.8 for hybrid score fusion, else 0);
        ``expand`` = ``"section"`` (the whole heading section) or ``"parent"`` (a
        parent-child index's parents). Every hit carries its calibrated ``relevance``; those
        below ``min_relevance`` are dropped: by default the index's setting
        (:data:`~narezka.search.INDEX_SETTING`, resolved here and only here, so every front
        answers alike), 0 keeps every hit. The result's ``best_relevance`` says how close the
        best of all came, its ``min_relevance`` which floor applied."""
        from narezka.index import querying

        return querying.search(self._state, query, options)

    def get(self, chunk_id: str) -> Hit | None:
        """The stored chunk with this id (a hit's ``chunk_id``), or None."""
        found = self._state.points([chunk_id])
        return found[0] if found else None

    def neighbours(self, chunk_id: str, n: int = 1) -> list[Hit]:
        """The chunk and up to ``n`` chunks before and after it in its file, in order."""
        from narezka.index import querying

        return querying.neighbours(self._state, chunk_id, n)

    def chunks(self, source: str | None = None) -> Iterator[Hit]:
        """Every stored chunk (of one source file, if given), file by file in order."""
        from narezka.index import querying

        return querying.chunks(self._state, source)

    def sources(self) -> list[SourceInfo]:
        """Every indexed file, sorted by path."""
        from narezka.index import querying

        return querying.sources(self._state)

    def stats(self) -> IndexStats:
        """Files, chunks, embedder, strategy, last sync, and files changed since it."""
        from narezka.index import querying

        return querying.stats(self._state)

    def push(
        self,
        url: str,
        *,
        collection: str = DEFAULT_COLLECTION,
        cluster: ClusterParams | None = None,
    ) -> int:
        """Copy every point (same ids, vectors, payloads) to a Qdrant server as the index
        named ``collection`` there, readable by URL (:meth:`open`); returns how many. A new
        collection is laid out as ``cluster`` says, unset values sized by the point count.

        A re-push brings the copy up to date: points of files deleted since the last push
        are removed (they are narezka's own). A non-empty collection that narezka did not
        push or index is refused."""
        return publishing.push(self._state, url, collection, cluster)

    def push_to(self, target: VectorStore) -> int:
        """Copy every point into an open store (its collection is created if needed)."""
        return publishing.push_to(self._state, target)

    @property
    def convert_cache(self) -> Path | None:
        """The cache of this index's converted documents (PDF, Word, web pages…), which a
        search reads when it re-reads a hit's file; None for an index opened by its URL."""
        return self._state.convert_cache()
