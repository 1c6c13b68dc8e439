"""``ServerStore``: a collection on a Qdrant server or cluster, through ``qdrant-client``.

Same ids, payload codec, vectors (``dense`` + ``bm25`` with the ``idf`` modifier) and both
rankings in one batch call as ``EdgeStore``, so an index can be pushed from one to the other.
The API key comes from ``QDRANT_API_KEY`` unless given. A collection it creates is laid out
as its :class:`~narezka.store.cluster.ClusterParams` say (shards, replication, write
consistency, on-disk vectors and payload, int8 scalar quantization) with a payload index on
every field narezka filters by; a quantized collection is searched with re-scoring and
oversampling. Aliases (:meth:`ServerStore.point_alias`) let a rebuild switch readers over at once.

qdrant-client's *local mode* (``QdrantClient(":memory:")`` or ``path=``) speaks the same API
and is what the tests run against, but it is a pure-Python brute-force engine without payload
indexes: use it for tests and tiny corpora only (filtered queries take seconds at 50k points).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from narezka.errors import MissingDependencyError
from narezka.store.base import (
    DENSE,
    RESCORE,
    SPARSE,
    EngineStore,
    Eq,
    Filter,
    StoredHit,
    StoredPoint,
    Vector,
    as_floats,
    condition_maker,
    encode_payload,
    filter_parts,
    in_order,
    is_point_id,
    payload_indexes,
    stored_hits,
)
from narezka.store.cluster import ClusterParams
from narezka.store.errors import DimensionMismatchError, StoreConfigError, StoreUnavailableError
from narezka.types import SparseVector

try:
    from qdrant_client import QdrantClient
    from qdrant_client import models as qm
    from qdrant_client.http.exceptions import ApiException
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError("qdrant-client", "server") from exc

BATCH = 256
QUANTILE = 0.99
"""int8 range from the 99th percentile of values: outliers do not flatten the rest."""


class ServerStore(EngineStore):
    """A ``VectorStore`` in a Qdrant collection (server, cluster, or local mode for tests)."""

    def __init__(
        self,
        url: str | None = None,
        *,
        collection: str = "narezka",
        api_key: str | None = None,
        client: QdrantClient | None = None,
        cluster: ClusterParams | None = None,
        timeout: int = 10,
    ) -> None:
        """``api_key`` is the server's (``QDRANT_API_KEY``, handed down by whoever opens the
        store: this one reads no environment). ``cluster`` lays out a collection this store
        creates (its unset ``on_disk`` and ``quantize`` mean off: size them first with
        :meth:`ClusterParams.sized`)."""
        if client is None:
            if not url:
                raise StoreConfigError("ServerStore needs a url or a client")
            # check_compatibility would probe the server now and only warn; ensure() probes
            # it and fails with the URL and the reason instead.
            client = QdrantClient(
                url=url, api_key=api_key, timeout=timeout, check_compatibility=False
            )
        self.url = url or "local"
        self.collection = collection
        self.cluster = cluster or ClusterParams()
        self._search: qm.SearchParams | None = None
        self._client: QdrantClient | None = client
        self._sparse = False
        self._ready = False
        self.dim = 0
        self.rescore_dim = 0
        """The second dense vector's size (0: the collection has none)."""

    def _need(self) -> QdrantClient:
        if self._client is None or not self._ready:
            raise StoreConfigError(f"collection {self.collection} is not open: call ensure(dim)")
        return self._client

    def _call(self, action: Any) -> Any:
        try:
            return action()
        except ApiException as exc:
            raise StoreUnavailableError(self.url, str(exc) or type(exc).__name__) from exc
        except OSError as exc:
            raise StoreUnavailableError(self.url, str(exc)) from exc

    # ---- lifecycle ----------------------------------------------------------------------

    def ensure(self, dim: int, sparse: bool = True, rescore: int = 0) -> None:
        """Create the collection with payload indexes, or check the existing one's size
        (and its second vector's, ``rescore``, when asked)."""
        if self._client is None:
            raise StoreConfigError(f"collection {self.collection} is closed")
        client = self._client
        name = self.collection
        if self._call(lambda: client.collection_exists(name)):
            info = self._call(lambda: client.get_collection(name))
            vectors = info.config.params.vectors
            found = vectors.get(DENSE) if isinstance(vectors, dict) else None
            if found is None:
                raise StoreConfigError(f"collection {name} has no {DENSE!r} vector; --rebuild")
            if found.size != dim:
                raise DimensionMismatchError(f"{self.url}/{name}", dim, found.size)
            has_sparse = SPARSE in (info.config.params.sparse_vectors or {})
            if sparse and not has_sparse:
                raise StoreConfigError(f"collection {name} has no BM25 vectors; use --rebuild")
            self._sparse = has_sparse
            second = vectors.get(RESCORE) if isinstance(vectors, dict) else None
            self.rescore_dim = second.size if second is not None else 0
            if rescore and rescore != self.rescore_dim:
                built = f"{self.rescore_dim}-d second vectors" if self.rescore_dim else "none"
                raise StoreConfigError(
                    f"collection {name} has {built}, not {rescore}-d ones (the rescore setting "
                    "changed); use --rebuild"
                )
            quantized = info.config.quantization_config is not None
            # What the collection has, whatever this store was told: grow() adds the rest.
            params = info.config.params
            self.cluster = self.cluster.replace(
                shards=params.shard_number,
                replicas=params.replication_factor,
                write_consistency=params.write_consistency_factor,
                on_disk=bool(found.on_disk),
                quantize=quantized,
            )
        else:
            self._create(client, dim, sparse, rescore)
            quantized = bool(self.cluster.quantize)
        self._search = self._search_params(quantized)
        self.dim = dim
        self._ready = True

    def _search_params(self, quantized: bool) -> qm.SearchParams | None:
        # Quantized vectors rank the candidates; the originals re-score the best of them.
        if not quantized:
            return None
        rescore = qm.QuantizationSearchParams(rescore=True, oversampling=self.cluster.oversampling)
        return qm.SearchParams(quantization=rescore)

    def grow(self, cluster: ClusterParams) -> ClusterParams:
        """Switch on the on-disk storage and quantization ``cluster`` asks for and the open
        collection lacks (``PATCH /collections/{name}``; the server converts in the
        background and answers meanwhile): the rule by size, for a collection that grew.
        Returns the collection's layout now."""
        client = self._need()
        disk = bool(cluster.on_disk) and not self.cluster.on_disk
        quantize = bool(cluster.quantize) and not self.cluster.quantize
        if not (disk or quantize):
            return self.cluster
        sparse = qm.SparseVectorParams(
            modifier=qm.Modifier.IDF, index=qm.SparseIndexParams(on_disk=True)
        )
        self._call(
            lambda: client.update_collection(
                self.collection,
                vectors_config=dict.fromkeys(
                    (DENSE, RESCORE) if self.rescore_dim else (DENSE,),
                    qm.VectorParamsDiff(on_disk=True),
                )
                if disk
                else None,
                sparse_vectors_config={SPARSE: sparse} if disk and self._sparse else None,
                collection_params=qm.CollectionParamsDiff(on_disk_payload=True) if disk else None,
                quantization_config=_int8() if quantize else None,
            )
        )
        self.cluster = self.cluster.replace(
            on_disk=self.cluster.on_disk or disk, quantize=self.cluster.quantize or quantize
        )
        self._search = self._search_params(bool(self.cluster.quantize))
        return self.cluster

    def _create(self, client: QdrantClient, dim: int, sparse: bool, rescore: int = 0) -> None:
        c = self.cluster
        on_disk = bool(c.on_disk)
        sparse_config = {
            SPARSE: qm.SparseVectorParams(
                modifier=qm.Modifier.IDF, index=qm.SparseIndexParams(on_disk=on_disk)
            )
        }
        dense = qm.VectorParams(size=dim, distance=qm.Distance.COSINE, on_disk=on_disk)
        vectors = {DENSE: dense}
        if rescore:  # the quality tier's second vector: read back, never searched
            vectors[RESCORE] = qm.VectorParams(
                size=rescore, distance=qm.Distance.COSINE, on_disk=on_disk
            )
        quantization = _int8() if c.quantize else None
        self._call(
            lambda: client.create_collection(
                self.collection,
                vectors_config=vectors,
                sparse_vectors_config=sparse_config if sparse else None,
                shard_number=c.shards,
                replication_factor=c.replicas,
                write_consistency_factor=c.write_consistency,
                on_disk_payload=on_disk,
                quantization_config=quantization,
            )
        )
        self._sparse = sparse
        self.rescore_dim = rescore
        self._create_payload_indexes(client)

    def _create_payload_indexes(self, client: QdrantClient) -> None:
        # The tenant flag co-locates a project's points on disk: per-project search is fast.
        tenant = qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, is_tenant=True)
        wanted = payload_indexes(qm.PayloadSchemaType.KEYWORD, tenant, qm.PayloadSchemaType.INTEGER)
        with warnings.catch_warnings():
            # Local mode warns that payload indexes have no effect there; that is expected.
            warnings.filterwarnings("ignore", message="Payload indexes have no effect")
            for field_name, schema in wanted:
                self._call(
                    lambda f=field_name, s=schema: client.create_payload_index(
                        self.collection, f, field_schema=s
                    )
                )

    def exists(self) -> bool:
        """Whether the collection exists on the server (it is not opened)."""
        return self.exists_named(self.collection)

    def alias_target(self, alias: str) -> str | None:
        """The collection the alias ``alias`` points at, or None if there is no such alias."""
        client = self._open_client()
        aliases = self._call(lambda: client.get_aliases()).aliases
        return next((a.collection_name for a in aliases if a.alias_name == alias), None)

    def point_alias(self, alias: str) -> None:
        """Point ``alias`` at this store's collection, in one ``update_aliases`` call (the
        old alias deleted and the new one created together): a reader querying the alias
        sees the old collection or this one, never neither and never a mix."""
        client = self._open_client()
        actions: list[Any] = []
        if self.alias_target(alias) is not None:
            actions.append(qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name=alias)))
        create = qm.CreateAlias(collection_name=self.collection, alias_name=alias)
        actions.append(qm.CreateAliasOperation(create_alias=create))
        self._call(lambda: client.update_collection_aliases(change_aliases_operations=actions))

    def exists_named(self, name: str) -> bool:
        """Whether a collection (or alias) called ``name`` exists on this server."""
        client = self._open_client()
        return bool(self._call(lambda: client.collection_exists(name)))

    def _open_client(self) -> QdrantClient:
        if self._client is None:
            raise StoreConfigError(f"collection {self.collection} is closed")
        return self._client

    def drop(self) -> None:
        """Delete the whole collection (a retired generation narezka created)."""
        if self._client is None:
            raise StoreConfigError(f"collection {self.collection} is closed")
        client = self._client
        if self._call(lambda: client.collection_exists(self.collection)):
            self._call(lambda: client.delete_collection(self.collection))
        self._ready = False

    def close(self) -> None:
        """Close the client connection; idempotent."""
        client, self._client = self._client, None
        self._ready = False
        if client is not None:
            client.close()

    # ---- writes ---------------------------------------------------------------------------

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or replace points by id, in batches of ``BATCH``, waiting for each."""
        client = self._need()
        for start in range(0, len(points), BATCH):
            batch = [self._point(p) for p in points[start : start + BATCH]]
            self._call(lambda b=batch: client.upsert(self.collection, b, wait=True))

    def _point(self, point: StoredPoint) -> qm.PointStruct:
        vectors = self._vectors(point, _sparse)
        return qm.PointStruct(id=point.id, vector=vectors, payload=encode_payload(point.payload))

    def _place(self) -> str:
        return f"collection {self.collection}"

    def delete(self, ids: Sequence[str]) -> None:
        """Delete points by id."""
        client = self._need()
        valid = [pid for pid in ids if is_point_id(pid)]
        for start in range(0, len(valid), BATCH):
            selector = qm.PointIdsList(points=list(valid[start : start + BATCH]))
            self._call(lambda s=selector: client.delete(self.collection, s, wait=True))

    def delete_where(self, field: str, value: str | int | bool) -> None:
        """Delete every point whose payload ``field`` equals ``value``."""
        client = self._need()
        selector = qm.FilterSelector(filter=qm.Filter(must=[_condition(Eq(field, value))]))
        self._call(lambda: client.delete(self.collection, selector, wait=True))

    # ---- reads ----------------------------------------------------------------------------

    def _rank(
        self, dense: Vector | None, sparse: SparseVector | None, where: Filter | None, k: int
    ) -> list[list[StoredHit]]:
        """Each ranking asked for, from one ``query_batch_points`` call."""
        found = server_filter(where)
        requests = [_request(as_floats(dense), DENSE, k, found)] if dense is not None else []
        if sparse is not None:
            requests.append(_request(_sparse(sparse), SPARSE, k, found))
        client = self._need()
        if self._search is not None:
            requests = [r.model_copy(update={"params": self._search}) for r in requests]
        responses = self._call(lambda: client.query_batch_points(self.collection, requests))
        return [stored_hits(r.points) for r in responses]

    def get(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[StoredPoint]:
        """The points that exist among ``ids``, in the order asked."""
        client = self._need()
        valid = [pid for pid in ids if is_point_id(pid)]
        records = self._call(
            lambda: client.retrieve(
                self.collection, valid, with_payload=True, with_vectors=with_vectors
            )
        )
        return in_order(ids, records, _vectors if with_vectors else None)

    def count(self, filter: Filter | None = None) -> int:
        """Exact number of points (matching ``filter``)."""
        client = self._need()
        where = server_filter(filter)
        result = self._call(lambda: client.count(self.collection, count_filter=where, exact=True))
        return int(result.count)


def server_filter(where: Filter | None) -> qm.Filter | None:
    """narezka's filter in qdrant-client terms."""
    parts: Any = filter_parts(where, _condition)  # the models' lists take a wider union
    return None if parts is None else qm.Filter(must=parts[0], must_not=parts[1])


