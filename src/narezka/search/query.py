"""``Query``: one search, validated once — what every entry point builds and ``Index.search``
takes.

A Query is a text and the :class:`~narezka.search.options.SearchOptions`, the one table of
search options; the CLI's flags, the HTTP API's parameters, MCP's ``search`` tool, both
retrievers and :func:`narezka.api.searching.search` are made from that table and turn what
they are given into a Query through :meth:`Query.parse`, so an option added to the table
reaches every one of them (``tests/search/test_query_entry_points.py`` checks).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from narezka.errors import ConfigError
from narezka.search.options import (
    EXPANSIONS,
    FILTER_OPTIONS,
    FUSION_OPTIONS,
    INDEX_SETTING,
    MODES,
    OPTIONS,
    SearchOptions,
    from_flat,
    parse_fold,
    parse_fusion,
    to_flat,
)


@dataclass(frozen=True, slots=True)
class Query(SearchOptions):
    """One search: its text and every option of :class:`SearchOptions` (by keyword:
    ``Query("вернуть чай", k=3, mode="bm25")``), checked when built."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise ConfigError("the query is empty")
        SearchOptions.__post_init__(self)  # slots: no zero-argument super() before 3.14

    def replace(self, **changes: Any) -> Query:
        """A copy with ``changes`` applied, checked again."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def parse(cls, text: str, options: Mapping[str, Any]) -> Query:
        """A query from the flat options (:data:`OPTIONS`), each a value or its text form
        (``"5"``, ``"off"``, ``"true"``) as a flag, URL or tool argument gives it; None or a
        missing key: the default. An unknown option is refused, naming it."""
        return cls(text, **from_flat(options))

    def options(self) -> dict[str, Any]:
        """The flat options this query was built from (the inverse of :meth:`parse`)."""
        return to_flat(self)


__all__ = [
    "EXPANSIONS",
    "FILTER_OPTIONS",
    "FUSION_OPTIONS",
    "INDEX_SETTING",
    "MODES",
    "OPTIONS",
    "Query",
    "parse_fold",
    "parse_fusion",
]
