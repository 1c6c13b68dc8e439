"""Which hits come from files that changed since the last sync (``Hit.stale``), told
cheaply: a stat per file of the result against the index's record of its size and mtime
(either one changed is an edit), the file's content only when nothing else can tell an edit
from a touch."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.search.expansion import Reread
from narezka.search.hits import Hit
from narezka.store.errors import IndexDamagedError


class Indexed(Protocol):
    """What the index recorded of a file at its last sync (a manifest entry)."""

    @property
    def size(self) -> int: ...
    @property
    def mtime(self) -> float: ...
    @property
    def doc_hash(self) -> str: ...


class Records(Protocol):
    """The index's records of its files (the manifest), by corpus path."""

    def get(self, path: str) -> Indexed | None:
        """The record of ``path``, or None if the index does not hold it."""


def mark_stale(
    hits: Sequence[Hit],
    corpus: Path,
    records: Callable[[], AbstractContextManager[Records]],
    *,
    by_size: bool = True,
    convert: ConvertOptions = DEFAULT,
) -> list[Hit]:
    """``hits``, each flagged ``stale`` whose file changed since its text was indexed: gone,
    or not what the last sync recorded, or a sync has replaced its points since this search
    read them (another document hash). One stat per distinct file and one opening of
    ``records`` per search; a file is read (hashed) only when just its mtime moved, so a
    touched but unchanged file is not called stale, and a changed size is stale whatever the
    mtime says. ``by_size=False`` (a reader by URL, whose records are the server's whole
    published file list) opens ``records`` only for files whose mtime moved, and so misses an
    edit that restored its old mtime. A file hashed is read as a sync would read it under
    ``convert`` (OCR, limits: the index's caller reads them)."""
    root = corpus if corpus.is_dir() else corpus.parent
    reread = Reread(corpus, options=convert)
    changed: dict[str, bool] = {}
    suspects: dict[str, tuple[Hit, os.stat_result]] = {}
    for hit in hits:
        if hit.file_path in changed or hit.file_path in suspects:
            continue
        try:
            stat = os.stat(root / hit.file_path)
        except OSError:
            changed[hit.file_path] = True
            continue
        if not by_size and _same_mtime(stat.st_mtime, hit.payload.get("mtime")):
            changed[hit.file_path] = False  # untouched since this version was indexed
            continue
        # Even an unmoved mtime asks the record: an edit can restore the old one (a copy
        # with its times, ``touch -r``), and only the size the record holds tells (the
        # payload has none).
        suspects[hit.file_path] = (hit, stat)
    if suspects:
        try:
            with records() as known:
                for path, (hit, stat) in suspects.items():
                    changed[path] = _differs(hit, stat, known.get(path), reread)
        except IndexDamagedError:
            # A manifest that cannot be read (the search has warned of it) cannot say what
            # the last sync saw; the file's text still tells an edit from a touch.
            for path, (hit, _) in suspects.items():
                changed[path] = reread.current(hit) is None
    return [
        dataclasses.replace(h, stale=True) if changed[h.file_path] and not h.stale else h
        for h in hits
    ]


def _same_mtime(now: float, indexed: object) -> bool:
    """Whether a file's mtime is the one its hit was indexed at. The payload's float comes
    back from the engine's JSON a last bit off now and then (1796217217.8346157 for
    ...8346155): closer than a microsecond is the same."""
    return isinstance(indexed, int | float) and abs(now - indexed) < 1e-6


def _differs(hit: Hit, stat: os.stat_result, entry: Indexed | None, reread: Reread) -> bool:
    if entry is None:
        return True  # synced away (deleted) since the hit's points were read
    stored = str(hit.payload.get("doc_hash") or "")
    if stored and entry.doc_hash and stored != entry.doc_hash:
        return True  # a sync replaced the file's points after this search read them
    if (stat.st_size, stat.st_mtime) == (entry.size, entry.mtime):
        return False  # touched, and the last sync saw it so
    if stat.st_size != entry.size:
        return True
    # Same size, new mtime: only its content can tell an edit from a touch.
    return reread.current(hit) is None
