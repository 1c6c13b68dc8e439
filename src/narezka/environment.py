"""The process environment, read in one place: every ``NAREZKA_*`` variable and the few of
other tools narezka honours (``OLLAMA_HOST``, ``OPENAI_API_KEY``, ``QDRANT_API_KEY``,
the live sources' ``CONFLUENCE_TOKEN``/``CONFLUENCE_USER`` and ``NOTION_TOKEN``, ``XDG_*``),
parsed and checked into one frozen :class:`Environment`.

No other module reads ``os.environ`` (``tests/test_settings_once.py`` fails when one does):
the settings layer (:func:`narezka.settings.resolve`) takes the ``NAREZKA_<SETTING>``
values from here, and the stages get what they need handed down from the top (the
embedding and LLM servers as :class:`narezka.embed.servers.Servers`, the cache folder,
``jobs``, the Qdrant key, OCR and the conversion limits as
:class:`narezka.convert.options.ConvertOptions`). A value that
does not parse is a ``ConfigError`` naming the variable, raised where the environment is
first read — at the top of a command, before any file is touched.

Child processes (the converter's, tesseract) get the parent's variables through
:func:`for_child`; a converter child takes them over with :func:`adopt`; the fork server's
one-shot messages travel through :func:`lend` and :func:`take`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from narezka.errors import ConfigError

PREFIX = "NAREZKA_"
OFF = ("off", "0", "no", "false")
YES = ("1", "true", "yes", "on")

OCR = "NAREZKA_OCR"
PURE = "NAREZKA_PURE"
CACHE_DIR = "NAREZKA_CACHE_DIR"
CONFIG = "NAREZKA_CONFIG"
TRUST_CORPUS = "NAREZKA_TRUST_CORPUS"
CONVERT_MEMORY_MB = "NAREZKA_CONVERT_MEMORY_MB"
CONVERT_SECONDS = "NAREZKA_CONVERT_SECONDS"
MAX_FILE_MB = "NAREZKA_MAX_FILE_MB"
EMBED_CONCURRENCY = "NAREZKA_EMBED_CONCURRENCY"
EMBED_BATCH = "NAREZKA_EMBED_BATCH"
EMBED_BATCH_TOKENS = "NAREZKA_EMBED_BATCH_TOKENS"
JOBS = "NAREZKA_JOBS"
API_KEY = "NAREZKA_API_KEY"
SHARED = "NAREZKA_SHARED"
OLLAMA_HOST = "OLLAMA_HOST"
OPENAI_API_KEY = "OPENAI_API_KEY"
QDRANT_API_KEY = "QDRANT_API_KEY"
CONFLUENCE_TOKEN = "CONFLUENCE_TOKEN"
CONFLUENCE_USER = "CONFLUENCE_USER"
NOTION_TOKEN = "NOTION_TOKEN"
XDG_CACHE_HOME = "XDG_CACHE_HOME"
XDG_CONFIG_HOME = "XDG_CONFIG_HOME"

PROCESS_VARIABLES = frozenset(
    {
        OCR,
        PURE,
        CACHE_DIR,
        CONFIG,
        TRUST_CORPUS,
        CONVERT_MEMORY_MB,
        CONVERT_SECONDS,
        MAX_FILE_MB,
        EMBED_CONCURRENCY,
        EMBED_BATCH,
        EMBED_BATCH_TOKENS,
        JOBS,
        API_KEY,
        SHARED,
    }
)
"""The ``NAREZKA_*`` variables about this process, not about how a corpus is chunked: the
others (``NAREZKA_SIZE``, ``NAREZKA_EMBEDDER``…) are settings, layered by
:func:`narezka.settings.resolve`."""

N = TypeVar("N", int, float)

_WATCHED = (*sorted(PROCESS_VARIABLES), OLLAMA_HOST, OPENAI_API_KEY, QDRANT_API_KEY)
_WATCHED += (CONFLUENCE_TOKEN, CONFLUENCE_USER, NOTION_TOKEN)
_WATCHED += (XDG_CACHE_HOME, XDG_CONFIG_HOME)


@dataclass(frozen=True, slots=True)
class Environment:
    """What the environment asks of this process, parsed and checked. None: not set."""

    ocr: bool = True
    """``NAREZKA_OCR=off`` turns reading scanned pages with tesseract off."""
    pure: bool = False
    """``NAREZKA_PURE=1`` runs the pure-Python hot path even where the native core is built."""
    cache_dir: Path | None = None
    """``NAREZKA_CACHE_DIR``: where the embedding cache (and calibrations) live."""
    xdg_cache_home: Path | None = None
    user_config: Path | None = None
    """``NAREZKA_CONFIG``: the user's own config file, instead of the usual place."""
    xdg_config_home: Path | None = None
    trust_corpus: bool = False
    """``NAREZKA_TRUST_CORPUS=1``: a corpus's own ``narezka.toml`` may set safety settings."""
    convert_memory_mb: float | None = None
    convert_seconds: float | None = None
    max_file_mb: float | None = None
    embed_concurrency: int | None = None
    """Requests to an embedding server in flight at once."""
    embed_batch: int | None = None
    embed_batch_tokens: int | None = None
    jobs: int | None = None
    """``NAREZKA_JOBS``: worker processes of a chunk run (``--jobs`` overrides it)."""
    shared: Path | None = None
    """``NAREZKA_SHARED``: the shared benchmark data (the evaluation's Chroma set)."""
    ollama_host: str | None = None
    api_key: str | None = field(default=None, repr=False)
    """``NAREZKA_API_KEY``: the bearer token ``serve --http`` asks of its clients."""
    openai_api_key: str | None = field(default=None, repr=False)
    qdrant_api_key: str | None = field(default=None, repr=False)
    confluence_token: str | None = field(default=None, repr=False)
    """``CONFLUENCE_TOKEN``: an Atlassian API token (with ``CONFLUENCE_USER``, Cloud's Basic
    auth) or a Data Center personal access token (alone: a Bearer header)."""
    confluence_user: str | None = None
    """``CONFLUENCE_USER``: the account's e-mail address an API token belongs to."""
    notion_token: str | None = field(default=None, repr=False)
    """``NOTION_TOKEN``: a Notion integration's secret (``ntn_…``), sent as a Bearer header."""
    settings: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """The other non-empty ``NAREZKA_*`` variables by lower-case name (``size``,
    ``embedder``…): the settings layer checks and applies them."""

    @classmethod
    def read(cls, environ: Mapping[str, str]) -> Environment:
        """The environment ``environ`` describes; a ``ConfigError`` names a bad variable."""

        def text(name: str) -> str | None:
            return environ.get(name, "").strip() or None

        def path(name: str) -> Path | None:
            value = text(name)
            return Path(value).expanduser() if value is not None else None

        return cls(
            ocr=(text(OCR) or "").lower() not in OFF,
            pure=(text(PURE) or "0") != "0",
            cache_dir=path(CACHE_DIR),
            xdg_cache_home=path(XDG_CACHE_HOME),
            user_config=path(CONFIG),
            xdg_config_home=path(XDG_CONFIG_HOME),
            trust_corpus=(text(TRUST_CORPUS) or "").lower() in YES,
            convert_memory_mb=_positive(CONVERT_MEMORY_MB, text(CONVERT_MEMORY_MB), float),
            convert_seconds=_positive(CONVERT_SECONDS, text(CONVERT_SECONDS), float),
            max_file_mb=_positive(MAX_FILE_MB, text(MAX_FILE_MB), float),
            embed_concurrency=_positive(EMBED_CONCURRENCY, text(EMBED_CONCURRENCY), int),
            embed_batch=_positive(EMBED_BATCH, text(EMBED_BATCH), int),
            embed_batch_tokens=_positive(EMBED_BATCH_TOKENS, text(EMBED_BATCH_TOKENS), int),
            jobs=_positive(JOBS, text(JOBS), int),
            shared=path(SHARED),
            ollama_host=text(OLLAMA_HOST),
            api_key=text(API_KEY),
            openai_api_key=text(OPENAI_API_KEY),
            qdrant_api_key=text(QDRANT_API_KEY),
            confluence_token=text(CONFLUENCE_TOKEN),
            confluence_user=text(CONFLUENCE_USER),
            notion_token=text(NOTION_TOKEN),
            settings=MappingProxyType(
                {
                    key[len(PREFIX) :].lower(): value
                    for key, value in environ.items()
                    if key.startswith(PREFIX) and key not in PROCESS_VARIABLES and value
                }
            ),
        )


