"""Sources: corpora that are not a plain folder (a git repository, a web site, several of
them named in a ``narezka.toml``), each staged into a folder inside narezka's cache that the
index syncs like any corpus (:mod:`.base` says how).

``open_source(spec)`` makes one from what the user typed (``git+https://…@branch``,
``git+file:///…``, ``git+PATH``, ``https://site/docs/``, an export's zip, a live Confluence
space ``confluence+https://…/wiki/spaces/KEY`` or Notion database or page ``notion://ID``);
``source_from_record`` re-opens the one an index recorded.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from narezka.environment import Environment
from narezka.errors import ConfigError, SourceUnavailableError
from narezka.sources.archive import ArchiveSource, is_export_archive
from narezka.sources.base import (
    CONFLUENCE_PREFIX,
    NOTION_PREFIXES,
    Refresh,
    Source,
    cache_root,
    safe_member,
    split_credentials,
    strip_credentials,
)
from narezka.sources.folder import FolderSource
from narezka.sources.git import GIT_PREFIX, GitSource
from narezka.sources.links import check_template, line_span
from narezka.sources.several import (
    SEVERAL_PREFIX,
    SeveralSources,
    several_from_config,
    several_from_record,
)

# A site's crawler (urllib's HTTP and TLS stack) and a live service's client load when such
# a source is opened, not at the start of every command that opens a source.
if TYPE_CHECKING:
    from narezka.sources.confluence import ConfluenceSource
    from narezka.sources.notion import NotionSource
    from narezka.sources.site import SiteSource

_LAZY = {
    "ConfluenceSource": "narezka.sources.confluence",
    "NotionSource": "narezka.sources.notion",
    "SiteSource": "narezka.sources.site",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ArchiveSource",
    "ConfluenceSource",
    "FolderSource",
    "GitSource",
    "NotionSource",
    "Refresh",
    "SeveralSources",
    "SiteSource",
    "Source",
    "SourceUnavailableError",
    "cache_root",
    "check_template",
    "is_source_spec",
    "line_span",
    "open_source",
    "safe_member",
    "source_from_record",
    "split_credentials",
    "strip_credentials",
]


def is_source_spec(text: str | Path) -> bool:
    """Whether ``text`` names a source rather than a folder: ``git+…``, an ``http(s)`` URL,
    a live Confluence space or Notion page (``confluence+https://…``, ``notion://…``), a
    Notion or Confluence export's zip, or a ``narezka.toml`` file that names several
    (``[[sources]]``)."""
    live = (CONFLUENCE_PREFIX, *NOTION_PREFIXES)
    if isinstance(text, str) and text.startswith((GIT_PREFIX, "http://", "https://", *live)):
        return True
    if is_export_archive(text):
        return True
    return Path(text).name == "narezka.toml" and Path(text).is_file()


def open_source(
    spec: str,
    *,
    link_template: str | None = None,
    cache: Path | None = None,
    env: Environment | None = None,
) -> Source:
    """The source ``spec`` names; a ConfigError for one narezka cannot read (the message
    never holds the credentials a URL carried). A live service's source takes its token from
    ``env`` (the command's environment, read at the top)."""
    if cache is None and env is not None:
        cache = cache_root(env)
    if is_export_archive(spec):
        if link_template is not None and "{id}" not in link_template:
            raise ConfigError(
                f"link template {link_template!r}: an export's page links need {{id}}, the "
                "page's id (https://wiki.example.com/pages/viewpage.action?pageId={id})"
            )
        return ArchiveSource(Path(spec), link_template=link_template, cache=cache)
    if link_template is not None:
        try:
            check_template(link_template)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    if spec.startswith(GIT_PREFIX):
        return GitSource(spec, link_template=link_template, cache=cache)
    if spec.startswith((CONFLUENCE_PREFIX, *NOTION_PREFIXES)):
        if link_template is not None:
            raise ConfigError(f"{strip_credentials(spec)}: a live page links to its own URL")
        if spec.startswith(CONFLUENCE_PREFIX):
            from narezka.sources.confluence import ConfluenceSource

            return ConfluenceSource(spec, cache=cache, env=env)
        from narezka.sources.notion import NotionSource

        return NotionSource(spec, cache=cache, env=env)
    if spec.startswith(SEVERAL_PREFIX) or Path(spec).name == "narezka.toml":
        if link_template is not None:
            raise ConfigError(f"{spec}: each [[sources]] table sets its own link_template")
        return several_from_config(Path(spec.removeprefix(SEVERAL_PREFIX)), cache, env)
    if spec.startswith(("http://", "https://")):
        if link_template is not None:
            raise ConfigError(f"{strip_credentials(spec)}: a site's pages link to themselves")
        from narezka.sources.site import SiteSource

        return SiteSource(spec, cache=cache)
    raise ConfigError(
        f"{strip_credentials(spec)}: not a source narezka reads (a folder's path, "
        "git+https://host/org/repo@branch, https://site/docs/, or a narezka.toml)"
    )


def source_from_record(
    record: Mapping[str, Any] | None, where: str, env: Environment | None = None
) -> Source | None:
    """The source an index recorded (None: a folder's index), at the commit it staged; a
    live service's takes its token from ``env``, and every one stages under ``env``'s cache
    folder (none: the user cache dir)."""
    if record is None:
        return None
    cache = cache_root(env) if env is not None else None
    if isinstance(record, Mapping) and record.get("kind") == "several":
        return several_from_record(record, where, env)
    if isinstance(record, Mapping) and record.get("kind") == "site":
        from narezka.sources.site import SiteSource

        return SiteSource(str(record.get("spec")), cache=cache)
    if isinstance(record, Mapping) and record.get("kind") == "confluence":
        from narezka.sources.confluence import ConfluenceSource

        return ConfluenceSource(str(record.get("spec")), cache=cache, env=env)
    if isinstance(record, Mapping) and record.get("kind") == "notion":
        from narezka.sources.notion import NotionSource

        return NotionSource(str(record.get("spec")), cache=cache, env=env)
    if isinstance(record, Mapping) and record.get("kind") == "export":
        template = record.get("link_template")
        return ArchiveSource(
            Path(str(record.get("spec"))),
            link_template=template if isinstance(template, str) else None,
            cache=cache,
        )
    if not isinstance(record, Mapping) or record.get("kind") != "git":
        raise ConfigError(f"{where}: the recorded source {record!r} is not one narezka reads")
    spec, template = record.get("spec"), record.get("link_template")
    if not isinstance(spec, str) or not isinstance(template, str | None):
        raise ConfigError(f"{where}: the recorded source has no spec: re-index it")
    source = GitSource(spec, link_template=template, cache=cache)
    commit = record.get("commit")
    source.commit = commit if isinstance(commit, str) else None
    return source
