"""Git repositories the tests build for themselves: a work tree, commits made by plain git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=_ENV, check=True
    )
    return done.stdout.strip()


def make_repo(path: Path, files: dict[str, str | bytes]) -> Path:
    """A repository at ``path`` whose first commit (on ``main``) holds ``files``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    commit(path, files, "first")
    return path


def commit(repo: Path, files: dict[str, str | bytes | None], message: str) -> str:
    """Write (or, for None, delete) ``files``, commit them, and return the new commit."""
    for name, content in files.items():
        target = repo / name
        if content is None:
            git(repo, "rm", "--quiet", name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        git(repo, "add", "--force", name)
    git(repo, "commit", "--quiet", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")
