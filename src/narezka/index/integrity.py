"""Damage to an index's engine files, found and repaired (``narezka check``, the start of
every ``sync``).

The manifest says which points the store must hold (:mod:`narezka.store.manifest`); damage
shows as points the store lost (a truncated id tracker, a removed segment), points it cannot
read (a payload page that no longer decompresses), or points it holds that the manifest does
not know. The check compares the two; the cheap one at the start of a sync compares counts
and, only when they differ, the ids.

Repair goes through the manifest's own crash protocol: the damaged files' ids are marked
pending and :meth:`Manifest.recover` rewrites their rows to what the store really holds and
flags the files for re-sync, so the next sync re-chunks them and re-upserts their points,
with vectors from the embedding cache (keyed by text: no model call for unchanged text).
Points the manifest does not know cannot be told apart by id from here, and the engine
cannot delete a point whose payload it cannot read (it reads it to update its indexes, and a
failed delete left in its log stops the shard from opening): those take a fresh generation
(a rebuild, also from the cache), as does a store the engine cannot open.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from narezka.errors import NarezkaError, NarezkaWarning
from narezka.store import IndexDamagedError, Manifest, VectorStore

BATCH = 256


@dataclass(slots=True)
class CheckReport:
    """What ``Index.check()`` found, and what its repair did."""

    index: str
    chunks: int = 0
    """Points the manifest says the store holds."""
    points: int | None = None
    """Points the store holds (None: it could not be opened)."""
    missing: tuple[str, ...] = ()
    """Ids the manifest knows and the store does not have."""
    unreadable: tuple[str, ...] = ()
    """Ids the store has but cannot read back (a damaged payload page)."""
    unknown: int = 0
    """Points in the store that the manifest does not know."""
    files: tuple[str, ...] = ()
    """Corpus files with a missing or unreadable chunk."""
    problem: str | None = None
    """Why the store or the manifest could not be opened, if one could not."""
    repaired: list[str] = field(default_factory=list)
    """What the repair did, one line each (empty without ``repair``)."""

    @property
    def ok(self) -> bool:
        """Whether the index holds exactly what its manifest says, all readable."""
        return not (self.missing or self.unreadable or self.unknown or self.problem)

    @property
    def needs_rebuild(self) -> bool:
        """Whether only a fresh generation repairs it (per-file re-sync cannot): the engine
        must read a point's payload to delete it, so an unreadable one cannot be removed."""
        return bool(self.unknown or self.problem or self.unreadable)

    def findings(self) -> list[str]:
        """What is wrong, one line each (empty when nothing is)."""
        lines = []
        if self.problem:
            lines.append(f"the index cannot be opened: {self.problem}")
        if self.missing:
            lines.append(
                f"{len(self.missing)} of {self.chunks} chunks are missing from the store "
                f"(of {len(self.files)} files: {_some(self.files)})"
            )
        if self.unreadable:
            lines.append(f"{len(self.unreadable)} chunks cannot be read back (damaged pages)")
        if self.unknown:
            lines.append(f"{self.unknown} points in the store are not in the manifest")
        return lines

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "index": self.index,
            "ok": self.ok,
            "chunks": self.chunks,
            "points": self.points,
            "missing": list(self.missing),
            "unreadable": list(self.unreadable),
            "unknown": self.unknown,
            "files": list(self.files),
            "problem": self.problem,
            "findings": self.findings(),
            "repaired": self.repaired,
        }


def inspect(store: VectorStore, manifest: Manifest, where: str, *, deep: bool) -> CheckReport:
    """Compare the store with the manifest. ``deep`` reads every point back (a damaged
    payload page shows only then); otherwise the ids are compared only when the counts
    differ, which costs one count for a healthy index."""
    # Counts first: a healthy index's check must not load 100,000s of ids at every sync.
    chunks = manifest.chunk_count()
    points = store.count()
    report = CheckReport(where, chunks=chunks, points=points)
    if points == chunks and not deep:
        return report
    ids = manifest.point_ids()
    found, unreadable = _readable(store, ids)
    report.missing = tuple(i for i in ids if i not in found and i not in unreadable)
    report.unreadable = tuple(sorted(unreadable))
    report.unknown = max(0, points - len(found) - len(unreadable))
    report.files = tuple(sorted(_owners(manifest, (*report.missing, *report.unreadable))))
    return report


