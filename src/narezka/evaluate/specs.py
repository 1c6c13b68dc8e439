"""Strategy specs as written on the command line (``fixed:size=800,unit=chars``), ks, and the
``--sizes`` sweep that multiplies specs by sizes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from narezka.errors import ConfigError

ParamValue = int | float | str


@dataclass(frozen=True, slots=True)
class StrategySpec:
    """A strategy name and its split parameters, as written on the command line."""

    name: str
    params: Mapping[str, ParamValue] = field(default_factory=dict)
    family: str = ""
    """The spec as written when a size sweep made this one (``recursive`` for
    ``recursive:size=256``); empty otherwise."""

    @property
    def label(self) -> str:
        """``name:key=value,...`` in the order given: the strategy's name in reports."""
        if not self.params:
            return self.name
        return self.name + ":" + ",".join(f"{k}={v}" for k, v in self.params.items())

    @property
    def group(self) -> str:
        """The line this result belongs to in sweep tables and plots."""
        return self.family or self.label


def parse_strategy(text: str) -> StrategySpec:
    """Parse ``name`` or ``name:key=value,...``; numeric values become ints or floats."""
    name, _, rest = text.strip().partition(":")
    if not name:
        raise ConfigError(f"strategy spec {text!r} has no name")
    params: dict[str, ParamValue] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ConfigError(f"strategy spec {text!r}: expected key=value, got {item!r}")
        params[key.strip()] = _number(value.strip())
    return StrategySpec(name, params)


def _number(value: str) -> ParamValue:
    if value.lstrip("-").isdigit():
        return int(value)
    try:
        return float(value)
    except ValueError:
        return value


def parse_strategies(text: str | Sequence[str]) -> list[StrategySpec]:
    """Several specs separated by whitespace (a string) or given one per item."""
    items = text.split() if isinstance(text, str) else [t for s in text for t in s.split()]
    specs = [parse_strategy(t) for t in items]
    if not specs:
        raise ConfigError("no strategies given")
    _no_twins(specs)
    return specs


def _no_twins(specs: Sequence[StrategySpec]) -> None:
    labels = [s.label for s in specs]
    twins = sorted({label for label in labels if labels.count(label) > 1})
    if twins:
        raise ConfigError(f"a strategy is given twice: {' '.join(twins)}")


def parse_ks(text: str | Sequence[int]) -> tuple[int, ...]:
    """``"1,3,5"`` (or ints) as sorted distinct positive ks."""
    return _positive_ints(text, "k")


def parse_sizes(text: str | Sequence[int] | None) -> tuple[int, ...]:
    """``"128,256,512"`` (or ints) as sorted distinct sizes; empty for no sweep."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return ()
    return _positive_ints(text, "sizes")


def _positive_ints(text: str | Sequence[int], what: str) -> tuple[int, ...]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()] if isinstance(text, str) else text
    except ValueError:
        raise ConfigError(f"{what} must be comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise ConfigError(f"{what} must be positive integers, got {text!r}")
    return tuple(sorted(set(values)))


def sweep(specs: Sequence[StrategySpec], sizes: Sequence[int]) -> list[StrategySpec]:
    """Every spec at every size, unless the spec fixes ``size`` itself (then it runs once).

    Sizes are in the spec's unit: by default the embedder's tokens, characters with
    ``unit=chars``.
    """
    if not sizes:
        return list(specs)
    out: list[StrategySpec] = []
    for spec in specs:
        if "size" in spec.params:
            out.append(spec)
            continue
        out += [
            StrategySpec(spec.name, {**spec.params, "size": size}, family=spec.label)
            for size in sizes
        ]
    _no_twins(out)
    return out


__all__ = [
    "ParamValue",
    "StrategySpec",
    "parse_ks",
    "parse_sizes",
    "parse_strategies",
    "parse_strategy",
    "sweep",
]
