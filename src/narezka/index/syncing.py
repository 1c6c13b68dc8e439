"""The machinery of a sync (what :meth:`narezka.Index.sync` runs): discover → chunk → embed →
upsert, incrementally.

Per file, the manifest says what the index holds. Unchanged files are skipped by ``stat``
alone; a changed file is re-chunked and only chunks with a new content hash are embedded
(vectors of moved chunks are copied); removed chunks and deleted files' points are deleted.
Each file is written under the manifest's write-ahead protocol, so a kill at any moment
leaves an index the next sync repairs (see :mod:`narezka.store.manifest`).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from narezka.convert.capability import still_lacking
from narezka.convert.limits import stored_size
from narezka.discover import iter_files, read_document
from narezka.discover.kinds import describe_unread
from narezka.discover.naming import error_in_corpus, note_in_corpus
from narezka.diskspace import ensure_free, write_needs
from narezka.embed import (
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    InputTooLongError,
    embed_all,
    get_embedder,
)
from narezka.embed.cache import prefetching
from narezka.embed.rescore import RescoreModel
from narezka.enrich import Rules, chunk_payload
from narezka.enrich.llm_context import ContextWriter
from narezka.errors import ConfigError, DiskFullError, NarezkaError, RefusedFileError, SourceError
from narezka.index import layout
from narezka.index.layout import (
    CACHE_NAME,
    INDEX_META,
    INDEX_VERSION,
    STORE_DIRNAME,
)
from narezka.index.rescoring import with_second_vectors
from narezka.runs.chunking import (
    ChunkTask,
    FileOutcome,
    chunk_file,
    chunk_pool,
    chunk_raw,
    with_file_meta,
)
from narezka.runs.config import ChunkConfig
from narezka.runs.file_chunks import with_provenance
from narezka.split import SplitParams, Strategy
from narezka.store import (
    ChunkEntry,
    FileEntry,
    FilePlan,
    Manifest,
    SparseVector,
    StoredPoint,
    VectorStore,
    chunk_point_id,
)
from narezka.store.errors import IndexDamagedError, StoreUnavailableError
from narezka.tokens.bm25 import DEFAULT_ANALYZER, bm25_encoder
from narezka.types import Chunk

__all__ = ["INDEX_META", "INDEX_VERSION", "STORE_DIRNAME", "IndexReport", "Progress", "Syncer"]
RESPLIT_ATTEMPTS = 3
RESPLIT_SHRINK = 0.75
"""A file whose chunk a model refuses is re-chunked this much smaller, a few times at most."""
CLOSE_HEADROOM = 8 * 2**20
"""Free bytes kept after a file's points: what closing the store still writes (its
flush, the manifest's last commit) when a run stops for want of space."""
INCOMPLETE = "!incomplete"
"""Appended to the fingerprint a file is recorded with when some of its chunks got no LLM
context (a failed request): its stat no longer matches, so the next sync asks again."""


@dataclass(slots=True)
class IndexReport:
    """What a sync did, file by file and chunk by chunk, and where the time went."""

    files_new: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_kept: int = 0
    chunks_deleted: int = 0
    skipped: list[SourceError] = field(default_factory=list)
    not_read: list[str] = field(default_factory=list)
    """Files of a document type narezka does not read (``.pdf``…) in the corpus."""
    unmatched: list[str] = field(default_factory=list)
    """Indexed files still in the corpus that the include/exclude patterns no longer match:
    removed from the index with ``prune``, else kept (and named in a warning)."""
    warnings: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"chunk": 0.0, "embed": 0.0, "store": 0.0, "total": 0.0}
    )
    cache_hits: int = 0
    cache_misses: int = 0
    embedder: str = ""
    store: str = ""
    secrets: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per file chunked in this run: secrets redacted, by kind (``--no-redact``: none)."""
    context: dict[str, Any] = field(default_factory=dict)
    """With ``context_llm``: what the LLM context step did (``ContextStats.as_dict``)."""
    source: dict[str, Any] = field(default_factory=dict)
    """For a corpus staged from a source (git): the version read and the files fetched,
    moved and removed by its refresh (empty for a folder)."""

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (what ``index --json`` prints)."""
        data = {k: getattr(self, k) for k in self.__slots__}
        data["skipped"] = [{"path": e.path, "problem": e.problem} for e in self.skipped]
        return data


