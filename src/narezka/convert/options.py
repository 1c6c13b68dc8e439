"""What the environment asks of a conversion, read once at the top and handed down: OCR on
or off (``NAREZKA_OCR``) and the limits of what one file may cost (``NAREZKA_MAX_FILE_MB``,
``NAREZKA_CONVERT_MEMORY_MB``, ``NAREZKA_CONVERT_SECONDS``).

The CLI and :class:`narezka.Index` make one with :func:`narezka.settings.convert_options`;
the walk, the converters, the converter child and the conversion cache take it as given
and read no environment. Given none, they use the defaults (``ConvertOptions()``: OCR on
where tesseract is installed, the limits of :mod:`narezka.defaults`).
"""

from __future__ import annotations

from dataclasses import dataclass

from narezka.environment import Environment

__all__ = ["DEFAULT", "ConvertOptions"]


@dataclass(frozen=True, slots=True)
class ConvertOptions:
    """A conversion's switches and limits (None: the default of :mod:`narezka.defaults`)."""

    ocr: bool = True
    """Read scanned pages and images with tesseract, where it is installed."""
    memory_mb: float | None = None
    seconds: float | None = None
    max_file_mb: float | None = None

    @classmethod
    def of(cls, env: Environment) -> ConvertOptions:
        """The options ``env`` names (already parsed and checked)."""
        return cls(env.ocr, env.convert_memory_mb, env.convert_seconds, env.max_file_mb)


DEFAULT = ConvertOptions()
"""No variable set."""
