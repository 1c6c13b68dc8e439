"""Find the input files under the given paths and read them into ``RawDocument`` values."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from narezka.convert.limits import check_size
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.discover.converted import converted_document, ooxml_suffix
from narezka.discover.decode import decode_bytes, junk_kind
from narezka.discover.kinds import (
    TEXT_CONVERTED_SUFFIXES,
    UNREAD_SUFFIXES,
    special_kind,
    unread_type,
)
from narezka.discover.notes import with_embeds
from narezka.discover.vault import is_vault, vault_excludes
from narezka.errors import BinaryFileError, RefusedFileError, SourceError
from narezka.formats import CONVERTED_SUFFIXES, MARKDOWN_GLOBS
from narezka.globs import glob_matches
from narezka.types import RawDocument

__all__ = [
    "DEFAULT_INCLUDE",
    "inside",
    "iter_files",
    "read_all",
    "read_document",
    "served_refusal",
    "shown_path",
    "target_refusal",
]

DEFAULT_INCLUDE = MARKDOWN_GLOBS
# Version-control, tool and cache folders. Other dot-folders are walked: `.github/` holds
# real Markdown (templates, guides) that users expect to find in their index.
_SKIP_DIRS = frozenset(
    {
        ".git",
        ".obsidian",  # an Obsidian vault's settings and plugins, not notes
        ".trash",  # Obsidian's own trash
        ".hg",
        ".svn",
        ".narezka",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".idea",
        ".vscode",
        ".cache",
        "node_modules",
        "__pycache__",
    }
)


def shown_path(path: str) -> str:
    """``path`` as text that can be printed and stored: a name that is not valid UTF-8 (Python
    keeps its bytes as lone surrogates) shows those bytes as ``\\xNN`` escapes."""
    if path.isascii():
        return path
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _undecodable_name(rel: str, kind: str) -> SourceError | None:
    """The error for a file or folder whose name is not valid UTF-8, else None.

    Such a name cannot become a source id: ids are UTF-8 everywhere they go (JSONL, the
    manifest, point ids, payloads), so the file is skipped, named, and the walk goes on.
    """
    if shown_path(rel) == rel:
        return None
    return SourceError(shown_path(rel), f"{kind} name is not valid UTF-8 (rename it to index it)")


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    return any(glob_matches(p, rel) for p in patterns)


def inside(path: str, root: str) -> bool:
    """Whether the real path ``path`` is ``root`` (a real path) or lies under it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(slots=True)
class _Walk:
    """One folder's walk: its settings and what it found to say."""

    root: Path
    include: Sequence[str]
    exclude: Sequence[str]
    follow_symlinks: bool
    problems: list[SourceError]
    unread: list[str] | None
    real_root: str = ""

    def refuse(self, rel: str, problem: str) -> None:
        self.problems.append(RefusedFileError(shown_path(rel), problem))

    def link_refusal(self, link: str) -> str | None:
        """Why the symlink ``link`` must not be read for where it leads (see
        :func:`target_refusal`), or None."""
        return target_refusal(self.real_root, os.path.realpath(link), self.exclude)

    def leaves(self, path: Path) -> bool:
        """Whether a symlink leads outside the corpus and must not be followed."""
        if self.follow_symlinks:
            return False
        return not inside(os.path.realpath(path), self.real_root)

    def walks_for_real(self, link: str) -> bool:
        """Whether the folder the symlink ``link`` leads to is walked under its own path:
        it lies in the corpus and no folder on the way to it is skipped or excluded (such a
        link is refused: :func:`target_refusal`). Such a tree, reached both ways, is listed
        under its real path, wherever the link sorts."""
        target = os.path.realpath(link)
        if not inside(target, self.real_root):
            return False
        rel = os.path.relpath(target, self.real_root)
        return rel == os.curdir or _undecodable_name(rel, "folder") is None


class _Entry(NamedTuple):
    """A folder's entry, classified once as the folder is listed."""

    key: str
    """The name, with "/" after a folder's: sorting siblings by it sorts the whole relative
    paths (everything under ``a/`` shares that prefix), so a depth-first walk in this order
    yields the files sorted without holding them."""
    entry: os.DirEntry[str]
    is_dir: bool
    is_file: bool
    is_link: bool
    error: OSError | None


def _classify(entry: os.DirEntry[str]) -> _Entry:
    try:
        is_dir, is_file, is_link = entry.is_dir(), entry.is_file(), entry.is_symlink()
    except OSError as exc:  # a symlink loop such as ``a -> a`` cannot be stat-ed
        return _Entry(entry.name, entry, False, False, False, exc)
    return _Entry(entry.name + "/" if is_dir else entry.name, entry, is_dir, is_file, is_link, None)


_LOOP = "symlink to a folder read by another path (a loop?), skipped"


