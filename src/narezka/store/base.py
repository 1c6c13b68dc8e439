"""The ``VectorStore`` protocol and the backend-neutral values it speaks in.

A store keeps points: a deterministic id, one dense vector (``"dense"``), optionally one
BM25 sparse vector (``"bm25"``) and a second dense vector (``"rescore"``, the quality tier's),
and a JSON payload. Backends translate the small typed
filter language below (equals / any-of / range, combined by must / must-not) into their own.

Two behaviours are the same on every backend because they live here, not in the engines:

* **Booleans.** qdrant-edge never matches a filter on Python ``True``/``False`` against a
  boolean payload (measured with and without a bool index), so top-level booleans are stored
  as 0/1 and the names of those keys in ``BOOL_KEY``; reads turn them back into booleans and
  filters given ``True`` match.
* **Two rankings at once.** ``rankings`` asks the engine for the dense and the BM25 ranking in
  one batch call; combining them (hybrid search) is the search stage's business
  (:mod:`narezka.search.fusion`), not the store's.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, Self, TypeAlias, TypeVar

from narezka.types import SparseVector

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

DENSE = "dense"
"""Name of the dense vector in every backend."""
SPARSE = "bm25"
"""Name of the BM25 sparse vector (IDF applied by the engine's ``idf`` modifier)."""
RESCORE = "rescore"
"""Name of the optional second dense vector (the quality tier's e5 vector): never searched
by the engine, read back for the candidates of a search to re-score them."""
BOOL_KEY = "_bools"
"""Payload key listing the top-level keys whose 0/1 values are booleans."""

# The payload fields a search filters by (:meth:`narezka.search.Filter.store_filter`) and a
# file's points are found by (``file_path``), each with a payload index of its type.
KEYWORD_FIELDS = ("file_path", "zone", "category")
TENANT_FIELD = "project"
INTEGER_FIELDS = ("archived",)
"""Flags are stored as 0/1, so their index is an integer one (a bool index would never match)."""

NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/narezka/point-id")

Mode: TypeAlias = Literal["dense", "bm25"]
"""What one store query ranks by: dense similarity or BM25."""
Scalar: TypeAlias = str | int | float | bool
# A string: numpy is imported where a vector is converted, not with the protocol (whose ids
# and payload helpers the chunk stage and the settings' checks use without numpy).
Vector: TypeAlias = "NDArray[np.floating[Any]] | Sequence[float]"


def point_id(key: str) -> str:
    """A deterministic point id (UUID string) for a key: same key, same id, on every run."""
    return str(uuid.uuid5(NAMESPACE, key))


def is_point_id(value: str) -> bool:
    """Whether ``value`` is a UUID string, the only id form narezka stores."""
    try:
        uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return True


def chunk_point_id(source: str, fingerprint: str, index: int) -> str:
    """The id of chunk ``index`` of ``source`` under a strategy fingerprint (chunk contract)."""
    return point_id(f"{source}\0{fingerprint}\0{index}")


@dataclass(frozen=True, slots=True)
class StoredPoint:
    """One point to write, or one point read back by ``get`` (``dense`` None if not asked)."""

    id: str
    dense: Vector | None
    payload: Mapping[str, Any] = field(default_factory=dict)
    sparse: SparseVector | None = None
    rescore: Vector | None = None
    """The second dense vector of a store made with one (``ensure(..., rescore=dim)``)."""


@dataclass(frozen=True, slots=True)
class StoredHit:
    """A query result: point id, engine score (cosine or BM25), payload."""

    id: str
    score: float
    payload: Mapping[str, Any]


# ---- filters --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Eq:
    """``field == value`` (for a list payload: the list contains value)."""

    field: str
    value: str | int | bool


@dataclass(frozen=True, slots=True)
class AnyOf:
    """``field`` equals one of ``values`` (all strings, or all integers/booleans)."""

    field: str
    values: tuple[str | int | bool, ...]


@dataclass(frozen=True, slots=True)
class Range:
    """Numeric range on ``field``; unset bounds are open."""

    field: str
    gte: float | None = None
    gt: float | None = None
    lte: float | None = None
    lt: float | None = None


Condition: TypeAlias = Eq | AnyOf | Range


@dataclass(frozen=True, slots=True)
class Filter:
    """All of ``must`` hold and none of ``must_not``."""

    must: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()

    @classmethod
    def where(cls, **equals: str | int | bool) -> Filter:
        """Shorthand: ``Filter.where(zone="hot", archived=False)``."""
        return cls(must=tuple(Eq(k, v) for k, v in equals.items()))


def match_value(value: str | int | bool) -> str | int:
    """The stored form of a filter value: booleans become 0/1 (the edge boolean trap)."""
    return int(value) if isinstance(value, bool) else value


_Cond = TypeVar("_Cond")


def condition_maker(
    equals: Callable[[str, str | int], _Cond],
    any_of: Callable[[str, list[Any]], _Cond],
    within: Callable[[Range], _Cond],
) -> Callable[[Condition], _Cond]:
    """An engine's reading of one filter condition, from its own three kinds of condition;
    ``equals`` and ``any_of`` are given the field and the values in their stored form
    (``match_value``; a list of them typed loosely, as the bindings' lists take a wider
    union)."""

    def condition(cond: Condition) -> _Cond:
        if isinstance(cond, Eq):
            return equals(cond.field, match_value(cond.value))
        if isinstance(cond, AnyOf):
            return any_of(cond.field, [match_value(v) for v in cond.values])
        if isinstance(cond, Range):
            return within(cond)
        raise TypeError(f"not a filter condition: {cond!r}")  # pragma: no cover

    return condition


def filter_parts(
    where: Filter | None, condition: Callable[[Condition], _Cond]
) -> tuple[list[_Cond] | None, list[_Cond] | None] | None:
    """``where``'s must and must-not conditions in an engine's terms, each None when empty
    (as both engines take them), or None when ``where`` filters nothing."""
    if where is None or not (where.must or where.must_not):
        return None
    return [condition(c) for c in where.must] or None, [
        condition(c) for c in where.must_not
    ] or None


def payload_indexes(keyword: Any, tenant: Any, integer: Any) -> list[tuple[str, Any]]:
    """Each field a search filters by, with the engine's index for its type (each engine's
    own type): ``tenant`` for the project, whose points an engine may keep together."""
    wanted = [(f, keyword) for f in KEYWORD_FIELDS] + [(TENANT_FIELD, tenant)]
    return wanted + [(f, integer) for f in INTEGER_FIELDS]


# ---- payload codec --------------------------------------------------------------------


def encode_payload(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Payload as stored: top-level booleans (and lists of them) as 0/1, their keys noted."""
    out: dict[str, Any] = {}
    bools: list[str] = []
    for key, value in payload.items():
        if key == BOOL_KEY:
            continue
        if isinstance(value, bool):
            out[key] = int(value)
            bools.append(key)
        elif isinstance(value, list | tuple) and value and all(isinstance(v, bool) for v in value):
            out[key] = [int(v) for v in value]
            bools.append(key)
        else:
            out[key] = value
    if bools:
        out[BOOL_KEY] = bools
    return out


def decode_payload(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """The payload as it was given to ``upsert``."""
    if not stored:
        return {}
    out = dict(stored)
    for key in out.pop(BOOL_KEY, None) or ():
        value = out.get(key)
        if isinstance(value, list):
            out[key] = [bool(v) for v in value]
        elif value is not None:
            out[key] = bool(value)
    return out


def stored_hits(points: Iterable[Any]) -> list[StoredHit]:
    """An engine's scored points (each with ``id``, ``score`` and ``payload``) as hits."""
    # The engines return uuid.UUID objects for UUID ids; narezka ids are strings.
    return [StoredHit(str(p.id), float(p.score), decode_payload(p.payload)) for p in points]


def as_floats(vector: Vector) -> list[float]:
    """A dense vector as a list of Python floats (what the engines' bindings take)."""
    import numpy as np

    result: list[float] = np.asarray(vector, dtype=np.float32).tolist()
    return result


class Rankings(NamedTuple):
    """The dense and the BM25 ranking of one query, each best first."""

    dense: list[StoredHit]
    sparse: list[StoredHit]


# ---- the protocol ---------------------------------------------------------------------


class VectorStore(Protocol):
    """A vector index: batch-first, deterministic ids, dense + optional BM25 sparse vectors."""

    def ensure(self, dim: int, sparse: bool = True, rescore: int = 0) -> None:
        """Create the index or open it; raise ``DimensionMismatchError`` if ``dim`` differs.
        ``rescore``: the size of a second dense vector per point (0: none)."""
        ...

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or replace points by id."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Delete points by id; unknown ids are ignored."""
        ...

    def delete_where(self, field: str, value: str | int | bool) -> None:
        """Delete every point whose payload ``field`` equals ``value`` (e.g. one file's)."""
        ...

    def query(
        self,
        dense: Vector | None = None,
        sparse: SparseVector | None = None,
        *,
        filter: Filter | None = None,
        k: int = 10,
        mode: Mode = "dense",
    ) -> list[StoredHit]:
        """Top ``k`` points by dense similarity or by BM25."""
        ...

    def rankings(
        self,
        dense: Vector,
        sparse: SparseVector,
        *,
        filter: Filter | None = None,
        k: int = 10,
    ) -> Rankings:
        """The top ``k`` by dense similarity and the top ``k`` by BM25, in one engine call."""
        ...

    def get(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[StoredPoint]:
        """The points that exist among ``ids``, in the order asked."""
        ...

    def count(self, filter: Filter | None = None) -> int:
        """Number of points (matching ``filter``)."""
        ...

    def close(self) -> None:
        """Flush and release the index; safe to call twice."""
        ...


def check_query(
    mode: str,
    dense: Vector | None,
    sparse: SparseVector | None,
    has_sparse: bool,
) -> None:
    """Reject a query whose inputs do not fit its mode (same message on every backend);
    ``both`` is a ``rankings`` call."""
    from narezka.store.errors import StoreConfigError

    if mode == "hybrid":
        raise StoreConfigError(
            "a store ranks by dense or bm25; for hybrid, fetch both with rankings() and fuse "
            "them (narezka.search.fusion.hybrid_query)"
        )
    if mode not in ("dense", "bm25", "both"):
        raise StoreConfigError(f"unknown store query mode {mode!r}; use dense or bm25")
    if mode in ("dense", "both") and dense is None:
        raise StoreConfigError(f"{_asked(mode)} needs a dense query vector")
    if mode in ("bm25", "both"):
        if sparse is None:
            raise StoreConfigError(f"{_asked(mode)} needs a sparse (BM25) query vector")
        if not has_sparse:
            raise StoreConfigError(
                f"{_asked(mode)} needs BM25 vectors, but this index was built without them; "
                "re-create it with --rebuild"
            )


def _asked(mode: str) -> str:
    return "a hybrid search (both rankings)" if mode == "both" else f"{mode} search"


# ---- what the Qdrant backends share ----------------------------------------------------

ReadVectors: TypeAlias = Callable[
    [Any], tuple["list[float] | None", "SparseVector | None", "list[float] | None"]
]
"""A backend's reading of a record's vectors: dense, BM25 and second (each None if absent)."""


class EngineStore(ABC):
    """What both Qdrant backends do the same above their engine's calls: the checks a point
    and a query pass, both rankings asked in one call, points read back in the order asked.
    A backend adds ``_rank`` (its engine's search), ``_place`` and the rest of the protocol."""

    _sparse: bool
    rescore_dim: int

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @abstractmethod
    def close(self) -> None:
        """Flush and release the index; safe to call twice."""

    @abstractmethod
    def _place(self) -> str:
        """What errors call this store (``index <dir>``, ``collection <name>``)."""

    @abstractmethod
    def _rank(
        self, dense: Vector | None, sparse: SparseVector | None, where: Filter | None, k: int
    ) -> list[list[StoredHit]]:
        """The top ``k`` by each of the vectors given (the dense first), in one engine call."""

    def query(
        self,
        dense: Vector | None = None,
        sparse: SparseVector | None = None,
        *,
        filter: Filter | None = None,
        k: int = 10,
        mode: Mode = "dense",
    ) -> list[StoredHit]:
        """Top ``k`` hits by dense similarity or by BM25."""
        check_query(mode, dense, sparse, self._sparse)
        if mode == "dense":
            return self._rank(dense, None, filter, k)[0]
        return self._rank(None, sparse, filter, k)[0]

    def rankings(
        self, dense: Vector, sparse: SparseVector, *, filter: Filter | None = None, k: int = 10
    ) -> Rankings:
        """The dense and the BM25 top ``k``, from one batch call to the engine."""
        check_query("both", dense, sparse, self._sparse)
        dense_hits, sparse_hits = self._rank(dense, sparse, filter, k)
        return Rankings(dense_hits, sparse_hits)

    def _vectors(self, point: StoredPoint, sparse: Callable[[SparseVector], Any]) -> dict[str, Any]:
        """A point's vectors by name, once its id and vectors fit this store; ``sparse``
        turns the BM25 vector into the engine's type."""
        from narezka.store.errors import StoreConfigError

        if not is_point_id(point.id):
            raise StoreConfigError(
                f"point id {point.id!r} is not a UUID: derive it with point_id()"
            )
        if point.dense is None:
            raise StoreConfigError(f"point {point.id} has no dense vector")
        vectors: dict[str, Any] = {DENSE: as_floats(point.dense)}
        if point.sparse is not None:
            if not self._sparse:
                raise StoreConfigError(f"{self._place()} has no sparse vectors")
            vectors[SPARSE] = sparse(point.sparse)
        if point.rescore is not None:
            if not self.rescore_dim:
                raise StoreConfigError(f"{self._place()} has no second vectors")
            vectors[RESCORE] = as_floats(point.rescore)
        return vectors


def in_order(
    ids: Sequence[str], records: Iterable[Any], vectors: ReadVectors | None
) -> list[StoredPoint]:
    """The points among engine ``records`` (each with ``id``, ``payload`` and ``vector``) in
    the order of ``ids``, those not found left out; ``vectors`` reads a record's vectors
    (None: they were not asked for)."""
    found = {str(r.id): r for r in records}
    out = []
    for pid in ids:
        record = found.get(pid)
        if record is None:
            continue
        dense, sparse, second = vectors(record.vector) if vectors else (None, None, None)
        out.append(StoredPoint(pid, dense, decode_payload(record.payload), sparse, second))
    return out
