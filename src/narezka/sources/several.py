"""Several sources for one index, named in a ``narezka.toml``::

    [[sources]]
    name = "handbook"                                  # the path prefix of its documents
    git = "https://github.com/org/handbook@main"       # or "file:///srv/repo", or a path
    link_template = "…"                                # optional, as --link-template

    [[sources]]
    name = "wiki"
    path = "../wiki"                                   # a folder, relative to the file

    [[sources]]
    name = "site"
    site = "https://docs.example.org/handbook/"        # a web site's pages under it

    [[sources]]
    name = "eng"
    confluence = "https://example.atlassian.net/wiki/spaces/ENG"   # a live space

    [[sources]]
    name = "kb"
    notion = "1a2b3c4d5e6f47a8b9c0d1e2f3a4b5c6"         # a live database or page (its id)

A live member's token comes from the environment alone (``CONFLUENCE_TOKEN``, ``NOTION_TOKEN``):
a key in the file that would hold a credential (``token``, ``password``…), or a URL with one in
it, is refused by name, so none sits in a file that is shared or committed.

Each member stages into ``tree/NAME/`` of one staging folder, so its documents' paths start
with its name (filters, zones and projects select a source by it), and a hit's link is its
member's. Members refresh one after another; one that cannot be read stops the sync before
anything indexed changes. A member taken out of the file has what it staged removed at the
next refresh (the files its own state names), so its chunks leave the index.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from narezka.config import read_toml
from narezka.environment import Environment
from narezka.errors import ConfigError
from narezka.sources.base import (
    CONFLUENCE_PREFIX,
    NOTION_PREFIXES,
    STAGING_DIRNAME,
    STATE_FILE,
    Refresh,
    Source,
    cache_root,
    safe_member,
    source_dir,
    strip_credentials,
)
from narezka.sources.folder import FolderSource
from narezka.sources.git import GIT_PREFIX, REPO_DIRNAME, GitSource
from narezka.sources.links import check_template

if TYPE_CHECKING:
    from narezka.sources.confluence import ConfluenceSource
    from narezka.sources.notion import NotionSource

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
SEVERAL_PREFIX = "sources:"
_KINDS = ("git", "path", "site", "confluence", "notion")
"""The keys that name a member's source: exactly one per table."""
_KEYS = frozenset({"name", "link_template", *_KINDS})
_CREDENTIAL = re.compile(r"token|secret|password|passwd|api_?key|auth|credential|^user", re.I)
"""Keys that would hold a credential: refused by name (tokens come from the environment)."""


