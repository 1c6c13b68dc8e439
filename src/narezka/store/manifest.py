"""The sync manifest: what the index holds for every file, kept in SQLite beside the index.

Per file: path, size, mtime, doc_hash, strategy fingerprint, embedder id, and its chunks
(chunk index, point id, content_hash). ``plan()`` diffs a file's new chunk list against it:
ids to delete, chunks to embed, chunks whose vector can be copied from another point of the
same file (same content hash, new position), chunks kept as they are.

Crash-safety protocol
---------------------
Invariant between syncs: *for every path, the manifest's chunk rows are exactly the store's
points of that path.* Store writes and the manifest cannot share a transaction, so each file
is synced as a write-ahead intent (a sync writes a few files together: ``begin_many`` and
``commit_many`` take the steps for all of them in one transaction each):

1. ``begin(plan)`` — one transaction records every point id the sync may touch (old ∪ new)
   as *pending* for that path. Nothing else changes.
2. The caller writes to the store: upsert new/changed points, then delete stale ids.
3. ``commit(entry)`` — one transaction replaces the file's row and chunk rows with the new
   state and clears its pending rows. ``commit_delete(path)`` does the same for a removed file.

A kill at any moment leaves either no pending rows (the invariant holds: before step 1 the old
state, after step 3 the new one) or pending rows for some paths. ``recover(store)`` — run on
open, before any sync — asks the store which of the pending ids exist and with which
``content_hash`` / ``chunk_index`` (from their payload), and rewrites the path's chunk rows to
exactly that, with the file's stat and doc hash cleared so the next sync re-chunks the file.
The invariant then holds again; the next sync deletes whatever the interrupted one left
behind and re-embeds only chunks whose content hash the store does not already hold. If the
store was empty of them, the file is simply indexed afresh. Nothing is duplicated (ids are
deterministic), orphaned (every touched id was pending) or lost (the file is re-synced).

SQLite runs in WAL mode with ``synchronous=NORMAL``: a committed transaction survives a
process kill; only an OS crash may roll back the last commits, which recovery also repairs as
long as the store's own log is at least as durable.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from narezka.diskspace import full_error
from narezka.errors import NarezkaError
from narezka.sqlite_cache import is_full
from narezka.store.base import VectorStore
from narezka.store.errors import IndexDamagedError

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime REAL NOT NULL, doc_hash TEXT NOT NULL,
    fingerprint TEXT NOT NULL, embedder TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    path TEXT NOT NULL, idx INTEGER NOT NULL, point_id TEXT NOT NULL,
    content_hash TEXT NOT NULL, PRIMARY KEY (path, idx)
);
CREATE INDEX IF NOT EXISTS chunks_by_point ON chunks (point_id);
CREATE TABLE IF NOT EXISTS pending (
    path TEXT NOT NULL, point_id TEXT NOT NULL, PRIMARY KEY (path, point_id)
);
CREATE TABLE IF NOT EXISTS embeds (
    path TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (path, name)
);
CREATE INDEX IF NOT EXISTS embeds_by_name ON embeds (name);
"""
VERSION = "1"
MANIFEST_NAME = "manifest.sqlite"
DOC_HASHES = ("files", "doc_hash")
"""The table and column of each file's document hash: what another sqlite file joins on
(the conversion cache keeps only texts some file has: ``narezka.index.compaction``)."""


@dataclass(frozen=True, slots=True)
class ChunkEntry:
    """One chunk as the manifest knows it."""

    index: int
    point_id: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file's synced state; ``size == -1`` marks a file that recovery wants re-synced."""

    path: str
    size: int
    mtime: float
    doc_hash: str
    fingerprint: str
    embedder: str
    chunks: tuple[ChunkEntry, ...] = ()
    embeds: tuple[str, ...] = ()
    """The note names an Obsidian note's ``![[embeds]]`` asked for (``RawDocument.embeds``):
    a note of one of these names that changes has this file synced again."""


@dataclass(frozen=True, slots=True)
class FilePlan:
    """What to do for one file: the result of ``Manifest.plan``."""

    path: str
    delete: tuple[str, ...]
    """Old point ids that no new chunk uses: delete them after the upserts."""
    embed: tuple[ChunkEntry, ...]
    """Chunks whose content hash the file's stored points do not have."""
    reuse: tuple[tuple[ChunkEntry, str], ...]
    """(new chunk, old point id holding the same content): copy that point's vectors.

    Read them (``store.get(..., with_vectors=True)``) before writing anything: after an index
    shift an old id may be overwritten by another new chunk's upsert."""
    keep: tuple[ChunkEntry, ...]
    """Same id, same content: no new vector (the payload may still be refreshed)."""
    old_ids: tuple[str, ...] = field(default=())

    @property
    def touched(self) -> tuple[str, ...]:
        """Every id the sync may write or delete: what ``begin`` records as pending."""
        new = [c.point_id for c in (*self.embed, *self.keep)]
        new += [c.point_id for c, _ in self.reuse]
        return tuple(dict.fromkeys([*self.old_ids, *new]))

    @property
    def changed(self) -> bool:
        """Whether the store needs any write for this file."""
        return bool(self.delete or self.embed or self.reuse)


