"""Sync a corpus into a vector index: discover → chunk → embed → upsert, incrementally.

Per file, the manifest says what the index holds. Unchanged files are skipped by ``stat``
alone; a changed file is re-chunked and only chunks with a new content hash are embedded
(vectors of moved chunks are copied); removed chunks and deleted files' points are deleted.
Each file is written under the manifest's write-ahead protocol, so a kill at any moment
leaves an index the next sync repairs (see :mod:`narezka.store.manifest`).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from narezka.config import load_rules
from narezka.discover import iter_files, read_document
from narezka.embed import (
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    InputTooLongError,
    embed_all,
    get_embedder,
    signal_embedder,
)
from narezka.embed.calibrate import calibrated_budget
from narezka.enrich import Rules, chunk_payload
from narezka.errors import ConfigError, NarezkaError, SourceError
from narezka.pipeline.chunking import chunk_raw, doc_hash, include_for, make_params
from narezka.split import SplitParams, get_strategy
from narezka.store import (
    ChunkEntry,
    FileEntry,
    Manifest,
    SparseVector,
    StoredPoint,
    VectorStore,
    chunk_point_id,
    open_store,
)
from narezka.store.sparse import DEFAULT_ANALYZER, Bm25Encoder, check_analyzer
from narezka.tokens import TokenCounter, get_counter
from narezka.types import Chunk

STORE_DIRNAME = ".narezka"
INDEX_META = "index.json"
INDEX_VERSION = 1
RESPLIT_ATTEMPTS = 3
RESPLIT_SHRINK = 0.75
"""A file whose chunk a model refuses is re-chunked this much smaller, a few times at most."""


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
    warnings: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"chunk": 0.0, "embed": 0.0, "store": 0.0, "total": 0.0}
    )
    cache_hits: int = 0
    cache_misses: int = 0
    embedder: str = ""
    store: str = ""

    def as_dict(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in self.__slots__}
        data["skipped"] = [{"path": e.path, "problem": e.problem} for e in self.skipped]
        return data


def default_store_dir(corpus: Path) -> Path:
    """Where the index of a corpus lives unless told otherwise: inside it, ``.narezka/``."""
    return (corpus if corpus.is_dir() else corpus.parent) / STORE_DIRNAME


def read_index_meta(store_dir: Path) -> dict[str, Any]:
    """The index's own record: corpus root, embedder, chunking fingerprint."""
    path = store_dir / INDEX_META
    if not path.is_file():
        raise ConfigError(f"no narezka index in {store_dir}: run `narezka index CORPUS` first")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def open_embedder(spec: str | Embedder, store_dir: Path | None) -> Embedder:
    """The embedder for a spec, with an embedding cache kept beside the index."""
    embedder = get_embedder(spec) if isinstance(spec, str) else spec
    if store_dir is None or isinstance(embedder, CachedEmbedder):
        return embedder
    store_dir.mkdir(parents=True, exist_ok=True)
    return CachedEmbedder(embedder, EmbeddingCache(store_dir / "embeddings.sqlite"))


def sizing(embedder: Embedder, params: dict[str, Any]) -> tuple[SplitParams, TokenCounter]:
    """Split parameters and counter: by default the embedder's own tokens and budget."""
    unit = params.get("unit") or "tokens"
    # An index records its embedder's tokenizer by name; sync hands that name back.
    own = params.get("tokenizer") in (None, "", embedder.counter.name)
    if unit == "tokens" and own:
        counter = embedder.counter
        params = {**params, "unit": "tokens", "tokenizer": counter.name}
        params.setdefault("size", None)
        if params["size"] is None:
            # A served model narezka cannot tokenize exactly may have a measured budget.
            measured = calibrated_budget(embedder.name)
            params["size"] = min(embedder.budget, measured or embedder.budget)
        return make_params(**params), counter
    split_params = make_params(**{**params, "unit": unit})
    return split_params, get_counter(split_params.unit, split_params.tokenizer)


