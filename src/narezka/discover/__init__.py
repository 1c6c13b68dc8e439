"""Reading files: find the inputs, decode them to normalized text, collect per-file errors."""

from narezka.discover.decode import decode_bytes, normalize_newlines
from narezka.discover.walk import iter_files, read_all, read_document

__all__ = ["decode_bytes", "iter_files", "normalize_newlines", "read_all", "read_document"]
