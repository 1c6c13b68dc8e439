"""Converted files cached in sqlite, keyed by the source's bytes and the converter version:
an unchanged file is never converted twice, a converter upgrade converts again."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from pathlib import Path

from narezka.convert import CONVERTER_VERSION, ocr

# In a child process under limits (narezka.convert.isolate): a bomb costs its conversion only.
from narezka.convert.isolate import convert_bounded as convert
from narezka.convert.markdown import Converted
from narezka.sqlite_cache import SqliteCache
from narezka.types import ProvenanceSpan, SourceLocation

__all__ = ["ConvertCache", "cache_key"]

_SCHEMA = "CREATE TABLE IF NOT EXISTS converted (key TEXT PRIMARY KEY, markdown TEXT, rest TEXT)"


def cache_key(
    data: bytes, suffix: str, version: str = CONVERTER_VERSION, boilerplate: Collection[str] = ()
) -> str:
    """The key of one conversion: the bytes' SHA-256, the suffix, the converter version and,
    for a crawled page, the set of blocks its crawl repeats (which change its text)."""
    key = f"{hashlib.sha256(data).hexdigest()}:{suffix.lower()}:{version}"
    if boilerplate:
        blocks = "\n".join(sorted(boilerplate)).encode()
        key += ":" + hashlib.blake2b(blocks, digest_size=12).hexdigest()
    return key


def _dump(converted: Converted) -> str:
    spans = [
        [s.start, s.end, s.where.page, s.where.slide, s.where.sheet, s.where.element]
        for s in converted.provenance
    ]
    return json.dumps({"spans": spans, "meta": dict(converted.meta)}, ensure_ascii=False)


def _load(markdown: str, rest: str) -> Converted:
    data = json.loads(rest)
    spans = tuple(
        ProvenanceSpan(s[0], s[1], SourceLocation(s[2], s[3], s[4], s[5])) for s in data["spans"]
    )
    return Converted(markdown, spans, data["meta"])


class ConvertCache(SqliteCache):
    """Conversions in one sqlite file (under the index folder)."""

    def __init__(self, path: str | Path, version: str = CONVERTER_VERSION) -> None:
        super().__init__(path, _SCHEMA)
        self.version = version
        self.hits = 0
        self.misses = 0

    def get(self, data: bytes, suffix: str, boilerplate: Collection[str] = ()) -> Converted | None:
        """The cached conversion of these bytes by this converter version, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT markdown, rest FROM converted WHERE key = ?",
                (cache_key(data, suffix, self.version, boilerplate),),
            ).fetchone()
        return None if row is None else _load(row[0], row[1])

    def put(
        self, data: bytes, suffix: str, converted: Converted, boilerplate: Collection[str] = ()
    ) -> None:
        """Store a conversion of these bytes."""
        key = cache_key(data, suffix, self.version, boilerplate)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO converted VALUES (?, ?, ?)",
                (key, converted.markdown, _dump(converted)),
            )
            self._db.commit()

    def convert(
        self, data: bytes, suffix: str, path: str = "", *, boilerplate: Collection[str] = ()
    ) -> Converted:
        """``narezka.convert.convert`` through the cache (a crawled page under its crawl's
        ``boilerplate`` set: another set, another entry)."""
        cached = self.get(data, suffix, boilerplate)
        if cached is not None and not (cached.meta.get("no_text_pages") and ocr.engine()):
            # A PDF whose scanned pages went unread is converted again once OCR is there;
            # pages already read by OCR stay read, with or without tesseract now.
            self.hits += 1
            return cached
        self.misses += 1
        converted = convert(data, suffix, path, boilerplate=boilerplate)
        self.put(data, suffix, converted, boilerplate)
        return converted