def _positive(name: str, raw: str | None, kind: type[N]) -> N | None:
    if raw is None:
        return None
    try:
        value = kind(raw)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise ConfigError(f"{name} must be {noun}, not {raw!r}") from None
    if not value > 0:
        raise ConfigError(f"{name} must be above 0, not {raw!r}")
    return value


def of(given: Environment | Mapping[str, str]) -> Environment:
    """``given`` as an ``Environment``: one already read, or variables to read."""
    return given if isinstance(given, Environment) else Environment.read(given)


_last: tuple[tuple[object, ...], Environment] | None = None

# os.environ decodes every value it hands out (~1 µs a look-up, 20 of them a call); its
# mapping of raw values underneath answers the same question in a fraction of that, and
# every change through os.environ (setenv, adopt, lend) lands in it. Where it is not there,
# the public look-ups are used.
_RAW: dict[object, object] | None = getattr(os.environ, "_data", None)
_RAW_KEYS = tuple(map(os.environ.encodekey, _WATCHED)) if _RAW is not None else ()


_RAW_PREFIX = os.environ.encodekey(PREFIX) if _RAW is not None else b""


def _watched_values() -> tuple[object, ...]:
    # Every NAREZKA_ variable counts, not only the process's own: NAREZKA_SIZE and the
    # other settings set or changed between two commands of one process must be seen.
    if _RAW is not None:
        ours = tuple(item for item in _RAW.items() if item[0].startswith(_RAW_PREFIX))  # type: ignore[attr-defined]
        return (*map(_RAW.get, _RAW_KEYS), ours)
    return (
        *map(os.environ.get, _WATCHED),
        tuple(i for i in os.environ.items() if i[0].startswith(PREFIX)),
    )


