"""``Query``: one search, validated once — what every entry point builds and ``Index.search``
takes.

The CLI's flags, the HTTP API's parameters, MCP's ``search`` tool, both retrievers and
:func:`narezka.api.searching.search` all name a query's options the same way (the
:data:`OPTIONS`), and all turn them into a :class:`Query` through :meth:`Query.parse`, so an
option added here reaches every one of them (``tests/search/test_query.py`` checks).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from narezka import defaults
from narezka.errors import ConfigError
from narezka.search.folding import Fold, check_fold
from narezka.search.fusion import DEFAULT as DEFAULT_FUSION
from narezka.search.fusion import METHODS, Fusion
from narezka.search.hits import Filter

MODES = ("dense", "bm25", "hybrid")
EXPANSIONS = (None, "section", "parent")
FILTER_OPTIONS = ("zone", "project", "category", "path", "include_archived")
FUSION_OPTIONS = ("fusion", "rrf_k", "dense_weight")
OPTIONS = (
    *("k", "mode", *FILTER_OPTIONS, "expand", *FUSION_OPTIONS, "fold", "min_relevance"),
    "rescore",
)
"""A query's options in their flat, text-friendly form (besides the text itself): what a
flag, a URL parameter, a tool argument or a retriever's ``search_kwargs`` key is called."""


def check_k(k: int) -> None:
    """Refuse a k that is no whole number of at least 1."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a whole number of at least 1, got {k!r}")


@dataclass(frozen=True, slots=True)
class Query:
    """One search: its text and every option, checked when built (a bad one is a
    ``ConfigError`` naming it, before anything is embedded)."""

    text: str
    k: int = defaults.K
    mode: str = defaults.MODE
    """``dense``, ``bm25`` or ``hybrid``."""
    filters: Filter = field(default_factory=Filter)
    expand: str | None = None
    """``section`` (the hit's whole heading section) or ``parent`` (a parent-child index's
    parents: small-to-big); None: the hit's own text."""
    fusion: Fusion | None = None
    """How hybrid search combines its rankings; None: :data:`narezka.search.fusion.DEFAULT`."""
    fold: Fold = defaults.FOLD
    """Neighbours folded into a hit: those scoring at least this share of it; None: none;
    ``"auto"``: 0.8 for hybrid score fusion, else every one that ranked."""
    min_relevance: float | None = None
    """Hits below this calibrated relevance are dropped; None keeps every hit. The CLI, the
    server and the retrievers pass the index's setting (``Settings.relevance_floor``)."""
    rescore: bool = True
    """Re-score the candidates with the index's second vectors (the quality tier), when it
    has them; False searches such an index as one without them. No effect elsewhere."""

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise ConfigError("the query is empty")
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        check_k(self.k)
        if self.expand not in EXPANSIONS:
            raise ConfigError(f"expand must be 'section' or 'parent', not {self.expand!r}")
        if not isinstance(self.filters, Filter):
            raise ConfigError(f"filters must be a narezka.Filter, not {self.filters!r}")
        if self.fusion is not None:
            if not isinstance(self.fusion, Fusion):
                raise ConfigError(f"fusion must be a narezka.search.Fusion, not {self.fusion!r}")
            if self.mode != "hybrid" and self.fusion != DEFAULT_FUSION:
                raise ConfigError(
                    f"fusion ({self.fusion.label}) applies to hybrid search, not to {self.mode}"
                )
        check_fold(self.fold)
        if not isinstance(self.rescore, bool):
            raise ConfigError(f"rescore must be true or false, got {self.rescore!r}")
        if self.min_relevance is not None:
            object.__setattr__(
                self, "min_relevance", defaults.check_min_relevance(self.min_relevance)
            )

    def replace(self, **changes: Any) -> Query:
        """A copy with ``changes`` applied, checked again."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def parse(cls, text: str, options: Mapping[str, Any]) -> Query:
        """A query from the flat options (:data:`OPTIONS`), each a value or its text form
        (``"5"``, ``"off"``, ``"true"``) as a flag, URL or tool argument gives it; None or a
        missing key: the default. An unknown option is refused, naming it."""
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ConfigError(f"unknown search option {', '.join(unknown)}")
        given = {name: value for name, value in options.items() if value is not None}
        values: dict[str, Any] = {}
        if "k" in given:
            values["k"] = _whole(given["k"], "k")
        if "mode" in given:
            values["mode"] = str(given["mode"])
        if "expand" in given:
            values["expand"] = (
                None if str(given["expand"]) in ("", "none", "off") else given["expand"]
            )
        values["filters"] = Filter(
            zone=_text(given.get("zone")),
            project=_text(given.get("project")),
            category=_text(given.get("category")),
            path=_text(given.get("path")),
            include_archived=_flag(given.get("include_archived", False), "include_archived"),
        )
        mode = values.get("mode", defaults.MODE)
        values["fusion"] = parse_fusion(
            mode, given.get("fusion"), given.get("rrf_k"), given.get("dense_weight")
        )
        if "fold" in given:
            values["fold"] = parse_fold(given["fold"])
        if "min_relevance" in given:
            values["min_relevance"] = _number(given["min_relevance"], "min_relevance")
        if "rescore" in given:
            values["rescore"] = _flag(given["rescore"], "rescore")
        return cls(text, **values)

    def options(self) -> dict[str, Any]:
        """The flat options this query was built from (the inverse of :meth:`parse`)."""
        fusion = self.fusion
        return {
            "k": self.k,
            "mode": self.mode,
            **{name: getattr(self.filters, name) for name in FILTER_OPTIONS},
            "expand": self.expand,
            "fusion": None if fusion is None else fusion.method,
            "rrf_k": None if fusion is None else fusion.rrf_k,
            "dense_weight": None if fusion is None else fusion.dense_weight,
            "fold": "off" if self.fold is None else self.fold,  # None is "not given" here
            "min_relevance": self.min_relevance,
            "rescore": self.rescore,
        }


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
        options["rrf_k"] = _whole(rrf_k, "rrf_k")
    if dense_weight is not None:
        options["dense_weight"] = _number(dense_weight, "dense_weight")
    return Fusion(**options)


def parse_fold(value: Any) -> Fold:
    """A fold setting from a ratio or its text: ``0.8``, ``auto``, ``off``."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        check_fold(value)
        return value if value is None else float(value)
    word = str(value).strip().lower()
    if word == "off":
        return None
    if word == "auto":
        return "auto"
    try:
        ratio = float(word)
    except ValueError:
        raise ConfigError(f"fold takes a ratio in [0, 1], auto or off, not {value!r}") from None
    check_fold(ratio)
    return ratio


def _text(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def _whole(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    try:
        number = int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
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
    "FILTER_OPTIONS",
    "MODES",
    "OPTIONS",
    "Query",
    "check_k",
    "parse_fold",
    "parse_fusion",
]
