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

import enum
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields
from typing import Any, Final, Literal, TypeAlias, get_type_hints

from narezka import defaults
from narezka.errors import ConfigError
from narezka.search.folding import AUTO, AUTO_FOLD, Fold, check_fold
from narezka.search.fusion import DEFAULT as DEFAULT_FUSION
from narezka.search.fusion import METHODS, RRF_K, Fusion
from narezka.search.hits import Filter

Front: TypeAlias = Literal["library", "search", "eval", "http", "mcp", "retrievers"]
FRONTS: tuple[Front, ...] = ("library", "search", "eval", "http", "mcp", "retrievers")
"""Where a query is asked: :meth:`narezka.Index.search` and :func:`narezka.api.searching.search`
(``library``), ``narezka search`` and ``narezka eval``, the HTTP API, MCP's ``search`` tool,
the LangChain and LlamaIndex retrievers."""
EVERYWHERE: frozenset[Front] = frozenset(FRONTS) - {"eval"}
"""``eval`` asks its own questions: it shows only the options that change how hits rank."""
RANKING: frozenset[Front] = frozenset(FRONTS)

Kind: TypeAlias = Literal["whole", "number", "text", "flag", "choice", "fold"]
MODES = ("dense", "bm25", "hybrid")
EXPANSIONS = (None, "section", "parent")
OFF_WORDS = ("off", "none", "")


class IndexSetting(enum.Enum):
    """The type of :data:`INDEX_SETTING`."""

    INDEX_SETTING = "the index's setting"

    def __repr__(self) -> str:
        return "INDEX_SETTING"


INDEX_SETTING: Final = IndexSetting.INDEX_SETTING
"""A default meaning "the index's own setting", resolved by :meth:`narezka.Index.search`."""


