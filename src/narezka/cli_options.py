"""The splitting options shared by commands that chunk (``inspect`` today; ``chunk`` and
``index`` can adopt them), as one decorator plus the code that turns them into a run.

``splitting_options`` adds the options; ``Splitting.from_options`` resolves them the way
``narezka chunk`` does: ``--unit tokens`` without ``--tokenizer`` measures in the embedder's
own tokens, and with ``--size`` omitted the embedder's budget is the size.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click

from narezka.embed import DEFAULT_EMBEDDER, cached_signal_embedder, get_embedder
from narezka.errors import NarezkaError
from narezka.split import NEEDS_EMBEDDER, SENTENCE, EmbedFunction, SplitParams, strategy_names
from narezka.tokens import TokenCounter

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_SIZE_CHARS = 800
OPTION_NAMES = (
    "strategy",
    "size",
    "overlap",
    "unit",
    "tokenizer",
    "embedder",
    "levels",
    "min_chars",
    "breadcrumbs",
    "threshold",
    "percentile",
    "parent_size",
    "include",
    "exclude",
    "separators",
)
"""The keyword arguments the decorator adds to a command."""

_PARAM_FIELDS = frozenset(f.name for f in dataclasses.fields(SplitParams))


def unescape(separator: str) -> str:
    """Shells make typing a newline awkward: accept backslash escapes like ``\\n``."""
    return separator.encode("latin-1", "backslashreplace").decode("unicode_escape")


def parse_levels(value: str | None) -> tuple[int, int] | None:
    """``2-3`` (or ``2``) as a pair of heading levels."""
    if value is None:
        return None
    lo, _, hi = str(value).partition("-")
    try:
        return int(lo), int(hi or lo)
    except ValueError:
        raise click.BadParameter(f"expected FROM-TO like 2-3, got {value!r}") from None


def splitting_options(command: F) -> F:
    """Add ``chunk``'s splitting options (strategy, size, unit, globs…) to a command."""
    options = [
        click.option(
            "--strategy",
            "-s",
            type=click.Choice(strategy_names()),
            default="headings",
            show_default=True,
            help="How to split.",
        ),
        click.option(
            "--size",
            type=int,
            default=None,
            help="Maximum size of each chunk's embed_text, in --unit  [default: 800 chars, or "
            "the embedder's budget in tokens].",
        ),
        click.option(
            "--overlap",
            type=int,
            default=0,
            show_default=True,
            help="Units each chunk repeats from the previous one (overlap, recursive, sentences).",
        ),
        click.option(
            "--unit", type=click.Choice(["chars", "tokens"]), default="chars", show_default=True
        ),
        click.option(
            "--tokenizer",
            default=None,
            help="With --unit tokens: a tiktoken encoding (cl100k_base) or a tokenizer.json "
            "path; default: the embedder's own tokenizer.",
        ),
        click.option(
            "--embedder",
            default=None,
            help="Size --unit tokens in this embedder's tokens (use, e5, minilm, …); default: "
            "use. With --size omitted, its budget is the size.",
        ),
        click.option("--levels", default=None, help="Heading levels that open sections, e.g. 2-3."),
        click.option(
            "--min-chars",
            type=int,
            default=None,
            help="Merge chunks shorter than this into a neighbour when they fit (headings).",
        ),
        click.option(
            "--breadcrumbs/--no-breadcrumbs",
            default=None,
            help="Prefix the section path to embed_text (default: the strategy's own).",
        ),
        click.option("--threshold", type=float, default=None, help="semantic: similarity cut."),
        click.option("--percentile", type=float, default=None, help="semantic: percentile cut."),
        click.option(
            "--parent-size",
            type=int,
            default=None,
            help="parent-child: the parents' size limit, in --unit  [default: 4 × --size].",
        ),
        click.option("--include", multiple=True, help="Glob of files to read (repeatable)."),
        click.option("--exclude", multiple=True, help="Glob of files to skip (repeatable)."),
        click.option(
            "--separator",
            "separators",
            multiple=True,
            help="recursive: a separator, coarsest first (repeatable; '\\n' escapes work; "
            f"'{SENTENCE}' means sentence ends).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@dataclass(frozen=True, slots=True)
class Splitting:
    """Everything ``pipeline.chunk_documents`` needs besides the paths."""

    strategy: str
    params: Mapping[str, Any]
    """SplitParams fields (size resolved)."""
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    counter: TokenCounter | None = None
    embed: EmbedFunction | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    """What a ``--compare`` spec changed, for the label."""

    @property
    def size(self) -> int:
        return int(self.params["size"])

    @property
    def unit(self) -> str:
        return "tokens" if self.counter is not None else str(self.params["unit"])

    @property
    def tokenizer(self) -> str:
        if self.counter is not None:
            return self.counter.name
        return "chars" if self.unit == "chars" else str(self.params["tokenizer"])

    @property
    def label(self) -> str:
        """``headings · 800 chars`` (plus a compare spec's other changes)."""
        extra = ", ".join(f"{k}={v}" for k, v in self.overrides.items() if k not in ("size",))
        unit = "chars" if self.unit == "chars" else f"{self.tokenizer} tokens"
        return f"{self.strategy} · {self.size} {unit}" + (f" · {extra}" if extra else "")

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``pipeline.chunk_documents``."""
        return {
            "include": self.include,
            "exclude": self.exclude,
            "counter": self.counter,
            "embed": self.embed,
            **self.params,
        }

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Splitting:
        """Resolve the decorator's options; a bad embedder or tokenizer is a UsageError."""
        unit = options["unit"]
        size = options["size"]
        tokenizer = options["tokenizer"]
        embedder = options["embedder"]
        counter = None
        embed = None
        try:
            needs_tokens = unit == "tokens" and tokenizer is None
            # One model serves both the token counts and semantic's signal: loading is the cost.
            model = get_embedder(embedder or DEFAULT_EMBEDDER) if needs_tokens else None
            if model is not None:
                counter, size = model.counter, model.budget if size is None else size
            if options["strategy"] in NEEDS_EMBEDDER:
                embed = cached_signal_embedder(model or embedder or DEFAULT_EMBEDDER)
        except NarezkaError as exc:
            raise click.UsageError(str(exc)) from None
        params: dict[str, Any] = {
            "size": DEFAULT_SIZE_CHARS if size is None else size,
            "overlap": options["overlap"],
            "unit": unit,
            "tokenizer": tokenizer or "cl100k_base",
            "levels": parse_levels(options["levels"]),
            "min_chars": options["min_chars"],
            "breadcrumbs": options["breadcrumbs"],
            "separators": tuple(unescape(s) for s in options["separators"]) or None,
            "threshold": options["threshold"],
            "percentile": options["percentile"],
            "parent_size": options["parent_size"],
        }
        return cls(
            strategy=options["strategy"],
            params=params,
            include=tuple(options["include"]) or None,
            exclude=tuple(options["exclude"]),
            counter=counter,
            embed=embed,
        )

    def with_spec(self, name: str, overrides: Mapping[str, Any]) -> Splitting:
        """This run with another strategy and some parameters changed (``--compare``).

        ``unit`` and ``tokenizer`` cannot change: both sides are measured in one unit so
        their bars compare.
        """
        unknown = sorted(set(overrides) - _PARAM_FIELDS)
        fixed = sorted({"unit", "tokenizer"} & set(overrides))
        if unknown:
            raise click.BadParameter(
                f"unknown option {', '.join(unknown)}; one of {', '.join(sorted(_PARAM_FIELDS))}",
                param_hint="--compare",
            )
        if fixed:
            raise click.BadParameter(
                f"{', '.join(fixed)} cannot differ between the two sides; set --unit/--tokenizer",
                param_hint="--compare",
            )
        if name not in strategy_names():
            raise click.BadParameter(
                f"unknown strategy {name!r}; one of {', '.join(strategy_names())}",
                param_hint="--compare",
            )
        params = dict(self.params)
        for key, value in overrides.items():
            params[key] = parse_levels(value) if key == "levels" else value
        embed = self.embed
        if name in NEEDS_EMBEDDER and embed is None:
            try:
                embed = cached_signal_embedder(DEFAULT_EMBEDDER)
            except NarezkaError as exc:
                raise click.UsageError(str(exc)) from None
        return dataclasses.replace(
            self, strategy=name, params=params, embed=embed, overrides=dict(overrides)
        )


__all__ = ["OPTION_NAMES", "Splitting", "parse_levels", "splitting_options", "unescape"]
