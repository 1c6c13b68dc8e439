"""Reading an open index: searches, chunks by id and by file, the file list and the stats
(what :meth:`narezka.Index.search` and its siblings do)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from narezka.discover.vault import is_vault
from narezka.errors import ConfigError
from narezka.index.integrity import warn_if_damaged
from narezka.index.sourced import vault_links, with_links
from narezka.index.state import GET_BATCH, OpenIndex
from narezka.search import INDEX_SETTING, Hit, Hits, Query, SearchEngine
from narezka.search.hits import above
from narezka.search.staleness import mark_stale
from narezka.settings import convert_options
from narezka.tokens.bm25 import DEFAULT_ANALYZER, bm25_encoder


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """One indexed file as the index last saw it."""

    path: str
    size: int
    mtime: float
    doc_hash: str
    chunks: int


@dataclass(frozen=True, slots=True)
class IndexStats:
    """What ``Index.stats()`` reports."""

    corpus: str
    store: str
    files: int
    chunks: int
    embedder: str
    strategy: str
    settings: dict[str, Any]
    synced_at: str | None
    changed_files: tuple[str, ...]
    """Files whose size or mtime differ from the index, or that are gone: the next sync's work."""

    def to_json(self) -> dict[str, Any]:
        """The stats as JSON-ready data."""
        return {
            **{f: getattr(self, f) for f in self.__slots__},
            "changed_files": list(self.changed_files),
        }


def search(state: OpenIndex, query: str | Query, options: dict[str, Any]) -> Hits:
    """:meth:`narezka.Index.search`: one query through the search engine over the live
    generation, the relevance floor applied and stale hits marked."""
    if isinstance(query, Query):
        if options:
            query = query.replace(**options)
    else:
        query = Query(query, **options)
    meta = state.record()  # once per search: the store, strategy and embedder check use it
    store = state.shared.store_for(meta)
    if state.home is not None and state.counted != meta.data:
        state.counted = meta.data  # once per generation this Index reads
        warn_if_damaged(store, meta.data_dir(state.home), str(state.home))
    convert = convert_options()  # OCR and limits, for a hit's file read again
    engine = SearchEngine(
        store,
        corpus=state.corpus,
        strategy=meta.strategy,
        embedder=state.query_embedder(meta) if query.mode != "bm25" else None,
        reading=state.shared.lock.read,
        redact=state.settings.redact is not False,
        bm25=bm25_encoder(meta.bm25 or DEFAULT_ANALYZER),
        convert_cache=state.convert_cache(),
        rescore=state.search_tier(meta) if query.rescore else None,
        convert=convert,
    )
    found = engine.search(query)
    floor = query.min_relevance
    if floor is INDEX_SETTING:
        floor = state.settings.relevance_floor
    found, best = above(found, floor)
    if found and (state.home is not None or state.corpus.is_dir()):
        # A reader by URL without the corpus here cannot tell what is stale.
        # By URL the records are the server's whole file list: asked only for a file whose
        # mtime moved (a local manifest is asked for every hit's file: size too).
        found = mark_stale(
            found,
            state.corpus,
            lambda: state.manifest(meta),
            by_size=state.home is not None,
            convert=convert,
        )
    if found and state.source is not None:
        found = with_links(found, state.source, state.corpus)
    elif found and is_vault(state.corpus):
        found = vault_links(found, state.corpus)
    return Hits(found, best, floor)


def neighbours(state: OpenIndex, chunk_id: str, n: int) -> list[Hit]:
    """The chunk and up to ``n`` chunks before and after it in its file, in order."""
    if n < 0:
        raise ConfigError(f"n must be at least 0, got {n}")
    # The manifest and the points are read under one read lock: a sync in this process
    # cannot replace the file's points in between.
    with state.shared.lock.read(), state.manifest() as manifest:
        where = manifest.locate(chunk_id)
        entry = manifest.get(where[0]) if where is not None else None
        if where is None or entry is None:
            return []
        ids = [c.point_id for c in entry.chunks if abs(c.index - where[1]) <= n]
        return state.points(ids)


def chunks(state: OpenIndex, source: str | None) -> Iterator[Hit]:
    """Every stored chunk (of one source file, if given), file by file in order."""
    # One record, one manifest connection and one store for the whole walk (this reads
    # every file of the corpus); each file under the read lock, whole as a sync left it.
    meta = state.record()
    store = state.shared.store_for(meta)
    with state.manifest(meta) as manifest:
        paths = [source] if source is not None else manifest.paths()
        for path in paths:
            with state.shared.lock.read():
                entry = manifest.get(path)
                ids = [c.point_id for c in entry.chunks] if entry is not None else []
                found = [
                    p
                    for s in range(0, len(ids), GET_BATCH)
                    for p in state.points(ids[s : s + GET_BATCH], store)
                ]
            yield from found


def sources(state: OpenIndex) -> list[SourceInfo]:
    """Every indexed file, sorted by path."""
    with state.manifest() as manifest:
        return [SourceInfo(*row) for row in manifest.files()]


def stats(state: OpenIndex) -> IndexStats:
    """Files, chunks, embedder, strategy, last sync, and files changed since it."""
    meta = state.record()
    indexed = sources(state)
    return IndexStats(
        corpus=str(state.corpus),
        store=state.url or str(state.home),
        files=len(indexed),
        chunks=sum(s.chunks for s in indexed),
        embedder=meta.embedder,
        strategy=meta.strategy,
        settings=state.settings.to_record(),
        synced_at=meta.synced_at,
        # A reader by URL may not have the corpus here: then it cannot tell.
        changed_files=tuple(_changed(state, indexed))
        if state.home is not None or state.corpus.is_dir()
        else (),
    )


def _changed(state: OpenIndex, indexed: Sequence[SourceInfo]) -> Iterator[str]:
    for source in indexed:
        try:
            stat = (state.corpus / source.path).stat()
        except OSError:
            yield source.path
            continue
        if (stat.st_size, stat.st_mtime) != (source.size, source.mtime):
            yield source.path