def current() -> Environment:
    """This process's environment as it is now.

    Parsed again only when one of the variables it holds changed (a test's ``setenv``, a
    converter child that took its parent's over), so the per-file callers at the bottom of a
    run pay a few dictionary look-ups, not a parse."""
    global _last
    key = _watched_values()
    if _last is not None and _last[0] == key:
        return _last[1]
    found = Environment.read(os.environ)
    _last = (key, found)
    return found


def for_child(**extra: str) -> dict[str, str]:
    """The environment a child process runs with: this one's, plus ``extra``."""
    return {**os.environ, **extra}


def adopt(wanted: Mapping[str, str]) -> None:
    """Make this process's environment ``wanted`` (a converter child taking over its
    parent's of the moment: ``NAREZKA_OCR=off``, the ``PATH`` tesseract is found on…)."""
    if wanted != os.environ:
        os.environ.clear()
        os.environ.update(wanted)


@contextmanager
def lend(values: Mapping[str, str]) -> Iterator[None]:
    """Set ``values`` while the block runs (a fork server starting reads them), then remove
    them, so that no other child inherits them."""
    os.environ.update(values)
    try:
        yield
    finally:
        for name in values:
            os.environ.pop(name, None)


def take(name: str) -> str:
    """The value of ``name`` ("" when unset), removed from the environment: a message to
    this process alone (see :func:`lend`)."""
    return os.environ.pop(name, "")


__all__ = [
    "PROCESS_VARIABLES",
    "Environment",
    "adopt",
    "current",
    "for_child",
    "lend",
    "of",
    "take",
]