def default_store_dir(corpus: Path) -> Path:
    """Where the index of a corpus lives unless told otherwise: inside it, ``.narezka/``."""
    return layout.default_home(corpus)


def read_index_meta(store_dir: Path) -> dict[str, Any]:
    """The index's own record: corpus root, embedder, chunking fingerprint, live data."""
    return layout.read_meta(store_dir)


def open_embedder(spec: str | Embedder, store_dir: Path | None) -> Embedder:
    """The embedder for a spec, with an embedding cache kept beside the index."""
    embedder = get_embedder(spec) if isinstance(spec, str) else spec
    if store_dir is None or isinstance(embedder, CachedEmbedder):
        return embedder
    store_dir.mkdir(parents=True, exist_ok=True)
    return CachedEmbedder(embedder, EmbeddingCache(store_dir / CACHE_NAME))


class Syncer:
    """One sync run over a corpus into one store; see :func:`index`."""

    def __init__(
        self,
        corpus: Path,
        store: VectorStore,
        manifest: Manifest,
        embedder: Embedder,
        strategy: Strategy,
        config: ChunkConfig,
        rules: Rules,
        report: IndexReport | None = None,
        *,
        writing: Callable[[], AbstractContextManager[object]] | None = None,
        bm25: str = DEFAULT_ANALYZER,
        context: ContextWriter | None = None,
        convert_cache: Path | None = None,
        rescore: RescoreModel | None = None,
    ) -> None:
        self.corpus = corpus
        self.rescore = rescore
        """The quality tier's model: every point written also gets its second vector."""
        # Searches in this process take the other side: they see a file before or after.
        self.writing = writing or nullcontext
        self.store = store
        self.manifest = manifest
        self.embedder = embedder
        self.strategy = strategy
        """The splitter ``config.strategy`` names (wired to the embedder, for ``semantic``)."""
        self.config = config
        self.params = config.params
        self.counter = config.counter
        self.rules = rules
        self.fingerprint = config.fingerprint
        self.context = context
        self.convert_cache = convert_cache
        self._incomplete = False
        self._lacks = ""
        if context is not None:
            self.fingerprint += "+" + context.fingerprint
        self.bm25 = bm25_encoder(bm25)
        self.report = report or IndexReport(embedder=embedder.name)
        # A survey reads it in step with the sorted walk (one query, nothing held); a single
        # file is looked up by itself.
        self.known = manifest.stats_in_order()
        # Files a killed sync began and never committed: recovery gives them a manifest row,
        # but they are new to the index (the report counted them so when the whole map was
        # read before recovery).
        self._began_new = {p for p in manifest.pending() if manifest.get(p) is None}
        self.on_bytes: Callable[[int], None] | None = None
        self.on_stage: Callable[[str, str], None] | None = None
        self.on_rate: Callable[[float], None] | None = None
        self._started = time.perf_counter()
        self._file_bytes = 0
        self._bytes_done = 0

    def _advance(self, done: int, total: int) -> None:
        """Progress inside one file, by the share of its chunks embedded: a 5 MB file moves
        the bar while it is embedded instead of jumping at its end."""
        if self.on_bytes is None or total == 0:
            return
        target = self._file_bytes * done // total
        if target > self._bytes_done:
            self.on_bytes(target - self._bytes_done)
            self._bytes_done = target

    def stage(self, stage: str, source: str) -> None:
        """Tell the progress what the sync waits for now (see :class:`Progress`)."""
        if self.on_stage is not None:
            self.on_stage(stage, source)

    def finish_file(self) -> None:
        """Account the rest of the current file's bytes to the progress."""
        if self.on_bytes is not None and self._file_bytes > self._bytes_done:
            self.on_bytes(self._file_bytes - self._bytes_done)
        self._file_bytes = self._bytes_done = 0

    def needs_sync(self, root: Path, file: Path) -> os.stat_result | None:
        """The file's ``stat`` if it must be chunked again, else None (counted unchanged)."""
        stat = file.stat()
        return None if self.unchanged(relative(root, file), stat) else stat

    def is_current(self, source: str, stat: FileStat) -> bool:
        """Whether the file at ``source`` with this ``stat`` is indexed as it is: the
        manifest's size, mtime, fingerprint and embedder."""
        state = (stat.st_size, stat.st_mtime, self.fingerprint, self.embedder.name)
        known = self.known.get(source)
        # A scan read without OCR counts unchanged only while OCR is still absent.
        return known == state or still_lacking(known, state)

    def unchanged(self, source: str, stat: FileStat) -> bool:
        """:meth:`is_current`, counted in the report as unchanged."""
        if self.is_current(source, stat):
            self.report.files_unchanged += 1
            return True
        return False

    def sync_file(self, root: Path, file: Path) -> None:
        """Sync one file in this process (chunk, embed, write)."""
        stat = self.needs_sync(root, file)
        if stat is not None:
            self.apply(
                root, file, stat, chunk_file(self.task(root, file), self.strategy, self.counter)
            )

    def task(self, root: Path, file: Path, size: int = 0) -> ChunkTask:
        """The chunking of one file (of ``size`` bytes), for a worker."""
        return ChunkTask(root, file, self.params, size, convert_cache=self.convert_cache)

    def apply(self, root: Path, file: Path, stat: FileStat, outcome: FileOutcome) -> None:
        """Embed and write one file's chunks (``outcome``, chunked by a worker or here).

        Raises the file's problem as a :class:`SourceError`, after its warnings are kept."""
        report = self.report
        self._file_bytes, self._bytes_done = stat.st_size, 0
        source = relative(root, file)
        report.warnings.extend(note_in_corpus(w, file, source) for w in outcome.read_warnings)
        report.seconds["chunk"] += outcome.seconds
        self._lacks = outcome.lacks
        if outcome.error is not None:
            raise outcome.error
        params = self.params
        digest = outcome.digest
        chunks = list(outcome.result.chunks) if outcome.result is not None else []
        result = outcome.result
        text: str | None = None
        for attempt in range(RESPLIT_ATTEMPTS + 1):
            if attempt > 0:
                # A re-cut after a refusal is rare: done here, from the file as it is now.
                started = time.perf_counter()
                raw, _ = read_document(root, file, redact=params.redact)
                text = raw.text
                result = chunk_raw(raw, self.strategy, params, self.counter)
                chunks = with_file_meta(result.chunks, raw.mtime, digest, resplit=True)
                chunks = with_provenance(chunks, raw.provenance)
                report.seconds["chunk"] += time.perf_counter() - started
            doc_warnings = result.warnings if result is not None else []
            if self.context is not None:
                if text is None:  # the worker that chunked the file kept its text
                    text = read_document(root, file, redact=params.redact)[0].text
                chunks = self._with_contexts(source, text, chunks, params)
            entries = [
                ChunkEntry(
                    c.index, chunk_point_id(source, self.fingerprint, c.index), c.content_hash
                )
                for c in chunks
            ]
            plan = self.manifest.plan(
                source, entries, fingerprint=self.fingerprint, embedder=self.embedder.name
            )
            by_index = {c.index: c for c in chunks}
            self.stage("embedding", source)
            started = time.perf_counter()
            try:
                vectors = embed_all(
                    [by_index[e.index].embed_text for e in plan.embed],
                    self.embedder,
                    on_progress=self._advance,
                )
                break
            except InputTooLongError as exc:
                # The server counted more tokens than our tokenizer for its model did: cut
                # the file finer at exact boundaries and try again; nothing is truncated.
                if attempt == RESPLIT_ATTEMPTS:
                    raise
                report.warnings.append(
                    f"{source}: {exc}; re-split at {int(params.size * RESPLIT_SHRINK)} tokens"
                )
                params = dataclasses.replace(params, size=int(params.size * RESPLIT_SHRINK))
            finally:
                report.seconds["embed"] += time.perf_counter() - started
        report.warnings.extend(doc_warnings)
        if result is not None and result.secrets:
            report.secrets[source] = result.secrets
        if source in self._began_new or self.known.get(source) is None:
            report.files_new += 1
        else:
            report.files_changed += 1

        started = time.perf_counter()
        # A kept chunk (same id, same content) still gets its payload rewritten: its offsets
        # may have moved and its document hash has changed. Its vector is copied as it is.
        donors = [*(old_id for _, old_id in plan.reuse), *(c.point_id for c in plan.keep)]
        reused = {}
        if donors:
            reused = {p.id: p for p in self.store.get(donors, with_vectors=True)}
        report.seconds["store"] += time.perf_counter() - started

        started = time.perf_counter()
        points = [
            self._point(entry.point_id, by_index[entry.index], vector)
            for entry, vector in zip(plan.embed, vectors, strict=True)
        ]
        copies = [*plan.reuse, *((c, c.point_id) for c in plan.keep)]
        for entry, old_id in copies:
            donor = reused.get(old_id)
            if donor is None or donor.dense is None:  # vanished under us: embed it after all
                vector = embed_all([by_index[entry.index].embed_text], self.embedder)[0]
                points.append(self._point(entry.point_id, by_index[entry.index], vector))
                report.chunks_embedded += 1
            else:
                points.append(self._point(entry.point_id, by_index[entry.index], donor.dense))
                if entry.point_id != old_id:
                    report.chunks_reused += 1
        if self.rescore is not None:  # the quality tier: each point's second vector too
            texts = {e.point_id: by_index[e.index].embed_text for e in entries}
            copied = {entry.point_id: old_id for entry, old_id in copies}
            points = with_second_vectors(points, texts, reused, copied, self.rescore)
        self.stage("writing", source)
        with self.writing():
            self._write(source, plan, points, entries, stat, digest)
        report.seconds["store"] += time.perf_counter() - started
        report.chunks_embedded += len(plan.embed)
        if self.on_rate is not None and report.chunks_embedded:
            self.on_rate(report.chunks_embedded / (time.perf_counter() - self._started))
        report.chunks_kept += len(plan.keep)
        report.chunks_deleted += len(plan.delete)

    def _with_contexts(
        self, source: str, text: str, chunks: list[Chunk], params: SplitParams
    ) -> list[Chunk]:
        """The one call of the LLM context step: after splitting, before embedding."""
        assert self.context is not None
        started = time.perf_counter()
        done = self.context.apply(source, text, chunks, counter=self.counter, limit=params.size)
        self.report.warnings.extend(done.problems)
        self._incomplete = done.incomplete
        self.report.seconds["context"] = (
            self.report.seconds.get("context", 0.0) + time.perf_counter() - started
        )
        return done.chunks

    def _write(
        self,
        source: str,
        plan: FilePlan,
        points: list[StoredPoint],
        entries: list[ChunkEntry],
        stat: FileStat,
        digest: str,
    ) -> None:
        if points:
            self._room_for(source, points)
        self.manifest.begin(source, plan.touched)
        if points:
            self.store.upsert(points)
        if plan.delete:
            self.store.delete(list(plan.delete))
        self.manifest.commit(
            FileEntry(
                source,
                stat.st_size,
                stat.st_mtime,
                digest,
                self.fingerprint + self._lacks + (INCOMPLETE if self._incomplete else ""),
                self.embedder.name,
                tuple(entries),
            )
        )

    def _room_for(self, source: str, points: Sequence[StoredPoint]) -> None:
        """Stop with a ``DiskFullError`` naming the folder before a file's points are
        written where they do not fit: the engine writes its log and segments through memory
        maps, and a write into a full disk is a bus error that kills the run without a word.
        The whole run's need was checked at its start; this catches a disk that another
        program fills meanwhile (#38 row 11)."""
        folder = getattr(self.store, "path", None)
        if folder is None:
            return
        text = sum(len(str(p.payload.get("text", ""))) for p in points)
        needed = write_needs(2 * text, self.embedder.dim) + CLOSE_HEADROOM  # UTF-8: ≤ 2 bytes/char
        what = f"store {source} ({len(points)} chunks; the files before it are indexed)"
        ensure_free(Path(folder), needed, what)

    def _point(self, point_id: str, chunk: Chunk, vector: Any) -> StoredPoint:
        sparse: SparseVector = self.bm25.encode_document(chunk.embed_text)
        # Sized in the embedder's own tokens (the default), the count is already there;
        # otherwise count once, so evaluation never has to re-chunk to know the model's view.
        own = self.counter.name == self.embedder.counter.name
        tokens = None if own else self.embedder.counter.count(chunk.embed_text)
        payload = chunk_payload(chunk, self.rules, embed_tokens=tokens)
        return StoredPoint(point_id, vector, payload, sparse)

    def delete_files(self, paths: Iterable[str]) -> None:
        """Delete the points of these files (those the manifest knows), one after another."""
        for path in paths:
            entry = self.manifest.get(path)
            if entry is None:
                continue
            ids = [c.point_id for c in entry.chunks]
            with self.writing():
                self.manifest.begin(path, ids)
                if ids:
                    self.store.delete(ids)
                self.manifest.commit_delete(path)
            self.report.files_deleted += 1
            self.report.chunks_deleted += len(ids)


