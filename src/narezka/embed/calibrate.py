"""Calibrating a served model narezka cannot tokenize exactly: the seed's manual binary
search for a safe chunk size, automated.

``calibrate(embedder, sample)`` sends each sample text alone, reads the server's own token
count (Ollama's ``prompt_eval_count``, OpenAI's ``usage.prompt_tokens``) and reports the
worst densities seen: server tokens per character and per locally counted token. From them
it derives budgets that fit the window at that worst density, less a safety factor — one in
characters, one in the local counter's tokens. Meant for ``narezka calibrate``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from narezka.embed.cache import default_cache_path
from narezka.embed.errors import ContextLengthError
from narezka.environment import Environment
from narezka.errors import ConfigError
from narezka.tokens import TokenCounter


class ServerCounted(Protocol):
    """A remote embedder that can report the server's token count for one text."""

    @property
    def name(self) -> str: ...

    @property
    def max_tokens(self) -> int | None: ...

    @property
    def counter(self) -> TokenCounter: ...

    def server_token_count(self, text: str) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Calibration:
    """What a calibration measured and the budgets it recommends."""

    embedder: str
    counter: str
    window: int | None
    samples: int
    rejected: int
    """Sample texts the server refused as too long (counted, not used for densities)."""
    tokens_per_char: float
    """Worst server tokens per character over the sample."""
    tokens_per_local_token: float
    """Worst server tokens per local-counter token (> 1: the local count runs low)."""
    safe_chars: int | None
    safe_local_tokens: int | None


def calibrate(
    embedder: ServerCounted, sample: Sequence[str], *, safety: float = 0.9
) -> Calibration:
    """Measure ``sample`` through the server; see the module docstring."""
    if not 0 < safety <= 1:
        raise ConfigError(f"safety must be in (0, 1], not {safety}")
    per_char, per_local, used, rejected = 0.0, 0.0, 0, 0
    for text in sample:
        if not text.strip():
            continue
        try:
            server = embedder.server_token_count(text)
        except ContextLengthError:
            rejected += 1
            continue
        if server is None:
            raise ConfigError(f"{embedder.name}: the server reports no token counts")
        used += 1
        per_char = max(per_char, server / len(text))
        per_local = max(per_local, server / max(1, embedder.counter.count(text)))
    if not used:
        raise ConfigError(f"{embedder.name}: no usable sample text to calibrate with")
    window = embedder.max_tokens
    return Calibration(
        embedder=embedder.name,
        counter=embedder.counter.name,
        window=window,
        samples=used,
        rejected=rejected,
        tokens_per_char=per_char,
        tokens_per_local_token=per_local,
        # NOTE int() floors: rounding up could put a chunk over the window.
        safe_chars=int(window * safety / per_char) if window else None,
        safe_local_tokens=int(window * safety / per_local) if window else None,
    )


def calibration_path(env: Environment) -> Path:
    """Where measured budgets are kept: beside the user-wide embedding cache ``env`` names
    (the top's environment, handed down)."""
    return default_cache_path(env).parent / "calibration.json"


def save_calibration(result: Calibration, path: Path) -> Path:
    """Store a calibration in ``path`` (:func:`calibration_path`) under its embedder's name
    (replacing an older one)."""
    data = load_calibrations(path)
    data[result.embedder] = asdict(result)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path


def load_calibrations(path: Path) -> dict[str, dict[str, object]]:
    """Every stored calibration in ``path``, by embedder name ({} when none was made)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def calibrated_budget(embedder_name: str, path: Path) -> int | None:
    """The safe budget in local-counter tokens measured for an embedder, if any."""
    value = load_calibrations(path).get(embedder_name, {}).get("safe_local_tokens")
    return value if isinstance(value, int) else None


__all__ = [
    "Calibration",
    "ServerCounted",
    "calibrate",
    "calibrated_budget",
    "calibration_path",
    "load_calibrations",
    "save_calibration",
]
