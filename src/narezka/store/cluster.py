"""How a server index's collections are laid out on a Qdrant cluster, and the rule that
fills in what the user left unset.

``narezka.toml`` (flags on ``index`` and ``push`` override it; an index records what it
applied, so its later syncs and readers by URL know it)::

    [qdrant]
    shards = 6               # shard_number        (unset: the server's own, one per node)
    replicas = 2             # replication_factor  (unset: the server's own, 1)
    write_consistency = 2    # write_consistency_factor (unset: the server's own, 1)
    on_disk = true           # original vectors and payload on disk (unset: by size)
    quantize = true          # int8 scalar quantization, searched with rescoring (unset: by size)
    oversampling = 2.0       # candidates fetched per hit from the quantized vectors

The rule by size: a collection expected to hold ``LARGE`` points or more is quantized and
keeps its original vectors and payload on disk (quantized vectors stay in RAM, and the
top candidates are re-scored with the originals); a smaller one keeps everything in RAM,
unquantized. A collection is created for the points it will be filled with (the live
index's count for a rebuild or compaction, the copied count for a push, none for a first
index), and the sync that takes it past ``LARGE`` switches it over in place (the server
converts in the background and keeps answering); the rule only ever switches these on, so a
collection hovering around the size is not converted back and forth. Shard count,
replication and write consistency cannot be sized without knowing the cluster, so unset they
stay the server's defaults (and cannot change in place: they apply from the next rebuild).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from narezka.config import check_known, read_toml
from narezka.errors import ConfigError

LARGE = 100_000
"""Points from which a collection is quantized and kept on disk when not told otherwise:
at 768 dimensions that is some 300 MB of float vectors, a quarter of it as int8."""
DEFAULT_OVERSAMPLING = 2.0
TABLE = "qdrant"
"""The ``narezka.toml`` table holding these settings."""

_INTS = ("shards", "replicas", "write_consistency")
_BOOLS = ("on_disk", "quantize")


@dataclass(frozen=True, slots=True)
class ClusterParams:
    """Shards, replication, write consistency, on-disk storage and quantization of a server
    index's collections; None leaves a value to the rule by size (or to the server)."""

    shards: int | None = None
    replicas: int | None = None
    write_consistency: int | None = None
    on_disk: bool | None = None
    quantize: bool | None = None
    oversampling: float = DEFAULT_OVERSAMPLING

    def __post_init__(self) -> None:
        for name in _INTS:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or int(value) < 1):
                raise ConfigError(f"qdrant {name} must be a whole number of at least 1")
        if self.oversampling < 1:
            raise ConfigError(f"qdrant oversampling must be at least 1, got {self.oversampling}")
        if self.write_consistency is not None and self.write_consistency > (self.replicas or 1):
            raise ConfigError(
                f"qdrant write_consistency {self.write_consistency} exceeds the "
                f"{self.replicas or 1} replica(s) a write can reach"
            )

    def replace(self, **changes: Any) -> ClusterParams:
        """A copy with ``changes`` applied (None values leave a field as it is)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def sized(self, points: int) -> ClusterParams:
        """These params with the unset ``on_disk`` and ``quantize`` decided by the rule by
        size, for a collection expected to hold ``points``."""
        large = points >= LARGE
        return dataclasses.replace(
            self,
            on_disk=large if self.on_disk is None else self.on_disk,
            quantize=large if self.quantize is None else self.quantize,
        )

    def to_record(self) -> dict[str, Any]:
        """The params as JSON-ready data (kept in the index record)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None) -> ClusterParams:
        """Params from :meth:`to_record` output (None or empty: all unset)."""
        return cls.from_table(record or {}, "index record")

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str) -> ClusterParams:
        """Params from a ``[qdrant]`` table; an unknown key or bad value names ``where``."""
        check_known(table, cls, where, "qdrant setting")
        values: dict[str, Any] = {}
        for name, value in table.items():
            if value is None:
                continue
            wrong = (
                (name in _INTS and (isinstance(value, bool) or not isinstance(value, int)))
                or (name in _BOOLS and not isinstance(value, bool))
                or (name == "oversampling" and not isinstance(value, int | float))
            )
            if wrong:
                raise ConfigError(f"{where}: qdrant {name} = {value!r} is not a valid value")
            values[name] = value
        try:
            return cls(**values)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None

    @classmethod
    def load(cls, corpus: str | Path | None, **flags: Any) -> ClusterParams:
        """The corpus's ``narezka.toml`` ``[qdrant]`` table, then ``flags`` (None: not given)."""
        params = cls()
        # No safety setting lives here: the server's URL is the user's flag or variable.
        found = read_toml(Path(corpus)) if corpus is not None else None
        if found is not None:
            path, data = found
            table = data.get(TABLE, {})
            if not isinstance(table, dict):
                raise ConfigError(f"{path}: [{TABLE}] must be a table of name = value")
            params = cls.from_table(table, f"{path} [{TABLE}]")
        return params.replace(**flags)


__all__ = ["DEFAULT_OVERSAMPLING", "LARGE", "ClusterParams"]