def manifest_error(path: Path, exc: sqlite3.DatabaseError) -> NarezkaError:
    """What a failing manifest means to the user: a full disk, or a damaged file that a
    rebuild replaces (its vectors come back from the embedding cache, not the model)."""
    if is_full(exc):
        return full_error(path, str(exc))
    return IndexDamagedError(
        f"{path} cannot be read ({exc}): the index's record of its files is damaged; "
        "re-create the index with `narezka index CORPUS --rebuild` (cached embeddings are reused)"
    )


class Manifest:
    """The sync manifest in ``<dir>/manifest.sqlite`` (or any given ``.sqlite`` path)."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if path.suffix != ".sqlite":
            path.mkdir(parents=True, exist_ok=True)
            path = path / MANIFEST_NAME
        self.path = path
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, so a transaction is exactly
        # the block we write, never one the sqlite3 module opened implicitly.
        self._db = sqlite3.connect(path, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (VERSION,))
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise manifest_error(path, exc) from exc

    def __enter__(self) -> Manifest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database; idempotent."""
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise manifest_error(self.path, exc) from exc

    # ---- reading --------------------------------------------------------------------------

    def get(self, path: str) -> FileEntry | None:
        """The synced state of ``path``, or None if the manifest does not know it."""
        row = self._db.execute(
            "SELECT size, mtime, doc_hash, fingerprint, embedder FROM files WHERE path = ?",
            (path,),
        ).fetchone()
        if row is None:
            return None
        chunks = tuple(
            ChunkEntry(idx, pid, digest)
            for idx, pid, digest in self._db.execute(
                "SELECT idx, point_id, content_hash FROM chunks WHERE path = ? ORDER BY idx",
                (path,),
            )
        )
        return FileEntry(path, row[0], row[1], row[2], row[3], row[4], chunks)

    def paths(self) -> list[str]:
        """Every path the manifest knows, sorted."""
        return [r[0] for r in self._db.execute("SELECT path FROM files ORDER BY path")]

    def file_count(self) -> int:
        """How many files the manifest knows."""
        return int(self._db.execute("SELECT COUNT(*) FROM files").fetchone()[0])

    def point_ids(self) -> list[str]:
        """Every point id the manifest knows, file by file in chunk order."""
        rows = self._db.execute("SELECT point_id FROM chunks ORDER BY path, idx")
        return [r[0] for r in rows]

    def chunk_count(self) -> int:
        """How many points the manifest says the store holds."""
        return int(self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def copy_to(self, path: Path) -> None:
        """Write a fresh copy of the manifest to ``path`` (a new file): only its live rows,
        none of the free pages where SQLite leaves rows it deleted (the paths of deleted
        files, among them)."""
        self._db.execute("VACUUM INTO ?", (str(path),))

    def files(self) -> list[tuple[str, int, float, str, int]]:
        """``(path, size, mtime, doc_hash, chunk count)`` of every file, sorted by path."""
        rows = self._db.execute(
            "SELECT f.path, f.size, f.mtime, f.doc_hash, COUNT(c.idx) FROM files f "
            "LEFT JOIN chunks c ON c.path = f.path GROUP BY f.path ORDER BY f.path"
        )
        return [(r[0], int(r[1]), float(r[2]), str(r[3]), int(r[4])) for r in rows]

    def locate(self, point_id: str) -> tuple[str, int] | None:
        """``(path, chunk index)`` of a point, or None if the manifest does not know it."""
        row = self._db.execute(
            "SELECT path, idx FROM chunks WHERE point_id = ?", (point_id,)
        ).fetchone()
        return (str(row[0]), int(row[1])) if row else None

    def stats_in_order(self) -> StatsInOrder:
        """path → (size, mtime, fingerprint, embedder), for stat-only skipping of many files,
        without holding it (a dict of it was ~350 B a file, 350 MB at a million files): read
        in step with a sorted walk between ``scan()`` and ``close()``."""
        return StatsInOrder(self._db)

    def is_fresh(
        self, path: str, size: int, mtime: float, *, fingerprint: str, embedder: str
    ) -> bool:
        """Whether ``path`` can be skipped without reading it: same stat, strategy, embedder."""
        row = self._db.execute(
            "SELECT size, mtime, fingerprint, embedder FROM files WHERE path = ?", (path,)
        ).fetchone()
        return row is not None and tuple(row) == (size, mtime, fingerprint, embedder)

    def pending(self) -> dict[str, list[str]]:
        """path → point ids of syncs that began and never committed."""
        out: dict[str, list[str]] = {}
        for path, pid in self._db.execute("SELECT path, point_id FROM pending ORDER BY rowid"):
            out.setdefault(path, []).append(pid)
        return out

    # ---- planning -------------------------------------------------------------------------

    def plan(
        self, path: str, chunks: Sequence[ChunkEntry], *, fingerprint: str, embedder: str
    ) -> FilePlan:
        """Diff a file's new chunks against its stored state (see ``FilePlan``)."""
        old = self.get(path)
        old_chunks = old.chunks if old is not None else ()
        old_by_id = {c.point_id: c for c in old_chunks}
        # A vector may be reused only if the same embedder made it; content_hash already
        # covers the strategy fingerprint, so a strategy change matches nothing by itself.
        same_model = old is not None and old.embedder == embedder
        by_hash = {c.content_hash: c.point_id for c in old_chunks} if same_model else {}
        new_ids = {c.point_id for c in chunks}
        embed: list[ChunkEntry] = []
        reuse: list[tuple[ChunkEntry, str]] = []
        keep: list[ChunkEntry] = []
        for chunk in chunks:
            before = old_by_id.get(chunk.point_id)
            if same_model and before is not None and before.content_hash == chunk.content_hash:
                keep.append(chunk)
            elif chunk.content_hash in by_hash:
                reuse.append((chunk, by_hash[chunk.content_hash]))
            else:
                embed.append(chunk)
        delete = tuple(c.point_id for c in old_chunks if c.point_id not in new_ids)
        old_ids = tuple(c.point_id for c in old_chunks)
        return FilePlan(path, delete, tuple(embed), tuple(reuse), tuple(keep), old_ids)

    # ---- writing --------------------------------------------------------------------------

    def embedding(self, names: Iterable[str]) -> set[str]:
        """The files whose embeds asked for any of these note ``names`` (lowercased)."""
        wanted = sorted(set(names))
        found: set[str] = set()
        for at in range(0, len(wanted), 500):  # sqlite's limit on bound parameters
            part = wanted[at : at + 500]
            marks = ", ".join("?" * len(part))
            query = f"SELECT DISTINCT path FROM embeds WHERE name IN ({marks})"
            found.update(row[0] for row in self._db.execute(query, part))
        return found

    def begin(self, path: str, ids: Sequence[str]) -> None:
        """Record ``ids`` (normally ``plan.touched``) as pending for ``path``: step 1."""
        self.begin_many([(path, ids)])

    def begin_many(self, files: Sequence[tuple[str, Sequence[str]]]) -> None:
        """Step 1 for several files at once, in one transaction: each path's ids pending."""
        with self._transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO pending (path, point_id) VALUES (?, ?)",
                [(path, pid) for path, ids in files for pid in ids],
            )

    def commit(self, entry: FileEntry) -> None:
        """Replace the file's state and clear its pending ids, atomically: step 3."""
        self.commit_many([entry])

    def commit_many(self, entries: Sequence[FileEntry]) -> None:
        """Step 3 for several files at once, in one transaction."""
        with self._transaction() as db:
            for entry in entries:
                self._write(db, entry)
                db.execute("DELETE FROM pending WHERE path = ?", (entry.path,))

    def commit_delete(self, path: str) -> None:
        """Forget a removed file (its points must be deleted already) and its pending ids."""
        with self._transaction() as db:
            db.execute("DELETE FROM files WHERE path = ?", (path,))
            db.execute("DELETE FROM chunks WHERE path = ?", (path,))
            db.execute("DELETE FROM pending WHERE path = ?", (path,))
            db.execute("DELETE FROM embeds WHERE path = ?", (path,))

    @staticmethod
    def _write(db: sqlite3.Connection, entry: FileEntry) -> None:
        db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
            (entry.path, entry.size, entry.mtime, entry.doc_hash, entry.fingerprint,
             entry.embedder),
        )  # fmt: skip
        db.execute("DELETE FROM chunks WHERE path = ?", (entry.path,))
        db.executemany(
            "INSERT INTO chunks VALUES (?, ?, ?, ?)",
            [(entry.path, c.index, c.point_id, c.content_hash) for c in entry.chunks],
        )
        db.execute("DELETE FROM embeds WHERE path = ?", (entry.path,))
        db.executemany(
            "INSERT OR IGNORE INTO embeds VALUES (?, ?)", [(entry.path, n) for n in entry.embeds]
        )

    def recover(self, store: VectorStore) -> list[str]:
        """Repair interrupted syncs from what the store really holds; returns their paths.

        Needs each point's payload to carry ``content_hash`` and ``chunk_index``.
        """
        repaired = []
        for path, ids in self.pending().items():
            old = self.get(path)
            known = {c.point_id for c in old.chunks} if old is not None else set()
            present = store.get(sorted(known | set(ids)))
            chunks = []
            for point in present:
                digest = point.payload.get("content_hash")
                index = point.payload.get("chunk_index")
                if isinstance(digest, str) and isinstance(index, int):
                    chunks.append(ChunkEntry(index, point.id, digest))
                else:  # no way to describe it: make sure it does not linger unknown
                    store.delete([point.id])
            # Two points may claim one index (an old one and a new one half-written); the
            # chunk table is keyed by index, so keep one and delete the other from the store.
            by_index: dict[int, ChunkEntry] = {}
            for chunk in sorted(chunks, key=lambda c: (c.index, c.point_id)):
                if chunk.index in by_index:
                    store.delete([chunk.point_id])
                else:
                    by_index[chunk.index] = chunk
            entry = FileEntry(
                path,
                size=-1,
                mtime=-1.0,
                doc_hash="",
                fingerprint=old.fingerprint if old is not None else "",
                embedder=old.embedder if old is not None else "",
                chunks=tuple(by_index[i] for i in sorted(by_index)),
            )
            with self._transaction() as db:
                self._write(db, entry)
                db.execute("DELETE FROM pending WHERE path = ?", (path,))
            repaired.append(path)
        return repaired