@dataclass(frozen=True, slots=True)
class Option:
    """One flat option: a row of the table."""

    name: str
    kind: Kind
    default: Any
    """The flat default: what a front shows and what a missing option means."""
    help: str
    """One sentence for a person or a model; the default is added by each front."""
    fronts: frozenset[Front] = EVERYWHERE
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    shown: str | None = None
    """The default in words, where the flat default (None) says nothing: "the index's
    setting", "60"."""

    @property
    def flag(self) -> str:
        """Its command-line flag: ``-k``, ``--min-relevance``."""
        return "-k" if self.name == "k" else "--" + self.name.replace("_", "-")

    @property
    def default_text(self) -> str | None:
        """The default as a front states it (None: nothing worth stating)."""
        if self.shown is not None:
            return self.shown
        if self.default is None or self.default is False:
            return None
        return str(self.default).lower() if isinstance(self.default, bool) else str(self.default)

    def parse(self, value: Any) -> Any:
        """The typed value of a flat one (a value or its text: ``"5"``, ``"off"``), checked;
        None: the default's."""
        if value is None:
            value = self.default
        if value is None or isinstance(value, IndexSetting):
            return value
        if self.kind == "whole":
            return self.check(_whole(value, self.name))
        if self.kind == "number":
            return self.check(_number(value, self.name))
        if self.kind == "flag":
            return _flag(value, self.name)
        if self.kind == "fold":
            return parse_fold(value)
        text = str(value)
        if self.kind == "choice":
            off = self.default is None and text.strip().lower() in OFF_WORDS
            return self.check(None if off else text)
        return text or None

    def check(self, value: Any) -> Any:
        """``value`` if this option may take it, else a ConfigError naming the option."""
        if self.kind == "choice":
            allowed = (None, *self.choices) if self.default is None else self.choices
            if value not in allowed:
                raise ConfigError(
                    f"{self.name} must be one of {', '.join(self.choices)}, not {value!r}"
                )
            return value
        if value is None and self.default is None:
            return value
        if self.kind in ("whole", "number"):
            whole = self.kind == "whole"
            number = isinstance(value, int) if whole else isinstance(value, int | float)
            if isinstance(value, bool) or not number or not math.isfinite(value):
                raise ConfigError(f"{self.name} must be {self._range()}, got {value!r}")
            if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum
            ):
                raise ConfigError(f"{self.name} must be {self._range()}, got {value!r}")
            return value if whole else float(value)
        if self.kind == "flag" and not isinstance(value, bool):
            raise ConfigError(f"{self.name} must be true or false, got {value!r}")
        if self.kind == "text" and not isinstance(value, str):
            raise ConfigError(f"{self.name} must be text, got {value!r}")
        return value

    def _range(self) -> str:
        what = "a whole number" if self.kind == "whole" else "a number"
        if self.minimum is not None and self.maximum is not None:
            return f"{what} in [{self.minimum:g}, {self.maximum:g}]"
        return f"{what} of at least {self.minimum:g}" if self.minimum is not None else what

    def json_schema(self, *, maximum: float | None = None) -> dict[str, Any]:
        """Its JSON schema (the OpenAPI document's parameter); ``maximum``: a front's own cap."""
        top = self.maximum if maximum is None else maximum
        schema: dict[str, Any]
        if self.kind in ("whole", "number"):
            schema = {"type": "integer" if self.kind == "whole" else "number"}
            schema |= {} if self.minimum is None else {"minimum": self.minimum}
            schema |= {} if top is None else {"maximum": top}
        elif self.kind == "flag":
            schema = {"type": "boolean"}
        elif self.kind == "choice":
            schema = {"enum": list(self.choices)}
        elif self.kind == "fold":
            ratio = {"type": "number", "minimum": 0, "maximum": 1}
            schema = {"anyOf": [ratio, {"enum": [AUTO, "off"]}]}
        else:
            schema = {"type": "string"}
        if self.default is None or isinstance(self.default, IndexSetting):
            return schema
        return {**schema, "default": self.default}

    def annotation(self) -> Any:
        """Its Python type for a JSON-schema generator (pydantic: MCP's tool arguments); None
        allowed (not given) where the default says nothing else."""
        kind: Any
        if self.kind == "choice":
            kind = Literal[self.choices]
        elif self.kind == "fold":
            kind = float | Literal[AUTO, "off"]
        else:
            kind = {"whole": int, "number": float, "flag": bool, "text": str}[self.kind]
        unset = self.default is None or isinstance(self.default, IndexSetting)
        return kind | None if unset else kind


@dataclass(frozen=True, slots=True)
class Group:
    """A field made of several flat options (:class:`~narezka.search.Filter`,
    :class:`~narezka.search.Fusion`): how the field is built from them and read back."""

    members: tuple[Option, ...]
    help: str
    build: Callable[[Mapping[str, Any]], Any]
    """The field's value from the members' flat values (all of a query's, parsed or not)."""
    flatten: Callable[[Any], dict[str, Any]]
    """The members' flat values of a field's value."""


def row(**cells: Any) -> dict[str, Any]:
    """The metadata of a :class:`SearchOptions` field that is one flat option of its own
    name and default: :class:`Option`'s other cells."""
    return {"option": cells}


def members(*flat: Option, help: str, build: Any, flatten: Any) -> dict[str, Any]:
    """The metadata of a :class:`SearchOptions` field made of several flat options."""
    return {"group": Group(flat, help, build, flatten)}


def parse_fold(value: Any) -> Fold:
    """A fold setting from a ratio or its text: ``0.8``, ``auto``, ``off`` (None: none)."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return check_fold(value)
    word = str(value).strip().lower()
    if word in OFF_WORDS:
        return None
    if word == AUTO:
        return AUTO
    try:
        ratio = float(word)
    except ValueError:
        raise ConfigError(f"fold takes a ratio in [0, 1], {AUTO} or off, not {value!r}") from None
    return check_fold(ratio)


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


def _whole(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    try:
        number = int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{name} must be a whole number, got {value!r}") from None
    if not isinstance(value, str) and number != value:
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    return number


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")
    return number


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(f"{name} must be true or false, got {value!r}")


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
