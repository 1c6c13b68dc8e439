"""How a run names a file in what it reports: by its path in the corpus (``sub/a.md``), the
same from ``index``, ``sync``, ``chunk`` and the servers. A reader names the path it opened
— relative to where the command ran, or absolute when the corpus came from an index's
record — so a run renames what the reader said before reporting it."""

from __future__ import annotations

from pathlib import Path

from narezka.errors import SourceError

__all__ = ["error_in_corpus", "note_in_corpus"]


def error_in_corpus(error: SourceError, file: Path, source: str) -> SourceError:
    """``error`` about ``file`` naming it ``source`` instead (any other error as it is)."""
    if error.path != str(file):
        return error
    return type(error)(source, error.problem)  # as its __reduce__ rebuilds it


def note_in_corpus(message: str, file: Path, source: str) -> str:
    """A reader's ``"{file}: …"`` note naming the file ``source`` instead."""
    opened = f"{file}:"
    return source + message[len(opened) - 1 :] if message.startswith(opened) else message