class SeveralSources:
    """The sources of one ``narezka.toml`` staged side by side (see the module docstring)."""

    def __init__(self, config: Path, members: Sequence[tuple[str, Source]], home: Path) -> None:
        self.config = config
        self.members = dict(members)
        self.home = home

    @property
    def spec(self) -> str:
        return SEVERAL_PREFIX + str(self.config)

    @property
    def staging(self) -> Path:
        return self.home / STAGING_DIRNAME

    def refresh(self) -> Refresh:
        fetched: list[str] = []
        moved: list[tuple[str, str]] = []
        deleted: list[str] = []
        warnings: list[str] = []
        versions: list[str] = []
        size = 0
        for name in self._retired():
            deleted += [f"{name}/{p}" for p in self._retire(name)]
        for name, member in self.members.items():
            done = member.refresh()
            fetched += [f"{name}/{p}" for p in done.fetched]
            moved += [(f"{name}/{a}", f"{name}/{b}") for a, b in done.moved]
            deleted += [f"{name}/{p}" for p in done.deleted]
            warnings += [f"{name}: {w}" for w in done.warnings]
            versions.append(f"{name}={done.version}" if done.version else name)
            size += done.fetched_bytes
        return Refresh(
            version=" ".join(versions), fetched=tuple(fetched), moved=tuple(moved),
            deleted=tuple(deleted), fetched_bytes=size, warnings=tuple(warnings),
        )  # fmt: skip

    def _retired(self) -> list[str]:
        members = self.home / "members"
        found = sorted(p.name for p in members.iterdir()) if members.is_dir() else []
        return [n for n in found if n not in self.members and _NAME.match(n)]

    def _retire(self, name: str) -> list[str]:
        """Remove what a member no longer in the file staged: the files its state lists,
        then the folders it made (a folder holding anything else stays)."""
        part = self.home / "members" / name
        try:
            state = json.loads((part / STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            state = {}
        staging = self.staging / name
        removed = []
        for rel in sorted(_staged_files(state)):
            if safe_member(rel) is None:
                with contextlib.suppress(FileNotFoundError):
                    (staging / rel).unlink()
                    removed.append(rel)
        for folder in sorted((p for p in staging.rglob("*") if p.is_dir()), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()
        with contextlib.suppress(OSError):
            staging.rmdir()
        if (part / REPO_DIRNAME).is_dir():  # the bare repository narezka fetched into
            shutil.rmtree(part / REPO_DIRNAME)
        with contextlib.suppress(FileNotFoundError):
            (part / STATE_FILE).unlink()
        with contextlib.suppress(OSError):
            part.rmdir()
        return removed

    def record(self) -> dict[str, Any]:
        return {
            "kind": "several",
            "spec": self.spec,
            "members": [{"name": n, **m.record()} for n, m in self.members.items()],
        }

    def link(self, path: str, lines: tuple[int, int] | None) -> str | None:
        name, _, rest = path.partition("/")
        member = self.members.get(name)
        return member.link(rest, lines) if member is not None and rest else None


def _staged_files(state: object) -> set[str]:
    """The staging paths a member's state names, whatever its kind: git's ``files``, a
    site's ``pages`` rows or a live service's ``pages`` by id (each with a ``path``), a
    folder mirror's paths (its keys, each with a size and time)."""
    if not isinstance(state, dict):
        return set()
    found: set[str] = set()
    if isinstance(state.get("files"), dict):
        found.update(str(rel) for rel in state["files"])
    pages = state.get("pages")
    rows = pages.values() if isinstance(pages, dict) else pages if isinstance(pages, list) else ()
    found.update(str(r["path"]) for r in rows if isinstance(r, dict) and "path" in r)
    found.update(
        rel for rel, mark in state.items()
        if isinstance(mark, list) and mark and all(isinstance(n, int) for n in mark)
    )  # fmt: skip
    return found


def several_from_config(
    config: Path, cache: Path | None = None, env: Environment | None = None
) -> SeveralSources:
    """The sources ``config`` (a ``narezka.toml``) names in its ``[[sources]]`` tables; a
    ConfigError naming the file and the table for a bad one. Live members take their
    tokens from ``env``."""
    config = config.expanduser().resolve()
    found = read_toml(config)
    if found is None or found[0] != config:
        raise ConfigError(f"{config}: no such narezka.toml")
    tables = found[1].get("sources")
    if not isinstance(tables, list) or not tables:
        raise ConfigError(f"{config}: no [[sources]] tables (each names a git URL or a path)")
    home = source_dir(SEVERAL_PREFIX + str(config), cache)
    members: list[tuple[str, Source]] = []
    for number, table in enumerate(tables, 1):
        members.append(_member(config, number, table, home, env))
    names = [n for n, _ in members]
    if len(set(names)) != len(names):
        raise ConfigError(f"{config}: two [[sources]] share a name: {sorted(names)}")
    return SeveralSources(config, members, home)


def several_from_record(
    record: Mapping[str, Any], where: str, env: Environment | None = None
) -> SeveralSources:
    """The several sources an index recorded, at the versions it staged (live members take
    their tokens from ``env``, and all stage under its cache folder; none: the user cache
    dir). The ``narezka.toml`` is read again when it is still there, so a sync after an edit
    adds the members it names and retires those it no longer does; a git member the file
    still names the same way keeps the commit it staged (its links)."""
    spec = str(record.get("spec", ""))
    members = record.get("members")
    if not spec.startswith(SEVERAL_PREFIX) or not isinstance(members, list):
        raise ConfigError(f"{where}: the recorded sources cannot be read: re-index them")
    config = Path(spec.removeprefix(SEVERAL_PREFIX))
    cache = cache_root(env) if env is not None else None
    home = source_dir(spec, cache)
    if config.is_file():
        current = several_from_config(config, cache, env)
        if current.home == home:
            _keep_commits(current, members)
            return current
    opened: list[tuple[str, Source]] = []
    for item in members:
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not _NAME.match(name):
            raise ConfigError(f"{where}: a recorded source has no valid name: re-index")
        opened.append((name, _recorded(item, home / "members" / name,
                                       home / STAGING_DIRNAME / name, env)))  # fmt: skip
    return SeveralSources(config, opened, home)


def _keep_commits(current: SeveralSources, members: list[Any]) -> None:
    """A git member the file still names the same way keeps the commit it staged."""
    for item in members:
        name = item.get("name") if isinstance(item, Mapping) else None
        now = current.members.get(name) if isinstance(name, str) else None
        if isinstance(now, GitSource) and now.spec == item.get("spec"):
            commit = item.get("commit")
            now.commit = commit if isinstance(commit, str) else None


def _recorded(
    item: Mapping[str, Any], part: Path, staging: Path, env: Environment | None
) -> Source:
    """One recorded member, opened at the version it staged."""
    kind, spec = item.get("kind"), str(item.get("spec"))
    if kind == "site":
        from narezka.sources.site import SiteSource  # its crawler: only when a site is a member

        return SiteSource(spec, home=part, staging=staging)
    if kind in ("confluence", "notion"):
        return _live_class(kind)(spec, env=env, home=part, staging=staging)
    if kind == "folder":
        return FolderSource(Path(spec), home=part, staging=staging)
    template = item.get("link_template")
    source = GitSource(
        spec, link_template=template if isinstance(template, str) else None,
        home=part, staging=staging,
    )  # fmt: skip
    source.commit = item.get("commit") if isinstance(item.get("commit"), str) else None
    return source


def _member_name(where: str, table: Any) -> str:
    """The member's name, once its table holds no credential and no unknown key."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: not a table")
    secret = sorted(k for k in table if _CREDENTIAL.search(k))
    if secret:
        raise ConfigError(
            f"{where}: {secret}: credentials are not read from narezka.toml; set "
            "CONFLUENCE_TOKEN (and CONFLUENCE_USER) or NOTION_TOKEN in the environment"
        )
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {unknown} ({', '.join(sorted(_KEYS))})")
    name = table.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"{where}: name must be letters, digits, . _ - (it prefixes paths)")
    return name


def _member(
    config: Path, number: int, table: Any, home: Path, env: Environment | None
) -> tuple[str, Source]:
    where = f"{config}: [[sources]] #{number}"
    name = _member_name(where, table)
    given = [k for k in _KINDS if table.get(k) is not None]
    if len(given) != 1:
        raise ConfigError(
            f"{where} ({name}): give exactly one of git = URL, path = FOLDER, site = URL, "
            "confluence = SPACE URL, notion = ID"
        )
    template = table.get("link_template")
    if template is not None:
        try:
            check_template(str(template))
        except ValueError as exc:
            raise ConfigError(f"{where} ({name}): {exc}") from None
    # A member keeps its own state under members/NAME but stages into tree/NAME: the one
    # staging folder the index syncs holds every member's documents under its name.
    part, staging = home / "members" / name, home / STAGING_DIRNAME / name
    kind, value = given[0], str(table[given[0]])
    try:
        if kind == "site":
            from narezka.sources.site import SiteSource

            return name, SiteSource(value, home=part, staging=staging)
        if kind in ("confluence", "notion"):
            return name, _live(kind, value, template, part, staging, env)
    except ConfigError as exc:
        raise ConfigError(f"{where} ({name}): {exc}") from None
    if kind == "path":
        folder = (config.parent / value).resolve()
        if not folder.is_dir():
            raise ConfigError(f"{where} ({name}): {folder} is not a folder")
        return name, FolderSource(folder, home=part, staging=staging)
    spec = value
    if not spec.startswith(GIT_PREFIX):
        spec = GIT_PREFIX + (spec if "://" in spec else str((config.parent / spec).resolve()))
    link = str(template) if template is not None else None
    return name, GitSource(spec, link_template=link, home=part, staging=staging)


def _live(
    kind: str, value: str, template: object, home: Path, staging: Path, env: Environment | None
) -> Source:
    """A live Confluence space or Notion page tree as a member."""
    if strip_credentials(value) != value:
        raise ConfigError(
            f"{strip_credentials(value)}: a credential in the URL is refused: the token comes "
            "from the environment"
        )
    if template is not None:
        raise ConfigError("a live page links to its own URL: no link_template")
    if kind == "confluence":
        spec = value if value.startswith(CONFLUENCE_PREFIX) else CONFLUENCE_PREFIX + value
    else:
        spec = value if value.startswith(NOTION_PREFIXES) else "notion://" + value
    return _live_class(kind)(spec, env=env, home=home, staging=staging)


def _live_class(kind: str) -> type[ConfluenceSource] | type[NotionSource]:
    """A live service's source class, loaded here: its HTTP client and renderer are needed
    only by a corpus that has such a member."""
    if kind == "confluence":
        from narezka.sources.confluence import ConfluenceSource

        return ConfluenceSource
    from narezka.sources.notion import NotionSource

    return NotionSource
