"""Reading files: find the inputs, decode them to normalized text, collect per-file errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from narezka._lazy import lazy_face
from narezka.discover.decode import decode_bytes, normalize_newlines, replace_surrogates
from narezka.discover.walk import iter_files, read_all, read_document

if TYPE_CHECKING:
    from narezka.discover.kinds import describe_unread, special_kind

__getattr__, __dir__ = lazy_face(globals(), kinds="describe_unread special_kind")

__all__ = [
    "decode_bytes",
    "describe_unread",
    "iter_files",
    "normalize_newlines",
    "read_all",
    "read_document",
    "replace_surrogates",
    "special_kind",
]
