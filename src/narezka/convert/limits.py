"""What one file may cost: its size before it is read, and its conversion's memory, time and
output (``narezka.convert.isolate`` enforces the latter in a child process).

Every limit is derived from the file's size with a floor, so a small file that explodes (a
800-byte ``.odt`` asking for billions of spaces) is stopped at the floor while a large,
ordinary one has room in proportion. The defaults are in :mod:`narezka.defaults`; the user
sets them with ``NAREZKA_CONVERT_MEMORY_MB``, ``NAREZKA_CONVERT_SECONDS`` and
``NAREZKA_MAX_FILE_MB`` (from the environment only: a corpus's own ``narezka.toml`` cannot
lift its limits), read at the top and handed down as a
:class:`~narezka.convert.options.ConvertOptions`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from narezka import defaults, environment
from narezka.convert.options import ConvertOptions
from narezka.errors import RefusedFileError

__all__ = [
    "Limits",
    "check_size",
    "human_bytes",
    "max_file_bytes",
    "output_chars",
    "stored_size",
]

MIB = 1 << 20
MEMORY_ENV = environment.CONVERT_MEMORY_MB
SECONDS_ENV = environment.CONVERT_SECONDS
MAX_FILE_ENV = environment.MAX_FILE_MB


def human_bytes(size: int) -> str:
    """``512 MB``, ``6.0 GB``, ``800 bytes``: sizes in messages (binary units)."""
    if size < 1 << 10:
        return f"{size} bytes"
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if size >= 1 << shift:
            value = size / (1 << shift)
            return (
                f"{value:.1f} {unit}"
                if value < 10 and value != int(value)
                else f"{value:.0f} {unit}"
            )
    return f"{size} bytes"  # pragma: no cover - the loop always returns


@dataclass(frozen=True, slots=True)
class Limits:
    """One conversion's limits: address space (bytes), CPU seconds, wall seconds (before the
    OCR allowance) and Markdown characters."""

    memory: int
    cpu: float
    wall: float
    output: int

    @classmethod
    def for_size(cls, size: int, options: ConvertOptions) -> Limits:
        """The limits for converting ``size`` bytes under the run's ``options``."""
        floor_mb = options.memory_mb or defaults.CONVERT_MEMORY_MB
        cap_mb = max(floor_mb, defaults.CONVERT_MEMORY_CAP_MB)
        memory = max(floor_mb * MIB, defaults.CONVERT_MEMORY_PER_BYTE * size)
        seconds = options.seconds or defaults.CONVERT_SECONDS
        cpu = min(
            max(seconds, defaults.CONVERT_SECONDS_CAP),
            seconds + defaults.CONVERT_SECONDS_PER_MB * size / MIB,
        )
        return cls(int(min(memory, cap_mb * MIB)), cpu, 2 * cpu, output_chars(size))

    def key(self) -> str:
        """The limits as a short text: a file that broke them is tried again once they change."""
        return f"{self.memory}:{self.cpu:g}:{self.output}"


def output_chars(size: int) -> int:
    """The most Markdown characters converting ``size`` bytes may make (no variable sets it)."""
    return max(defaults.CONVERT_OUTPUT_CHARS, defaults.CONVERT_OUTPUT_PER_BYTE * size)


def max_file_bytes(suffix: str, options: ConvertOptions) -> int:
    """The largest file with ``suffix`` that is read ("" or an unknown suffix: read as text)
    under the run's ``options``."""
    mb = options.max_file_mb
    if mb is None:
        mb = defaults.MAX_FILE_MB.get(suffix.lower(), defaults.MAX_FILE_MB["text"])
    return int(mb * MIB)


def stored_size(path: str, size: int, options: ConvertOptions) -> int:
    """The bytes of a file of ``size`` a sync may store: none for a file over its limit
    (it is refused unread and named), so that a 20 GB sparse file does not make the
    free-space check refuse the whole run."""
    return size if size <= max_file_bytes(os.path.splitext(path)[1], options) else 0


def check_size(path: str, suffix: str, size: int, options: ConvertOptions) -> None:
    """Raise ``RefusedFileError`` naming the file, its size and the limit when a file of
    ``size`` bytes is over its kind's limit (checked before a byte of it is read)."""
    limit = max_file_bytes(suffix, options)
    if size > limit:
        kind = f"{suffix.lower()} files" if suffix.lower() in defaults.MAX_FILE_MB else "text files"
        raise RefusedFileError(
            path,
            f"{human_bytes(size)}, over the limit of {human_bytes(limit)} for {kind} "
            f"(not read; {MAX_FILE_ENV} sets it)",
        )
