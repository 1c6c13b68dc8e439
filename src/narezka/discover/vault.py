"""Obsidian vaults: a folder holding ``.obsidian/`` is one. Its settings folder is never read
(the walk skips it), and neither is its attachments folder (``attachmentFolderPath`` in
``.obsidian/app.json``: images and PDFs pasted into notes, not notes)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path, PurePosixPath

SETTINGS_DIR = ".obsidian"


def is_vault(root: Path) -> bool:
    """Whether ``root`` is an Obsidian vault (it holds a ``.obsidian/`` folder)."""
    return (root / SETTINGS_DIR).is_dir()


@lru_cache(maxsize=64)
def _attachment_globs(root: str, stamp: float) -> tuple[str, ...]:
    try:
        data = json.loads(Path(root, SETTINGS_DIR, "app.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    folder = data.get("attachmentFolderPath") if isinstance(data, dict) else None
    if not isinstance(folder, str):
        return ()
    # "/" is the vault root and "./…" beside each note: neither is a folder of its own.
    parts = PurePosixPath(folder.strip()).parts
    if not parts or parts[0] in ("/", ".") or ".." in parts:
        return ()
    return ("/" + "/".join(parts) + "/",)


def vault_excludes(root: Path) -> tuple[str, ...]:
    """Globs of a vault's folders that hold no notes (its attachments folder); none for a
    folder that is not a vault."""
    if not is_vault(root):
        return ()
    app = root / SETTINGS_DIR / "app.json"
    try:
        stamp = app.stat().st_mtime
    except OSError:
        return ()
    return _attachment_globs(str(root), stamp)
