"""Compaction: rewrite an index into a fresh generation holding only its live points.

Deleting or replacing a point does not erase its bytes: the embedded engine keeps them in its
write-ahead log and payload pages until they are overwritten, and SQLite keeps deleted
manifest rows in free pages. So text a user removed from the corpus (a password written in a
note, a deleted file) can stay readable on disk inside the index long after a sync removed
it from every search. A compaction copies the live points (ids, vectors, payloads: nothing
is embedded again) and a vacuumed manifest into a new generation, swaps it in as a rebuild
does, and retires the old generation with every byte it held. The conversion cache beside
the generations keeps only the texts of files the index holds (:func:`prune_conversions`,
rewritten by a compaction).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from narezka.convert.cache import ConvertCache
from narezka.errors import NarezkaError
from narezka.index.layout import CONVERT_CACHE_NAME, generation_entries, generation_folder
from narezka.sqlite_cache import is_full
from narezka.store import Manifest, VectorStore
from narezka.store.manifest import DOC_HASHES, MANIFEST_NAME

COPY_BATCH = 256


@dataclass(slots=True)
class CompactReport:
    """What a compaction did."""

    points: int = 0
    files: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    generation: str = ""
    recovered: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (what ``compact --json`` prints)."""
        return {k: getattr(self, k) for k in self.__slots__}


class CompactionError(NarezkaError):
    """The copy does not hold what the live generation holds; the live one is kept."""


def generation_bytes(home: Path, name: str) -> int:
    """Disk space of one generation's files, the engine's and the manifest's: blocks in use,
    not apparent sizes (the engine preallocates sparse 32 MB log files)."""
    folder = generation_folder(home, name)
    if not folder.is_dir():
        return 0
    total = 0
    for entry in generation_entries(folder):
        if entry.is_dir():
            total += sum(_used(f) for f in entry.rglob("*") if f.is_file())
        elif entry.is_file() and not entry.is_symlink():
            total += _used(entry)
    return total


def _used(file: Path) -> int:
    return file.stat().st_blocks * 512


def copy_generation(
    source: VectorStore,
    old_dir: Path,
    target: VectorStore,
    new_dir: Path,
    reading: Callable[[], AbstractContextManager[None]],
    report: CompactReport,
) -> None:
    """Copy the live points of ``source`` (as its manifest lists them) into ``target``, and
    the manifest itself into ``new_dir``; raises :class:`CompactionError` if the copy is
    short. Interrupted syncs are repaired first, so the copy holds whole files only."""
    with Manifest(old_dir) as manifest:
        report.recovered = manifest.recover(source)
        ids = manifest.point_ids()
        report.files = len(manifest.paths())
        for start in range(0, len(ids), COPY_BATCH):
            with reading():
                points = source.get(ids[start : start + COPY_BATCH], with_vectors=True)
            target.upsert(points)
            report.points += len(points)
        new_dir.mkdir(parents=True, exist_ok=True)
        manifest.copy_to(new_dir / MANIFEST_NAME)
    if report.points != len(ids) or target.count() != len(ids):
        raise CompactionError(
            f"{old_dir}: the manifest lists {len(ids)} points, the store gave "
            f"{report.points} and the copy holds {target.count()}: the index is kept as "
            "it was; run `narezka sync` to repair it, or `sync --rebuild`"
        )


def prune_conversions(home: Path, manifest: Manifest, *, vacuum: bool = False) -> list[str]:
    """Drop from the index's conversion cache every conversion no file of ``manifest`` has
    now (a file deleted, changed, or read by a search but never indexed), leaving none of
    its bytes on disk (``ConvertCache.retain_texts_in``, joined with the manifest in
    sqlite); ``vacuum`` rewrites the file too. Run by a sync that changed or deleted a file
    or rebuilt the index, and by ``compact``. Returns the warnings: a cache that cannot be
    pruned now (locked, damaged) is named, and pruned by a later run."""
    path = home / CONVERT_CACHE_NAME
    if not path.is_file():
        return []
    try:
        with ConvertCache(path) as cache:
            cache.retain_texts_in(manifest.path, *DOC_HASHES, vacuum=vacuum)
    except (sqlite3.Error, NarezkaError) as exc:
        return [
            f"{path}: conversions of removed files stay until a later run prunes them "
            f"(not writable now: {_why(exc)})"
        ]
    return []


def _why(exc: sqlite3.Error | NarezkaError) -> str:
    if not isinstance(exc, sqlite3.Error) or is_full(exc):
        return "the disk is full"  # the one NarezkaError opening a cache raises
    return _UNWRITABLE.get(getattr(exc, "sqlite_errorname", ""), "it or the manifest is damaged")


_UNWRITABLE = {
    "SQLITE_BUSY": "another process holds it",
    "SQLITE_LOCKED": "another process holds it",
    "SQLITE_READONLY": "read-only",
    "SQLITE_CANTOPEN": "cannot be opened",
}


__all__ = [
    "CompactReport",
    "CompactionError",
    "copy_generation",
    "generation_bytes",
    "prune_conversions",
]