def _kept_unread(
    known: Iterable[str], errors: Sequence[SourceError], report: IndexReport
) -> set[str]:
    """The indexed files at or under a path the walk could not read: a folder that could not
    be listed, a dangling symlink (an unmounted drive's), a loop. They are not known to be
    gone, so their points stay; each such path gets a warning saying how many files."""
    kept: set[str] = set()
    for error in errors:
        if isinstance(error, RefusedFileError):
            continue  # never to be read (a link out of the corpus, a FIFO): its points go
        prefix = error.path.rstrip("/") + "/"
        under = {p for p in known if p == error.path or p.startswith(prefix)}
        if under:
            kept |= under
            report.warnings.append(
                f"{error.path}: could not be read; its {len(under)} indexed file(s) are kept"
            )
    return kept


@dataclass(frozen=True, slots=True)
class Progress:
    """Callbacks a caller may pass to follow a sync (any of them may be None).

    ``on_stage(stage, source)`` names what the sync waits for now: ``chunking`` (reading and
    chunking, in workers), ``embedding`` or ``writing``, and the file."""

    on_file: Callable[[str], None] | None = None
    on_bytes: Callable[[int], None] | None = None
    on_total: Callable[[int], None] | None = None
    on_stage: Callable[[str, str], None] | None = None
    on_rate: Callable[[float], None] | None = None
    """Called after each file that embedded chunks: chunks embedded per second so far."""
    on_context_estimate: Callable[[Any], None] | None = None
    """With ``context_llm``: called once with the ``ContextEstimate`` before any LLM call."""
    on_context_call: Callable[[], None] | None = None
    """With ``context_llm``: called after each LLM request."""


