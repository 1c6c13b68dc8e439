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
import os
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, Protocol

from narezka.convert.capability import still_lacking
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.discover import read_document
from narezka.discover.naming import note_in_corpus
from narezka.embed import (
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    InputTooLongError,
    Matrix,
    embed_all,
    get_embedder,
)
from narezka.embed.rescore import RescoreModel
from narezka.enrich import Rules, chunk_payload
from narezka.enrich.llm_context import ContextWriter
from narezka.index import layout
from narezka.index.file_points import FileCut, file_points
from narezka.index.layout import CACHE_NAME, INDEX_META, INDEX_VERSION, STORE_DIRNAME
from narezka.index.reports import IndexReport, Progress
from narezka.index.writes import FileWrite, WriteBatch
from narezka.runs.chunking import (
    ChunkTask,
    FileOutcome,
    chunk_file,
    chunk_raw,
)
from narezka.runs.config import ChunkConfig
from narezka.runs.file_chunks import FileChunks, is_note, with_document_meta
from narezka.settings import servers
from narezka.split import SplitParams, Strategy
from narezka.store import (
    ChunkEntry,
    FileEntry,
    Manifest,
    SparseVector,
    StoredPoint,
    VectorStore,
    chunk_point_id,
)
from narezka.tokens.bm25 import DEFAULT_ANALYZER, bm25_encoder
from narezka.types import Chunk

__all__ = ["INDEX_META", "INDEX_VERSION", "STORE_DIRNAME", "IndexReport", "Progress", "Syncer"]
RESPLIT_ATTEMPTS = 3
RESPLIT_SHRINK = 0.75
"""A file whose chunk a model refuses is re-chunked this much smaller, a few times at most."""
INCOMPLETE = "!incomplete"
"""Appended to the fingerprint a file is recorded with when some of its chunks got no LLM
context (a failed request): its stat no longer matches, so the next sync asks again."""


def default_store_dir(corpus: Path) -> Path:
    """Where the index of a corpus lives unless told otherwise: inside it, ``.narezka/``."""
    return layout.default_home(corpus)


def read_index_meta(store_dir: Path) -> dict[str, Any]:
    """The index's own record: corpus root, embedder, chunking fingerprint, live data."""
    return layout.read_meta(store_dir)


