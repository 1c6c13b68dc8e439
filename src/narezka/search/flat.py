"""Flat search options: a row of the table of search options (:class:`Option`, or a
:class:`Group` of them making one field), how a flat value (a flag's, a URL parameter's, a
tool argument's: a value or its text) is read and checked, and the fronts that show it. The
table itself is :mod:`narezka.search.options`."""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from narezka.errors import ConfigError
from narezka.search.folding import AUTO, Fold, check_fold

Front: TypeAlias = Literal["library", "search", "eval", "http", "mcp", "retrievers"]
FRONTS: tuple[Front, ...] = ("library", "search", "eval", "http", "mcp", "retrievers")
"""Where a query is asked: :meth:`narezka.Index.search` and :func:`narezka.api.searching.search`
(``library``), ``narezka search`` and ``narezka eval``, the HTTP API, MCP's ``search`` tool,
the LangChain and LlamaIndex retrievers."""
EVERYWHERE: frozenset[Front] = frozenset(FRONTS) - {"eval"}
"""``eval`` asks its own questions: it shows only the options that change how hits rank."""
RANKING: frozenset[Front] = frozenset(FRONTS)

Kind: TypeAlias = Literal["whole", "number", "text", "flag", "choice", "fold"]
OFF_WORDS = ("off", "none", "")
"""Words that leave an option at none: no expansion, no folding."""


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
            return self._check_number(value)
        if self.kind == "flag" and not isinstance(value, bool):
            raise ConfigError(f"{self.name} must be true or false, got {value!r}")
        if self.kind == "text" and not isinstance(value, str):
            raise ConfigError(f"{self.name} must be text, got {value!r}")
        return value

    def _check_number(self, value: Any) -> Any:
        whole = self.kind == "whole"
        number = isinstance(value, int) if whole else isinstance(value, int | float)
        if isinstance(value, bool) or not number or not math.isfinite(value):
            raise ConfigError(f"{self.name} must be {self._range()}, got {value!r}")
        if (self.minimum is not None and value < self.minimum) or (
            self.maximum is not None and value > self.maximum
        ):
            raise ConfigError(f"{self.name} must be {self._range()}, got {value!r}")
        return value if whole else float(value)

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
    "FRONTS",
    "INDEX_SETTING",
    "Front",
    "Group",
    "IndexSetting",
    "Kind",
    "Option",
    "members",
    "parse_fold",
    "row",
]
