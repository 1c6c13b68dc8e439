"""What an open :class:`~narezka.Index` holds, and the reads every part of it shares.

:class:`OpenIndex` is the state behind the face: the folder (or the server URL), the
settings, the one open store this process shares for the folder, the embedder and the last
record read. The rooms of :class:`~narezka.Index` (``lifecycle``, ``sync_steps``,
``maintenance``, ``querying``, ``publishing``) are functions over it, so none of them needs
the face and the face needs none of their internals.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from narezka.embed import CachedEmbedder, Embedder, get_embedder
from narezka.embed.rescore import RescoreModel, rescore_model
from narezka.errors import ConfigError
from narezka.index import layout
from narezka.index.records import IndexRecord, read_record
from narezka.index.sharing import SharedStore, acquire, room_to_merge
from narezka.index.syncing import open_embedder
from narezka.runs.config import ChunkConfig
from narezka.settings import Settings, chunk_config, qdrant_key, servers
from narezka.sources import Source
from narezka.store import Manifest, StoredHit, VectorStore
from narezka.store.cluster import ClusterParams
from narezka.store.collections import DEFAULT_COLLECTION

# qdrant-client is imported only for an index on a server, the search stack only by a search
if TYPE_CHECKING:
    from narezka.search import Hit
    from narezka.store import server_record

GET_BATCH = 256
"""Points read from the store in one call when a whole file or index is walked."""


class OpenIndex:
    """One open index: where it is, what it was built with, and what it keeps open."""

    def __init__(
        self,
        home: Path | None,
        corpus: Path,
        settings: Settings,
        *,
        url: str | None,
        embedder: Embedder | None,
        meta: IndexRecord | None,
        spec: str | None,
        collection: str = DEFAULT_COLLECTION,
        cluster: ClusterParams | None = None,
    ) -> None:
        self.home = home
        """The index folder; None for an index opened by its server URL (read-only)."""
        self.spec_name = spec
        self.corpus = corpus
        self.settings = settings
        self.url = url
        self.collection = collection
        """A server index's name: the alias ``NAME`` readers query, on one of its collections
        ``NAME_gN``, and its record in ``NAME-record``."""
        self.cluster = cluster if cluster is not None else cluster_of(meta, "given")
        """A server index's cluster settings as given (unset ones sized by each new
        collection's expected points: :mod:`narezka.store.cluster`)."""
        self.given = embedder
        self.model: Embedder | None = None
        self.config: tuple[Settings, Embedder, ChunkConfig] | None = None
        """The chunking resolved for these settings and this embedder (:meth:`chunk_config`)."""
        self.meta = meta
        self.remote_files: server_record.RecordManifest | None = None
        key = str(home.resolve()) if home is not None else f"{url}#{collection}"
        self.shared: SharedStore = acquire(key, home)
        self.closed = False
        self.counted: str | None = None
        """The generation whose damage count a search last warned about (once each)."""
        self.tier: RescoreModel | None = None
        self.source: Source | None = None
        """Where the corpus is staged from (a git repository, a site); None: a plain folder."""
        self.read_only: Path | None = None
        """The index folder this user cannot write, when ``home`` is a private copy of it."""

    def chunk_config(self) -> ChunkConfig:
        """The chunking this index follows, resolved once for an open index (not again by
        each sync of a watcher or a server) and again only when its settings change."""
        model = self.embedder()
        if self.config is None or self.config[:2] != (self.settings, model):
            self.config = (self.settings, model, chunk_config(self.settings, model))
        return self.config[2]

    def convert_cache(self) -> Path | None:
        """The cache of this index's converted documents (PDF, Word, web pages…), which a
        search reads when it re-reads a hit's file; None for an index opened by its URL."""
        return None if self.home is None else self.home / layout.CONVERT_CACHE_NAME

    def check_open(self) -> None:
        """Refuse any use of a closed index."""
        if self.closed:
            raise ConfigError(f"the index {self.where()} is closed")

    def where(self) -> str:
        """The index named for a message: its folder, or its server and collection."""
        return str(self.home) if self.home is not None else f"{self.url} ({self.collection})"

    def local_home(self, action: str) -> Path:
        """The folder a writing ``action`` works in; refused for an index read by URL or
        from a private copy."""
        if self.read_only is not None:
            raise ConfigError(
                f"{self.read_only} is read-only for you (searched from a private copy): "
                f"{action} it as a user who can write it"
            )
        if self.home is None:
            raise ConfigError(
                f"the index {self.where()} was opened by its server URL, which is read-only: "
                f"{action} it from its index folder on the machine that holds the corpus"
            )
        return self.home

    def record(self) -> IndexRecord:
        """The index's record as it is now."""
        self.check_open()
        # Another process may have synced or rebuilt since: read the record each time (it
        # is one small file, replaced atomically; on a server, one point).
        if self.home is None:
            assert self.url is not None
            meta = fetch_record(self.url, self.collection)
            self.remote_files = None  # read with the next file listing, if one is asked for
            self.meta = meta
        else:
            self.meta = read_record(self.home)
        return self.meta

    def store(self) -> VectorStore:
        """The open store of the live generation."""
        return self.shared.store_for(self.record())

    @contextlib.contextmanager
    def manifest(
        self, meta: IndexRecord | None = None
    ) -> Iterator[Manifest | server_record.RecordManifest]:
        """The file list of the generation ``meta`` names (default: the live one); by URL,
        the list the writer last published."""
        record = meta if meta is not None else self.record()
        if self.home is None:
            from narezka.store import server_record

            assert self.url is not None
            files = self.remote_files  # a search on another thread may reset it meanwhile
            if files is None:
                files = self.remote_files = server_record.fetch_files(
                    self.url, self.collection, qdrant_key()
                )
            yield files
            return
        with Manifest(record.data_dir(self.home)) as manifest:
            yield manifest

    def points(self, ids: Sequence[str], store: VectorStore | None = None) -> list[Hit]:
        """The stored chunks with these ids, in their order (unknown ids left out)."""
        if not ids:
            return []
        store = store if store is not None else self.store()
        with self.shared.lock.read():
            points = store.get(list(ids))
        by_id = {p.id: p for p in points}
        from narezka.search import Hit  # the search stack: not loaded by an index run

        return [Hit.from_stored(StoredHit(i, 0.0, by_id[i].payload), "") for i in ids if i in by_id]

    def spec(self) -> str | Embedder:
        """What index.json records as the embedder: its spec, or the object itself (then
        searches and syncs must be given it again)."""
        return self.spec_name if self.spec_name else self.embedder()

    def embedder(self, meta: IndexRecord | None = None) -> Embedder:
        """The embedder that writes (and its name must match what the index holds)."""
        if self.model is None:
            self.model = self.given or embedder_of(meta or self.record())
        return self.model

    def query_embedder(self, meta: IndexRecord) -> Embedder:
        """The embedder a search embeds its query with: the index's own, with its cache."""
        model = self.embedder(meta)
        built = meta.embedder
        if built and model.name != built:
            raise ConfigError(
                f"the index was built with {built}, not {model.name}: search with the same "
                "embedder or re-index with --rebuild"
            )
        if not isinstance(model, CachedEmbedder) and self.home is not None:
            model = self.model = open_embedder(model, self.home)
        return model

    def search_tier(self, meta: IndexRecord) -> RescoreModel | None:
        """The quality tier's model for a search of an index that stores its vectors (None:
        the index has none, and is searched as before the tier existed)."""
        if meta.rescore is None:
            return None
        tier = self.tier
        if tier is None or tier.name != meta.rescore:
            spec = meta.rescore.partition(":")[0]
            cached = self.query_embedder(meta) if self.home is not None else None
            cache = cached.cache if isinstance(cached, CachedEmbedder) else None
            tier = self.tier = rescore_model(spec, cache)
            if tier.name != meta.rescore:
                raise ConfigError(
                    f"the index's second vectors were made by {meta.rescore}, not "
                    f"{tier.name}: re-index with --rebuild (or search with rescore off)"
                )
        return tier


