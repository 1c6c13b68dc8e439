"""Every default a user can override, in one place: settings, splitting and search.

The flags, ``narezka.toml``, the ``NAREZKA_*`` variables, :class:`~narezka.Settings`,
:class:`~narezka.split.SplitParams`, the table of search options
(:mod:`narezka.search.options`) and the help texts all read them from here, so a default is
changed once and every entry point agrees. (A search option's default that is a word of the
search's own, like ``fold="auto"``, lives with the word in :mod:`narezka.search`.)
"""

from __future__ import annotations

from typing import Final

from narezka.errors import ConfigError

STRATEGY = "headings"
EMBEDDER = "use"
"""The bundled Universal Sentence Encoder: offline, multilingual, fast on a CPU."""

UNIT = "tokens"
"""Chunks are sized in the embedder's own tokens, up to its budget (its calibrated one for a
served model), so a chunk is never truncated by the model that embeds it."""
PREVIEW_UNIT = "chars"
"""``narezka chunk`` and ``narezka inspect`` measure in characters unless told otherwise:
they need no model, and their output is read by people and other tools."""
SIZE = 800
"""The size where no embedder sets one: in characters, or in a named tokenizer's tokens."""
TOKENIZER = "cl100k_base"
"""The tokenizer of ``unit = "tokens"`` when the size is not the embedder's own."""
OVERLAP = 0
WATCH_DEBOUNCE_MS = 800
"""``watch`` and ``serve`` sync once a burst of file events has settled, grouping at most this
long: short enough that an edit shows in answers within a second."""
LEVELS = (1, 6)
MIN_CHARS = 150
REDACT = True

K = 5
MODE = "hybrid"
MIN_RELEVANCE = 0.05
"""Hits below this calibrated relevance are "nothing relevant": every search leaves them out
unless the index's ``min_relevance`` setting or the query says otherwise. The highest
threshold that drops at most 5 % of the correct top answers over the dev suite's held-out
predictions (benchmarks/results/relevance.md)."""
RESCORE: str | None = None
"""The quality tier (``rescore = "e5"``): off unless the dev suite says otherwise
(benchmarks/results/quality_tier.md)."""
RESCORE_MODELS = ("e5",)
"""Models the quality tier can store as every chunk's second vector."""
RESCORE_OFF = ("off", "none", "no", "false", "")


CONVERT_MEMORY_MB = 512
"""Memory (address space) a conversion's child process may use for a small file, in MiB;
a bigger file gets ``CONVERT_MEMORY_PER_BYTE`` times its size, up to ``CONVERT_MEMORY_CAP_MB``
(``NAREZKA_CONVERT_MEMORY_MB`` sets the floor, and lifts the cap to it)."""
CONVERT_MEMORY_PER_BYTE = 40
CONVERT_MEMORY_CAP_MB = 2048
CONVERT_SECONDS = 30.0
"""CPU seconds a conversion may take for a small file, plus ``CONVERT_SECONDS_PER_MB`` per
MiB of input, up to ``CONVERT_SECONDS_CAP`` (``NAREZKA_CONVERT_SECONDS`` sets the floor). The
wall clock allows twice that and ``OCR_PAGE_SECONDS`` more for each page read by OCR."""
CONVERT_SECONDS_PER_MB = 3.0
CONVERT_SECONDS_CAP = 600.0
OCR_PAGE_SECONDS = 60.0
CONVERT_OUTPUT_CHARS = 4_000_000
"""Markdown characters a conversion may give for a small file; a bigger file
``CONVERT_OUTPUT_PER_BYTE`` characters per byte of input (compressed formats expand)."""
CONVERT_OUTPUT_PER_BYTE = 50
MAX_FILE_MB: Final = {
    "text": 64,
    ".csv": 64,
    ".html": 32,
    ".htm": 32,
    ".pdf": 256,
    ".docx": 128,
    ".odt": 128,
    ".pptx": 256,
    ".xlsx": 64,
    ".epub": 128,
    ".eml": 64,
    ".msg": 64,
    ".png": 32,
    ".jpg": 32,
    ".jpeg": 32,
    ".tif": 128,
    ".tiff": 128,
}
"""The largest file of each kind read, in MiB ("text": every file read as text); a larger one
is named and skipped before a byte is read. ``NAREZKA_MAX_FILE_MB`` sets one limit for all."""


def check_rescore(value: str | None) -> str | None:
    """The quality tier a setting names (None: off); a ConfigError for an unknown one."""
    if value is None:
        return None
    word = str(value).strip().lower()
    if word in RESCORE_OFF:
        return None
    if word not in RESCORE_MODELS:
        raise ConfigError(
            f"rescore must be one of {', '.join(RESCORE_MODELS)} or off, not {value!r}"
        )
    return word


def check_min_relevance(value: float) -> float:
    """Refuse a ``min_relevance`` outside [0, 1] (here, beside its default: settings and
    queries both check it, and neither may load the other's package)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(f"min_relevance must be a number in [0, 1], got {value!r}")
    return float(value)


__all__ = [
    "CONVERT_MEMORY_CAP_MB",
    "CONVERT_MEMORY_MB",
    "CONVERT_MEMORY_PER_BYTE",
    "CONVERT_OUTPUT_CHARS",
    "CONVERT_OUTPUT_PER_BYTE",
    "CONVERT_SECONDS",
    "CONVERT_SECONDS_CAP",
    "CONVERT_SECONDS_PER_MB",
    "EMBEDDER",
    "LEVELS",
    "MAX_FILE_MB",
    "MIN_CHARS",
    "MIN_RELEVANCE",
    "MODE",
    "OCR_PAGE_SECONDS",
    "OVERLAP",
    "PREVIEW_UNIT",
    "REDACT",
    "RESCORE",
    "RESCORE_MODELS",
    "SIZE",
    "STRATEGY",
    "TOKENIZER",
    "UNIT",
    "K",
    "check_min_relevance",
    "check_rescore",
]
