"""A git repository as a source: read at a commit with git's plumbing, staged into the cache.

A local repository (``git+file:///path@ref``, ``git+PATH@ref``) is read in place, without a
work tree: ``git ls-tree`` lists the commit, ``git cat-file --batch`` reads the blobs. A remote
one (``git+https://host/org/repo@branch``, ``git+ssh://…``) is fetched shallow into a bare
repository in the source's cache folder, and read the same way. The staging folder then holds
exactly the commit's documents; a later refresh fetches only the blobs whose ids changed, and
moves a renamed file (``git diff-tree -M``) instead of reading it again.

Credentials in the URL are handed to git for the one fetch, in its environment (never its
argv or its config), and stripped from everything stored, shown or raised. Every git process
runs under a timeout, never prompts, and reads no blob bigger than the size cap.
"""

from __future__ import annotations

import base64
import contextlib
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from narezka import environment
from narezka.errors import ConfigError, SourceUnavailableError
from narezka.globs import glob_matches
from narezka.sources.base import (
    COMMAND_SECONDS,
    MAX_DOCUMENT_BYTES,
    STATE_FILE,
    CachedSource,
    Refresh,
    read_state,
    safe_member,
    split_credentials,
    strip_credentials,
    write_state,
)
from narezka.sources.links import forge_template, render_link

GIT_PREFIX = "git+"
REPO_DIRNAME = "repo.git"
_FETCHED_REF = "refs/narezka/fetched"
_SYNCED_REF = "refs/narezka/synced"
"""Keeps the staged commit reachable in a fetched repository, so git's own garbage collection
never removes what the next diff compares against."""
_LFS_HEADER = b"version https://git-lfs.github.com/spec/"
_REGULAR = ("100644", "100755")


@dataclass(frozen=True, slots=True)
class _Entry:
    mode: str
    sha: str
    size: int


def parse_git_spec(spec: str) -> tuple[str, str | None]:
    """The location and the ref (None: the default branch) of a ``git+`` spec, as given
    (credentials still in; strip them before storing)."""
    if not spec.startswith(GIT_PREFIX):
        raise ConfigError(f"{strip_credentials(spec)}: a git source starts with git+")
    rest = spec[len(GIT_PREFIX) :]
    scheme, sep, after = rest.partition("://")
    body = after if sep else rest
    slash = body.find("/")
    # The ref follows the last "@" of the path: an "@" before the first "/" is user info.
    head, tail = (body[:slash], body[slash:]) if slash >= 0 and sep else ("", body)
    where, at, ref = tail.rpartition("@")
    if not at:
        where, ref = tail, ""
    location = (f"{scheme}://" if sep else "") + head + where
    if not location.strip() or (at and not ref):
        raise ConfigError(f"{strip_credentials(spec)}: no repository, or an empty @ref")
    return location, ref or None


