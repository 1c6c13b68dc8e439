"""The ranking options of ``narezka search``: fusion of the two rankings and folding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from narezka.errors import ConfigError
from narezka.search import METHODS, Fusion
from narezka.search.folding import AUTO_FOLD, Fold, check_fold
from narezka.search.fusion import DEFAULT, RRF_K

F = TypeVar("F", bound=Callable[..., Any])


def ranking_options(command: F) -> F:
    """``--fusion``, ``--rrf-k``, ``--dense-weight`` and ``--fold``."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


_OPTIONS = [
    click.option(
        "--fusion",
        "fusion_method",
        type=click.Choice(METHODS),
        default=DEFAULT.method,
        show_default=True,
        help="How hybrid search combines the dense and BM25 rankings: reciprocal-rank fusion, "
        "weighted RRF, or min-max normalized scores (measured best; --fusion rrf --fold 0 "
        "searches as narezka did before this default).",
    ),
    click.option(
        "--rrf-k",
        type=int,
        default=None,
        help=f"RRF's constant for rrf and weighted fusion  [default: {RRF_K}].",
    ),
    click.option(
        "--dense-weight",
        type=float,
        default=None,
        help="Weight of the dense ranking in [0, 1] for weighted and score fusion; BM25 gets the "
        "rest  [default: 0.3 for score, 0.5 for weighted].",
    ),
    click.option(
        "--fold",
        "fold_option",
        default="auto",
        show_default=True,
        help="Fold a neighbouring chunk of a hit's section into it only when it scored at least "
        "this fraction of the hit (0: every neighbour that ranked; off: no folding; auto: "
        f"{AUTO_FOLD} for hybrid score fusion, else 0).",
    ),
]


def ranking(
    mode: str, method: str, rrf_k: int | None, dense_weight: float | None, fold: str
) -> tuple[Fusion | None, Fold]:
    """The ranking options as ``Index.search`` takes them (a bad value is a usage error)."""
    return _fusion(mode, method, rrf_k, dense_weight), _fold(fold)


def _fusion(mode: str, method: str, rrf_k: int | None, dense_weight: float | None) -> Fusion | None:
    """The --fusion options as a Fusion (None when left at their defaults)."""
    if method == DEFAULT.method and rrf_k is None and dense_weight is None:
        return None
    if mode != "hybrid":
        raise click.UsageError("--fusion, --rrf-k and --dense-weight apply to --mode hybrid")
    options: dict[str, Any] = {"method": method}
    if rrf_k is not None:
        options["rrf_k"] = rrf_k
    if dense_weight is not None:
        options["dense_weight"] = dense_weight
    try:
        return Fusion(**options)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc


def _fold(value: str) -> Fold:
    """--fold as a ratio, None for off, or "auto"."""
    if value.strip().lower() == "off":
        return None
    if value.strip().lower() == "auto":
        return "auto"
    try:
        ratio = float(value)
    except ValueError:
        raise click.UsageError(
            f"--fold takes a ratio in [0, 1], auto or off, not {value!r}"
        ) from None
    try:
        check_fold(ratio)
    except ConfigError as exc:
        raise click.UsageError(f"--fold: {exc}") from exc
    return ratio
