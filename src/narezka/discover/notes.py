"""An Obsidian vault's notes by name: what ``![[Note]]`` names, found as Obsidian finds it, and
a note read with its embeds resolved (:mod:`narezka.parse.embeds`).

A name resolves case-insensitively, as in Obsidian: a path from the vault's root
(``Folder/Note``), else a note of that name beside the embedding one, else the one note in the
vault whose path ends with it. Several such notes are ambiguous: the embed stays a link, as
does one naming no note. Hidden folders (``.obsidian``, ``.trash``) hold no notes, and no
symlink is followed: an embed never reads a file from outside the vault.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from narezka.discover.decode import decode_bytes
from narezka.parse.embeds import Note, Resolve, expand_embeds
from narezka.parse.obsidian import wikilinks
from narezka.types import ProvenanceSpan, RawDocument, SourceLocation

NOTE_BYTES = 16 << 20
"""The largest note an embed reads (a bigger one stays a link)."""


@dataclass(frozen=True, slots=True)
class _Names:
    """A vault's notes: their paths, and the stamp of the folders they were listed from."""

    stamp: tuple[tuple[str, int], ...]
    paths: dict[str, str]
    """Lowercased path without ``.md`` → the note's vault path."""
    by_name: dict[str, tuple[str, ...]]
    """Lowercased file name without ``.md`` → the vault paths of notes so named."""


_CACHE: dict[str, _Names] = {}
_LOCK = threading.Lock()


def _stamp(root: Path, folders: tuple[str, ...]) -> tuple[tuple[str, int], ...] | None:
    """Each folder's mtime: a note added, removed or renamed changes its folder's. None if
    one is gone."""
    try:
        return tuple((f, os.stat(root / f).st_mtime_ns) for f in folders)
    except OSError:
        return None


def _list(root: Path) -> _Names:
    folders: list[str] = []
    paths: dict[str, str] = {}
    for top, dirs, files in os.walk(root):  # symlinked folders are not entered
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = Path(top).relative_to(root).as_posix()
        folders.append(rel)
        for name in files:
            if name.lower().endswith(".md") and not name.startswith("."):
                path = name if rel == "." else f"{rel}/{name}"
                if not (root / path).is_symlink():
                    paths[path[:-3].lower()] = path
    by_name: dict[str, list[str]] = {}
    for key, path in sorted(paths.items()):
        by_name.setdefault(key.rsplit("/", 1)[-1], []).append(path)
    stamp = _stamp(root, tuple(folders)) or ()
    return _Names(stamp, paths, {k: tuple(v) for k, v in by_name.items()})


def _names(root: Path) -> _Names:
    """The vault's notes, listed again only when one of its folders changed."""
    key = str(root)
    with _LOCK:
        known = _CACHE.get(key)
    if known is not None and _stamp(root, tuple(f for f, _ in known.stamp)) == known.stamp:
        return known
    fresh = _list(root)
    with _LOCK:
        _CACHE[key] = fresh
    return fresh


def find_note(root: Path, target: str, embedding: str) -> str | tuple[str, ...] | None:
    """The vault path of the note ``target`` names from the note ``embedding``: the path,
    None when no note has that name, or the several paths it could mean."""
    names = _names(root)
    key = target.strip().strip("/").lower()
    key = key[:-3] if key.endswith(".md") else key
    if key in names.paths:
        return names.paths[key]
    folder = embedding.rsplit("/", 1)[0].lower() if "/" in embedding else ""
    if folder and f"{folder}/{key}" in names.paths:
        return names.paths[f"{folder}/{key}"]
    found = [
        p
        for p in names.by_name.get(key.rsplit("/", 1)[-1], ())
        if p[:-3].lower() == key or p[:-3].lower().endswith("/" + key)
    ]
    if len(found) == 1:
        return found[0]
    return tuple(found) or None


def _read(root: Path, path: str) -> str | None:
    try:
        with open(root / path, "rb") as handle:
            data = handle.read(NOTE_BYTES + 1)
    except OSError:
        return None
    if len(data) > NOTE_BYTES:
        return None
    return decode_bytes(data, path)[0]


def _resolver(root: Path) -> Resolve:
    def resolve(target: str, embedding: str) -> Note:
        found = find_note(root, target, embedding)
        if isinstance(found, tuple):
            return Note(problem=f"several notes have that name ({', '.join(found)})")
        if found is None:
            # An image or a PDF is an attachment, shown by Obsidian and left as written here.
            if PurePosixPath(target).suffix.lower() not in ("", ".md"):
                return Note()
            return Note(problem="no note of that name")
        text = _read(root, found)
        if text is None:
            return Note(problem=f"{found} cannot be read")
        return Note(found, text)

    return resolve


def with_embeds(root: Path, doc: RawDocument) -> tuple[RawDocument, list[str]]:
    """An Obsidian note with its ``![[embeds]]`` of notes resolved into its text: the spans
    that came from another note are its provenance (``SourceLocation.note``), and the names
    its embeds asked for are kept for the sync (:attr:`RawDocument.embeds`)."""
    if not any(link.embed for link in wikilinks(doc.text)):
        return doc, []
    done = expand_embeds(doc.source, doc.text, _resolver(root))
    spans = tuple(ProvenanceSpan(s, e, SourceLocation(note=o)) for s, e, o in done.origins)
    return (
        dataclasses.replace(doc, text=done.text, provenance=spans, embeds=done.names),
        list(done.warnings),
    )
