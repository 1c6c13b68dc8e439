"""The one table of search options: each option's name, type, default, bounds or choices,
help and the fronts that show it, declared once as a field of :class:`SearchOptions`.

Everything else is made from it: :class:`~narezka.search.Query` (a ``SearchOptions`` with a
text) checks its fields by it and :meth:`Query.parse <narezka.search.Query.parse>` reads the
flat options by it; the click flags of ``narezka search`` and ``narezka eval``, the MCP
tool's input schema, the OpenAPI document, the HTTP handler and both retrievers' fields are
generated from :data:`OPTIONS` and :data:`FIELDS` at import. Adding an option is one field
here plus the code that applies it (``tests/search/test_query_entry_points.py`` drives it
through every front).

An option is *flat* (:class:`Option`): what a flag, a URL parameter, a tool argument or a
retriever's keyword is called, its value a number, a word or text. Most are a field of their
own; the filters (``zone``, ``project``, ``category``, ``path``, ``include_archived``) make
one :class:`~narezka.search.Filter` and the fusion options (``fusion``, ``rrf_k``,
``dense_weight``) one :class:`~narezka.search.Fusion` (a :class:`Group`). In the flat form
None always means "not given": the default.

``min_relevance`` defaults to :data:`INDEX_SETTING`, "whatever the index was configured
with" (``min_relevance`` in ``narezka.toml``, else :data:`narezka.defaults.MIN_RELEVANCE`),
resolved in one place, :meth:`narezka.Index.search`, so the library, the CLI, HTTP, MCP and
the retrievers drop the same hits unless told otherwise; ``0`` keeps every hit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields
from typing import Any, get_type_hints

from narezka import defaults
from narezka.errors import ConfigError
from narezka.search.flat import (
    FRONTS,
    INDEX_SETTING,
    RANKING,
    Front,
    Group,
    IndexSetting,
    Option,
    members,
    parse_fold,
    row,
)
from narezka.search.folding import AUTO, AUTO_FOLD, Fold, check_fold
from narezka.search.fusion import DEFAULT as DEFAULT_FUSION
from narezka.search.fusion import METHODS, RRF_K, Fusion
from narezka.search.hits import Filter

MODES = ("dense", "bm25", "hybrid")
EXPANSIONS = (None, "section", "parent")


def parse_fusion(
    mode: str, method: Any = None, rrf_k: Any = None, dense_weight: Any = None
) -> Fusion | None:
    """The fusion options as a :class:`Fusion`, None when all are left at their defaults."""
    if method in (None, "") and rrf_k is None and dense_weight is None:
        return None
    if isinstance(method, Fusion):
        return method
    name = DEFAULT_FUSION.method if method in (None, "") else str(method)
    if name not in METHODS:
        raise ConfigError(f"unknown fusion {name!r}; use one of {', '.join(METHODS)}")
    if name == DEFAULT_FUSION.method and rrf_k is None and dense_weight is None:
        return None
    if mode != "hybrid":
        raise ConfigError("fusion, rrf_k and dense_weight apply to mode hybrid")
    options: dict[str, Any] = {"method": name}
    if rrf_k is not None:
        options["rrf_k"] = _RRF_K.parse(rrf_k)
    if dense_weight is not None:
        options["dense_weight"] = _DENSE_WEIGHT.parse(dense_weight)
    return Fusion(**options)


_FILTER_MEMBERS = (
    Option("zone", "text", None, "Only chunks of this zone."),
    Option("project", "text", None, "Only chunks of this project."),
    Option("category", "text", None, "Only chunks of this category."),
    Option(
        "path",
        "text",
        None,
        "Only files matching this glob, .gitignore-style: '*.md' at any depth, 'products/**' "
        "or 'docs/*.md' from the corpus root.",
    ),
    Option(
        "include_archived",
        "flag",
        False,
        "Let archived (outdated) pages answer too; they are left out by default.",
        fronts=RANKING,
    ),
    Option(
        "tag",
        "text",
        None,
        "Only notes with this tag: front matter tags, or an Obsidian #tag (without #; any case).",
    ),
)
_RRF_K = Option(
    "rrf_k",
    "whole",
    None,
    "RRF's constant for rrf and weighted fusion (hybrid only).",
    fronts=RANKING,
    minimum=0,
    shown=str(RRF_K),
)
_DENSE_WEIGHT = Option(
    "dense_weight",
    "number",
    None,
    "Weight of the dense (meaning) ranking in [0, 1] for weighted and score fusion; BM25 "
    "(exact words) gets the rest (hybrid only).",
    fronts=RANKING,
    minimum=0,
    maximum=1,
    shown="0.3 for score, 0.5 for weighted",
)
_FUSION_MEMBERS = (
    Option(
        "fusion",
        "choice",
        DEFAULT_FUSION.method,
        "How hybrid search combines the dense and BM25 rankings: score weighs their min-max "
        "normalized scores (measured best); rrf and weighted fuse their ranks.",
        fronts=RANKING,
        choices=METHODS,
    ),
    _RRF_K,
    _DENSE_WEIGHT,
)


def _filters(values: Mapping[str, Any]) -> Filter:
    return Filter(**{o.name: o.parse(values.get(o.name)) for o in _FILTER_MEMBERS})


def _fusion(values: Mapping[str, Any]) -> Fusion | None:
    mode = values.get("mode") or defaults.MODE
    return parse_fusion(str(mode), *(values.get(o.name) for o in _FUSION_MEMBERS))


def _fusion_flat(fusion: Fusion | None) -> dict[str, Any]:
    if fusion is None:
        return {"fusion": None, "rrf_k": None, "dense_weight": None}
    return {"fusion": fusion.method, "rrf_k": fusion.rrf_k, "dense_weight": fusion.dense_weight}


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOptions:
    """Every option of a search, checked when built (a bad one is a ``ConfigError`` naming
    it, before anything is embedded). This class is the table: a field's type, default and
    metadata are all any front knows of it."""

    k: int = field(
        default=defaults.K, metadata=row(kind="whole", minimum=1, help="How many hits at most.")
    )
    mode: str = field(
        default=defaults.MODE,
        metadata=row(
            kind="choice",
            choices=MODES,
            fronts=RANKING,
            help="hybrid: meaning and exact words together; dense: meaning only; bm25: exact "
            "words only (names, identifiers, error codes).",
        ),
    )
    filters: Filter = field(
        default_factory=Filter,
        metadata=members(
            *_FILTER_MEMBERS,
            help="Which chunks may answer: a narezka.Filter (zone, project, category, path "
            "glob, include_archived).",
            build=_filters,
            flatten=lambda f: {o.name: getattr(f, o.name) for o in _FILTER_MEMBERS},
        ),
    )
    expand: str | None = field(
        default=None,
        metadata=row(
            kind="choice",
            choices=EXPANSIONS[1:],
            fronts=RANKING,
            help="section: return each hit's whole heading section; parent: its parent chunk "
            "(an index built with the parent-child strategy): small-to-big.",
        ),
    )
    fusion: Fusion | None = field(
        default=None,
        metadata=members(
            *_FUSION_MEMBERS,
            help="How hybrid search combines its rankings: a narezka.search.Fusion (None: "
            "score fusion, BM25 weighted 0.7).",
            build=_fusion,
            flatten=_fusion_flat,
        ),
    )
    fold: Fold = field(
        default=AUTO,
        metadata=row(
            kind="fold",
            fronts=RANKING,
            help="Fold a hit's neighbouring chunks of its section into it when they scored at "
            "least this share of it: a ratio in [0, 1] (0: every neighbour that ranked), off "
            f"(no folding) or auto ({AUTO_FOLD} for hybrid score fusion, else 0).",
        ),
    )
    min_relevance: float | IndexSetting = field(
        default=INDEX_SETTING,
        metadata=row(
            kind="number",
            minimum=0,
            maximum=1,
            shown=f"the index's min_relevance setting, else {defaults.MIN_RELEVANCE}",
            help="Leave out hits whose relevance (the calibrated chance, 0 to 1, that a hit "
            "answers) is below this; 0 keeps every hit.",
        ),
    )
    rescore: bool = field(
        default=True,
        metadata=row(
            kind="flag",
            help="Re-score the candidates by the index's second (e5) vectors, on an index "
            "built with the quality tier; no effect on other indexes.",
        ),
    )
    max_chars: int | None = field(
        default=None,
        metadata=row(
            kind="whole",
            minimum=1,
            shown="no limit",
            help="Return at most this many characters of each hit's text and of its snippet "
            "(their first ones). Only what is returned is cut: the search ranks, folds and "
            "scores whole chunks, and a hit's start and end still span its whole passage.",
        ),
    )

    def __post_init__(self) -> None:
        for name, rule in _CHECKS.items():
            checked = rule(getattr(self, name))
            if checked is not getattr(self, name):
                object.__setattr__(self, name, checked)  # frozen: normalized once, here
        if self.fusion is not None and self.mode != "hybrid" and self.fusion != DEFAULT_FUSION:
            raise ConfigError(
                f"fusion ({self.fusion.label}) applies to hybrid search, not to {self.mode}"
            )


def _row(spec: Field[Any]) -> Option:
    return Option(name=spec.name, default=spec.default, **spec.metadata["option"])


def _typed(kind: type, name: str, nullable: bool) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not (value is None and nullable) and not isinstance(value, kind):
            raise ConfigError(f"{name} must be a narezka.search.{kind.__name__}, not {value!r}")
        return value

    return check


def _field_check(spec: Field[Any]) -> Callable[[Any], Any]:
    if "group" in spec.metadata:
        kind = Filter if spec.name == "filters" else Fusion
        return _typed(kind, spec.name, nullable=spec.default is None)
    row = _row(spec)
    if row.default is INDEX_SETTING:
        return functools.partial(_or_index_setting, row)
    return check_fold if row.kind == "fold" else row.check


def _or_index_setting(row: Option, value: Any) -> Any:
    if value is INDEX_SETTING:
        return value
    if value is None:
        raise ConfigError(
            f"{row.name} must be {row._range()} (0 keeps every hit), or left out for the "
            "index's setting; got None"
        )
    return row.check(value)


FIELDS: dict[str, Option | Group] = {
    spec.name: spec.metadata["group"] if "group" in spec.metadata else _row(spec)
    for spec in fields(SearchOptions)
}
"""Every field of a query but its text, as the table declares it."""
OPTIONS: dict[str, Option] = {
    o.name: o
    for entry in FIELDS.values()
    for o in (entry.members if isinstance(entry, Group) else (entry,))
}
"""Every flat option by name (besides the query's text)."""
FILTER_OPTIONS = tuple(o.name for o in _FILTER_MEMBERS)
FUSION_OPTIONS = tuple(o.name for o in _FUSION_MEMBERS)
_CHECKS = {spec.name: _field_check(spec) for spec in fields(SearchOptions)}


def shown_at(front: Front) -> list[Option]:
    """The flat options ``front`` shows, in the table's order."""
    return [o for o in OPTIONS.values() if front in o.fronts]


def field_types() -> dict[str, Any]:
    """Each field's Python type (what a retriever declares it as)."""
    hints = get_type_hints(SearchOptions)
    return {name: hints[name] for name in FIELDS}


def field_default(name: str) -> Any:
    """A field's default value (a fresh one where it is built)."""
    spec = next(s for s in fields(SearchOptions) if s.name == name)
    return spec.default_factory() if callable(spec.default_factory) else spec.default


def from_flat(options: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a query from its flat options (unknown names refused, by name)."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ConfigError(f"unknown search option {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for name, entry in FIELDS.items():
        if isinstance(entry, Group):
            values[name] = entry.build(options)
        elif options.get(name) is not None:
            values[name] = entry.parse(options[name])
    return values


def to_flat(query: SearchOptions) -> dict[str, Any]:
    """The flat options of ``query`` (:func:`from_flat`'s inverse)."""
    flat: dict[str, Any] = {}
    for name, entry in FIELDS.items():
        value = getattr(query, name)
        if isinstance(entry, Group):
            flat.update(entry.flatten(value))
        elif value is INDEX_SETTING:
            flat[name] = None
        else:
            flat[name] = "off" if value is None and entry.kind == "fold" else value
    return flat


__all__ = [
    "EXPANSIONS",
    "FIELDS",
    "FILTER_OPTIONS",
    "FRONTS",
    "FUSION_OPTIONS",
    "INDEX_SETTING",
    "MODES",
    "OPTIONS",
    "Front",
    "Group",
    "IndexSetting",
    "Option",
    "SearchOptions",
    "field_default",
    "field_types",
    "from_flat",
    "parse_fold",
    "parse_fusion",
    "shown_at",
    "to_flat",
]