def sync_files(
    syncer: Syncer,
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    manifest: Manifest,
    progress: Progress,
    *,
    paths: set[str] | None = None,
    jobs: int | None = None,
    follow_symlinks: bool = False,
    prune: bool = False,
) -> None:
    """Sync every file of the corpus (or only ``paths``), then delete the points of files
    that are gone; problems with one file are recorded in the report and the run goes on.

    Files are read and chunked by ``jobs`` workers a few files ahead while this process
    embeds and writes, one file after another in corpus order (so the write-ahead protocol
    and the report are what a serial run gives).

    An indexed file that is still there but no longer matches the patterns is removed only
    with ``prune``; otherwise it is kept and named (a changed pattern must not silently
    empty the index). One that must never be read (a symlink leading outside the corpus
    without ``follow_symlinks``, a FIFO) is removed."""
    syncer.on_bytes = progress.on_bytes
    syncer.on_stage = progress.on_stage
    syncer.on_rate = progress.on_rate
    errors: list[SourceError] = []
    survey = _survey(syncer, root, globs, exclude, progress, paths, errors, follow_symlinks)
    if survey.work is not None:
        changes: Iterable[_Changed] = survey.work
    else:  # too many to hold: found again by a second walk (see HELD_CHANGES)
        changes = _changed_again(syncer, root, globs, exclude, paths, follow_symlinks)
    _sync_changed(syncer, root, changes, survey, progress, jobs)
    survey.work = None
    _delete_gone(syncer, root, globs, exclude, manifest, survey, errors, prune=prune)


