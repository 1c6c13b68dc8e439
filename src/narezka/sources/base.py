"""What every source shares: the :class:`Source` protocol, the result of a refresh, the cache
folder a source may write to, and the rules that keep credentials and hostile paths out.

A source (a git repository today; a site or an export archive later) is turned into a
*staging folder* inside narezka's own cache that holds exactly the documents of the version it
read, each at its path. The index syncs that folder like any corpus, so its plan/fill/commit
does not change: a file deleted upstream is deleted from the folder and loses its chunks, a
renamed one is moved, and one that did not change is neither fetched nor re-read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol
from urllib.parse import urlsplit

from narezka.embed.cache import default_cache_path
from narezka.environment import Environment

CONFLUENCE_PREFIX = "confluence+"
NOTION_PREFIXES = ("notion://", "notion+")
"""How a spec names a live service (here, not in its module: recognising one must not load
its HTTP client and page renderer)."""
SOURCES_DIRNAME = "sources"
"""The folder under narezka's cache that holds every source's own folder."""
STAGING_DIRNAME = "tree"
"""A source's staging folder: the documents of the version read, the corpus the index syncs."""
STATE_FILE = "state.json"
"""A source's record beside its staging folder (what it read, versions, links; no credentials)."""
MAX_DOCUMENT_BYTES = 64 * 2**20
"""A source's document larger than this is named in the report and not fetched: narezka's
converters refuse far smaller files anyway, and a repository may hold build artefacts."""
COMMAND_SECONDS = 600.0
"""Wall time one fetch (a clone, a fetch, a batch of reads) may take before it is stopped."""


@dataclass(frozen=True, slots=True)
class Refresh:
    """What one refresh of a source did to its staging folder."""

    version: str
    """The version now staged (a commit for git)."""
    fetched: tuple[str, ...] = ()
    """Paths read from the source and written (new or changed), relative to the staging
    folder."""
    moved: tuple[tuple[str, str], ...] = ()
    """Renames whose content did not change: (old, new), moved in the folder, not read."""
    deleted: tuple[str, ...] = ()
    """Paths removed (deleted upstream, or now ignored or refused)."""
    fetched_bytes: int = 0
    """Bytes of documents read from the source (0 when nothing changed)."""
    warnings: tuple[str, ...] = field(default=())
    """Documents named and left out (too big, an LFS pointer, a link, an unsafe path)."""


class Source(Protocol):
    """A corpus that is not a plain folder: it stages its documents into :attr:`staging`."""

    @property
    def spec(self) -> str:
        """How the user named the source, credentials stripped (what the index records)."""
        ...

    @property
    def staging(self) -> Path:
        """The folder inside narezka's cache the index syncs."""
        ...

    def refresh(self) -> Refresh:
        """Bring the staging folder to the source's current version, reading only what
        changed since the last refresh."""
        ...

    def record(self) -> dict[str, Any]:
        """What the index records of the source (no credentials): enough to open it again
        with :func:`narezka.sources.source_from_record` and to link hits."""
        ...

    def link(self, path: str, lines: tuple[int, int] | None) -> str | None:
        """The URL a reader opens for ``path`` (lines ``first``–``last`` when known)."""
        ...


class CachedSource:
    """What the sources that stage into narezka's cache share: their spec, their own folder
    (``home``), the staging folder the index syncs, the record that names their kind, and
    hit links read once per source from what their last refresh stored (``_read_links``).
    Each subclass reads its upstream (``refresh``); a source that links by template instead
    overrides ``link``."""

    kind: str = ""
    home: Path
    _spec: str
    _staging: Path
    _links: dict[str, str] | None

    def _settle(
        self, spec: str, cache: Path | None, home: Path | None = None, staging: Path | None = None
    ) -> None:
        """Place the source: ``home`` defaults to a folder of the cache named by ``spec``,
        ``staging`` to ``home/tree`` (a member of several sources gets its part of theirs)."""
        self._spec = spec
        self.home = home if home is not None else source_dir(spec, cache)
        self._staging = staging if staging is not None else self.home / STAGING_DIRNAME
        self._links = None

    @property
    def spec(self) -> str:
        return self._spec

    @property
    def staging(self) -> Path:
        return self._staging

    def record(self) -> dict[str, Any]:
        return {"kind": self.kind, "spec": self._spec}

    def link(self, path: str, lines: tuple[int, int] | None) -> str | None:
        if self._links is None:  # read once, not for every hit a search links
            self._links = self._read_links()
        return self._links.get(path)

    def _read_links(self) -> dict[str, str]:
        return {}


def read_state(path: Path) -> dict[str, Any]:
    """A source's record of what it staged (``{}`` when there is none, or a damaged one:
    the next refresh then stages everything again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_state(path: Path, state: Mapping[str, Any]) -> None:
    """Replace a source's record at once: a crash leaves the old one or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def cache_root(env: Environment) -> Path:
    """narezka's cache folder as ``env`` says: the same ``$NAREZKA_CACHE_DIR`` (else the user
    cache dir) the embedding cache lives in."""
    return default_cache_path(env).parent


def source_dir(spec: str, cache: Path | None = None) -> Path:
    """The folder of the source named ``spec`` (credentials stripped) under ``cache`` (the
    top hands down ``$NAREZKA_CACHE_DIR``'s; none: the user cache dir): one per source, named
    by a digest so no part of the URL becomes a path."""
    digest = hashlib.sha256(spec.encode("utf-8")).hexdigest()[:20]
    root = cache if cache is not None else cache_root(Environment())
    return root / SOURCES_DIRNAME / digest


_USERINFO = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^/@\s:]*)(?P<password>:[^/@\s]*)?@",
    re.IGNORECASE,
)


def _strip(found: re.Match[str]) -> str:
    # ssh's user (git@) is an address, not a secret: only a password goes.
    if found["scheme"].lower().endswith("ssh://") and found["user"]:
        return f"{found['scheme']}{found['user']}@"
    return found["scheme"]


def strip_credentials(text: str) -> str:
    """``text`` with every ``user:password@`` of a URL in it removed (of an ``ssh://`` URL,
    only the password): what may be stored, logged or shown (git's own messages repeat the
    URL they were given)."""
    return _USERINFO.sub(_strip, text)


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its credentials, and the user and password they held (None when
    absent); an ``ssh://`` URL keeps its user, the login name."""
    clean = strip_credentials(url)
    if clean == url:
        return url, None, None
    parts = urlsplit(url)
    return clean, parts.username, parts.password


def safe_member(path: str) -> str | None:
    """Why a document path read from a source cannot be written into its staging folder
    (None: it can): an absolute path, a ``..`` step, a ``.git`` folder or a control
    character would let a hostile source write outside the folder or into git's own files."""
    if not path or path.startswith("/") or "\\" in path:
        return "an absolute or Windows-style path"
    if any(ord(c) < 32 for c in path):
        return "a control character in its name"
    parts = PurePosixPath(path).parts
    if any(p in ("..", ".") for p in parts) or path.split("/") != list(parts):
        return "a path with '..' or empty steps"
    if any(p.lower() == ".git" for p in parts):
        return "a path inside a .git folder"
    return None
