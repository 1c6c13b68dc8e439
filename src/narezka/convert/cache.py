"""Converted files cached in sqlite, keyed by the source's bytes, the converter version and
the redaction the index runs: an unchanged file is never converted twice, a converter
upgrade converts again.

The cache holds only what the index may hold. With redaction on (the default) a conversion
is redacted as it leaves the converter, before anything reads or stores it
(:func:`redacted`): every secret in its Markdown becomes ``[REDACTED:<kind>]`` and the
provenance map moves with it; the strings that are not spans of the text (sheet names, HTML
ids, a PDF's running headers and footers, an EPUB's title, OCR notes: provenance and meta)
are redacted too. That redacted Markdown *is* the file's canonical text — chunk offsets, the
document hash, the inspector and a search's re-read all see it — so nothing needs the
plaintext again, and the markers are found again as the secrets they stand for
(``narezka.parse.redaction``), so chunks carry, count and flag them as before. The other
way (keep the plaintext, redact on the way out) would leave the secrets on disk beside an
index that promises to hold none. With ``redact=False`` (``--no-redact``) the index stores
plaintext, and so does the cache, under other keys.

Rows go with the files they belong to: a row holds its text's hash as the index's manifest
records it (``narezka.enrich.hashes.doc_hash``), and :meth:`ConvertCache.retain_texts` drops
every row whose text no file of the index has (run after each sync, and by ``compact``);
``narezka cache clear`` drops them all. Deleted rows leave no bytes behind (secure_delete,
the log emptied: :meth:`narezka.sqlite_cache.SqliteCache.retain`).
"""

from __future__ import annotations

import hashlib
import json
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from narezka.convert import CONVERTER_VERSION, ocr

# In a child process under limits (narezka.convert.isolate): a bomb costs its conversion only.
from narezka.convert.isolate import convert_bounded as convert
from narezka.convert.markdown import Converted
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.parse.redaction import (
    RULES_VERSION,
    DerivedRedactor,
    find_secrets,
    marker,
    redact_span,
)
from narezka.sqlite_cache import SqliteCache
from narezka.types import ProvenanceSpan, Secret, SourceLocation

__all__ = ["ConvertCache", "cache_key", "redacted", "text_hash"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS conversions "
    "(key TEXT PRIMARY KEY, markdown TEXT NOT NULL, rest TEXT NOT NULL, text_hash TEXT NOT NULL)"
)
_LEGACY = "converted"
"""Where conversions were kept before they were redacted (in plaintext): dropped whenever
rows are pruned, so the first sync after an upgrade takes it off the disk."""


def cache_key(
    data: bytes,
    suffix: str,
    version: str = CONVERTER_VERSION,
    boilerplate: Collection[str] = (),
    *,
    redact: bool = True,
) -> str:
    """The key of one conversion: the bytes' SHA-256, the suffix, the converter version,
    the redaction (its rules' version, or none) and, for a crawled page, the set of blocks
    its crawl repeats (which change its text)."""
    mode = f"r{RULES_VERSION}" if redact else "plain"
    key = f"{hashlib.sha256(data).hexdigest()}:{suffix.lower()}:{version}:{mode}"
    if boilerplate:
        blocks = "\n".join(sorted(boilerplate)).encode()
        key += ":" + hashlib.blake2b(blocks, digest_size=12).hexdigest()
    return key


def text_hash(markdown: str) -> str:
    """The hash the index's manifest records for a document of this text (the same as
    ``narezka.enrich.hashes.doc_hash``, two floors up; ``tests/convert/test_cache.py`` holds
    them equal): how a row is matched to the files that still have it."""
    return hashlib.sha256(markdown.encode()).hexdigest()[:32]


def _mover(secrets: tuple[Secret, ...]) -> Callable[[int], int]:
    """Where an offset of the text lands once each secret is its marker: a secret's start
    stays before its marker, any offset inside or after it lands after."""
    starts = [s.start for s in secrets]
    before = [0]  # how much longer the text is before each secret
    for s in secrets:
        before.append(before[-1] + len(marker(s.kind)) - (s.end - s.start))

    def moved(offset: int) -> int:
        i = bisect_right(starts, offset) - 1
        if i < 0:
            return offset
        s = secrets[i]
        if offset >= s.end:
            return offset + before[i + 1]
        if offset == s.start:
            return offset + before[i]
        return s.start + before[i] + len(marker(s.kind))

    return moved


def redacted(converted: Converted) -> Converted:
    """``converted`` as the index may hold it: its Markdown with every secret replaced by
    its marker (the provenance map moved to match, spans left empty dropped), and every
    string of its provenance (sheet names, element ids) and meta redacted too."""
    text = converted.markdown
    secrets = find_secrets(text)
    derived = DerivedRedactor(text, secrets)
    moved = _mover(secrets) if secrets else int
    places: dict[SourceLocation, SourceLocation] = {}  # a sheet's thousand spans: one check
    spans = []
    for span in converted.provenance:
        start, end = moved(span.start), moved(span.end)
        if start == end and span.start < span.end:
            continue  # all of it inside one secret: its marker lies in the span before
        where = places.get(span.where)
        if where is None:
            where = places[span.where] = _where(span.where, derived)
        spans.append(ProvenanceSpan(start, end, where))
    meta = derived.value(dict(converted.meta))
    if secrets and meta.get("comments"):  # a comment's anchor moves with the text
        meta["comments"] = [
            {**note, "at": [moved(note["at"][0]), moved(note["at"][1])]}
            if isinstance(note, dict) and _offsets(note.get("at"))
            else note
            for note in meta["comments"]
        ]
    if secrets and _all_offsets(meta.get("parts")):  # a mail's attachments move with it
        meta["parts"] = sorted({moved(p) for p in meta["parts"]})
    if secrets:
        text = redact_span(text, secrets, 0, len(text))
    return Converted(text, tuple(spans), meta)


