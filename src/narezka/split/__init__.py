"""Splitting strategies, listable by name; each packs through :mod:`narezka.split.packer`."""

from __future__ import annotations

from importlib import import_module

from narezka.errors import UnknownStrategyError
from narezka.split.base import SENTENCE, SplitParams, Strategy

# name -> "module:Class", imported on first use so listing strategies stays cheap.
_BUILTIN = {
    "fixed": "narezka.split.fixed:FixedStrategy",
    "overlap": "narezka.split.overlap:OverlapStrategy",
    "recursive": "narezka.split.recursive:RecursiveStrategy",
    "sentences": "narezka.split.sentences:SentencesStrategy",
    "headings": "narezka.split.headings:HeadingsStrategy",
}


def strategy_names() -> list[str]:
    """Names of the built-in strategies."""
    return list(_BUILTIN)


def get_strategy(name: str) -> Strategy:
    """A strategy instance by name."""
    target = _BUILTIN.get(name)
    if target is None:
        known = ", ".join(_BUILTIN)
        raise UnknownStrategyError(f"unknown strategy {name!r}; choose one of: {known}")
    module, cls = target.split(":")
    strategy: Strategy = getattr(import_module(module), cls)()
    return strategy


__all__ = ["SENTENCE", "SplitParams", "Strategy", "get_strategy", "strategy_names"]
