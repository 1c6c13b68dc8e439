"""How ``chunk`` and ``inspect`` turn their options into a chunking run, and ``index`` and
``push`` theirs into a Qdrant cluster layout.

``splitting_options`` adds the shared splitting options (:mod:`narezka.cli.common`) plus
``--embedder``; ``Splitting.from_options`` resolves them with
:func:`narezka.settings.chunk_config`, as every command does, in characters unless told
otherwise: ``--unit tokens`` without ``--tokenizer`` measures in the embedder's own tokens,
and with ``--size`` omitted the embedder's (calibrated) budget is the size.
``cluster_options`` adds the server collection's layout (:mod:`narezka.store.cluster`),
resolved by ``cluster_for``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from narezka import defaults, environment
from narezka._forward import Forward
from narezka.cli.common import settings_for, split_options
from narezka.defaults import EMBEDDER, PREVIEW_UNIT, TOKENIZER
from narezka.errors import NarezkaError
from narezka.runs import ChunkConfig
from narezka.split import NEEDS_EMBEDDER, EmbedFunction, SplitParams, strategy_names

if TYPE_CHECKING:
    from narezka.store import ClusterParams

# The embed stage (numpy behind it) is imported where a run needs a model: ``chunk`` in
# characters needs none, and imports it neither before its fork server starts nor at all.

F = TypeVar("F", bound=Callable[..., Any])

_PARAM_FIELDS = frozenset(f.name for f in dataclasses.fields(SplitParams))


strict_option = click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 if any file was skipped or not read (a document type narezka does not read: "
    "--exclude it to accept that).",
)
"""``chunk``, ``index`` and ``sync``: unread files fail the run."""
debounce_option = click.option(
    "--debounce-ms", type=int, default=defaults.WATCH_DEBOUNCE_MS, show_default=True
)
"""``watch`` and ``serve``: how long the corpus must stay still before a sync."""
json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
"""Every command whose report a program may read."""
follow_symlinks_option = click.option(
    "--follow-symlinks/--no-follow-symlinks",
    default=None,
    help="Change whether symlinks leading outside the corpus are read  [default: as the index "
    "records; built without, they are named as skipped].",
)
"""``sync``, ``watch`` and ``serve``: the one flag that changes an index's symlink rule."""


def splitting_options(command: F) -> F:
    """``chunk``'s options: the shared splitting options plus the embedder whose tokens
    ``--unit tokens`` counts."""
    command = click.option(
        "--embedder",
        default=None,
        help="Size --unit tokens in this embedder's tokens (use, e5, minilm, ollama:MODEL, …); "
        f"default: {EMBEDDER}. With --size omitted, its budget is the size (its calibrated one, "
        "if narezka calibrate measured it).",
    )(command)
    return split_options()(command)


DISPLAY_TOKENIZER = TOKENIZER
"""In chars mode people still read sizes in tokens: counted with this for display only."""


@dataclass(frozen=True, slots=True)
class Splitting:
    """Everything ``runs.chunk_documents`` needs besides the paths: the resolved
    :class:`~narezka.runs.config.ChunkConfig` and, for ``semantic``, the embedder's signal."""

    config: ChunkConfig
    embed: EmbedFunction | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    """What a ``--compare`` spec changed, for the label."""

    strategy = Forward[str]("config")
    size = Forward[int]("config")
    unit = Forward[str]("config")
    tokenizer = Forward[str]("config")
    include = Forward[tuple[str, ...] | None]("config")
    exclude = Forward[tuple[str, ...]]("config")

    @property
    def label(self) -> str:
        """``headings · 800 chars`` (plus a compare spec's other changes)."""
        extra = ", ".join(f"{k}={v}" for k, v in self.overrides.items() if k not in ("size",))
        unit = "chars" if self.unit == "chars" else f"{self.tokenizer} tokens"
        return f"{self.strategy} · {self.size} {unit}" + (f" · {extra}" if extra else "")

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``runs.chunk_documents``."""
        from narezka.settings import convert_options, servers

        return {
            "config": self.config,
            "embed": self.embed,
            "servers": servers(),
            "convert": convert_options(),  # NAREZKA_OCR and the limits, read here
            # For the LLM contexts' cache beside it (semantic's embed is built already):
            # asked for only then, since finding it loads the embed stage (and numpy).
            "cache": _user_cache() if self.config.context_llm else None,
        }

    @classmethod
    def from_options(
        cls, options: Mapping[str, Any], location: str | Path | None = None
    ) -> Splitting:
        """Resolve the decorator's options over the settings of ``location`` (its
        narezka.toml, then NAREZKA_*) with :func:`narezka.settings.chunk_config`, measured in
        characters unless a unit is given; a bad embedder or tokenizer is a UsageError."""
        from narezka.settings import chunk_config, servers

        settings = settings_for(location, options, base={"unit": PREVIEW_UNIT})
        embed = None
        try:
            model = None
            if settings.strategy in NEEDS_EMBEDDER:
                from narezka.embed import cached_signal_embedder, get_embedder

                # One model serves both semantic's signal and the token counts: loaded once.
                model = get_embedder(settings.embedder, servers=servers())
                embed = cached_signal_embedder(model, cache=_user_cache())
            config = chunk_config(settings, model)
        except NarezkaError as exc:
            raise click.UsageError(str(exc)) from None
        return cls(config, embed)

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
        embed = self.embed
        try:
            config = self.config.with_params(name, overrides)
            if name in NEEDS_EMBEDDER and embed is None:
                from narezka.embed import DEFAULT_EMBEDDER, cached_signal_embedder

                embed = cached_signal_embedder(DEFAULT_EMBEDDER, cache=_user_cache())
        except NarezkaError as exc:
            raise click.UsageError(str(exc)) from None
        return dataclasses.replace(self, config=config, embed=embed, overrides=dict(overrides))


def _user_cache() -> Path:
    """The user's embedding cache file as the environment says (``NAREZKA_CACHE_DIR``), read
    here at the top and handed to the run."""
    from narezka.embed import default_cache_path

    return default_cache_path(environment.current())


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
    from narezka.store import ClusterParams

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