class StatsInOrder:
    """path → (size, mtime, fingerprint, embedder) of the manifest. Between :meth:`scan` and
    :meth:`close`, paths asked in increasing order are read in step with one ordered query (a
    merge with the sorted walk: no row is held); otherwise, or asked out of order, a path is
    looked up by itself. Python orders ``str`` by code point and SQLite orders TEXT by its
    UTF-8 bytes: the same order. Nothing may write the manifest during a scan.

    A scan given an ``unseen`` list is the other half of that merge: the paths of the rows it
    passes without being asked for them (indexed files the walk did not meet) are appended to
    it, and :meth:`rest_unseen` appends those after the last path asked. So a sync finds the
    files that are gone without a set of every path it walked."""

    _COLUMNS = "SELECT path, size, mtime, fingerprint, embedder FROM files"

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._rows: sqlite3.Cursor | None = None
        self._row: Any = None
        self._last = ""
        self._unseen: list[str] | None = None
        # Every file shares a fingerprint and embedder: one copy of each string, not one a row.
        self._one: dict[str, str] = {}

    def scan(self, *, unseen: list[str] | None = None) -> None:
        """Start reading the rows in path order (collecting the rows passed over in
        ``unseen``, when given: then every path must be asked in increasing order)."""
        self.close()
        self._rows = self._db.execute(self._COLUMNS + " ORDER BY path")
        self._row, self._last, self._unseen = next(self._rows, None), "", unseen

    def get(self, path: str) -> tuple[int, float, str, str] | None:
        if self._rows is None or path < self._last:
            if self._unseen is not None:
                # The merge would take rows it already passed for unseen ones.
                raise ValueError(f"{path!r} asked after {self._last!r} in an ordered scan")
            row = self._db.execute(self._COLUMNS + " WHERE path = ?", (path,)).fetchone()
            return None if row is None else self._state(row)
        self._pass(path)
        self._last = path
        if self._row is not None and self._row[0] == path:
            return self._state(self._row)
        return None

    def rest_unseen(self) -> None:
        """The walk has ended: append the rows after the last path asked to ``unseen``."""
        if self._rows is not None:
            self._pass(None)

    def _pass(self, path: str | None) -> None:
        """Move past the rows before ``path`` (all of them for None), collecting unseen."""
        rows, unseen, asked = self._rows, self._unseen, self._last
        assert rows is not None  # only during a scan
        while self._row is not None and (path is None or self._row[0] < path):
            # The row of the path asked last is behind now, but it was seen.
            if unseen is not None and self._row[0] != asked:
                unseen.append(self._row[0])
            self._row = next(rows, None)

    def close(self) -> None:
        """End the scan; later paths are looked up alone."""
        if self._rows is not None:
            self._rows.close()
            self._rows, self._row, self._unseen = None, None, None

    def _state(self, row: Any) -> tuple[int, float, str, str]:
        one = self._one
        return (row[1], row[2], one.setdefault(row[3], row[3]), one.setdefault(row[4], row[4]))