class GitSource(CachedSource):
    """A git repository staged into narezka's cache (see the module docstring)."""

    def __init__(
        self, spec: str, *, link_template: str | None = None, cache: Path | None = None,
        fetch: bool | None = None, home: Path | None = None, staging: Path | None = None,
    ) -> None:  # fmt: skip
        """``home``: the source's own folder (default: one under the cache named by the
        spec), ``staging`` the folder it stages into (default ``home/tree``; a member of
        several sources gets its part of theirs)."""
        location, self.ref = parse_git_spec(spec)
        self._url, user, password = split_credentials(location)
        self._auth = (user or "", password or "") if user or password else None
        local = self._url.startswith("file://") or "://" not in self._url
        self._fetch = (not local) if fetch is None else fetch
        """Fetched into the cache (remote), or read where it lies (a local repository)."""
        if local and "://" not in self._url:
            self._url = str(Path(self._url).expanduser().resolve())
        self._settle(GIT_PREFIX + self._url + (f"@{self.ref}" if self.ref else ""), cache,
                     home, staging)  # fmt: skip
        self.link_template = link_template
        self.commit: str | None = None

    def _repo(self) -> Path:
        if self._fetch:
            return self.home / REPO_DIRNAME
        return Path(self._url.removeprefix("file://"))

    # ---- reading ------------------------------------------------------------------------

    def refresh(self) -> Refresh:
        """Stage the ref's commit: fetch (remote), list it, write what changed, remove what
        went; unchanged files are not read."""
        self.staging.mkdir(parents=True, exist_ok=True)
        commit = self._resolve()
        state = self._load_state()
        staged: dict[str, str] = state.get("files", {})
        listing = self._list(commit)
        warnings: list[str] = []
        wanted = self._wanted(listing, warnings)
        gone = [p for p in staged if p not in wanted]
        todo = {p: e for p, e in wanted.items() if staged.get(p) != e.sha}
        moved = self._moves(state.get("commit"), commit, todo, gone, staged)
        for old, new in moved:
            gone.remove(old)
            staged.pop(old)
            if (self.staging / old).is_file() and not (self.staging / new).exists():
                target = self.staging / new
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.staging / old, target)
                staged[new] = todo.pop(new).sha
                self._prune_dirs(old)
            else:  # the staged copy is not where the state says: read it again
                gone.append(old)
                staged[old] = ""
        moved = [(old, new) for old, new in moved if new not in todo]
        # Removals first: a folder that became a file (or a file a folder) upstream is free
        # before the new one is written.
        for path in gone:
            # Only a file this source wrote (listed in its state) is ever removed.
            with contextlib.suppress(FileNotFoundError):
                (self.staging / path).unlink()
            staged.pop(path)
            self._prune_dirs(path)
        # Named before they are written: a refresh stopped half-way leaves no file in the
        # folder that the state does not list, so a later one can still remove it.
        pending = {**staged, **{p: staged.get(p, "") for p in todo}}
        self._save_state({"spec": self._spec, "commit": state.get("commit"), "files": pending})
        fetched = self._write(todo, staged, warnings)
        self.commit = commit
        self._save_state({"spec": self._spec, "commit": commit, "files": staged})
        if self._fetch:
            self._git("update-ref", _SYNCED_REF, commit)
        return Refresh(
            version=commit,
            fetched=tuple(sorted(todo)),
            moved=tuple(moved),
            deleted=tuple(sorted(gone)),
            fetched_bytes=fetched,
            warnings=tuple(warnings),
        )

    def _resolve(self) -> str:
        if self._fetch:
            repo = self._repo()
            if not (repo / "HEAD").is_file():
                repo.mkdir(parents=True, exist_ok=True)
                self._git("init", "--bare", "--quiet", str(repo), in_repo=False)
            want = self.ref or "HEAD"
            self._git(
                "fetch", "--depth", "1", "--no-tags", "--no-write-fetch-head", "--quiet",
                self._url, f"+{want}:{_FETCHED_REF}",
                authed=True,
            )  # fmt: skip
            return self._git("rev-parse", "--verify", f"{_FETCHED_REF}^{{commit}}").decode().strip()
        if not self._repo().exists():
            raise SourceUnavailableError(self._spec, "no such repository")
        want = self.ref or "HEAD"
        self._git("rev-parse", "--git-dir")  # not a repository: git says so, by name
        try:
            found = self._git("rev-parse", "--verify", "--quiet", f"{want}^{{commit}}")
        except SourceUnavailableError:
            raise SourceUnavailableError(
                self._spec, f"no branch, tag or commit {want!r} in the repository"
            ) from None
        return found.decode().strip()

    def _list(self, commit: str) -> dict[str, _Entry]:
        out = self._git("ls-tree", "-r", "-l", "-z", "--full-tree", commit)
        listing: dict[str, _Entry] = {}
        for row in out.split(b"\0"):
            if not row:
                continue
            meta, _, raw = row.partition(b"\t")
            mode, _kind, sha, size = meta.decode().split()
            path = raw.decode("utf-8", "surrogateescape")
            listing[path] = _Entry(mode, sha, int(size) if size.isdigit() else 0)
        return listing

    def _wanted(self, listing: Mapping[str, _Entry], warnings: list[str]) -> dict[str, _Entry]:
        """The regular files of the listing that may be staged; the others are named."""
        ignore = self._ignore_rules(listing)
        wanted: dict[str, _Entry] = {}
        for path, entry in sorted(listing.items()):
            if (problem := safe_member(path)) is not None:
                warnings.append(f"{self._spec}: {path!r} refused: {problem}")
            elif entry.mode == "120000":
                warnings.append(f"{path}: a symbolic link in the repository: not followed")
            elif entry.mode not in _REGULAR:
                continue  # a submodule: another repository, not this source's documents
            elif _ignored(path, ignore):
                continue
            elif entry.size > MAX_DOCUMENT_BYTES:
                warnings.append(
                    f"{path}: {entry.size} bytes, over the {MAX_DOCUMENT_BYTES} byte cap: "
                    "not fetched"
                )
            else:
                wanted[path] = entry
        return wanted

    def _ignore_rules(self, listing: Mapping[str, _Entry]) -> list[tuple[str, str, bool]]:
        """The patterns of the commit's own ``.gitignore`` files (a file committed despite
        them, with ``git add -f``, is still left out), as (folder, pattern, negated)."""
        files = sorted(p for p in listing if p.rsplit("/", 1)[-1] == ".gitignore")
        blobs = self._read_blobs([listing[p].sha for p in files if listing[p].size < 2**20])
        rules: list[tuple[str, str, bool]] = []
        for path in files:
            folder = path.rpartition("/")[0]
            text = blobs.get(listing[path].sha, b"").decode("utf-8", "replace")
            for line in text.splitlines():
                line = line.rstrip()
                if not line or line.startswith("#"):
                    continue
                negated = line.startswith("!")
                rules.append((folder, line[1:] if negated else line, negated))
        return rules

    def _moves(
        self, old: Any, new: str, todo: Mapping[str, _Entry], gone: Sequence[str],
        staged: Mapping[str, str],
    ) -> list[tuple[str, str]]:  # fmt: skip
        """Renames git finds between the staged commit and ``new`` whose content did not
        change: the staged file moves, nothing is read."""
        if not isinstance(old, str) or not todo or not gone or old == new:
            return []
        try:
            out = self._git("diff-tree", "-r", "-M", "-z", "--no-commit-id", old, new)
        except SourceUnavailableError:
            return []  # the old commit is gone (a forced push): everything is compared by id
        fields = out.split(b"\0")
        moves: list[tuple[str, str]] = []
        i = 0
        while i < len(fields) - 1:
            meta = fields[i].decode()
            status = meta.split()[-1] if meta else ""
            if status.startswith(("R", "C")):
                src = fields[i + 1].decode("utf-8", "surrogateescape")
                dst = fields[i + 2].decode("utf-8", "surrogateescape")
                i += 3
                entry = todo.get(dst)
                if (status.startswith("R") and src in gone and entry is not None
                        and staged.get(src) == entry.sha):  # fmt: skip
                    moves.append((src, dst))
            else:
                i += 2
        return moves

    def _write(
        self, todo: Mapping[str, _Entry], staged: dict[str, str], warnings: list[str]
    ) -> int:
        blobs = self._read_blobs(sorted({e.sha for e in todo.values()}))
        fetched = 0
        for path, entry in sorted(todo.items()):
            data = blobs[entry.sha]
            fetched += len(data)
            if len(data) < 1024 and data.startswith(_LFS_HEADER):
                warnings.append(f"{path}: a Git LFS pointer (the file lives in LFS): not fetched")
                if path in staged:
                    with contextlib.suppress(FileNotFoundError):
                        (self.staging / path).unlink()
                    staged.pop(path)
                continue
            target = self.staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.narezka-tmp")
            tmp.write_bytes(data)
            if entry.mode == "100755":
                tmp.chmod(0o644)  # documents, never programs, in narezka's cache
            os.replace(tmp, target)
            staged[path] = entry.sha
        return fetched

    def _read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        out = self._git("cat-file", "--batch", stdin="\n".join(wanted).encode() + b"\n")
        blobs: dict[str, bytes] = {}
        at = 0
        for sha in wanted:
            end = out.index(b"\n", at)
            header = out[at:end].split()
            if len(header) != 3:
                raise SourceUnavailableError(self._spec, f"blob {sha} cannot be read")
            size = int(header[2])
            blobs[sha] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return blobs

    def _prune_dirs(self, path: str) -> None:
        # A folder left empty by a deletion goes; rmdir refuses one that still holds anything.
        parent = (self.staging / path).parent
        while parent != self.staging and self.staging in parent.parents:
            try:
                parent.rmdir()
            except OSError:
                return
            parent = parent.parent

    # ---- state and git ------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any]:
        data = read_state(self.home / STATE_FILE)
        return data if isinstance(data.get("files"), dict) else {}

    def _save_state(self, state: Mapping[str, Any]) -> None:
        write_state(self.home / STATE_FILE, state)

    def _git(
        self, *args: str, in_repo: bool = True, stdin: bytes | None = None, authed: bool = False
    ) -> bytes:
        command = ["git", *(["-C", str(self._repo())] if in_repo else []), *args]
        env = environment.for_child(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="")
        env["GIT_CONFIG_COUNT"] = "1"
        env["GIT_CONFIG_KEY_0"] = "gc.auto"  # narezka's fetches never rewrite the repository
        env["GIT_CONFIG_VALUE_0"] = "0"
        if authed and self._auth is not None:
            token = base64.b64encode(":".join(self._auth).encode()).decode()
            env["GIT_CONFIG_COUNT"] = "2"
            env["GIT_CONFIG_KEY_1"] = "http.extraHeader"
            env["GIT_CONFIG_VALUE_1"] = f"Authorization: Basic {token}"
        try:
            done = subprocess.run(
                command, input=stdin, capture_output=True, env=env, timeout=COMMAND_SECONDS,
                check=False,
            )  # fmt: skip
        except FileNotFoundError:
            raise SourceUnavailableError(
                self._spec, "git is not installed (it reads git sources): install git"
            ) from None
        except subprocess.TimeoutExpired:
            raise SourceUnavailableError(
                self._spec, f"git {args[0]} took over {COMMAND_SECONDS:.0f} s: stopped"
            ) from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            problem = strip_credentials(said[-1] if said else f"git {args[0]} failed")
            raise SourceUnavailableError(self._spec, problem)
        return done.stdout

    # ---- what the index keeps -----------------------------------------------------------

    def record(self) -> dict[str, Any]:
        return {
            "kind": "git",
            "spec": self._spec,
            "commit": self.commit,
            "link_template": self.link_template,
        }

    def link(self, path: str, lines: tuple[int, int] | None) -> str | None:
        template = self.link_template or forge_template(self._url)
        if template is None or self.commit is None:
            return None
        return render_link(template, commit=self.commit, path=path, lines=lines)


def _ignored(path: str, rules: Sequence[tuple[str, str, bool]]) -> bool:
    ignored = False
    for folder, pattern, negated in rules:  # later rules win, as in git
        if folder and not path.startswith(folder + "/"):
            continue
        inside = path[len(folder) + 1 :] if folder else path
        if glob_matches(pattern, inside):
            ignored = not negated
    return ignored
