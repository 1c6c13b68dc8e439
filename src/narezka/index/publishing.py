"""An index on a Qdrant server, as readers by URL see it: the record a writer publishes
there, the alias moved onto a rebuilt collection, and a copy pushed from a local index
(what :meth:`narezka.Index.push` does)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from narezka.errors import ConfigError, NarezkaError
from narezka.index.records import IndexRecord
from narezka.index.state import GET_BATCH, OpenIndex
from narezka.settings import qdrant_key
from narezka.store import VectorStore
from narezka.store.cluster import ClusterParams
from narezka.store.collections import check_collection_name, point_alias

if TYPE_CHECKING:  # qdrant-client is imported only for an index on a server
    from narezka.store import server_record


def publish(
    state: OpenIndex, meta: IndexRecord, files: server_record.Files | None, warnings: list[str]
) -> IndexRecord:
    """Publish a server index's record for readers by URL, and return it as published
    (naming the alias once it points at the live collection); a failure is a warning
    (the index itself is synced; the next sync publishes again)."""
    if state.url is None or files is None:
        return meta
    from narezka.store import server_record

    try:
        if point_alias(state.url, state.collection, str(meta.collection), qdrant_key()):
            meta = meta.replace(alias=state.collection)
        server_record.publish(state.url, state.collection, meta.to_json(), files, qdrant_key())
    except NarezkaError as exc:
        warnings.append(
            f"{state.url}: the index record for readers by URL was not updated ({exc}); "
            "they see the previous sync until the next one"
        )
    return meta


def switch_alias(state: OpenIndex, meta: IndexRecord) -> IndexRecord:
    """Move the alias readers query onto a rebuild's filled collection (one atomic call)
    and return the record naming it; a failure fails the rebuild, which leaves the old
    collection serving."""
    assert state.url is not None
    if point_alias(state.url, state.collection, str(meta.collection), qdrant_key()):
        return meta.replace(alias=state.collection)
    return meta


def drop_half_built(state: OpenIndex, meta: IndexRecord) -> None:
    """Drop a failed rebuild's collection (narezka made it; no alias points at it)."""
    if state.url is None or not meta.collection:
        return
    from narezka.store.server import ServerStore

    with (
        contextlib.suppress(NarezkaError),
        ServerStore(state.url, collection=meta.collection, api_key=qdrant_key()) as half,
    ):
        if half.alias_target(state.collection) != half.collection:
            half.drop()


def push(state: OpenIndex, url: str, collection: str, cluster: ClusterParams | None) -> int:
    """:meth:`narezka.Index.push`: copy every point to the index ``collection`` on the
    server at ``url``, bring a copy pushed before up to date, and publish its record."""
    from narezka.store import server_record
    from narezka.store.server import ServerStore

    check_collection_name(collection)
    meta = state.record()
    with state.manifest() as manifest:
        files = server_record.snapshot(manifest)
    given = cluster or ClusterParams()
    sized = given.sized(sum(len(row[3]) for row in files.values()))
    try:
        earlier: server_record.RecordManifest | None = server_record.fetch_files(
            url, collection, qdrant_key()
        )
    except ConfigError:
        earlier = None
    with ServerStore(url, collection=collection, cluster=sized, api_key=qdrant_key()) as target:
        if earlier is None and target.exists():
            target.ensure(meta.dim, sparse=True, rescore=meta.rescore_dim or 0)
            if target.count():
                raise ConfigError(
                    f"{url} already has a collection {collection!r} that narezka did not "
                    "write: push to another --collection, or remove it yourself"
                )
        copied = push_to(state, target)
        ids = {pid for row in files.values() for pid in row[3]}
        if earlier is not None:
            target.delete([pid for pid in earlier.point_ids() if pid not in ids])
        applied = target.grow(sized)  # a copy that grew past the size, as a sync does
    copy = meta.replace(url=url, collection=collection, collection_name=collection)
    copy = copy.replace(alias=None)  # a copy is read from its own collection
    copy = copy.with_cluster(given=given, applied=applied)
    server_record.publish(url, collection, copy.to_json(), files, qdrant_key())
    return copied


def push_to(state: OpenIndex, target: VectorStore) -> int:
    """Copy every point into an open store (its collection is created if needed)."""
    meta = state.record()
    with state.manifest() as manifest:
        ids = manifest.point_ids()
    target.ensure(meta.dim, sparse=True, rescore=meta.rescore_dim or 0)
    source = state.store()
    copied = 0
    for start in range(0, len(ids), GET_BATCH):
        with state.shared.lock.read():
            points = source.get(ids[start : start + GET_BATCH], with_vectors=True)
        target.upsert(points)
        copied += len(points)
    return copied
