"""Keeping an index folder sound: compaction into a fresh generation of the live points, and
the integrity check with its repair (what :meth:`narezka.Index.compact` and
:meth:`narezka.Index.check` do; the machinery is in :mod:`narezka.index.compaction` and
:mod:`narezka.index.integrity`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from narezka.diskspace import create_needs, ensure_free
from narezka.index import layout
from narezka.index.compaction import (
    CompactReport,
    copy_generation,
    generation_bytes,
    prune_conversions,
)
from narezka.index.integrity import CheckReport, inspect, mark_for_resync
from narezka.index.publishing import publish, switch_alias
from narezka.index.records import (
    IndexRecord,
    existing_record,
    read_record,
    retire,
    retire_leftovers,
    write_record,
)
from narezka.index.sharing import open_data_store
from narezka.index.state import OpenIndex, optimize, point_count
from narezka.index.sync_steps import sync
from narezka.settings import qdrant_key
from narezka.store import IndexDamagedError, Manifest
from narezka.store.collections import collection_for, refuse_foreign, snapshot_files

if TYPE_CHECKING:  # qdrant-client is imported only for an index on a server
    from narezka.store import server_record


def compact(state: OpenIndex) -> CompactReport:
    """:meth:`narezka.Index.compact`: the live points copied into a fresh generation,
    swapped in, and the old one retired by name, under the writer lock."""
    state.check_open()
    home = state.local_home("compact")
    started = time.perf_counter()
    report = CompactReport()
    with layout.writer(home):
        report.warnings.extend(retire_leftovers(home, existing_record(home, tolerate_bad=False)))
        old = read_record(home)
        retired = old.live
        # The copy is at most the live generation's size: room for it before anything.
        needed = generation_bytes(home, retired) + create_needs(home)
        ensure_free(home, needed, "compact the index into a copy of its live points")
        generation = layout.new_generation(home)
        meta = _fresh_record(state, home, old, generation)
        report.bytes_before = generation_bytes(home, retired)
        # Named before it is filled, so an interrupted compaction is removed by name.
        write_record(home, old.replace(building=generation))
        meta, files = _swap_in_copy(state, home, old, meta, generation, report)
        if not retire(home, retired, old.collection, state.url):
            write_record(home, meta.replace(retired=(*meta.retired, retired)))
            report.warnings.append(
                f"{home / retired}: another process still reads it; a later sync or "
                "compaction removes it"
            )
        if state.url and meta.alias is None:  # the old collection freed the name
            meta = publish(state, meta, files, report.warnings)
    state.meta = meta
    report.generation = generation
    report.bytes_after = generation_bytes(home, generation)
    report.seconds = time.perf_counter() - started
    return report


def _fresh_record(state: OpenIndex, home: Path, old: IndexRecord, generation: str) -> IndexRecord:
    """The record of the generation a compaction fills (on a server, in a new collection,
    refused if something narezka did not write holds its name)."""
    collection = collection_for(state.collection, generation)
    if state.url is not None:
        refuse_foreign(state.url, collection, qdrant_key())
    meta = old.replace(data=generation, **({"collection": collection} if state.url else {}))
    if state.url is not None:
        applied = state.cluster.sized(point_count(home, old))
        meta = meta.with_cluster(given=state.cluster, applied=applied)
    return meta


def _swap_in_copy(
    state: OpenIndex,
    home: Path,
    old: IndexRecord,
    meta: IndexRecord,
    generation: str,
    report: CompactReport,
) -> tuple[IndexRecord, server_record.Files | None]:
    """Fill the fresh generation with the live points and swap it in (readers move to it);
    an interrupted copy is removed and the old record written back. Returns the record as
    published and, for a server index, its file list."""
    new_dir = meta.data_dir(home)
    fresh = open_data_store(home, meta)
    try:
        copy_generation(state.shared.store_for(old), old.data_dir(home), fresh,
                        new_dir, state.shared.lock.read, report)  # fmt: skip
        optimize(fresh)
        with Manifest(new_dir) as manifest:
            report.warnings.extend(prune_conversions(home, manifest, vacuum=True))
            files = snapshot_files(manifest) if state.url is not None else None
        if state.url is not None:
            meta = switch_alias(state, meta)
    except BaseException:
        fresh.close()
        retire(home, generation, meta.collection, state.url)
        write_record(home, old)
        raise
    write_record(home, meta)  # the swap: readers move to the new generation
    meta = publish(state, meta, files, report.warnings)
    state.shared.swap(fresh, generation)
    return meta, files


def check(state: OpenIndex, *, repair: bool) -> CheckReport:
    """:meth:`narezka.Index.check`: every point read back against the manifest; with
    ``repair``, the damaged files synced again, or the index rebuilt where only that helps."""
    state.check_open()
    home = state.local_home("check")
    meta = state.record()
    chunks = 0
    try:
        with Manifest(meta.data_dir(home)) as manifest:
            chunks = manifest.chunk_count()
        store = state.shared.store_for(meta)
    except IndexDamagedError as exc:  # the manifest or the store: a rebuild repairs it
        report = CheckReport(str(home), chunks, problem=str(exc))
    else:
        with state.shared.lock.write(), Manifest(meta.data_dir(home)) as manifest:
            report = inspect(store, manifest, str(home), deep=True)
            if repair and not report.ok and not report.needs_rebuild:
                mark_for_resync(store, manifest, report)
    if repair and not report.ok:
        if report.needs_rebuild:
            done = sync(state, None, rebuild=True)
        else:
            done = sync(state, report.files)
        how = (
            "rebuilt the index" if report.needs_rebuild else f"re-indexed {len(report.files)} files"
        )
        report.repaired.append(
            f"{how}: {done.chunks_embedded} chunks stored, {done.cache_hits} of their "
            "vectors from the embedding cache"
        )
    return report