class FileStat(Protocol):
    """What a sync keeps of a file's ``stat``: an ``os.stat_result`` is one."""

    @property
    def st_size(self) -> int: ...

    @property
    def st_mtime(self) -> float: ...


class _Changed(NamedTuple):
    """A file to chunk again, as the survey found it: its path relative to the corpus (the
    same string ``seen`` holds) and the two fields of its stat the manifest keeps. A tuple of
    these is ~130 B a file; a ``Path`` pair and an ``os.stat_result`` were ~500 B."""

    source: str
    st_size: int
    st_mtime: float


HELD_CHANGES = 50_000
"""How many changed files a survey holds (~130 B each: 6.5 MB). Past that it only counts
them and the sync finds them again by a second walk, ~20 CPU µs a file, against the ~4 ms a
changed file costs to chunk, embed and write: a first index of a million files holds no list
of them (130 MB)."""


@dataclass(slots=True)
class _Survey:
    """What the walk found: how many files it met, the indexed files it did not meet, and
    the files to chunk again."""

    whole: bool
    """Whether the whole corpus was synced, not some paths of it."""
    walked: int
    unseen: set[str]
    """Indexed files the walk did not meet (of ``paths`` only, when the sync was given
    some): gone, unless they only could not be read or no longer match the patterns."""
    work: list[_Changed] | None
    """The changed files, in walk order; None when there were more than ``HELD_CHANGES``."""
    changed: int
    changed_bytes: int


