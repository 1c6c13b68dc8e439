"""``narezka.toml``: path rules for zones and projects, read from the corpus root; the user's
own config file; and which settings a corpus may not choose for itself.

Example::

    [zones]            # first matching glob wins; default "warm"
    "MEMORY.md" = "hot"
    "memory/_archive/**" = "cold"

    [projects]         # filename patterns → project name
    "shop/**" = "shop"
    "**/*-infra.md" = "infra"

**Safety settings.** A folder someone else wrote (a download, a clone, a shared drive) holds
its own ``narezka.toml``, and indexing it must not let it lower what the user's run protects.
These settings are refused from a corpus's ``narezka.toml`` (a ``ConfigError``, exit 2,
naming the file, the setting and how to confirm it) unless the user confirms them:

- ``follow_symlinks = true``: reads files outside the corpus through its symlinks;
- ``redact = false``: keeps secrets in the index and in what is served;
- an ``embedder`` or ``context_llm`` other than a model run on this machine by narezka
  (``use``, ``e5``, ``minilm``, ``hash``; ``ollama:MODEL`` without a host): one naming a URL
  or host sends every chunk's text there, and ``st:PATH`` loads code and weights the corpus
  names.

The other settings only shape how the corpus's own files are cut, embedded and searched
(``include`` reaches no further than the corpus; ``[qdrant]`` names no server: the URL comes
from the user's flag or ``NAREZKA_QDRANT_URL``). The user confirms by ``--trust-corpus-config``,
``NAREZKA_TRUST_CORPUS=1``, or by listing the corpus in their own config file,
``$XDG_CONFIG_HOME/narezka/config.toml`` (``~/.config/narezka/config.toml``; or the file
``NAREZKA_CONFIG`` names), which may also set any setting itself, for every corpus::

    [settings]            # the user's own defaults: a corpus's narezka.toml overrides them
    embedder = "e5"

    [trust]               # corpora whose own narezka.toml may set safety settings
    corpora = ["~/notes", "/srv/kb"]
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from narezka import environment
from narezka.enrich import Rules
from narezka.environment import Environment
from narezka.errors import ConfigError

CONFIG_NAME = "narezka.toml"
TRUST_FLAG = "--trust-corpus-config"


def corpus_root(location: Path) -> Path:
    """The folder whose ``narezka.toml`` applies to ``location`` (a folder, or a file's)."""
    return location if location.is_dir() else location.parent


def read_toml(location: Path) -> tuple[Path, dict[str, Any]] | None:
    """The corpus's ``narezka.toml`` and its parsed tables, or None when it has none: the one
    reader of the file (settings, rules and ``[qdrant]`` all come through it)."""
    path = corpus_root(location) / CONFIG_NAME
    if not path.is_file():
        return None
    return path, _parsed(path)


_PARSED: dict[Path, tuple[str, dict[str, Any]]] = {}
"""The last text of each file parsed, with its tables: a run's settings, rules and
``[qdrant]`` (and a watcher's every sync) parse a file once, and again when its text changed
(the text, not its mtime, tells: two saves within one clock tick differ too)."""


def check_known(table: Mapping[str, Any], kind: type[Any], where: str, what: str) -> None:
    """Refuse the keys of ``table`` that name no field of the dataclass ``kind`` (a typo
    must not pass as a default): a ``ConfigError`` naming ``where`` and each unknown
    ``what``."""
    unknown = sorted(set(table) - {f.name for f in fields(kind)})
    if unknown:
        raise ConfigError(f"{where}: unknown {what} {', '.join(unknown)}")


def _parsed(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        known = _PARSED.get(path)
        if known is None or known[0] != text:
            known = (text, tomllib.loads(text))
            _PARSED[path] = known
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return copy.deepcopy(known[1])  # the caller's to keep: the cached tables stay as read


def load_rules(root: Path) -> Rules:
    """Rules from ``root/narezka.toml`` (defaults when there is none)."""
    found = read_toml(root)
    if found is None:
        return Rules()
    path, data = found
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


# ---- the user's own config and the safety settings -------------------------------------


@dataclass(frozen=True, slots=True)
class UserConfig:
    """The user's own config file: settings for every corpus, and corpora trusted to set
    safety settings in their own ``narezka.toml``."""

    path: Path
    settings: Mapping[str, Any]
    trusted: tuple[Path, ...]

    def trusts(self, root: Path) -> bool:
        """Whether the user listed the corpus ``root`` under ``[trust] corpora``."""
        real = os.path.realpath(root)
        return any(os.path.realpath(p) == real for p in self.trusted)


def user_config_path(given: Environment | Mapping[str, str]) -> Path:
    """``$NAREZKA_CONFIG``, else ``$XDG_CONFIG_HOME/narezka/config.toml``, else the user
    config dir's (``~/.config/narezka/config.toml`` on Linux)."""
    env = environment.of(given)
    if env.user_config is not None:
        return env.user_config
    if env.xdg_config_home is not None:
        return env.xdg_config_home / "narezka" / "config.toml"
    try:
        from platformdirs import user_config_dir

        return Path(user_config_dir("narezka")) / "config.toml"
    except ImportError:  # pragma: no cover - platformdirs is a core dependency
        return Path.home() / ".config" / "narezka" / "config.toml"


def read_user_config(env: Environment | Mapping[str, str]) -> UserConfig:
    """The user's config file (empty when there is none); bad content names the file."""
    path = user_config_path(env)
    if not path.is_file():
        return UserConfig(path, {}, ())
    data = _parsed(path)
    for key in sorted(set(data) - {"settings", "trust"}):
        raise ConfigError(f"{path}: unknown table or key {key!r} (expected [settings], [trust])")
    settings, trust = data.get("settings", {}), data.get("trust", {})
    if not isinstance(settings, dict):
        raise ConfigError(f"{path}: [settings] must be a table of name = value")
    corpora = trust.get("corpora", []) if isinstance(trust, dict) else None
    if not isinstance(corpora, list) or not all(isinstance(c, str) for c in corpora):
        raise ConfigError(f'{path}: [trust] corpora must be a list of folders, e.g. ["~/notes"]')
    unknown = sorted(set(trust) - {"corpora"})
    if unknown:
        raise ConfigError(f"{path}: unknown [trust] key {', '.join(unknown)}")
    return UserConfig(path, settings, tuple(Path(c).expanduser() for c in corpora))


def confirmed(env: Environment | Mapping[str, str], flag: bool | None) -> bool:
    """Whether the user confirmed a corpus's safety settings by the flag or the variable."""
    return bool(flag) or environment.of(env).trust_corpus


def lowered_safety(values: Mapping[str, Any]) -> list[str]:
    """The safety settings among ``values`` (a settings table) that lower what a run
    protects, each as ``name = value (what it does)``; see the module docstring."""
    found = []
    if values.get("follow_symlinks"):
        found.append("follow_symlinks = true (reads files outside the corpus through links)")
    if "redact" in values and values["redact"] is not None and not values["redact"]:
        found.append("redact = false (keeps secrets in the index and in what is served)")
    for name in ("embedder", "context_llm"):
        spec = values.get(name)
        why = _unsafe_model(str(spec)) if spec is not None else None
        if why is not None:
            found.append(f"{name} = {str(spec)!r} ({why})")
    return found


def _unsafe_model(spec: str) -> str | None:
    """Why a model spec is a safety setting, or None for one narezka runs on this machine
    (or one no backend knows, refused as such where it is loaded). A backend is classed by
    its row in :data:`narezka.embed.registry.BACKENDS` (``remote``, ``loads_code``); the
    context LLM's kinds share the embedders' names (``ollama``, ``openai``)."""
    # Here, not at the top: settings load no embed stage until a model's tokens size chunks.
    from narezka.embed.registry import BACKENDS

    kind, _, rest = spec.strip().partition(":")
    backend = BACKENDS.get(kind.lower())
    if backend is not None and backend.loads_code:
        return "loads a model's code and weights from a path or hub name the corpus chooses"
    if (backend is not None and backend.remote) or "@" in rest:
        return f"sends every chunk's text to {rest.partition('@')[2] or 'a server'}"
    return None  # use, e5, minilm, hash; ollama:MODEL is the user's own (OLLAMA_HOST)


def refuse_lowered(path: Path, values: Mapping[str, Any], user: Path) -> None:
    """Refuse the safety settings a corpus's own ``narezka.toml`` sets (see the module
    docstring), naming the file, each setting and how the user confirms them."""
    lowered = lowered_safety(values)
    if not lowered:
        return
    raise ConfigError(
        f"{path}: a corpus's own narezka.toml may not lower its safety: {'; '.join(lowered)}. "
        f"If you trust this folder's settings, confirm them: pass {TRUST_FLAG} (index, "
        f"chunk, inspect, eval), set {environment.TRUST_CORPUS}=1, or list the folder "
        f"under [trust] corpora in {user} (where you may also set them yourself, as flags "
        "and NAREZKA_* variables may)"
    )