class Syncer:
    """One sync run over a corpus into one store; see :func:`index`."""

    def __init__(
        self,
        corpus: Path,
        store: VectorStore,
        manifest: Manifest,
        embedder: Embedder,
        strategy: str,
        params: SplitParams,
        counter: TokenCounter,
        rules: Rules,
        bm25: str = DEFAULT_ANALYZER,
    ) -> None:
        self.corpus = corpus
        self.store = store
        self.manifest = manifest
        self.embedder = embedder
        self.strategy = get_strategy(strategy, embed=signal_embedder(embedder))
        self.params = params
        self.counter = counter
        self.rules = rules
        self.fingerprint = params.fingerprint(strategy)
        self.bm25 = Bm25Encoder(analyzer=bm25)
        self.report = IndexReport(embedder=embedder.name)
        # One query up front: a no-change sync must not ask the manifest file by file.
        self.known = manifest.stats()

    def sync_file(self, root: Path, file: Path) -> None:
        report = self.report
        stat = file.stat()
        source = file.relative_to(root).as_posix()
        state = (stat.st_size, stat.st_mtime, self.fingerprint, self.embedder.name)
        if self.known.get(source) == state:
            report.files_unchanged += 1
            return
        started = time.perf_counter()
        raw, warnings = read_document(root, file)
        report.warnings.extend(warnings)
        report.seconds["chunk"] += time.perf_counter() - started
        params = self.params
        for attempt in range(RESPLIT_ATTEMPTS + 1):
            started = time.perf_counter()
            result = chunk_raw(raw, self.strategy, params, self.counter)
            doc_warnings = result.warnings
            chunks = [_with_meta(c, raw.mtime, resplit=attempt > 0) for c in result.chunks]
            report.seconds["chunk"] += time.perf_counter() - started
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
            started = time.perf_counter()
            try:
                vectors = embed_all(
                    [by_index[e.index].embed_text for e in plan.embed], self.embedder
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
        if self.known.get(source) is None:
            report.files_new += 1
        else:
            report.files_changed += 1

        started = time.perf_counter()
        reused = {}
        if plan.reuse:
            stored = self.store.get([old_id for _, old_id in plan.reuse], with_vectors=True)
            reused = {p.id: p for p in stored}
        report.seconds["store"] += time.perf_counter() - started

        started = time.perf_counter()
        points = [
            self._point(entry.point_id, by_index[entry.index], vector)
            for entry, vector in zip(plan.embed, vectors, strict=True)
        ]
        for entry, old_id in plan.reuse:
            donor = reused.get(old_id)
            if donor is None or donor.dense is None:  # vanished under us: embed it after all
                vector = embed_all([by_index[entry.index].embed_text], self.embedder)[0]
                points.append(self._point(entry.point_id, by_index[entry.index], vector))
                report.chunks_embedded += 1
            else:
                points.append(self._point(entry.point_id, by_index[entry.index], donor.dense))
                report.chunks_reused += 1
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
                doc_hash(raw.text),
                self.fingerprint,
                self.embedder.name,
                tuple(entries),
            )
        )
        report.seconds["store"] += time.perf_counter() - started
        report.chunks_embedded += len(plan.embed)
        report.chunks_kept += len(plan.keep)
        report.chunks_deleted += len(plan.delete)

    def _point(self, point_id: str, chunk: Chunk, vector: Any) -> StoredPoint:
        sparse: SparseVector = self.bm25.encode_document(chunk.embed_text)
        return StoredPoint(point_id, vector, chunk_payload(chunk, self.rules), sparse)

    def delete_missing(self, seen: set[str]) -> None:
        for path in self.manifest.paths():
            if path in seen:
                continue
            entry = self.manifest.get(path)
            ids = [c.point_id for c in entry.chunks] if entry else []
            self.manifest.begin(path, ids)
            if ids:
                self.store.delete(ids)
            self.manifest.commit_delete(path)
            self.report.files_deleted += 1
            self.report.chunks_deleted += len(ids)