def open_embedder(spec: str | Embedder, store_dir: Path | None) -> Embedder:
    """The embedder for a spec, with an embedding cache kept beside the index."""
    embedder = get_embedder(spec, servers=servers()) if isinstance(spec, str) else spec
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
        convert: ConvertOptions = DEFAULT,
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
        self.convert = convert
        """OCR on or off and the size limits, read at the top (:func:`convert_options`)."""
        self._incomplete = False
        self._lacks = ""
        self._embeds: tuple[str, ...] = ()
        if context is not None:
            self.fingerprint += "+" + context.fingerprint
        self.bm25 = bm25_encoder(bm25)
        self.report = report or IndexReport(embedder=embedder.name)
        self.writes = WriteBatch(store, manifest, self.report, embedder.dim, writing)
        """Files embedded and not yet written: :meth:`flush` writes them."""
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
        return known == state or still_lacking(known, state, self.convert)

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
            self.flush()

    def flush(self) -> None:
        """Write the files embedded so far (a sync writes a few at a time)."""
        self.writes.flush()

    def task(self, root: Path, file: Path, size: int = 0) -> ChunkTask:
        """The chunking of one file (of ``size`` bytes), for a worker."""
        return ChunkTask(
            root, file, self.params, size, convert_cache=self.convert_cache, convert=self.convert
        )

    def apply(self, root: Path, file: Path, stat: FileStat, outcome: FileOutcome) -> None:
        """Embed and write one file's chunks (``outcome``, chunked by a worker or here).

        Raises the file's problem as a :class:`SourceError`, after its warnings are kept."""
        report = self.report
        self._file_bytes, self._bytes_done = stat.st_size, 0
        source = relative(root, file)
        report.warnings.extend(note_in_corpus(w, file, source) for w in outcome.read_warnings)
        report.seconds["chunk"] += outcome.seconds
        self._lacks = outcome.lacks
        self._embeds = outcome.embeds
        if outcome.error is not None:
            raise outcome.error
        cut = self._embedded(root, file, source, outcome)
        if cut.result is not None:
            report.warnings.extend(cut.result.warnings)
            if cut.result.secrets:
                report.secrets[source] = cut.result.secrets
        if source in self._began_new or self.known.get(source) is None:
            report.files_new += 1
        else:
            report.files_changed += 1
        started = time.perf_counter()
        points = file_points(cut, self.store, self.embedder, self.rescore, self._point, report)
        report.seconds["store"] += time.perf_counter() - started
        self.stage("writing", source)
        fingerprint = self.fingerprint + self._lacks + (INCOMPLETE if self._incomplete else "")
        entry = FileEntry(
            source, stat.st_size, stat.st_mtime, outcome.digest, fingerprint,
            self.embedder.name, tuple(cut.entries), self._embeds,
        )  # fmt: skip
        self.writes.add(FileWrite(cut.plan, points, entry))
        report.chunks_embedded += len(cut.plan.embed)
        if self.on_rate is not None and report.chunks_embedded:
            self.on_rate(report.chunks_embedded / (time.perf_counter() - self._started))
        report.chunks_kept += len(cut.plan.keep)
        report.chunks_deleted += len(cut.plan.delete)

    def _embedded(self, root: Path, file: Path, source: str, outcome: FileOutcome) -> FileCut:
        """The file's chunks planned against the manifest and their new content embedded;
        a chunk the model refuses as too long gets the file cut finer, a few times at most."""
        params, result = self.params, outcome.result
        chunks = list(result.chunks) if result is not None else []
        text: str | None = None
        for attempt in range(RESPLIT_ATTEMPTS + 1):
            if attempt > 0:
                text, result, chunks = self._recut(root, file, outcome.digest, params)
            if self.context is not None:
                if text is None:  # the worker that chunked the file kept its text
                    text = read_document(root, file, redact=params.redact, options=self.convert)[
                        0
                    ].text
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
            try:
                vectors = self._embed(source, [by_index[e.index].embed_text for e in plan.embed])
            except InputTooLongError as exc:
                # The server counted more tokens than our tokenizer for its model did: cut
                # the file finer at exact boundaries and try again; nothing is truncated.
                if attempt == RESPLIT_ATTEMPTS:
                    raise
                self.report.warnings.append(
                    f"{source}: {exc}; re-split at {int(params.size * RESPLIT_SHRINK)} tokens"
                )
                params = dataclasses.replace(params, size=int(params.size * RESPLIT_SHRINK))
            else:
                return FileCut(result, entries, plan, by_index, vectors)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _recut(
        self, root: Path, file: Path, digest: str, params: SplitParams
    ) -> tuple[str, FileChunks, list[Chunk]]:
        """The file read and chunked again with ``params``: its text, chunking and chunks."""
        # A re-cut after a refusal is rare: done here, from the file as it is now.
        started = time.perf_counter()
        raw, _ = read_document(root, file, redact=params.redact, options=self.convert)
        note = is_note(root, file)
        result = chunk_raw(raw, self.strategy, params, self.counter, note=note)
        chunks = with_document_meta(result.chunks, raw, digest, note=note, resplit=True)
        self.report.seconds["chunk"] += time.perf_counter() - started
        return raw.text, result, chunks

    def _embed(self, source: str, texts: list[str]) -> Matrix:
        """The vectors of ``texts``, the file's share of the progress moving as they come."""
        self.stage("embedding", source)
        started = time.perf_counter()
        try:
            return embed_all(texts, self.embedder, on_progress=self._advance)
        finally:
            self.report.seconds["embed"] += time.perf_counter() - started

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
        self.flush()
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


class FileStat(Protocol):
    """What a sync keeps of a file's ``stat``: an ``os.stat_result`` is one."""

    @property
    def st_size(self) -> int: ...

    @property
    def st_mtime(self) -> float: ...


def relative(root: Path, file: Path) -> str:
    """``file``'s POSIX path relative to ``root`` (under it): by its string, as
    ``Path.relative_to`` costs a sync of 100,000 unchanged files whole seconds."""
    whole, prefix = str(file), str(root).rstrip(os.sep) + os.sep
    if not whole.startswith(prefix):
        return file.relative_to(root).as_posix()
    rest = whole[len(prefix) :]
    return rest if os.sep == "/" else rest.replace(os.sep, "/")
