"""``EdgeStore``: the embedded index, Qdrant's own engine in-process via ``qdrant-edge-py``.

One directory holds one shard plus narezka's files::

    <dir>/narezka.lock         PID of the owning process (see ``lock.py``)
    <dir>/narezka_store.json   what narezka created: vector size, sparse or not, format
    <dir>/edge_config.json, segments/, wal/, temp_segments/   the engine's own

Measured facts this module is built on (qdrant-edge-py 0.9.0, 2 cores):

* Every ``update()`` goes through the engine's write-ahead log; data survives kill -9.
* ``optimize()`` leaves ``temp_segments/`` behind — empty after success, holding a half-built
  segment (85 MB at 40k × 512-d) after a kill — and ``load()`` does not clean it: we do, on
  open, while holding the lock.
* Building an HNSW graph during ``optimize()`` costs ~2 minutes at 40k × 512-d here, while an
  exact scan of 40k vectors takes ~11 ms. So by default no graph is built (``m=0``) and search
  is exact. Pass ``indexing_threshold_kb`` (KB of vectors per segment) to build HNSW graphs.
* The engine's writable segment keeps its BM25 postings, id map and payload indexes in RAM:
  ~2.5 KB a point (100k points, 64-d, 60 BM25 terms: 245 MB anonymous). A *sealed* segment,
  placed ``Memory.Cold``, keeps them in files read on demand: the same 100k points open in
  27 MB anonymous (and payload indexes placed Cold too; 199 MB for the writable one). So
  ``optimize()`` seals a writable segment once it holds ``seal_points()`` points; a long write
  seals as it goes and reopens the shard (only a reopen hands the old segment's memory
  back), so its memory stays bounded by one writable segment whatever the index's size.
  Small indexes stay one writable segment, as before. Search results are the same: a sealed
  segment is scanned exactly (a graph of ``m=0`` is no graph; its full-scan threshold is
  never reached), and the same 60 searches gave the same scores (tests/store/test_edge.py).
* ``load()`` with a config of another vector size fails with a bare ``Exception``; narezka's
  own ``narezka_store.json`` lets us say which sizes clash and what to do instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from narezka.diskspace import create_needs, ensure_free, open_needs
from narezka.errors import NarezkaError
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
from narezka.store.errors import (
    DimensionMismatchError,
    IndexDamagedError,
    StoreConfigError,
)
from narezka.store.lock import DirectoryLock
from narezka.types import SparseVector

META_NAME = "narezka_store.json"
FORMAT = 1
BATCH = 512
"""Points per engine update: one WAL record each; large enough to amortize the call."""

SEAL_POINTS = 20_000
"""Points a writable segment takes before ``optimize()`` seals it while the index is small
(see the module's notes). Sealing builds the new segment's files through memory maps,
resident while written: ~8 KB a point at the peak. At 30k files (150k points, hash vectors) a
first index peaked at 434 MB with seals of 20k points, 697 MB with 50k, 856 MB before
sealing; its no-change sync at 194, 197 and 513 MB."""
SEAL_POINTS_MAX = 50_000
SEAL_SHARE = 20
"""Past ``SEAL_POINTS * SEAL_SHARE`` points a seal takes 1/``SEAL_SHARE`` of the index, up to
``SEAL_POINTS_MAX``. The engine looks every upserted id up in every sealed segment (~1.2 CPU µs
a segment: 46 % of an upsert at 76 segments was the on-disk id map's block reads), so with
seals of one size a first index costs the square of its size. Small and middle indexes keep
their peak; a seal of 50k points is built from ~200k files on (300k files peaked at 730 MB
against 553 with seals of 20k, 1M files at 944 against 990: fewer sealed segments; figures
in ``docs/scaling.md``, 1.1)."""
SEGMENT_SEALS = 1
"""Sealed segments are not merged past the smallest seal's size, for the same reason: a
merge's peak follows the segment it builds, and merging them all would make it follow the
index. (A seal larger than that is still built whole: the engine seals a writable segment
into one segment whatever its size.)"""


def seal_points(indexed: int) -> int:
    """How many points the writable segment takes before it is sealed, in an index of
    ``indexed`` points (see ``SEAL_SHARE``)."""
    return min(SEAL_POINTS_MAX, max(SEAL_POINTS, indexed // SEAL_SHARE))


_NEVER_FULL_SCAN_KB = 2**40
"""Past this many KB of vectors a segment with a graph is searched through it: never."""
COLD = qe.Memory.Cold

_SIZE_CLASH = re.compile(r"expected vector size (\d+), but got (\d+)")


class EdgeStore(EngineStore):
    """A ``VectorStore`` in a local directory, using qdrant-edge-py."""

    def __init__(
        self,
        path: str | Path,
        *,
        optimize_on_close: bool = True,
        indexing_threshold_kb: int | None = None,
        max_search_threads: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.optimize_on_close = optimize_on_close
        self.indexing_threshold_kb = indexing_threshold_kb
        self.max_search_threads = max_search_threads
        self._lock: DirectoryLock | None = DirectoryLock(self.path)
        self._shard: qe.EdgeShard | None = None
        self._sparse = False
        self.dim = 0
        self._unsealed = 0  # points written since the last seal
        self._indexed = 0  # points in the index, as of the last open, plus those written since
        self.rescore_dim = 0
        """The second dense vector's size (0: the shard has none)."""
        # Safe only now that we hold the lock: nobody else can be optimizing into it.
        shutil.rmtree(self.path / "temp_segments", ignore_errors=True)

    # ---- lifecycle ----------------------------------------------------------------------

    def ensure(self, dim: int, sparse: bool = True, rescore: int = 0) -> None:
        """Create the shard, or open it and check it stores ``dim``-d vectors (and a
        ``rescore``-d second vector, when asked)."""
        if self._lock is None:
            raise StoreConfigError(f"index {self.path} is closed")
        if self._shard is not None:
            self._check(dim, sparse, self.dim, self._sparse)
            self._check_rescore(rescore, self.rescore_dim)
            return
        meta_path = self.path / META_NAME
        exists = (self.path / "segments").is_dir() and any((self.path / "segments").iterdir())
        # The engine writes through memory maps even to open: on a full disk that is a bus
        # error, so stop first with the space it needs.
        if exists:
            ensure_free(self.path, open_needs(self.path), "open the index")
        else:
            ensure_free(self.path, create_needs(self.path), "create the index")
        if exists and meta_path.is_file():
            found_dim, found_sparse, found_rescore = _read_meta(meta_path)
            self._check(dim, sparse, found_dim, found_sparse)
            self._check_rescore(rescore, found_rescore)
            # The shard is loaded with the vectors it has, asked for or not.
            self.dim, self._sparse, self.rescore_dim = found_dim, found_sparse, found_rescore
            self._shard = self._load()
        elif exists:
            # A shard without our metadata (older narezka, or written by hand): the engine
            # checks compatibility itself; translate its size clash into our error.
            self.dim, self._sparse, self.rescore_dim = dim, sparse, rescore
            self._shard = self._load()
        else:
            self.dim, self._sparse, self.rescore_dim = dim, sparse, rescore
            self._shard = self._engine(lambda: qe.EdgeShard.create(str(self.path), self._config()))
        meta = {"format": FORMAT, "dim": self.dim, "sparse": self._sparse, "distance": "Cosine"}
        if self.rescore_dim:
            meta["rescore"] = self.rescore_dim
        meta_path.write_text(json.dumps(meta) + "\n", encoding="utf-8")
        self._ensure_payload_indexes()
        self._indexed = self._shard.info().points_count

    def _check(self, dim: int, sparse: bool, found_dim: int, found_sparse: bool) -> None:
        if dim != found_dim:
            raise DimensionMismatchError(str(self.path), dim, found_dim)
        if sparse and not found_sparse:
            raise StoreConfigError(
                f"index {self.path} was built without BM25 vectors; re-create it with --rebuild"
            )

    def _check_rescore(self, wanted: int, found: int) -> None:
        if wanted and wanted != found:
            built = f"with {found}-d second vectors" if found else "without second vectors"
            raise StoreConfigError(
                f"index {self.path} was built {built}, not {wanted}-d ones (the rescore "
                "setting changed): re-create it with --rebuild"
            )

    def _config(self) -> qe.EdgeConfig:
        sparse = (
            {SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=COLD)}
            if self._sparse
            else None
        )
        if self.indexing_threshold_kb:  # asked for HNSW graphs: the engine's own defaults
            threshold, graph = self.indexing_threshold_kb, None
        else:
            # The engine sizes segments by their vectors' KB; narezka thinks in points.
            threshold = max(1, SEAL_POINTS * (self.dim + self.rescore_dim) * 4 // 1024)
            graph = qe.HnswIndexConfig(
                m=0, ef_construct=100, full_scan_threshold=_NEVER_FULL_SCAN_KB
            )
        vectors = {
            DENSE: qe.EdgeVectorParams(size=self.dim, distance=qe.Distance.Cosine, memory=COLD)
        }
        if self.rescore_dim:  # the quality tier's second vector (never searched by the engine)
            vectors[RESCORE] = qe.EdgeVectorParams(
                size=self.rescore_dim, distance=qe.Distance.Cosine, memory=COLD
            )
        return qe.EdgeConfig(
            vectors=vectors,
            sparse_vectors=sparse,
            hnsw_config=graph,
            payload_memory=COLD,
            id_tracker_memory=COLD,
            optimizers=qe.EdgeOptimizersConfig(
                indexing_threshold=threshold, max_segment_size=threshold * SEGMENT_SEALS
            ),
            max_search_threads=self.max_search_threads,
        )

    def _load(self) -> qe.EdgeShard:
        return self._engine(lambda: qe.EdgeShard.load(str(self.path), self._config()))

    def _engine(self, action: Any) -> qe.EdgeShard:
        try:
            shard: qe.EdgeShard = action()
        except Exception as exc:  # the bindings raise bare Exception
            clash = _SIZE_CLASH.search(str(exc))
            if clash:
                raise DimensionMismatchError(
                    str(self.path), int(clash.group(1)), int(clash.group(2))
                ) from exc
            raise IndexDamagedError(
                f"cannot open index {self.path}: {exc}; `narezka check --repair` rebuilds it"
            ) from exc
        return shard

    def _ensure_payload_indexes(self) -> None:
        shard = self._need()
        have = set(shard.info().payload_schema)
        # Placed Cold, a sealed segment's payload index is read from its files on demand (in
        # RAM it took ~0.17 KB a point, as much as everything else of a sealed segment).
        wanted = payload_indexes(
            qe.KeywordIndexParams(memory=COLD),
            qe.KeywordIndexParams(is_tenant=True, memory=COLD),
            qe.IntegerIndexParams(lookup=True, range=False, memory=COLD),
        )
        for name, schema in wanted:
            if name not in have:
                shard.update(qe.UpdateOperation.create_field_index(name, schema))

    def _need(self) -> qe.EdgeShard:
        if self._shard is None:
            raise StoreConfigError(f"index {self.path} is not open: call ensure(dim) first")
        return self._shard

    def optimize(self) -> bool:
        """Seal full writable segments, merge segments and vacuum deletions (and build HNSW
        graphs when asked for)."""
        self._unsealed = 0
        return self._need().optimize()

    def _seal(self) -> None:
        """Seal the writable segment and reopen the shard: only a reopen hands back the
        memory the sealed segment held while it was writable."""
        shard = self._need()
        shard.optimize()
        shard.flush()
        shard.close()
        self._shard = None
        _return_free_memory()
        self._shard = self._load()
        self._unsealed = 0
        self._indexed = self._shard.info().points_count

    def flush(self) -> None:
        """Write pending changes to the segments (the WAL already has them)."""
        self._need().flush()

    def close(self) -> None:
        """Flush, optimize if configured, release the engine and the lock; idempotent."""
        shard, self._shard = self._shard, None
        try:
            if shard is not None:
                if self.optimize_on_close:
                    shard.optimize()
                shard.flush()
                shard.close()
        finally:
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    # ---- writes ---------------------------------------------------------------------------

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or replace points by id, in batches of ``BATCH``."""
        shard = self._need()
        for start in range(0, len(points), BATCH):
            batch = [self._point(p) for p in points[start : start + BATCH]]
            with self._reading():
                shard.update(qe.UpdateOperation.upsert_points(batch))
            self._unsealed += len(batch)
            self._indexed += len(batch)  # replaced points too: a guess, corrected at a seal
            if self._unsealed >= seal_points(self._indexed) and not self.indexing_threshold_kb:
                with self._reading():
                    self._seal()
                shard = self._need()

    def _point(self, point: StoredPoint) -> qe.Point:
        vectors = self._vectors(point, _sparse_vector)
        return qe.Point(point.id, vectors, encode_payload(point.payload))

    def _place(self) -> str:
        return f"index {self.path}"

    def delete(self, ids: Sequence[str]) -> None:
        """Delete points by id."""
        shard = self._need()
        valid: list[Any] = [pid for pid in ids if is_point_id(pid)]  # nothing else is stored
        for start in range(0, len(valid), BATCH):
            with self._reading():
                shard.update(qe.UpdateOperation.delete_points(valid[start : start + BATCH]))

    def delete_where(self, field: str, value: str | int | bool) -> None:
        """Delete every point whose payload ``field`` equals ``value``."""
        condition = _condition(Eq(field, value))
        self._need().update(qe.UpdateOperation.delete_points_by_filter(qe.Filter(must=[condition])))

    # ---- reads ----------------------------------------------------------------------------

    def _rank(
        self, dense: Vector | None, sparse: SparseVector | None, where: Filter | None, k: int
    ) -> list[list[StoredHit]]:
        shard = self._need()
        found = edge_filter(where)
        requests = [_request(_dense(dense), k, found)] if dense is not None else []
        if sparse is not None:
            requests.append(_request(_sparse(sparse), k, found))
        with self._reading():
            if len(requests) == 1:  # one ranking: the engine's plain query, not a batch
                return [stored_hits(shard.query(requests[0]))]
            return [stored_hits(r) for r in shard.query_batch(qe.QueryBatchRequest(requests))]

    def get(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[StoredPoint]:
        """The points that exist among ``ids``, in the order asked."""
        valid: list[Any] = [pid for pid in ids if is_point_id(pid)]
        with self._reading():
            records = self._need().retrieve(valid, with_payload=True, with_vector=with_vectors)
        return in_order(ids, records, _vectors if with_vectors else None)

    def count(self, filter: Filter | None = None) -> int:
        """Exact number of points (matching ``filter``)."""
        with self._reading():
            return self._need().count(qe.CountRequest(exact=True, filter=edge_filter(filter)))

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """The engine's errors while reading, or writing over what it must read first (a
        payload page that does not decompress), are damage to the index: say so, and how
        to repair it."""
        try:
            yield
        except NarezkaError:
            raise
        except Exception as exc:  # the bindings raise bare Exception
            raise IndexDamagedError(
                f"index {self.path} cannot be read ({exc}): its files are damaged; "
                "`narezka check --repair` finds and repairs the damage"
            ) from exc


def _return_free_memory() -> None:
    """Ask the C allocator to hand freed pages back to the system (glibc only; elsewhere
    freed memory is reused by the next segment anyway)."""
    # The process's own symbols: ``ctypes.util.find_library`` would fork ``ldconfig``, and
    # a fork of a large process is counted at its size in the children's peak memory.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def _read_meta(path: Path) -> tuple[int, bool, int]:
    """The vector size, sparse flag and second vector's size narezka recorded for a shard."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
        return int(meta["dim"]), bool(meta["sparse"]), int(meta.get("rescore", 0))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexDamagedError(
            f"{path} cannot be read ({type(exc).__name__}: {exc}): re-create the index with "
            "`narezka index CORPUS --rebuild` (cached embeddings are reused)"
        ) from exc


def edge_filter(where: Filter | None) -> qe.Filter | None:
    """narezka's filter in qdrant-edge terms."""
    parts: Any = filter_parts(where, _condition)  # the bindings' lists take a wider union
    return None if parts is None else qe.Filter(must=parts[0], must_not=parts[1])


_condition = condition_maker(
    lambda field, value: qe.FieldCondition(field, match=qe.MatchValue(value)),
    lambda field, values: qe.FieldCondition(field, match=qe.MatchAny(values)),
    lambda r: qe.FieldCondition(
        r.field, range=qe.RangeFloat(gte=r.gte, gt=r.gt, lte=r.lte, lt=r.lt)
    ),
)


def _dense(vector: Vector) -> qe.Query:
    return qe.Query.Nearest(as_floats(vector), using=DENSE)


def _sparse_vector(vector: SparseVector) -> qe.SparseVector:
    return qe.SparseVector(list(vector.indices), list(vector.values))


def _sparse(vector: SparseVector) -> qe.Query:
    return qe.Query.Nearest(_sparse_vector(vector), using=SPARSE)


def _request(query: qe.Query, limit: int, where: qe.Filter | None) -> qe.QueryRequest:
    return qe.QueryRequest(limit=limit, query=query, filter=where, with_payload=True)


def _vectors(vector: Any) -> tuple[list[float] | None, SparseVector | None, list[float] | None]:
    if not isinstance(vector, dict):
        return None, None, None
    dense = vector.get(DENSE)
    sparse = vector.get(SPARSE)
    second = vector.get(RESCORE)
    converted = None
    if sparse is not None:
        converted = SparseVector(tuple(sparse.indices), tuple(float(v) for v in sparse.values))
    with contextlib.suppress(TypeError):
        dense = [float(x) for x in dense] if dense is not None else None
    with contextlib.suppress(TypeError):
        second = [float(x) for x in second] if second is not None else None
    return dense, converted, second