def _listing(walk: _Walk, directory: Path, prefix: str, seen: set[tuple[int, int]]) -> list[_Entry]:
    """The entries of one folder in walk order; none for a folder already read (``seen``
    holds folders by device and inode, so loops end) or one that cannot be listed."""
    try:
        st = directory.stat()
        if (st.st_dev, st.st_ino) in seen:
            if directory.is_symlink():
                walk.problems.append(SourceError(prefix.rstrip("/"), _LOOP))
            return []
        seen.add((st.st_dev, st.st_ino))
        with os.scandir(directory) as it:
            entries = [_classify(entry) for entry in it]
    except OSError as exc:
        where = prefix.rstrip("/") if prefix else str(walk.root)
        walk.problems.append(SourceError(shown_path(where), f"cannot list: {exc.strerror or exc}"))
        return []
    entries.sort(key=lambda item: item.key)
    return entries


def _walk(
    root: Path,
    include: Sequence[str],
    exclude: Sequence[str],
    problems: list[SourceError],
    *,
    follow_symlinks: bool = False,
    unread: list[str] | None = None,
) -> Iterator[str]:
    """Files under ``root`` that pass the globs: their relative POSIX paths, yielded sorted
    as the walk goes.

    Nothing is held but the entries of the folders on the way down (a sorted list of every
    path was ~110 MB at a million files): each folder is listed in an order that makes a
    depth-first walk yield sorted paths (see :class:`_Entry`).

    What cannot be read (a folder that cannot be listed, a symlink loop or one to a missing
    target, a name that is not UTF-8) is appended to ``problems`` as the walk meets it, named
    by its relative path, and the walk goes on; so is what is never opened (a symlink leading
    outside the corpus unless ``follow_symlinks``, a FIFO, socket or device). Files of a
    document type narezka does not read that the globs leave out go to ``unread``.
    """
    walk = _Walk(root, include, exclude, follow_symlinks, problems, unread)
    walk.real_root = os.path.realpath(root)
    seen: set[tuple[int, int]] = set()
    # Each folder open on the way down: its path relative to ``root`` ("" for root, else
    # ending in "/"; a file's relative path is that and its name) and its entries left.
    stack: list[tuple[str, Iterator[_Entry]]] = [("", iter(_listing(walk, root, "", seen)))]
    while stack:
        prefix, entries = stack[-1]
        item = next(entries, None)
        if item is None:
            stack.pop()
            continue
        rel = prefix + item.entry.name
        step = _judge(walk, item, rel)
        if step == "folder":
            folder = rel + "/"
            stack.append((folder, iter(_listing(walk, Path(item.entry.path), folder, seen))))
        elif step == "file":
            yield rel


def _judge(walk: _Walk, item: _Entry, rel: str) -> Literal["file", "folder"] | None:
    """What the walk does with one entry: yield it as a file, go down into it as a folder,
    or pass it by (None), naming it in the walk's problems or ``unread`` where it owes that."""
    wanted = _admitted(walk, item, rel)
    if wanted is None:
        return None
    entry = item.entry
    if item.is_link and wanted and _refused_link(walk, rel, entry):
        return None
    if item.is_dir:
        if entry.name in _SKIP_DIRS:
            return None
        if item.is_link and walk.walks_for_real(entry.path):
            walk.problems.append(SourceError(rel, _LOOP))
            return None
        return "folder"
    if item.is_file and wanted:
        return "file"
    if item.is_file:
        if walk.unread is not None and unread_type(entry.name) is not None:
            walk.unread.append(shown_path(rel))
    elif item.is_link and not os.path.exists(entry.path):
        # A folder's link whose drive is not mounted looks just like this: named, so
        # a sync keeps what it indexed there instead of taking it for deleted.
        walk.problems.append(SourceError(rel, "symlink to a missing target, skipped"))
    elif wanted:
        _refuse_special(walk, rel, Path(entry.path))
    return None


def _admitted(walk: _Walk, item: _Entry, rel: str) -> bool | None:
    """Whether the include globs want the entry (a folder always), or None when it is
    passed by: it cannot be stat-ed or its name decoded (named as a problem), or it is
    excluded."""
    is_dir = item.is_dir
    if item.error is not None:
        error = item.error
        walk.problems.append(
            SourceError(shown_path(rel), f"cannot read: {error.strerror or error}, skipped")
        )
        return None
    wanted = is_dir or _matches(rel, walk.include)
    excluded = _matches(rel + "/" if is_dir else rel, walk.exclude)
    bad_name = _undecodable_name(rel, "folder" if is_dir else "file")
    if bad_name is not None:
        if (is_dir or item.is_file) and wanted and not excluded:
            walk.problems.append(bad_name)
        return None
    # Excluding a folder excludes everything inside it, as in .gitignore.
    return None if excluded else wanted