_condition = condition_maker(
    lambda field, value: qm.FieldCondition(key=field, match=qm.MatchValue(value=value)),
    lambda field, values: qm.FieldCondition(key=field, match=qm.MatchAny(any=values)),
    lambda r: qm.FieldCondition(
        key=r.field, range=qm.Range(gte=r.gte, gt=r.gt, lte=r.lte, lt=r.lt)
    ),
)


def _int8() -> qm.ScalarQuantization:
    """int8 scalar quantization, kept in RAM while the originals may sit on disk."""
    config = qm.ScalarQuantizationConfig(
        type=qm.ScalarType.INT8, quantile=QUANTILE, always_ram=True
    )
    return qm.ScalarQuantization(scalar=config)


def _sparse(vector: SparseVector) -> qm.SparseVector:
    return qm.SparseVector(indices=list(vector.indices), values=list(vector.values))


def _request(vector: Any, using: str, limit: int, where: qm.Filter | None) -> qm.QueryRequest:
    return qm.QueryRequest(query=vector, using=using, limit=limit, filter=where, with_payload=True)


def _vectors(vector: Any) -> tuple[list[float] | None, SparseVector | None, list[float] | None]:
    if not isinstance(vector, dict):
        return None, None, None
    raw = vector.get(DENSE)
    dense = [float(x) for x in raw] if isinstance(raw, list) else None
    raw = vector.get(RESCORE)
    second = [float(x) for x in raw] if isinstance(raw, list) else None
    sv = vector.get(SPARSE)
    sparse = None
    if isinstance(sv, qm.SparseVector):
        sparse = SparseVector(tuple(sv.indices), tuple(float(v) for v in sv.values))
    return dense, sparse, second