def fetch_record(url: str, collection: str) -> IndexRecord:
    """The record a server index's writer last published, as read by URL (where it is)."""
    from narezka.store import server_record

    where = f"{url}/{server_record.record_collection(collection)}"
    return IndexRecord.from_json(server_record.fetch(url, collection, qdrant_key()), where).replace(
        url=url
    )


def embedder_of(meta: IndexRecord) -> Embedder:
    """The embedder an index records by its spec (an embedder object must be given again)."""
    if not meta.embedder_spec:
        raise ConfigError(
            f"the index was built with an embedder object ({meta.embedder}): "
            "pass the same embedder (Index.open(..., embedder=...))"
        )
    return get_embedder(meta.embedder_spec, servers=servers())


def cluster_of(meta: IndexRecord | None, which: Literal["given", "applied"]) -> ClusterParams:
    """The cluster settings an index recorded: as ``given`` or as ``applied``."""
    return meta.cluster(which) if meta is not None else ClusterParams.from_record(None)


def point_count(home: Path, meta: IndexRecord | None) -> int:
    """How many points the index ``meta`` records holds (0 for none): a rebuild's size."""
    if meta is None:
        return 0
    with Manifest(meta.data_dir(home)) as manifest:
        return sum(row[4] for row in manifest.files())


def optimize(store: VectorStore) -> None:
    """Merge the store's segments and vacuum it, where the merge fits on the disk."""
    # A long-lived store is not closed after each sync: merge segments and vacuum now (a
    # later run does, where the merge does not fit on the disk: a bus error otherwise).
    merge = getattr(store, "optimize", None)
    if callable(merge) and room_to_merge(store):
        merge()