def mark_for_resync(store: VectorStore, manifest: Manifest, report: CheckReport) -> list[str]:
    """Flag the files with missing chunks for re-sync (their rows rewritten to what the store
    holds); returns the files. The next sync re-upserts their points."""
    owners = _owners(manifest, report.missing)
    for path, ids in owners.items():
        manifest.begin(path, ids)
    manifest.recover(store)
    return sorted(owners)


def repair_at_sync(store: VectorStore, manifest: Manifest, where: str) -> list[str]:
    """The cheap check a sync starts with: counts, then ids if they differ. Damaged files
    are flagged so this sync repairs them; returns warnings saying what was found."""
    report = inspect(store, manifest, where, deep=False)
    if report.ok:
        return []
    warnings = [f"{where}: {line}" for line in report.findings()]
    if not report.needs_rebuild:
        files = mark_for_resync(store, manifest, report)
        warnings.append(f"{where}: re-indexing {len(files)} damaged files from the cache")
    else:
        warnings.append(f"{where}: run `narezka check {where} --repair` to rebuild it")
    return warnings


class IndexDamagedWarning(NarezkaWarning):
    """A search found the store holding another number of points than its manifest says."""


def warn_if_damaged(store: VectorStore, folder: Path, where: str) -> None:
    """The cheapest check, for a reader: one count each from the store and the manifest in
    ``folder``. Fewer points than the manifest lists, or a manifest that cannot be read, is a
    warning (the search still answers from what the store has) naming the command that
    repairs it."""
    try:
        with Manifest(folder) as manifest:
            chunks = manifest.chunk_count()
    except IndexDamagedError as exc:
        warnings.warn(IndexDamagedWarning(f"{exc}; searching the store as it is"), stacklevel=3)
        return
    points = store.count()
    # More points than the manifest lists is a write that was interrupted between the store
    # and the manifest (Ctrl-C mid-sync): every answer is still there, and the next sync
    # deletes the extra points. Fewer is damage: answers are missing.
    if points < chunks:
        warnings.warn(
            IndexDamagedWarning(
                f"{where}: the store holds {points} points but the manifest {chunks}: answers "
                f"may be missing; `narezka check {where} --repair` repairs it"
            ),
            stacklevel=3,
        )


def _readable(store: VectorStore, ids: Sequence[str]) -> tuple[set[str], set[str]]:
    """(ids the store returns, ids whose reading fails), reading in batches and narrowing a
    failing batch down to its points. In a store with the quality tier's second vectors a
    point without one counts as not returned (missing): re-syncing its file restores it."""
    found: set[str] = set()
    bad: set[str] = set()
    second = bool(getattr(store, "rescore_dim", 0))

    def whole(pids: list[str]) -> set[str]:
        points = store.get(pids, with_vectors=second)
        return {p.id for p in points if not second or p.rescore is not None}

    for start in range(0, len(ids), BATCH):
        batch = list(ids[start : start + BATCH])
        try:
            found.update(whole(batch))
        except NarezkaError:
            for pid in batch:
                try:
                    found.update(whole([pid]))
                except NarezkaError:
                    bad.add(pid)
    return found, bad


def _owners(manifest: Manifest, ids: Iterable[str]) -> dict[str, list[str]]:
    owners: dict[str, list[str]] = {}
    for pid in ids:
        where = manifest.locate(pid)
        if where is not None:
            owners.setdefault(where[0], []).append(pid)
    return owners


def _some(names: Sequence[str], shown: int = 3) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")
