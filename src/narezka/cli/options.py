"""How ``chunk`` and ``inspect`` turn their options into a chunking run, and ``index`` and
``push`` theirs into a Qdrant cluster layout.

``splitting_options`` adds the shared splitting options (:mod:`narezka.cli.common`) plus
``--embedder``; ``Splitting.from_options`` resolves them: ``--unit tokens`` without
``--tokenizer`` measures in the embedder's own tokens, and with ``--size`` omitted the
embedder's budget is the size (800 characters in chars). ``cluster_options`` adds the
server collection's layout (:mod:`narezka.store.cluster`), resolved by ``cluster_for``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from narezka.cli.common import settings_for, split_options
from narezka.errors import NarezkaError
from narezka.split import NEEDS_EMBEDDER, EmbedFunction, SplitParams, strategy_names
from narezka.tokens import TokenCounter

if TYPE_CHECKING:
    from narezka.store.cluster import ClusterParams

# The embed stage (numpy behind it) is imported where a run needs a model: ``chunk`` in
# characters needs none, and imports it neither before its fork server starts nor at all.

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_SIZE_CHARS = 800
_PARAM_FIELDS = frozenset(f.name for f in dataclasses.fields(SplitParams))


def splitting_options(command: F) -> F:
    """``chunk``'s options: the shared splitting options plus the embedder whose tokens
    ``--unit tokens`` counts."""
    command = click.option(
        "--embedder",
        default=None,
        help="Size --unit tokens in this embedder's tokens (use, e5, minilm, ollama:MODEL, …); "
        "default: use. With --size omitted, its budget is the size.",
    )(command)
    return split_options()(command)


@dataclass(frozen=True, slots=True)
class Splitting:
    """Everything ``runs.chunk_documents`` needs besides the paths."""

    strategy: str
    params: Mapping[str, Any]
    """SplitParams fields (size resolved)."""
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    follow_symlinks: bool = False
    counter: TokenCounter | None = None
    embed: EmbedFunction | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    """What a ``--compare`` spec changed, for the label."""
    context_llm: str | None = None
    """The LLM that writes chunk context (None: off)."""

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
        """Keyword arguments of ``runs.chunk_documents``."""
        return {
            "include": self.include,
            "exclude": self.exclude,
            "follow_symlinks": self.follow_symlinks,
            "counter": self.counter,
            "embed": self.embed,
            "context": self.context_llm,
            **self.params,
        }

    @classmethod
    def from_options(
        cls, options: Mapping[str, Any], location: str | Path | None = None
    ) -> Splitting:
        """Resolve the decorator's options over the settings of ``location`` (its
        narezka.toml, then NAREZKA_*); a bad embedder or tokenizer is a UsageError."""
        settings = settings_for(location, options)
        given = settings.split_values()
        unit = given.get("unit") or "chars"
        size = given.get("size")
        tokenizer = given.get("tokenizer")
        embedder = settings.embedder
        counter = None
        embed = None
        try:
            needs_tokens = unit == "tokens" and tokenizer is None
            # One model serves both the token counts and semantic's signal: loading is the cost.
            model = None
            if needs_tokens or settings.strategy in NEEDS_EMBEDDER:
                from narezka.embed import DEFAULT_EMBEDDER, cached_signal_embedder, get_embedder

                model = get_embedder(embedder or DEFAULT_EMBEDDER) if needs_tokens else None
                if model is not None:
                    counter, size = model.counter, model.budget if size is None else size
                if settings.strategy in NEEDS_EMBEDDER:
                    embed = cached_signal_embedder(model or embedder or DEFAULT_EMBEDDER)
        except NarezkaError as exc:
            raise click.UsageError(str(exc)) from None
        params: dict[str, Any] = {
            **given,
            "size": DEFAULT_SIZE_CHARS if size is None else size,
            "unit": unit,
            "tokenizer": tokenizer or "cl100k_base",
        }
        return cls(
            strategy=settings.strategy,
            params=params,
            include=settings.include,
            exclude=settings.exclude,
            follow_symlinks=bool(settings.follow_symlinks),
            counter=counter,
            embed=embed,
            context_llm=settings.context_llm,
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
        params = {**self.params, **overrides}  # text forms (levels=2-3) parse in make_params
        embed = self.embed
        if name in NEEDS_EMBEDDER and embed is None:
            from narezka.embed import DEFAULT_EMBEDDER, cached_signal_embedder

            try:
                embed = cached_signal_embedder(DEFAULT_EMBEDDER)
            except NarezkaError as exc:
                raise click.UsageError(str(exc)) from None
        return dataclasses.replace(
            self, strategy=name, params=params, embed=embed, overrides=dict(overrides)
        )


CLUSTER_FLAGS = ("shards", "replicas", "write_consistency", "on_disk", "quantize")


def cluster_options(command: F) -> F:
    """A server collection's layout: shards, replication, write consistency, on-disk storage
    and quantization (unset: narezka.toml [qdrant], else the rule by size or the server's)."""
    options = [
        click.option("--shards", type=click.IntRange(min=1), default=None,
                     help="With a Qdrant URL: shards of a new collection  [default: the "
                     "server's, one per node]."),
        click.option("--replicas", type=click.IntRange(min=1), default=None,
                     help="With a Qdrant URL: copies of each shard  [default: the server's]."),
        click.option("--write-consistency", type=click.IntRange(min=1), default=None,
                     help="With a Qdrant URL: replicas that must confirm a write."),
        click.option("--on-disk/--in-ram", default=None,
                     help="With a Qdrant URL: original vectors and payload on disk  "
                     "[default: from 100,000 points]."),
        click.option("--quantize/--no-quantize", default=None,
                     help="With a Qdrant URL: int8 scalar quantization, searched with "
                     "re-scoring  [default: from 100,000 points]."),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


def cluster_for(
    location: str | Path | None, options: Mapping[str, Any], url: str | None
) -> ClusterParams | None:
    """The layout of a run: ``narezka.toml`` [qdrant] of ``location``, then the flags given
    (``None``: not given); bad values, or flags without a server ``url``, are a UsageError."""
    from narezka.store.cluster import ClusterParams

    if not url:
        given = [f"--{n.replace('_', '-')}" for n in CLUSTER_FLAGS if options.get(n) is not None]
        if given:
            raise click.UsageError(f"{', '.join(given)} lay out a server index: add --qdrant-url")
        return None

    root = None
    if location is not None and Path(location).exists():
        root = location
    try:
        return ClusterParams.load(root, **{name: options.get(name) for name in CLUSTER_FLAGS})
    except NarezkaError as exc:
        raise click.UsageError(str(exc)) from None


__all__ = ["Splitting", "cluster_for", "cluster_options", "splitting_options"]
