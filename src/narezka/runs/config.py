"""``ChunkConfig``: the resolved chunking a run follows — strategy, split parameters, the
token counter itself and the embedder's calibrated budget, validated once.

:func:`narezka.settings.chunk_config` builds it from the user's settings (and an embedder,
when chunks are sized in its tokens); every command and the library go through that one
function. Nothing below re-derives a size: the counter travels inside the config, so the
tokenizer a chunk records can never drift from the counter that measured it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from narezka._forward import Forward
from narezka.errors import ConfigError
from narezka.runs.file_chunks import make_params
from narezka.split import SplitParams, strategy_names
from narezka.tokens import TokenCounter, get_counter

CHARS = "chars"
"""The counter name of ``unit = "chars"``."""
_UNCHECKED_SIZE = 1 << 30
"""Where settings are checked before their size is known (the embedder's budget decides it),
a size no other value can be refused against: only the size-free rules apply then."""


@dataclass(frozen=True, slots=True)
class ChunkConfig:
    """What a chunk run follows; equal configs cut equal chunks.

    The counter is compared by its ``tokenizer`` name (two loads of one model are two
    objects but count alike)."""

    strategy: str
    params: SplitParams
    counter: TokenCounter = field(compare=False, hash=False, repr=False)
    budget: int | None = None
    """The embedder's calibrated window, when chunks are sized in its own tokens."""
    include: tuple[str, ...] | None = None
    """Globs of files to read; None: the strategy's own."""
    exclude: tuple[str, ...] = ()
    follow_symlinks: bool = False
    context_llm: str | None = None
    """The LLM that writes chunk context (None: off)."""
    embedder: str | None = None
    """The embedder the settings name (whose tokens size the chunks with ``unit = tokens``)."""
    rescore: str | None = None
    """The quality tier's second vector (``e5``), None: off (it changes no chunk)."""
    tokenizer: str = field(init=False)
    """The counter's name: ``chars``, or the tokenizer ``params.tokenizer`` names."""

    def __post_init__(self) -> None:
        if self.strategy not in strategy_names():
            raise ConfigError(
                f"unknown strategy {self.strategy!r}; choose one of: {', '.join(strategy_names())}"
            )
        name = self.counter.name
        expected = CHARS if self.params.unit == CHARS else self.params.tokenizer
        if name != expected:
            # The one rule the hand-kept (params, counter) pair broke: a chunk records the
            # params' tokenizer, so it must be the counter that measured it.
            raise ConfigError(
                f"counter {name!r} does not measure {self.params.unit} of {expected!r}"
            )
        object.__setattr__(self, "tokenizer", name)
        for name in ("include", "exclude"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(str(v) for v in value))

    @property
    def fingerprint(self) -> str:
        """Everything that changes the chunks, as text (an index records it)."""
        return self.params.fingerprint(self.strategy)

    size = Forward[int]("params")
    unit = Forward[str]("params")

    @classmethod
    def build(
        cls,
        strategy: str,
        counter: TokenCounter | None = None,
        *,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        follow_symlinks: bool = False,
        context_llm: str | None = None,
        **params: Any,
    ) -> ChunkConfig:
        """A config from keyword arguments (what ``chunk_text`` and ``chunk_documents`` take):
        ``params`` are SplitParams fields in their text forms too; ``counter`` measures in a
        model's own tokens (its name becomes the tokenizer), else the params' unit names one.
        No default is filled in here: unset fields take SplitParams' own."""
        if counter is not None:
            params = {**params, "unit": "tokens", "tokenizer": counter.name}
        split_params = make_params(**params)
        if counter is None:
            counter = get_counter(split_params.unit, split_params.tokenizer)
        return cls(
            strategy,
            split_params,
            counter,
            include=tuple(include) if include else None,
            exclude=tuple(exclude),
            follow_symlinks=follow_symlinks,
            context_llm=context_llm,
        )

    def with_params(self, strategy: str, changes: Mapping[str, Any]) -> ChunkConfig:
        """This config with another strategy and some split parameters changed (the same
        counter: ``unit`` and ``tokenizer`` cannot change here)."""
        fixed = sorted({"unit", "tokenizer"} & set(changes))
        if fixed:
            raise ConfigError(f"{', '.join(fixed)} cannot change with the same counter")
        current = {f.name: getattr(self.params, f.name) for f in dataclasses.fields(SplitParams)}
        # Text forms (levels=2-3) parse in make_params.
        params = make_params(**{**current, **changes})
        return dataclasses.replace(self, strategy=strategy, params=params)


def checked_split_values(values: Mapping[str, Any]) -> SplitParams:
    """``values`` (SplitParams fields, text forms too) parsed and checked by every rule that
    does not need the size, for settings whose size the embedder's budget will decide."""
    # parent_size must not be below the size: with no size, it stands in for one.
    size = values.get("size") or values.get("parent_size") or _UNCHECKED_SIZE
    return make_params(**{**values, "size": size})


__all__ = ["ChunkConfig", "checked_split_values"]
