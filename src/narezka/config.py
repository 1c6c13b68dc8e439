"""``narezka.toml``: path rules for zones and projects, read from the corpus root.

Example::

    [zones]            # first matching glob wins; default "warm"
    "MEMORY.md" = "hot"
    "memory/_archive/**" = "cold"

    [projects]         # filename patterns → project name
    "shop/**" = "shop"
    "**/*-infra.md" = "infra"
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from narezka.enrich import Rules
from narezka.errors import ConfigError

CONFIG_NAME = "narezka.toml"


def load_rules(root: Path) -> Rules:
    """Rules from ``root/narezka.toml`` (defaults when there is none)."""
    path = root / CONFIG_NAME if root.is_dir() else root.parent / CONFIG_NAME
    if not path.is_file():
        return Rules()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    rules = Rules()
    zones = _table(data, "zones", path)
    projects = _table(data, "projects", path)
    return Rules(
        zones=zones or rules.zones,
        projects=projects,
        default_zone=str(data.get("default_zone", rules.default_zone)),
        default_project=str(data.get("default_project", rules.default_project)),
    )


def _table(data: dict[str, object], key: str, path: Path) -> tuple[tuple[str, str], ...]:
    table = data.get(key, {})
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise ConfigError(f'{path}: [{key}] must map globs to names, e.g. "memory/*.md" = "warm"')
    return tuple((str(k), str(v)) for k, v in table.items())