def _refused_link(walk: _Walk, rel: str, entry: os.DirEntry[str]) -> bool:
    """Whether a wanted symlink is refused (and named so): it leads outside the corpus, or
    to something excluded or never read."""
    if walk.leaves(Path(entry.path)):
        walk.refuse(
            rel, "symlink leading outside the corpus: not followed (--follow-symlinks reads it)"
        )
        return True
    if (why := walk.link_refusal(entry.path)) is not None:
        walk.refuse(rel, why)
        return True
    return False


def target_refusal(real_root: str, target: str, exclude: Sequence[str]) -> str | None:
    """Why the real path ``target`` inside the corpus (real path ``real_root``) must not be
    read through a link, or None: it is excluded, or lies in a folder never read (``.git``,
    ``.narezka``…: ``_SKIP_DIRS``), or in an excluded one. A link is judged by where it
    leads as well as by its own name, so a link cannot reach what ``exclude`` and ``.git/``
    keep out (#38 row 13)."""
    if not inside(target, real_root) or target == real_root:
        return None
    parts = os.path.relpath(target, real_root).split(os.sep)
    folder = os.path.isdir(target)
    whole = shown_path("/".join(parts))
    for n, part in enumerate(parts):
        rel = "/".join(parts[: n + 1])
        last = n == len(parts) - 1
        if part in _SKIP_DIRS and (folder or not last):
            return f"symlink to {whole}: inside {part}/, which is never read; skipped"
        if _matches(rel + "/" if folder or not last else rel, exclude):
            return f"symlink to {whole}, which is excluded; skipped"
    return None


def served_refusal(root: Path, rel: str, exclude: Sequence[str]) -> str | None:
    """Why the indexed file ``rel`` of the corpus ``root`` must not be read to serve it now,
    or None: it leads outside the corpus, or is a link (put in its place since it was
    indexed, perhaps) to something excluded or under ``.git/``."""
    real_root = os.path.realpath(root)
    target = os.path.realpath(root / rel)
    if not inside(target, real_root):
        return "leads outside the corpus"
    if target == os.path.join(real_root, *rel.split("/")):
        return None  # no link on the way: the file the index holds
    return target_refusal(real_root, target, exclude)


def _refuse_special(walk: _Walk, rel: str, path: Path) -> None:
    """Name a FIFO, socket or device the globs match: it is never opened."""
    try:
        kind = special_kind(path.stat().st_mode)
    except OSError as exc:
        walk.problems.append(SourceError(shown_path(rel), f"cannot read: {exc.strerror or exc}"))
        return
    if kind is not None:
        walk.refuse(rel, f"{kind}, not a regular file: never opened")


def iter_files(
    paths: Sequence[str | Path],
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    *,
    errors: list[SourceError] | None = None,
    follow_symlinks: bool = False,
    unread: list[str] | None = None,
) -> Iterator[tuple[Path, Path]]:
    """Yield ``(root, file)`` for every input file, in a deterministic order.

    Paths are taken in the order given; a directory yields its matching files sorted by relative
    POSIX path, skipping dot-directories, ``node_modules`` and ``__pycache__``, and symlinks
    that lead outside it unless ``follow_symlinks``; a file yields itself with its parent as
    root, whatever the globs (a FIFO, socket or device is an error). A file reached twice is
    yielded once, and a folder reached through a symlink as well as by its real path is listed
    under the real one. Problems (a missing path, an unlistable directory) raise
    ``SourceError``, or are appended to ``errors`` when a list is given, as the walk meets
    them (a folder's before any file under it is yielded), and the walk goes on. Files of document
    types narezka does not read that the globs leave out are appended to ``unread``, by
    relative path (see :func:`narezka.discover.kinds.unread_type`).
    """
    yielded: set[str] = set()
    for given in paths:
        path = Path(given)
        problems: list[SourceError] = []
        pairs: Iterable[tuple[Path, Path]] = ()
        if path.is_dir():
            # Problems reach ``errors`` as the walk meets them; without it, the first one
            # raises before any file is yielded, so that walk is taken whole first.
            found = _walk(
                path,
                include,
                (*exclude, *vault_excludes(path)),
                problems if errors is None else errors,
                follow_symlinks=follow_symlinks,
                unread=unread,
            )
            # Each ``Path`` made as it is asked for: nothing is held.
            pairs = ((path, path / rel) for rel in found)
            if errors is None:
                pairs = list(pairs)
        elif path.exists():
            bad_name = _undecodable_name(path.name, "file")
            kind = special_kind(path.stat().st_mode)
            if bad_name is not None:
                problems.append(bad_name)
            elif kind is not None:
                problems.append(
                    RefusedFileError(shown_path(str(given)), f"{kind}, not a regular file")
                )
            else:
                pairs = [(path.parent, path)]
        else:
            problems.append(SourceError(shown_path(str(given)), "no such file or directory"))
        if problems and errors is None:
            raise problems[0]
        if errors is not None:
            errors.extend(problems)
        if len(paths) == 1:  # one folder's walk never meets a file twice: hold no set
            yield from pairs
            continue
        for root, file in pairs:
            key = os.path.abspath(file)
            if key not in yielded:
                yielded.add(key)
                yield root, file


