"""A server index's record, kept on the server beside its points.

An index on a Qdrant server is written from the machine that holds the corpus; its record
(``index.json``) and manifest live in that machine's index folder. So that any other machine
can open it by URL alone (``Index.open("http://host:6333")``) and search, list and read it,
every sync also publishes a copy of the record and of the manifest's file list to the
collection ``<name>-record``: two points, the record and the file list, as JSON text, replaced
in one upsert. A search reads the small record only; listing sources or chunks reads the file
list (for md_corpus some 600 KB). The points themselves may be a little ahead of the published
copy while a sync runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from narezka.errors import ConfigError
from narezka.store.base import StoredPoint, point_id
from narezka.store.cluster import ClusterParams
from narezka.store.manifest import ChunkEntry, FileEntry, Manifest
from narezka.store.server import ServerStore

RECORD_SUFFIX = "-record"
RECORD_ID = point_id("narezka-index-record")
FILES_ID = point_id("narezka-index-files")
FORMAT = 1


def record_collection(name: str) -> str:
    """The collection holding the record of the index whose collections are named ``name``."""
    return name + RECORD_SUFFIX


Files = dict[str, list[Any]]
"""path → [size, mtime, doc_hash, [point ids in chunk order]]."""


def snapshot(manifest: Manifest | RecordManifest) -> Files:
    """The manifest's file list as the record publishes it."""
    return {
        path: [size, mtime, digest, _ids(manifest, path)]
        for path, size, mtime, digest, _ in manifest.files()
    }


def _ids(manifest: Manifest | RecordManifest, path: str) -> list[str]:
    entry = manifest.get(path)
    return [c.point_id for c in entry.chunks] if entry is not None else []


def publish(
    url: str, name: str, meta: Mapping[str, Any], files: Files, api_key: str | None = None
) -> None:
    """Replace the server's copy of the record and file list (one upsert)."""
    record = {"format": FORMAT, "record": json.dumps(dict(meta), ensure_ascii=False)}
    listing = {"format": FORMAT, "files": json.dumps(files, ensure_ascii=False)}
    # As replicated as the index it describes (readers need both), in one shard: two points.
    applied = ClusterParams.from_record((meta.get("qdrant") or {}).get("applied"))
    layout = ClusterParams(
        shards=1, replicas=applied.replicas, write_consistency=applied.write_consistency
    )
    with ServerStore(
        url, collection=record_collection(name), cluster=layout, api_key=api_key
    ) as store:
        store.ensure(1, sparse=False)
        store.upsert([StoredPoint(RECORD_ID, [1.0], record), StoredPoint(FILES_ID, [1.0], listing)])


def fetch(url: str, name: str, api_key: str | None = None) -> dict[str, Any]:
    """The record a writer last published for ``name`` on ``url``; a clear error if there is
    none (no narezka index of that name, or one older than records)."""
    return dict(_read(url, name, RECORD_ID, "record", api_key))


def fetch_files(url: str, name: str, api_key: str | None = None) -> RecordManifest:
    """The file list published with the record."""
    return RecordManifest(_read(url, name, FILES_ID, "files", api_key))


def _read(url: str, name: str, pid: str, field: str, api_key: str | None) -> Any:
    collection = record_collection(name)
    with ServerStore(url, collection=collection, api_key=api_key) as store:
        if not store.exists():
            raise ConfigError(
                f"no narezka index {name!r} on {url} (no collection {collection}): index a "
                f"corpus there with `narezka index CORPUS --qdrant-url {url} --collection {name}`"
            )
        store.ensure(1, sparse=False)
        found = store.get([pid])
    if not found:
        raise ConfigError(f"{url}/{collection} holds no index {field}: re-run its sync")
    payload = found[0].payload
    if payload.get("format") != FORMAT:
        raise ConfigError(
            f"{url}/{collection} was written by another narezka version "
            f"(record format {payload.get('format')}): sync it with this one"
        )
    try:
        return json.loads(str(payload[field]))
    except (KeyError, ValueError) as exc:
        raise ConfigError(f"{url}/{collection}: the index {field} cannot be read ({exc})") from exc


class RecordManifest:
    """The published file list, read like a :class:`~narezka.store.manifest.Manifest`
    (only its reading half: a server index is written from its own folder)."""

    def __init__(self, files: Mapping[str, Sequence[Any]]) -> None:
        self._files = {
            str(p): (int(v[0]), float(v[1]), str(v[2]), [str(i) for i in v[3]])
            for p, v in files.items()
        }
        self._where = {
            pid: (path, i) for path, row in self._files.items() for i, pid in enumerate(row[3])
        }

    def __enter__(self) -> RecordManifest:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def get(self, path: str) -> FileEntry | None:
        """The published state of ``path``, or None."""
        row = self._files.get(path)
        if row is None:
            return None
        chunks = tuple(ChunkEntry(i, pid, "") for i, pid in enumerate(row[3]))
        return FileEntry(path, row[0], row[1], row[2], "", "", chunks)

    def paths(self) -> list[str]:
        """Every published path, sorted."""
        return sorted(self._files)

    def point_ids(self) -> list[str]:
        """Every point id, file by file in chunk order."""
        return [pid for path in self.paths() for pid in self._files[path][3]]

    def files(self) -> list[tuple[str, int, float, str, int]]:
        """``(path, size, mtime, doc_hash, chunk count)`` of every file, sorted by path."""
        return [(p, *self._files[p][:3], len(self._files[p][3])) for p in self.paths()]

    def locate(self, pid: str) -> tuple[str, int] | None:
        """``(path, chunk index)`` of a point, or None."""
        return self._where.get(pid)