def index(
    corpus: str | Path,
    *,
    store_dir: str | Path | None = None,
    url: str | None = None,
    strategy: str = "headings",
    embedder: str | Embedder = "use",
    rebuild: bool = False,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    on_file: Callable[[str], None] | None = None,
    bm25: str | None = None,
    **params: Any,
) -> IndexReport:
    """Sync ``corpus`` into the index (embedded in ``store_dir``, or a Qdrant server at
    ``url``); returns what changed. ``params`` are split parameters; by default chunks are
    sized in the embedder's own tokens, to its budget. ``bm25`` is the BM25 analyzer (see
    :mod:`narezka.store.sparse`): by default the one the index was built with, ``snowball``
    for a new index; naming another for an existing index is refused (its stored sparse
    vectors would not match the queries) until ``rebuild``."""
    started = time.perf_counter()
    root = Path(corpus)
    if not root.exists():
        raise ConfigError(f"{root}: no such file or directory")
    home = Path(store_dir) if store_dir else default_store_dir(root)
    if bm25 is not None:
        check_analyzer(bm25)
    if rebuild:
        _remove_index(home)
    elif (home / INDEX_META).is_file():
        meta = read_index_meta(home)
        version = meta.get("version")
        if version != INDEX_VERSION:
            raise ConfigError(
                f"{home} was written by another narezka version (index format {version}, "
                f"this one reads {INDEX_VERSION}): re-create it with --rebuild"
            )
        built = meta.get("bm25") or DEFAULT_ANALYZER
        if bm25 is not None and bm25 != built:
            raise ConfigError(
                f"{home} was built with BM25 analyzer {built!r}, not {bm25!r}: its stored "
                "sparse vectors would not match the queries; re-create it with --rebuild"
            )
        bm25 = built
    bm25 = bm25 or DEFAULT_ANALYZER
    model = open_embedder(embedder, home)
    split_params, counter = sizing(model, params)
    store = open_store(home if url is None else None, url=url)
    try:
        store.ensure(model.dim, sparse=True)
        with Manifest(home) as manifest:
            syncer = Syncer(
                root,
                store,
                manifest,
                model,
                strategy,
                split_params,
                counter,
                load_rules(root),
                bm25,
            )
            report = syncer.report
            report.store = url or str(home)
            report.recovered = manifest.recover(store)
            seen: set[str] = set()
            errors: list[SourceError] = []
            globs = include_for(syncer.strategy, include)
            for base, file in iter_files([root], globs, exclude, errors=errors):
                source = file.relative_to(base).as_posix()
                seen.add(source)
                try:
                    syncer.sync_file(base, file)
                except SourceError as exc:
                    report.skipped.append(exc)
                except OSError as exc:
                    report.skipped.append(SourceError(source, f"cannot read: {exc}"))
                except NarezkaError as exc:
                    # An embedding failure names the file; its old points stay in place.
                    report.skipped.append(SourceError(source, str(exc)))
                if on_file is not None:
                    on_file(source)
            report.skipped.extend(errors)
            syncer.delete_missing(seen)
            spec = embedder if isinstance(embedder, str) else None
            _write_index_meta(
                home, root, model, spec, strategy, split_params, url, include, exclude, bm25
            )
    finally:
        store.close()
    if isinstance(model, CachedEmbedder):
        report.cache_hits, report.cache_misses = model.hits, model.misses
    report.seconds["total"] = time.perf_counter() - started
    return report


def _write_index_meta(
    home: Path,
    root: Path,
    model: Embedder,
    spec: str | None,
    strategy: str,
    params: SplitParams,
    url: str | None,
    include: Sequence[str] | None,
    exclude: Sequence[str],
    bm25: str,
) -> None:
    optional = {
        name: value
        for name in ("threshold", "percentile", "parent_size")
        if (value := getattr(params, name)) is not None
    }
    meta = {
        "version": INDEX_VERSION,
        "corpus": str(root.resolve()),
        "embedder": model.name,
        "embedder_spec": spec,
        "dim": model.dim,
        "strategy": strategy,
        "fingerprint": params.fingerprint(strategy),
        "params": {
            "size": params.size,
            "unit": params.unit,
            "tokenizer": None if spec and params.unit == "tokens" else params.tokenizer,
            "overlap": params.overlap,
            "levels": list(params.levels),
            "min_chars": params.min_chars,
            **optional,
        },
        # sync and watch must read the same files the first run read.
        "include": list(include) if include else None,
        "exclude": list(exclude),
        "url": url,
        # Queries must be analyzed as the stored documents were (absent: snowball).
        "bm25": bm25,
    }
    home.mkdir(parents=True, exist_ok=True)
    tmp = home / (INDEX_META + ".tmp")
    tmp.write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(home / INDEX_META)


def _remove_index(home: Path) -> None:
    if (home / INDEX_META).is_file() or (home / "manifest.sqlite").is_file():
        shutil.rmtree(home)


def _with_meta(chunk: Chunk, mtime: float, *, resplit: bool) -> Chunk:
    extra: dict[str, Any] = {"mtime": mtime}
    if resplit:
        extra["resplit"] = True
    return dataclasses.replace(chunk, meta={**chunk.meta, **extra})
