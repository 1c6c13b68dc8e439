"""Find the input files under the given paths and read them into ``RawDocument`` values."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from narezka.discover.converted import converted_document
from narezka.discover.decode import decode_bytes
from narezka.errors import SourceError
from narezka.globs import glob_regex
from narezka.types import CONVERTED_SUFFIXES, MARKDOWN_GLOBS, RawDocument

__all__ = ["DEFAULT_INCLUDE", "iter_files", "read_all", "read_document", "shown_path"]

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
    return any(glob_regex(p).fullmatch(rel) for p in patterns)


def _walk(
    root: Path, include: Sequence[str], exclude: Sequence[str], problems: list[SourceError]
) -> list[Path]:
    """Files under ``root`` that pass the globs, in order of their relative POSIX path.

    What cannot be read (a folder that cannot be listed, a symlink loop or one to a missing
    target, a name that is not UTF-8) is appended to ``problems``, named by its relative
    path, and the walk goes on.
    """
    found: dict[str, Path] = {}
    seen: set[tuple[int, int]] = set()
    pending = [root]
    # Symlinked directories wait until every real one is walked, so a tree reached both ways
    # is listed under its real path; ``seen`` holds (device, inode) so loops end.
    linked: list[Path] = []
    while pending or linked:
        directory = pending.pop() if pending else linked.pop(0)
        try:
            st = directory.stat()
            if (st.st_dev, st.st_ino) in seen:
                if directory.is_symlink():
                    rel = directory.relative_to(root).as_posix()
                    problems.append(
                        SourceError(rel, "symlink to a folder already read (a loop?), skipped")
                    )
                continue
            seen.add((st.st_dev, st.st_ino))
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            where = directory.relative_to(root).as_posix() if directory != root else str(root)
            problems.append(SourceError(shown_path(where), f"cannot list: {exc.strerror or exc}"))
            continue
        for entry in entries:
            path = Path(entry.path)
            rel = path.relative_to(root).as_posix()
            try:
                is_dir, is_file, is_link = entry.is_dir(), entry.is_file(), entry.is_symlink()
            except OSError as exc:  # a symlink loop such as ``a -> a`` cannot be stat-ed
                problems.append(
                    SourceError(shown_path(rel), f"cannot read: {exc.strerror or exc}, skipped")
                )
                continue
            bad_name = _undecodable_name(rel, "folder" if is_dir else "file")
            if bad_name is not None:
                wanted = is_dir or (is_file and _matches(rel, include))
                if wanted and not _matches(rel, exclude):
                    problems.append(bad_name)
                continue
            if is_dir:
                hidden = entry.name in _SKIP_DIRS
                # Excluding a directory excludes everything inside it, as in .gitignore.
                if not hidden and not _matches(rel, exclude):
                    (linked if is_link else pending).append(path)
            elif is_file and _matches(rel, include) and not _matches(rel, exclude):
                found[rel] = path
            elif is_link and not os.path.exists(path) and not _matches(rel, exclude):
                # A folder's link whose drive is not mounted looks just like this: named, so
                # a sync keeps what it indexed there instead of taking it for deleted.
                problems.append(SourceError(rel, "symlink to a missing target, skipped"))
    return [found[rel] for rel in sorted(found)]


def iter_files(
    paths: Sequence[str | Path],
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    *,
    errors: list[SourceError] | None = None,
) -> Iterator[tuple[Path, Path]]:
    """Yield ``(root, file)`` for every input file, in a deterministic order.

    Paths are taken in the order given; a directory yields its matching files sorted by relative
    POSIX path, skipping dot-directories, ``node_modules`` and ``__pycache__``; a file yields
    itself with its parent as root, whatever the globs. A file reached twice is yielded once.
    Problems (a missing path, an unlistable directory) raise ``SourceError``, or are appended
    to ``errors`` when a list is given, and the walk goes on.
    """
    yielded: set[str] = set()
    for given in paths:
        path = Path(given)
        problems: list[SourceError] = []
        pairs: list[tuple[Path, Path]] = []
        if path.is_dir():
            pairs = [(path, file) for file in _walk(path, include, exclude, problems)]
        elif path.exists():
            bad_name = _undecodable_name(path.name, "file")
            if bad_name is None:
                pairs = [(path.parent, path)]
            else:
                problems.append(bad_name)
        else:
            problems.append(SourceError(shown_path(str(given)), "no such file or directory"))
        if problems and errors is None:
            raise problems[0]
        if errors is not None:
            errors.extend(problems)
        for root, file in pairs:
            key = os.path.abspath(file)
            if key not in yielded:
                yielded.add(key)
                yield root, file


def read_document(
    root: Path, file: Path, *, convert_cache: Path | None = None
) -> tuple[RawDocument, list[str]]:
    """Read and decode one file; ``source`` is its POSIX path relative to ``root``.

    Raises ``SourceError`` (or its ``BinaryFileError``/``DecodeError``/``ConvertError``)
    naming the file. A PDF, Word, HTML, slide or sheet file is converted to Markdown, through
    the ``convert_cache`` sqlite file when given.
    """
    try:
        raw = file.read_bytes()
        mtime = file.stat().st_mtime
    except OSError as exc:
        raise SourceError(str(file), f"cannot read: {exc.strerror or exc}") from exc
    try:
        source = file.relative_to(root).as_posix()
    except ValueError:
        source = file.name
    if file.suffix.lower() in CONVERTED_SUFFIXES:
        return converted_document(raw, file, source, mtime, convert_cache), []
    text, encoding, warnings = decode_bytes(raw, str(file))
    doc = RawDocument(source=source, text=text, encoding=encoding, mtime=mtime, size=len(raw))
    return doc, warnings


def read_all(
    paths: Sequence[str | Path],
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
) -> tuple[list[RawDocument], list[SourceError], list[str]]:
    """Read every input file: ``(documents, per-file errors, warnings)``.

    A file that cannot be read or decoded becomes an error in the list and the others are still
    read; every error and warning names its file.
    """
    docs: list[RawDocument] = []
    errors: list[SourceError] = []
    warnings: list[str] = []
    for root, file in iter_files(paths, include, exclude, errors=errors):
        try:
            doc, file_warnings = read_document(root, file)
        except SourceError as exc:
            errors.append(exc)
            continue
        docs.append(doc)
        warnings.extend(file_warnings)
    return docs, errors, warnings
