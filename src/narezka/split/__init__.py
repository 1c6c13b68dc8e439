"""Splitting strategies, listable by name; each packs through :mod:`narezka.split.packer`."""

from __future__ import annotations

from importlib import import_module

from narezka.errors import UnknownStrategyError
from narezka.split.base import (
    MARKDOWN_INCLUDE,
    SENTENCE,
    Chooser,
    EmbedFunction,
    SplitParams,
    Strategy,
)

# name -> "module:Class", imported on first use so listing strategies stays cheap.
_BUILTIN = {
    "fixed": "narezka.split.fixed:FixedStrategy",
    "overlap": "narezka.split.overlap:OverlapStrategy",
    "recursive": "narezka.split.recursive:RecursiveStrategy",
    "sentences": "narezka.split.sentences:SentencesStrategy",
    "headings": "narezka.split.headings:HeadingsStrategy",
    "semantic": "narezka.split.semantic:SemanticStrategy",
    "code": "narezka.split.code:CodeStrategy",
    "legal": "narezka.split.legal:LegalStrategy",
    "chat": "narezka.split.chat:ChatStrategy",
    "parent-child": "narezka.split.parent_child:ParentChildStrategy",
    "faq": "narezka.split.faq:FaqStrategy",
    "auto": "narezka.split.auto:AutoStrategy",
}
NEEDS_EMBEDDER = frozenset({"semantic"})
"""Strategies that embed while they split; they take an ``embed`` function."""


def strategy_names() -> list[str]:
    """Names of the built-in strategies."""
    return list(_BUILTIN)


def get_strategy(name: str, *, embed: EmbedFunction | None = None) -> Strategy:
    """A strategy instance by name.

    ``embed`` reaches the strategies that need meaning (``semantic``); without it they open
    the default embedder themselves.
    """
    target = _BUILTIN.get(name)
    if target is None:
        known = ", ".join(_BUILTIN)
        raise UnknownStrategyError(f"unknown strategy {name!r}; choose one of: {known}")
    module, cls = target.split(":")
    factory = getattr(import_module(module), cls)
    strategy: Strategy = factory(embed=embed) if name in NEEDS_EMBEDDER else factory()
    return strategy


__all__ = [
    "MARKDOWN_INCLUDE",
    "NEEDS_EMBEDDER",
    "SENTENCE",
    "Chooser",
    "EmbedFunction",
    "SplitParams",
    "Strategy",
    "get_strategy",
    "strategy_names",
]