def _read_regular(file: Path, options: ConvertOptions) -> tuple[bytes, float]:
    """The bytes and mtime of a regular file. Opened without blocking and checked before a
    byte is read: a FIFO put in a file's place after the walk must not hang the run, and a
    file over its kind's size limit (``narezka.convert.limits``) is refused unread."""
    fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        kind = special_kind(st.st_mode)
        if kind is not None:
            raise RefusedFileError(str(file), f"{kind}, not a regular file")
        check_size(str(file), file.suffix, st.st_size, options)  # a 6 GB file is never read whole
        return handle.read(), st.st_mtime


_SAVE_AS = {".doc": ".docx or .odt", ".rtf": ".docx or .odt", ".ppt": ".pptx", ".xls": ".xlsx"}
"""The format to save a file of a format narezka does not read in (``UNREAD_SUFFIXES``)."""


def read_document(
    root: Path,
    file: Path,
    *,
    convert_cache: Path | None = None,
    redact: bool = True,
    options: ConvertOptions = DEFAULT,
) -> tuple[RawDocument, list[str]]:
    """Read and decode one file; ``source`` is its POSIX path relative to ``root``.

    Raises ``SourceError`` (or its ``BinaryFileError``/``DecodeError``/``ConvertError``)
    naming the file. A note of an Obsidian vault (``root`` holds ``.obsidian/``) gets its
    ``![[embeds]]`` of notes resolved into its text. A PDF, Word, HTML, slide or sheet file is
    converted to Markdown, through
    the ``convert_cache`` sqlite file when given, its secrets redacted unless ``redact`` is
    false (``--no-redact``: read it as the index it is read for was built). ``options``
    (OCR on or off, the size limits) are what the top read from the environment
    (:func:`narezka.settings.convert_options`); none: the defaults.
    """
    try:
        raw, mtime = _read_regular(file, options)
    except OSError as exc:
        raise SourceError(str(file), f"cannot read: {exc.strerror or exc}") from exc
    try:
        source = file.relative_to(root).as_posix()
    except ValueError:
        source = file.name
    suffix = file.suffix.lower()
    if suffix in CONVERTED_SUFFIXES:
        junk = junk_kind(raw) if suffix in TEXT_CONVERTED_SUFFIXES else None
        if junk is not None:
            raise BinaryFileError(str(file), f"{junk}, skipped")
        return converted_document(
            raw, file, source, mtime, convert_cache, redact=redact, options=options
        )
    if suffix in UNREAD_SUFFIXES:  # offered by a glob such as ``*``: never read as text
        actual = ooxml_suffix(raw)
        if actual is None:
            raise RefusedFileError(
                str(file), f"narezka does not read {suffix} files: save it as {_SAVE_AS[suffix]}"
            )
        doc, notes = converted_document(
            raw, file, source, mtime, convert_cache, redact=redact, options=options, suffix=actual
        )
        return doc, [f"{file}: an Office Open XML ({actual}) file named {suffix}: read as "
                     f"{actual}", *notes]  # fmt: skip
    text, encoding, warnings = decode_bytes(raw, str(file))
    doc = RawDocument(source=source, text=text, encoding=encoding, mtime=mtime, size=len(raw))
    if suffix == ".md" and is_vault(root):
        doc, embedded = with_embeds(root, doc)
        warnings += embedded
    return doc, warnings


def read_all(
    paths: Sequence[str | Path],
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    *,
    follow_symlinks: bool = False,
    options: ConvertOptions = DEFAULT,
) -> tuple[list[RawDocument], list[SourceError], list[str]]:
    """Read every input file: ``(documents, per-file errors, warnings)``; symlinks leading
    out of a folder given are named as errors unless ``follow_symlinks``.

    A file that cannot be read or decoded becomes an error in the list and the others are still
    read; every error and warning names its file.
    """
    docs: list[RawDocument] = []
    errors: list[SourceError] = []
    warnings: list[str] = []
    found = iter_files(paths, include, exclude, errors=errors, follow_symlinks=follow_symlinks)
    for root, file in found:
        try:
            doc, file_warnings = read_document(root, file, options=options)
        except SourceError as exc:
            errors.append(exc)
            continue
        docs.append(doc)
        warnings.extend(file_warnings)
    return docs, errors, warnings