def _all_offsets(parts: object) -> bool:
    return isinstance(parts, list) and all(type(x) is int for x in parts)


def _offsets(at: object) -> bool:
    return isinstance(at, list) and len(at) == 2 and all(type(x) is int for x in at)


def _where(where: SourceLocation, derived: DerivedRedactor) -> SourceLocation:
    sheet = derived(where.sheet) if where.sheet else where.sheet
    element = derived(where.element) if where.element else where.element
    if sheet == where.sheet and element == where.element:
        return where
    return SourceLocation(where.page, where.slide, sheet, element)


def _dump(converted: Converted) -> str:
    return json.dumps(converted.rest_json(), ensure_ascii=False)


def _load(markdown: str, rest: str) -> Converted:
    return Converted.from_json(markdown, json.loads(rest))


class ConvertCache(SqliteCache):
    """Conversions in one sqlite file (under the index folder), redacted unless
    ``redact=False`` (the index's own setting)."""

    TABLE = "conversions"

    def __init__(
        self, path: str | Path, version: str = CONVERTER_VERSION, *, redact: bool = True
    ) -> None:
        super().__init__(path, _SCHEMA)
        self.version = version
        self.redact = redact
        self.hits = 0
        self.misses = 0

    def _key(self, data: bytes, suffix: str, boilerplate: Collection[str]) -> str:
        return cache_key(data, suffix, self.version, boilerplate, redact=self.redact)

    def get(self, data: bytes, suffix: str, boilerplate: Collection[str] = ()) -> Converted | None:
        """The cached conversion of these bytes by this converter version, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT markdown, rest FROM conversions WHERE key = ?",
                (self._key(data, suffix, boilerplate),),
            ).fetchone()
        return None if row is None else _load(row[0], row[1])

    def put(
        self, data: bytes, suffix: str, converted: Converted, boilerplate: Collection[str] = ()
    ) -> None:
        """Store a conversion of these bytes (redacted here when the cache redacts: no
        caller can store plaintext by mistake; a redacted conversion is left as it is)."""
        self._store(data, suffix, redacted(converted) if self.redact else converted, boilerplate)

    def _store(
        self, data: bytes, suffix: str, converted: Converted, boilerplate: Collection[str]
    ) -> None:
        row = (
            self._key(data, suffix, boilerplate),
            converted.markdown,
            _dump(converted),
            text_hash(converted.markdown),
        )
        with self._lock, self.writing():
            self._db.execute("INSERT OR REPLACE INTO conversions VALUES (?, ?, ?, ?)", row)
            self._db.commit()

    def convert(
        self,
        data: bytes,
        suffix: str,
        path: str = "",
        *,
        boilerplate: Collection[str] = (),
        options: ConvertOptions = DEFAULT,
    ) -> Converted:
        """``narezka.convert.convert`` through the cache (a crawled page under its crawl's
        ``boilerplate`` set: another set, another entry), redacted when the cache redacts;
        ``options`` are the run's (OCR, limits), handed to the conversion."""
        cached = self.get(data, suffix, boilerplate)
        unread = cached is not None and (
            cached.meta.get("no_text_pages") or cached.meta.get("lacks_ocr")
        )
        if cached is not None and not (unread and ocr.engine(options)):
            # A PDF whose scanned pages went unread (or a mail whose scans or images did) is
            # converted again once OCR is there; pages already read by OCR stay read, with or
            # without tesseract now.
            self.hits += 1
            return cached
        self.misses += 1
        converted = convert(data, suffix, path, boilerplate=boilerplate, options=options)
        if self.redact:
            converted = redacted(converted)
        self._store(data, suffix, converted, boilerplate)
        return converted

    def count(self) -> int:
        """How many conversions the cache holds."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM conversions").fetchone()[0])

    def retain_texts(self, hashes: Iterable[str], *, vacuum: bool = False) -> int:
        """Delete every conversion whose text hash (:func:`text_hash`) is not in ``hashes``
        (document hashes: the files an index holds), and the table an older narezka kept
        plaintext in, leaving none of their bytes in the file or its log; with ``vacuum``
        the file is rewritten too, at its new size. Returns how many rows went."""
        self._drop_legacy()
        return self.retain(hashes, column="text_hash", vacuum=vacuum)

    def retain_texts_in(
        self, database: Path, table: str, column: str, *, vacuum: bool = False
    ) -> int:
        """:meth:`retain_texts` with the hashes read from ``column`` of ``table`` in another
        sqlite file (an index's manifest): joined there, in sqlite, so a million files cost
        about a second, not a million Python rows."""
        self._drop_legacy()
        with self._lock:
            self._db.execute("ATTACH DATABASE ? AS kept_texts", (str(database),))
            try:
                cur = self._db.execute(
                    "DELETE FROM conversions WHERE text_hash NOT IN "
                    f"(SELECT {column} FROM kept_texts.{table})"
                )
                self._db.commit()
            finally:
                self._db.execute("DETACH DATABASE kept_texts")
            self._scrub(vacuum=vacuum)
            return cur.rowcount

    def clear(self) -> int:
        """Delete every conversion, the file rewritten without them and its log emptied."""
        self._drop_legacy()
        return self.retain((), column="text_hash", vacuum=True)

    def _drop_legacy(self) -> None:
        with self._lock, self.writing():
            self._db.execute(f"DROP TABLE IF EXISTS {_LEGACY}")
            self._db.commit()
