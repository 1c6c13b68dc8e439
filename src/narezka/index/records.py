"""The index record (``index.json``) a sync writes, and the generations it retires.

The record says where the corpus is (relative to the index folder, so the two can move
together), which generation is live, and every setting a later sync must repeat. A rebuild
fills a new generation and retires the old one; what a run could not remove yet (a
generation a reader still holds, a half-built one after a crash) is listed in the record and
removed by a later run. See :mod:`narezka.index.layout` for the folder itself.

:class:`IndexRecord` is the record as a typed value; its JSON is the file's, key for key and
in the same order, so an index written by another narezka version opens here and back.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from narezka.embed import Embedder
from narezka.errors import ConfigError
from narezka.globs import literal_glob
from narezka.index import layout
from narezka.index.layout import INDEX_META, INDEX_VERSION, LEGACY_DATA
from narezka.settings import qdrant_key
from narezka.split import SplitParams
from narezka.store.cluster import ClusterParams
from narezka.store.collections import DEFAULT_COLLECTION, collection_for, drop_quietly


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexRecord:
    """An index's record: what ``index.json`` holds (and a server index publishes beside its
    points), as typed fields. Read one with :meth:`from_json`, write :meth:`to_json`, and
    change it with :meth:`replace` (it is frozen).

    The JSON keeps the shape every narezka version wrote: a key is written when the record
    read had it, or when its value is set (the keys of format 1, ``embedder_spec``,
    ``include``, ``url``…, are written even when null); keys this version does not know stay
    in ``extra``, and the keys keep the order they were read in (new ones go last)."""

    version: int = INDEX_VERSION
    """The index format: 1 kept the shard in the index folder itself, 2 in generations."""
    corpus: str | None = None
    """The corpus's absolute path when the record was written."""
    corpus_rel: str | None = None
    """The corpus relative to the index folder (format 2): the two may move together."""
    data: str | None = None
    """The live generation's folder name (``data-N``); None for format 1 (the folder itself)."""
    collection: str | None = None
    """A server index's live collection (``NAME_gN``)."""
    embedder: str = ""
    """The embedder's name (what a search's embedder must match)."""
    embedder_spec: str | None = None
    """The spec it was made from; None for an embedder object (it must be given again)."""
    dim: int
    """The vectors' dimension."""
    strategy: str = ""
    fingerprint: str = ""
    """Everything that changes the chunks, as text (a change re-chunks every file)."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """The split parameters as resolved (format 1's only settings)."""
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    url: str | None = None
    """The Qdrant server holding the points; None for an embedded index."""
    settings: Mapping[str, Any] | None = None
    """The user's settings (:meth:`narezka.Settings.to_record`), for sync to repeat."""
    bm25: str | None = None
    """The BM25 analyzer the stored sparse vectors were made with (None: before analyzers,
    snowball)."""
    collection_name: str | None = None
    """A server index's name: the alias readers query, ``NAME_gN`` its collections."""
    qdrant: Mapping[str, Any] | None = None
    """A server index's cluster settings, ``given`` and ``applied`` (see :meth:`cluster`)."""
    synced_at: str | None = None
    alias: str | None = None
    """The alias readers by URL query, once it points at ``collection``."""
    building: str | None = None
    """A generation being filled (an interrupted rebuild's, removed by the next run)."""
    rescore: str | None = None
    """The quality tier's model (its full name) when every point also holds its second
    vector; None: the index has none (searched as before the tier existed)."""
    rescore_dim: int | None = None
    """The second vector's size."""
    retired: tuple[str, ...] = ()
    """Generations retired while in use, removed by a later run."""
    source: Mapping[str, Any] | None = None
    """The source staged into the corpus (git: spec without credentials, commit); None: none."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Keys this version does not know, kept as read."""
    key_order: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """The JSON keys in the order written (empty: the fields' own order, unset ones left out)."""

    def __post_init__(self) -> None:
        # Frozen, and its JSON is its own: sequences as tuples, mappings as private copies.
        for name in ("include", "exclude", "retired"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        for name in ("params", "settings", "qdrant", "source", "extra"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, copy.deepcopy(dict(value)))
        if not self.key_order:
            keys = [name for name in _FIELDS if name in _ALWAYS or not _unset(getattr(self, name))]
            object.__setattr__(self, "key_order", (*keys, *self.extra))

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str) -> IndexRecord:
        """The record in ``data`` (an ``index.json`` read from ``source``, a file or a
        server collection); a ConfigError naming ``source`` if a known key holds a value
        of the wrong kind."""

        def bad(problem: str) -> ConfigError:
            return ConfigError(f"{source} cannot be read ({problem}): re-create it with --rebuild")

        if not isinstance(data, Mapping):
            raise bad("not a JSON object")
        values: dict[str, Any] = {}
        for name, value in data.items():
            kind = _KINDS.get(name)
            if kind is None:
                continue
            if not _is_kind(value, kind):
                raise bad(f"{name} is {json.dumps(value, ensure_ascii=False)}, not {kind}")
            values[name] = value
        if "dim" not in values:
            raise bad("it records no dim")
        extra = {k: v for k, v in data.items() if k not in _KINDS}
        return cls(**values, extra=extra, key_order=tuple(data))

    def to_json(self) -> dict[str, Any]:
        """The record as ``index.json`` holds it (JSON-ready, a private copy)."""
        out: dict[str, Any] = {}
        for key in self.key_order:
            if key in _KINDS:
                out[key] = _plain(getattr(self, key))
            elif key in self.extra:
                out[key] = copy.deepcopy(self.extra[key])
        for name in _FIELDS:  # set, yet not in key_order (dataclasses.replace): written last
            if name not in out and getattr(self, name) != _DEFAULTS[name]:
                out[name] = _plain(getattr(self, name))
        for key, value in self.extra.items():
            out.setdefault(key, copy.deepcopy(value))
        return out

    def replace(self, **changes: Any) -> IndexRecord:
        """A copy with ``changes`` applied. An optional key set to None (or an empty
        ``retired``) leaves the JSON; a key set anew is written last, as a dict would."""
        unknown = sorted(set(changes) - set(_FIELDS) - {"extra"})
        if unknown:
            raise TypeError(f"IndexRecord has no field {', '.join(unknown)}")
        order = list(self.key_order)
        for name, value in changes.items():
            if name == "extra":
                order = [k for k in order if k in _KINDS or k in value]
                order += [k for k in value if k not in order]
            elif name not in _ALWAYS and _unset(value):
                if name in order:
                    order.remove(name)
            elif name not in order:
                order.append(name)
        return dataclasses.replace(self, **changes, key_order=tuple(order))

    @property
    def live(self) -> str:
        """The live generation's name (``.`` for format 1: the index folder itself)."""
        return self.data or LEGACY_DATA

    def data_dir(self, home: Path) -> Path:
        """The live generation's folder in the index folder ``home``."""
        return layout.live_dir(home, self.live)

    @property
    def server_name(self) -> str:
        """The name a server index goes by (recorded, else the default)."""
        return self.collection_name or DEFAULT_COLLECTION

    def cluster(self, which: Literal["given", "applied"]) -> ClusterParams:
        """A server index's cluster settings as given, or as applied to its collection."""
        return ClusterParams.from_record((self.qdrant or {}).get(which))

    def with_cluster(
        self, *, applied: ClusterParams, given: ClusterParams | None = None
    ) -> IndexRecord:
        """A copy recording the cluster settings ``applied`` (and, if given, ``given``:
        then the two are all it records of them)."""
        if given is not None:
            return self.replace(qdrant={"given": given.to_record(), "applied": applied.to_record()})
        return self.replace(qdrant={**(self.qdrant or {}), "applied": applied.to_record()})


_FIELDS = tuple(
    f.name for f in dataclasses.fields(IndexRecord) if f.name not in ("extra", "key_order")
)
_DEFAULTS = {
    f.name: f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
    for f in dataclasses.fields(IndexRecord)
    if f.name in _FIELDS
}
_ALWAYS = frozenset(
    {
        *("version", "corpus", "embedder", "embedder_spec", "dim", "strategy", "fingerprint"),
        *("params", "include", "exclude", "url"),
    }
)
"""Keys every record has had since format 1, written even when null."""
_KINDS = {
    **dict.fromkeys(_FIELDS, "a string or null"),
    "version": "an integer",
    "dim": "an integer",
    "rescore_dim": "an integer or null",
    **dict.fromkeys(("embedder", "strategy", "fingerprint"), "a string"),
    "params": "an object",
    **dict.fromkeys(("settings", "qdrant", "source"), "an object or null"),
    "include": "a list of strings or null",
    **dict.fromkeys(("exclude", "retired"), "a list of strings"),
}


def _is_kind(value: Any, kind: str) -> bool:
    if value is None:
        return kind.endswith("or null")
    if kind.startswith("an integer"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind.startswith("a string"):
        return isinstance(value, str)
    if kind.startswith("an object"):
        return isinstance(value, dict)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _unset(value: Any) -> bool:
    return value is None or (isinstance(value, tuple | list) and not value)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return copy.deepcopy(dict(value))
    return value


def read_record(home: Path) -> IndexRecord:
    """The record of the index in ``home``; a ConfigError naming the folder if there is
    none, and naming the file if it cannot be read."""
    return IndexRecord.from_json(layout.read_meta(home), str(home / INDEX_META))


def write_record(home: Path, record: IndexRecord) -> None:
    """Replace ``index.json`` atomically (readers see the old record or the new one)."""
    layout.write_meta(home, record.to_json())


def existing_record(home: Path, *, tolerate_bad: bool) -> IndexRecord | None:
    """The record of the index at ``home``, None if there is none (or, with
    ``tolerate_bad``, if it cannot be read: a rebuild then starts over beside it)."""
    if not (home / INDEX_META).is_file():
        return None
    try:
        return read_record(home)
    except ConfigError:
        if not tolerate_bad:
            raise
        # An unreadable record of another version: a rebuild starts over next to it and
        # leaves its files (it cannot tell which generation they belong to).
        return None


def home_inside(home: Path, root: Path) -> tuple[str, ...]:
    """An exclude glob for the index folder when it sits inside the corpus."""
    try:
        rel = home.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return ()
    return (literal_glob(rel),) if rel != "." else ()


def retire(home: Path, generation: str, collection: str | None, url: str | None) -> bool:
    """Remove a generation narezka made (and its server collection); False if still in use."""
    if url and collection:
        drop_quietly(url, collection, qdrant_key())
    return layout.remove_generation(home, generation)


def retire_leftovers(home: Path, old: IndexRecord | None) -> list[str]:
    """Finish what an earlier run left: generations retired while in use, a half rebuild,
    and any other generation folder beside the live one (a rebuild over an unreadable record
    could not tell which was live). Run under the writer lock, so none of them is being
    built."""
    if old is None:
        return []
    live = old.live
    named = [*old.retired, *([old.building] if old.building else [])]
    strays = [g for g in layout.generations(home) if g != live and g not in named]
    url, name = old.url, old.collection_name
    # A server index's leftover generation may still hold its collection (a rebuild that
    # could not drop it when it failed): NAME_gN is narezka's own, made by that generation.
    still = [
        g
        for g in [*named, *strays]
        if g != live and not retire(home, g, collection_for(name, g) if url and name else None, url)
    ]
    if named or still:
        write_record(home, old.replace(retired=(), building=None).replace(retired=tuple(still)))
    return [f"{home / g}: still in use, removed on a later run" for g in still]


def removes_text(old: IndexRecord, fingerprint: str) -> bool:
    """Whether chunking with ``fingerprint`` takes out text that the index recorded by ``old``
    holds in plain: redaction turned on, or a rule set that finds more. Such an index is
    rebuilt in a fresh generation rather than synced point by point, because the engine keeps
    replaced payloads in its log and pages until its generation goes."""
    return _redaction_rules(fingerprint) > _redaction_rules(old.fingerprint)


def _redaction_rules(fingerprint: str) -> int:
    """The redaction rule set a fingerprint names (0: none; see ``SplitParams.fingerprint``)."""
    try:
        fields = json.loads(fingerprint.partition(":")[2])
    except ValueError:
        return 0
    rules = fields.get("redact") if isinstance(fields, dict) else None
    return rules if isinstance(rules, int) and not isinstance(rules, bool) else 0


def corpus_of(home: Path, record: IndexRecord) -> Path:
    """Where the corpus of an index is now: recorded relative to the index folder (so the two
    move together), else at its absolute path; a clear error if it is in neither place."""
    relative, absolute = record.corpus_rel, record.corpus
    if relative is not None and (candidate := Path(home, relative)).exists():
        return candidate.resolve()
    if absolute and Path(absolute).exists():
        return Path(absolute)
    raise ConfigError(
        f"the corpus of the index {home} is gone from {absolute}"
        + (f" (and from {home / relative})" if relative is not None else "")
        + f": if it moved, run `narezka sync {home} --corpus NEW_PATH`"
    )


def index_record(
    home: Path,
    root: Path,
    model: Embedder,
    spec: str | Embedder,
    strategy: str,
    params: SplitParams,
    url: str | None,
    include: Sequence[str] | None,
    exclude: Sequence[str],
    *,
    data: str,
    collection: str | None,
    settings: Mapping[str, Any] | None = None,
) -> IndexRecord:
    """The record of an index built from these settings, ready to write."""
    optional = {
        name: value
        for name in ("threshold", "percentile", "parent_size")
        if (value := getattr(params, name)) is not None
    }
    named = spec if isinstance(spec, str) else None
    return IndexRecord(
        version=INDEX_VERSION,
        corpus=str(root.resolve()),
        corpus_rel=os.path.relpath(root.resolve(), home.resolve()),
        data=data,
        collection=collection or None,
        embedder=model.name,
        embedder_spec=named,
        dim=model.dim,
        strategy=strategy,
        fingerprint=params.fingerprint(strategy),
        params={
            "size": params.size,
            "unit": params.unit,
            "tokenizer": None if named and params.unit == "tokens" else params.tokenizer,
            "overlap": params.overlap,
            "levels": list(params.levels),
            "min_chars": params.min_chars,
            **optional,
            # Off only when asked: sync must not start redacting behind the user's back.
            **({} if params.redact else {"redact": False}),
        },
        # sync and watch must read the same files the first run read.
        include=tuple(include) if include else None,
        exclude=tuple(e for e in exclude if e not in home_inside(home, root)),
        url=url,
        settings=settings,
    )