def _corpus_files(
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    paths: set[str] | None,
    follow_symlinks: bool,
    errors: list[SourceError],
    unread: list[str] | None,
) -> Iterator[tuple[str, Path]]:
    """The corpus's files a sync looks at (only ``paths``, when given), sorted: each one's
    path relative to ``root`` and its ``Path``."""
    found = iter_files(
        [root], globs, exclude, errors=errors, follow_symlinks=follow_symlinks, unread=unread
    )
    for base, file in found:
        source = relative(base, file)
        if paths is None or source in paths:
            yield source, file


def _survey(
    syncer: Syncer,
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    progress: Progress,
    paths: set[str] | None,
    errors: list[SourceError],
    follow_symlinks: bool,
) -> _Survey:
    """The files of the corpus (each stat-ed once, here), those that changed since the last
    sync, with their stat, and the indexed ones it no longer holds; unchanged files count on
    the progress bar at once.

    The walk yields sorted paths and the manifest is read in step with it: an indexed path
    the merge passes over is one the walk did not meet. So nothing is held per file but the
    changed ones (a set of every path walked was ~120 MB at a million files)."""
    report = syncer.report
    found = _corpus_files(root, globs, exclude, paths, follow_symlinks, errors, report.not_read)
    work: list[_Changed] | None = []
    changed = changed_bytes = 0
    # Unchanged files named to ``on_file`` after the total is known (held only if asked).
    fresh: list[tuple[str, int]] = []
    fresh_bytes = 0
    walked = total = 0
    seen: set[str] = set()  # only for a sync of some paths: at most those
    unseen: list[str] | None = [] if paths is None else None
    syncer.known.scan(unseen=unseen)
    try:
        for source, file in found:
            if paths is not None:
                seen.add(source)
            walked += 1
            try:
                stat = file.stat()
            except OSError as exc:
                syncer.known.get(source)  # met, so not gone: its points stay
                report.skipped.append(SourceError(source, f"cannot read: {exc}"))
                continue
            total += stat.st_size
            if not syncer.unchanged(source, stat):
                changed += 1
                changed_bytes += stored_size(source, stat.st_size)
                if work is not None and len(work) < HELD_CHANGES:
                    work.append(_Changed(source, stat.st_size, stat.st_mtime))
                else:
                    work = None
            elif progress.on_file is not None:
                fresh.append((source, stat.st_size))
            else:
                fresh_bytes += stat.st_size
        if unseen is not None:
            syncer.known.rest_unseen()
    finally:
        syncer.known.close()
    if progress.on_total is not None:
        progress.on_total(total)
    if progress.on_bytes is not None and fresh_bytes:
        progress.on_bytes(fresh_bytes)
    for source, size in fresh:
        if progress.on_bytes is not None:
            progress.on_bytes(size)
        if progress.on_file is not None:
            progress.on_file(source)
    if unseen is not None:
        gone = set(unseen)
    else:  # the paths asked for that the walk did not meet, of those indexed
        gone = {p for p in paths or () if p not in seen and syncer.known.get(p) is not None}
    return _Survey(paths is None, walked, gone, work, changed, changed_bytes)


