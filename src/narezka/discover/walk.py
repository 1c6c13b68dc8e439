"""Find the input files under the given paths and read them into ``RawDocument`` values."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from narezka.discover.converted import converted_document
from narezka.discover.decode import decode_bytes
from narezka.discover.kinds import special_kind, unread_type
from narezka.errors import RefusedFileError, SourceError
from narezka.globs import glob_matches
from narezka.types import CONVERTED_SUFFIXES, MARKDOWN_GLOBS, RawDocument

__all__ = ["DEFAULT_INCLUDE", "inside", "iter_files", "read_all", "read_document", "shown_path"]

DEFAULT_INCLUDE = MARKDOWN_GLOBS
# Version-control, tool and cache folders. Other dot-folders are walked: `.github/` holds
# real Markdown (templates, guides) that users expect to find in their index.
_SKIP_DIRS = frozenset(
    {
        ".git",
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

    def leaves(self, path: Path) -> bool:
        """Whether a symlink leads outside the corpus and must not be followed."""
        if self.follow_symlinks:
            return False
        return not inside(os.path.realpath(path), self.real_root)


def _walk(
    root: Path,
    include: Sequence[str],
    exclude: Sequence[str],
    problems: list[SourceError],
    *,
    follow_symlinks: bool = False,
    unread: list[str] | None = None,
) -> list[str]:
    """Files under ``root`` that pass the globs: their relative POSIX paths, sorted.

    Only the relative paths are held (~110 B a file; a ``Path`` each took ~700 B, 700 MB at a
    million files): callers make a ``Path`` for one file at a time.

    What cannot be read (a folder that cannot be listed, a symlink loop or one to a missing
    target, a name that is not UTF-8) is appended to ``problems``, named by its relative
    path, and the walk goes on; so is what is never opened (a symlink leading outside the
    corpus unless ``follow_symlinks``, a FIFO, socket or device). Files of a document type
    narezka does not read that the globs leave out go to ``unread``.
    """
    walk = _Walk(root, include, exclude, follow_symlinks, problems, unread)
    walk.real_root = os.path.realpath(root)
    found: list[str] = []
    seen: set[tuple[int, int]] = set()
    # Each folder waits with its path relative to ``root`` ("" for root, else ending in
    # "/"): a file's relative path is that and its name, no ``Path.relative_to`` per file.
    pending: list[tuple[Path, str]] = [(root, "")]
    # Symlinked directories wait until every real one is walked, so a tree reached both ways
    # is listed under its real path; ``seen`` holds (device, inode) so loops end.
    linked: list[tuple[Path, str]] = []
    while pending or linked:
        directory, prefix = pending.pop() if pending else linked.pop(0)
        try:
            st = directory.stat()
            if (st.st_dev, st.st_ino) in seen:
                if directory.is_symlink():
                    rel = prefix.rstrip("/")
                    problems.append(
                        SourceError(rel, "symlink to a folder already read (a loop?), skipped")
                    )
                continue
            seen.add((st.st_dev, st.st_ino))
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            where = prefix.rstrip("/") if directory != root else str(root)
            problems.append(SourceError(shown_path(where), f"cannot list: {exc.strerror or exc}"))
            continue
        for entry in entries:
            rel = prefix + entry.name
            try:
                is_dir, is_file, is_link = entry.is_dir(), entry.is_file(), entry.is_symlink()
            except OSError as exc:  # a symlink loop such as ``a -> a`` cannot be stat-ed
                problems.append(
                    SourceError(shown_path(rel), f"cannot read: {exc.strerror or exc}, skipped")
                )
                continue
            wanted = is_dir or _matches(rel, include)
            excluded = _matches(rel + "/" if is_dir else rel, exclude)
            bad_name = _undecodable_name(rel, "folder" if is_dir else "file")
            if bad_name is not None:
                if (is_dir or is_file) and wanted and not excluded:
                    problems.append(bad_name)
                continue
            if excluded:  # excluding a folder excludes everything inside it, as in .gitignore
                continue
            if is_link and wanted and walk.leaves(Path(entry.path)):
                walk.refuse(
                    rel,
                    "symlink leading outside the corpus: not followed (--follow-symlinks reads it)",
                )
            elif is_dir:
                if entry.name not in _SKIP_DIRS:
                    (linked if is_link else pending).append((Path(entry.path), rel + "/"))
            elif is_file and wanted:
                found.append(rel)
            elif is_file:
                if unread is not None and unread_type(entry.name) is not None:
                    unread.append(shown_path(rel))
            elif is_link and not os.path.exists(entry.path):
                # A folder's link whose drive is not mounted looks just like this: named, so
                # a sync keeps what it indexed there instead of taking it for deleted.
                problems.append(SourceError(rel, "symlink to a missing target, skipped"))
            elif wanted:
                _refuse_special(walk, rel, Path(entry.path))
    # A relative path is met once: ``seen`` stops a second way into a folder.
    found.sort()
    return found


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
    yielded once. Problems (a missing path, an unlistable directory) raise ``SourceError``, or
    are appended to ``errors`` when a list is given, and the walk goes on. Files of document
    types narezka does not read that the globs leave out are appended to ``unread``, by
    relative path (see :func:`narezka.discover.kinds.unread_type`).
    """
    yielded: set[str] = set()
    for given in paths:
        path = Path(given)
        problems: list[SourceError] = []
        pairs: Iterable[tuple[Path, Path]] = ()
        if path.is_dir():
            found = _walk(
                path, include, exclude, problems, follow_symlinks=follow_symlinks, unread=unread
            )
            # Each ``Path`` made as it is asked for: only the relative paths are held.
            pairs = ((path, path / rel) for rel in found)
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


def _read_regular(file: Path) -> tuple[bytes, float]:
    """The bytes and mtime of a regular file. Opened without blocking and checked before a
    byte is read: a FIFO put in a file's place after the walk must not hang the run."""
    fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        kind = special_kind(st.st_mode)
        if kind is not None:
            raise RefusedFileError(str(file), f"{kind}, not a regular file")
        return handle.read(), st.st_mtime


def read_document(
    root: Path, file: Path, *, convert_cache: Path | None = None
) -> tuple[RawDocument, list[str]]:
    """Read and decode one file; ``source`` is its POSIX path relative to ``root``.

    Raises ``SourceError`` (or its ``BinaryFileError``/``DecodeError``/``ConvertError``)
    naming the file. A PDF, Word, HTML, slide or sheet file is converted to Markdown, through
    the ``convert_cache`` sqlite file when given.
    """
    try:
        raw, mtime = _read_regular(file)
    except OSError as exc:
        raise SourceError(str(file), f"cannot read: {exc.strerror or exc}") from exc
    try:
        source = file.relative_to(root).as_posix()
    except ValueError:
        source = file.name
    if file.suffix.lower() in CONVERTED_SUFFIXES:
        return converted_document(raw, file, source, mtime, convert_cache)
    text, encoding, warnings = decode_bytes(raw, str(file))
    doc = RawDocument(source=source, text=text, encoding=encoding, mtime=mtime, size=len(raw))
    return doc, warnings


def read_all(
    paths: Sequence[str | Path],
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    *,
    follow_symlinks: bool = False,
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
            doc, file_warnings = read_document(root, file)
        except SourceError as exc:
            errors.append(exc)
            continue
        docs.append(doc)
        warnings.extend(file_warnings)
    return docs, errors, warnings
