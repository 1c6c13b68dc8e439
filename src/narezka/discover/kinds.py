"""Which files narezka reads: the one place that says which document types it does not read
(yet), and which kinds of file it never opens."""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Sequence

from narezka.formats import CONVERTED_SUFFIXES, TEXT_SUFFIXES

__all__ = [
    "DOCUMENT_SUFFIXES",
    "READABLE_SUFFIXES",
    "TEXT_CONVERTED_SUFFIXES",
    "UNREAD_SUFFIXES",
    "describe_unread",
    "special_kind",
    "unread_type",
]

READABLE_SUFFIXES: frozenset[str] = frozenset({".md", ".markdown", ".mdx", ".txt"}) | (
    CONVERTED_SUFFIXES
)
"""Document suffixes narezka reads: Markdown and plain text as they are, and the formats
``narezka.convert`` turns into Markdown (PDF, Word, HTML, slides, sheets)."""

TEXT_CONVERTED_SUFFIXES: frozenset[str] = TEXT_SUFFIXES
"""Converted formats that are text: bytes under these names that are not text are named as
binary before conversion (a converter reads any bytes as some text)."""

UNREAD_SUFFIXES: frozenset[str] = frozenset({".doc", ".rtf", ".ppt", ".xls"})
"""Formats people keep documents in that narezka does not convert (yet)."""

DOCUMENT_SUFFIXES: frozenset[str] = UNREAD_SUFFIXES | CONVERTED_SUFFIXES
"""Formats people keep documents in beside their notes and may expect to find by searching:
each such file the globs leave out is named in the run's summary as not read."""


def unread_type(name: str) -> str | None:
    """The lower-cased suffix of ``name`` if it is a document type narezka does not read,
    else None (a readable type, or one nobody expects to search: images, code, data)."""
    suffix = os.path.splitext(name)[1].lower()
    if suffix in DOCUMENT_SUFFIXES and suffix not in READABLE_SUFFIXES:
        return suffix
    return None


_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def special_kind(mode: int) -> str | None:
    """What a file of this ``st_mode`` is, if it is neither a regular file nor a folder
    ("a FIFO", "a socket"…): opening one can block forever or read without end."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((name for test, name in _SPECIAL if test(mode)), "not a regular file")


def describe_unread(paths: Sequence[str], shown: int = 5) -> str:
    """One line about files narezka did not read: ``3 not read (unsupported type: 2 .pdf,
    1 .docx): a.pdf, b.pdf, c.docx``, naming the first ``shown`` (none: no names)."""
    kinds = Counter(unread_type(p) or os.path.splitext(p)[1].lower() for p in paths)
    types = ", ".join(f"{n} {suffix}" for suffix, n in sorted(kinds.items(), key=_by_count))
    line = f"{len(paths)} not read (unsupported type: {types})"
    if shown <= 0:
        return line
    names = ", ".join(paths[:shown])
    if len(paths) > shown:
        names += f" and {len(paths) - shown} more"
    return f"{line}: {names}"


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]