def _changed_again(
    syncer: Syncer,
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    paths: set[str] | None,
    follow_symlinks: bool,
) -> Iterator[_Changed]:
    """The files that are not indexed as they are, found by walking again (the survey met
    too many to hold, and named what it could not read). Each file is looked up by itself:
    the manifest is written as they are synced, so no ordered read may stay open."""
    for source, file in _corpus_files(root, globs, exclude, paths, follow_symlinks, [], None):
        try:
            stat = file.stat()
        except OSError:
            continue
        if not syncer.is_current(source, stat):
            yield _Changed(source, stat.st_size, stat.st_mtime)


def _sync_changed(
    syncer: Syncer,
    root: Path,
    work: Iterable[_Changed],
    survey: _Survey,
    progress: Progress,
    jobs: int | None,
) -> None:
    """Chunk, embed and write each changed file in corpus order (workers chunk ahead); a
    file's failure is its own, except those every later file would share, which stop it."""
    report = syncer.report
    # The workers take tasks a few files ahead of the files written: two walks of one
    # sequence, the tee holding only what lies between them.
    ahead, work = itertools.tee(work)
    # Made as the workers ask for them, not all up front (a million tasks were ~200 MB).
    tasks = (syncer.task(root, root / c.source, c.st_size) for c in ahead)
    work_bytes, count = survey.changed_bytes, survey.changed
    if (folder := getattr(syncer.store, "path", None)) is not None and count:
        needed = write_needs(work_bytes, syncer.embedder.dim)
        ensure_free(Path(folder), needed, f"store {count} files ({work_bytes} bytes)")
    pool = chunk_pool(syncer.strategy, syncer.counter, jobs, work_bytes=work_bytes, background=True)
    with pool:
        outcomes = pool.map(tasks)
        if syncer.context is None:  # contexts change what is embedded: nothing to guess ahead
            outcomes = prefetching(outcomes, _embed_texts, syncer.embedder)
        for changed in work:
            source = changed.source
            syncer.stage("chunking", source)
            outcome = next(outcomes)
            try:
                syncer.apply(root, root / source, changed, outcome)
            except SourceError as exc:
                report.skipped.append(error_in_corpus(exc, root / source, source))
            except (DiskFullError, IndexDamagedError):
                raise  # every later file would fail alike: stop, naming the cause
            except OSError as exc:
                report.skipped.append(SourceError(source, f"cannot read: {exc}"))
            except StoreUnavailableError:
                # Not this file's fault, and every next file would fail alike: stop (what is
                # committed stays; a rebuild must not swap in an index missing these files).
                raise
            except NarezkaError as exc:
                # An embedding failure names the file; its old points stay in place.
                report.skipped.append(SourceError(source, str(exc)))
            syncer.finish_file()
            if progress.on_file is not None:
                progress.on_file(source)


