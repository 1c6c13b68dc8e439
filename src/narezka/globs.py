"""Globs over POSIX relative paths with .gitignore semantics, shared by file discovery, path
filters and path rules.

* A pattern with no slash (but a trailing one) matches a name at any depth: ``*.md`` is
  every Markdown file, ``drafts`` every file or folder named so.
* A pattern with a slash at its start or in its middle is anchored to the root:
  ``docs/*.md`` is the Markdown directly in ``docs/``; ``/todo.md`` only the top one.
* ``**/`` is any number of folders (also none), ``/**`` everything inside, ``**`` anything;
  ``*`` and ``?`` stay inside one path segment; ``[...]`` is a class (``[!...]`` negated).
* A trailing ``/`` matches folders only.
* A pattern that matches a folder matches everything inside it.

Folders are tested with a trailing slash (``"docs/"``), files without one.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["glob_matches", "glob_regex", "literal_glob"]


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob (see the module docstring); ``fullmatch`` a path against it, a folder's
    path with a trailing ``/``."""
    folder_only = pattern.endswith("/") and pattern.strip("/") != ""
    body = pattern.rstrip("/") if folder_only else pattern
    # Only a slash before the end anchors the pattern, as in .gitignore.
    anchored = "/" in body
    body = body.removeprefix("/")
    out: list[str] = [] if anchored or body.startswith("**") else ["(?:.*/)?"]
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        elif body[i] == "[" and (end := body.find("]", i + 2)) != -1:
            chars = body[i + 1 : end]
            negate = chars.startswith("!")
            chars = re.sub(r"([\\^\[])", r"\\\1", chars[1:] if negate else chars)
            out.append(f"[^/{chars}]" if negate else f"[{chars}]")
            i = end + 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    # What matches a folder matches everything inside it; a folder-only pattern needs the
    # slash that only a folder's path (or a path inside it) has.
    out.append("/.*" if folder_only else "(?:/.*)?")
    return re.compile("".join(out), re.DOTALL)


def literal_glob(path: str) -> str:
    """A glob matching exactly the POSIX relative ``path`` (and what is inside it): anchored
    to the root, its ``*``, ``?`` and ``[`` taken literally."""
    return "/" + re.sub(r"([*?\[])", r"[\1]", path.strip("/"))


def glob_matches(pattern: str, path: str) -> bool:
    """Whether the POSIX relative ``path`` (a folder's with a trailing ``/``) matches."""
    return glob_regex(pattern).fullmatch(path) is not None
