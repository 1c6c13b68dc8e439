"""A folder as a member of several sources: mirrored into its part of the staging folder.

A folder indexed alone is synced where it lies (no source at all); only when ``narezka.toml``
names it beside other sources is it copied, file by file, into the shared staging folder. A
file whose size and mtime did not change is not read again; a symbolic link is not followed
(named instead), and hidden folders (``.git``, ``.narezka``, ``.obsidian``…) are not copied.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

from narezka.errors import SourceUnavailableError
from narezka.sources.base import (
    MAX_DOCUMENT_BYTES,
    STAGING_DIRNAME,
    STATE_FILE,
    Refresh,
    read_state,
    write_state,
)


class FolderSource:
    """A folder mirrored into ``home/tree`` (see the module docstring)."""

    def __init__(self, folder: Path, *, home: Path, staging: Path | None = None) -> None:
        self.folder = folder.expanduser().resolve()
        self.home = home
        self._staging = staging if staging is not None else home / STAGING_DIRNAME

    @property
    def spec(self) -> str:
        return str(self.folder)

    @property
    def staging(self) -> Path:
        return self._staging

    def refresh(self) -> Refresh:
        """Copy the files that are new or changed (by size and mtime), remove those gone."""
        if not self.folder.is_dir():
            raise SourceUnavailableError(self.spec, "no such folder")
        self.staging.mkdir(parents=True, exist_ok=True)
        state = self._load_state()
        seen: dict[str, list[int]] = {}
        fetched: list[str] = []
        warnings: list[str] = []
        copied = 0
        for path, stat in self._walk(warnings):
            rel = path.relative_to(self.folder).as_posix()
            if stat.st_size > MAX_DOCUMENT_BYTES:
                warnings.append(f"{path}: {stat.st_size} bytes, over the size cap: not copied")
                continue
            mark = [stat.st_size, stat.st_mtime_ns]
            seen[rel] = mark
            if state.get(rel) == mark and (self.staging / rel).is_file():
                continue
            target = self.staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.narezka-tmp")
            shutil.copyfile(path, tmp)
            os.replace(tmp, target)
            fetched.append(rel)
            copied += stat.st_size
        gone = sorted(p for p in state if p not in seen)
        for rel in gone:  # only files this mirror wrote (listed in its state) are removed
            with contextlib.suppress(FileNotFoundError):
                (self.staging / rel).unlink()
        self._save_state(seen)
        return Refresh(
            version="", fetched=tuple(sorted(fetched)), deleted=tuple(gone),
            fetched_bytes=copied, warnings=tuple(warnings),
        )  # fmt: skip

    def _walk(self, warnings: list[str]) -> list[tuple[Path, os.stat_result]]:
        found = []
        for top, dirs, files in os.walk(self.folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                path = Path(top, name)
                if path.is_symlink():
                    warnings.append(f"{path}: a symbolic link: not followed")
                    continue
                with contextlib.suppress(OSError):
                    stat = path.stat()
                    if path.is_file():
                        found.append((path, stat))
        return found

    def _load_state(self) -> dict[str, Any]:
        return read_state(self.home / STATE_FILE)

    def _save_state(self, state: dict[str, list[int]]) -> None:
        write_state(self.home / STATE_FILE, state)

    def record(self) -> dict[str, Any]:
        return {"kind": "folder", "spec": self.spec}

    def link(self, path: str, lines: tuple[int, int] | None) -> str | None:
        return (self.folder / path).as_uri()