def _delete_gone(
    syncer: Syncer,
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    manifest: Manifest,
    survey: _Survey,
    errors: list[SourceError],
    *,
    prune: bool,
) -> None:
    """Delete the points of indexed files that are gone (or, with ``prune``, no longer
    matched), keeping those of files that only could not be read this time."""
    report = syncer.report
    report.skipped.extend(errors)
    kept = _kept_unread(survey.unseen, errors, report)
    # What lies at or under a refused path (a link to a folder out of the corpus) goes.
    refused = tuple(e.path for e in errors if isinstance(e, RefusedFileError))
    unseen = {
        p for p in survey.unseen - kept if not any(p == r or p.startswith(r + "/") for r in refused)
    }
    if report.not_read:
        report.warnings.append(describe_unread(report.not_read))
    met = survey.walked > 0 or bool(kept)
    if survey.whole and not met and unseen:
        # An unmounted drive or a wrong path looks like a corpus whose files were all
        # deleted: keep the index rather than empty it.
        raise ConfigError(
            f"no files matching {', '.join(globs)} in {root}, but the index holds "
            f"{manifest.file_count()}: nothing was deleted (check the path, or use --rebuild)"
        )
    kept_unmatched = _unmatched(root, unseen, report, prune=prune)
    if survey.whole and not met and not kept_unmatched:
        report.warnings.append(
            f"no files in {root} match {', '.join(globs)}"
            + (f" (excluding {', '.join(exclude)})" if exclude else "")
            + ": pass --include to read other files"
        )
    syncer.delete_files(sorted(survey.unseen - kept - kept_unmatched))


def _embed_texts(outcome: FileOutcome) -> list[str]:
    return [c.embed_text for c in outcome.result.chunks] if outcome.result is not None else []


UNMATCHED_SHOWN = 5
"""How many of the files a pattern change would remove a warning names."""


def _unmatched(root: Path, unseen: set[str], report: IndexReport, *, prune: bool) -> set[str]:
    """Of the indexed files the walk did not yield, those still in the corpus (the patterns
    no longer match them): recorded in the report and named in a warning. Returns the ones
    to keep: all of them, unless ``prune``."""
    unmatched = sorted(p for p in unseen if os.path.lexists(root / p))
    if not unmatched:
        return set()
    report.unmatched = unmatched
    names = ", ".join(unmatched[:UNMATCHED_SHOWN])
    more = len(unmatched) - UNMATCHED_SHOWN
    names += f" and {more} more" if more > 0 else ""
    count = f"{len(unmatched)} indexed file(s) no longer match the include/exclude patterns"
    if prune:
        report.warnings.append(f"{count}, removed from the index (--prune): {names}")
        return set()
    report.warnings.append(f"{count}, kept in the index: {names}; --prune removes them")
    return set(unmatched)


def relative(root: Path, file: Path) -> str:
    """``file``'s POSIX path relative to ``root`` (under it): by its string, as
    ``Path.relative_to`` costs a sync of 100,000 unchanged files whole seconds."""
    whole, prefix = str(file), str(root).rstrip(os.sep) + os.sep
    if not whole.startswith(prefix):
        return file.relative_to(root).as_posix()
    rest = whole[len(prefix) :]
    return rest if os.sep == "/" else rest.replace(os.sep, "/")
