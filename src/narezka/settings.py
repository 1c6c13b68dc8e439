"""``Settings``: how a corpus is chunked, embedded and indexed — every default in one place.

Loaded in this order, each later source overriding the earlier ones::

    the defaults below  →  the user's config file [settings]  →  narezka.toml [settings] in the
    corpus  →  NAREZKA_* variables  →  flags

A corpus's own ``narezka.toml`` may not lower its safety (``follow_symlinks``, ``redact =
false``, a model that sends text off the machine) unless the user confirms it: see
:mod:`narezka.config`. :func:`resolve` is the one place that decides, for every command, the
server and the library, and says which settings came from where.

``narezka.toml`` example (the same file holds ``[zones]`` and ``[projects]``)::

    [settings]
    strategy = "headings"
    embedder = "e5"
    size = 384            # in unit; default: the embedder's budget in its own tokens
    levels = "2-3"
    exclude = ["drafts/**"]

Environment: ``NAREZKA_STRATEGY``, ``NAREZKA_EMBEDDER``, ``NAREZKA_SIZE``, ``NAREZKA_UNIT``,
``NAREZKA_TOKENIZER``, ``NAREZKA_OVERLAP``, ``NAREZKA_LEVELS``, ``NAREZKA_MIN_CHARS``,
``NAREZKA_INCLUDE`` and ``NAREZKA_EXCLUDE`` (comma-separated globs), ``NAREZKA_CONTEXT_LLM``
(``ollama:qwen2.5:3b``, or ``off``), ``NAREZKA_RESCORE`` (``e5`` or ``off``), and so on for every
field (upper-cased). A value that does not parse is a ``ConfigError`` naming its source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import narezka.defaults as defaults
from narezka import environment
from narezka.config import (
    check_known,
    confirmed,
    corpus_root,
    read_toml,
    read_user_config,
    refuse_lowered,
)
from narezka.convert.options import ConvertOptions
from narezka.embed.servers import Servers
from narezka.enrich.llm_client import parse_spec
from narezka.environment import Environment
from narezka.errors import ConfigError
from narezka.runs.config import ChunkConfig, checked_split_values
from narezka.runs.file_chunks import make_params
from narezka.split import strategy_names
from narezka.tokens import get_counter
from narezka.tokens.bm25 import check_analyzer

if TYPE_CHECKING:
    from narezka.embed import Embedder

# The embed stage is imported by chunk_config, and only when chunks are sized in a model's
# tokens: settings in characters (``narezka chunk``, a --jobs worker) load no model.

DEFAULT_STRATEGY = defaults.STRATEGY
DEFAULT_EMBEDDER = defaults.EMBEDDER
CONTEXT_OFF = ("off", "none", "no", "false", "")

SPLIT_FIELDS = (
    "size",
    "unit",
    "tokenizer",
    "overlap",
    "levels",
    "min_chars",
    "breadcrumbs",
    "separators",
    "threshold",
    "percentile",
    "parent_size",
    "redact",
)
"""The fields that become split parameters (see :class:`narezka.split.SplitParams`)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """How to chunk, embed and index a corpus. Unset split fields (None) take the library's
    defaults: chunks sized in the embedder's own tokens, up to its budget."""

    strategy: str = DEFAULT_STRATEGY
    embedder: str = DEFAULT_EMBEDDER
    size: int | None = None
    unit: str | None = None
    tokenizer: str | None = None
    overlap: int | None = None
    levels: tuple[int, int] | None = None
    min_chars: int | None = None
    breadcrumbs: bool | None = None
    separators: tuple[str, ...] | None = None
    threshold: float | None = None
    percentile: float | None = None
    parent_size: int | None = None
    redact: bool | None = None
    """Replace secrets by ``[REDACTED:kind]`` in what is embedded and stored (None: yes)."""
    bm25: str | None = None
    """The BM25 analyzer (``snowball``, ``lemma``, ``+ident``…); None: the index's own, else
    snowball. A property of the index: another one needs a rebuild."""
    context_llm: str | None = None
    """An LLM that writes one or two sentences of context for each chunk, prepended to its
    ``embed_text`` within the size limit: ``ollama:MODEL[@HOST]`` or ``openai:MODEL@URL``;
    None (or ``off``): no context. See :mod:`narezka.enrich.llm_context`."""
    include: tuple[str, ...] | None = None
    """Globs of files to read; None: the strategy's own (Markdown and text for headings)."""
    exclude: tuple[str, ...] = field(default=())
    follow_symlinks: bool | None = None
    """Read files and folders whose symlinks lead outside the corpus (None: no, they are
    named as skipped). Links that stay inside the corpus are always followed."""
    min_relevance: float | None = None
    """Hits below this relevance are dropped by ``search``, the server and the retrievers
    (None: :data:`narezka.defaults.MIN_RELEVANCE`, chosen by measurement)."""
    rescore: str | None = None
    """The quality tier: ``"e5"`` stores every chunk's e5 vector beside the first one, and a
    search re-scores its first stage's candidates with it (slower indexing; see
    :mod:`narezka.search.rescoring`). None (or ``off``): no second vector. A property of the
    index: turning it on or off rebuilds the index (cached embeddings are reused)."""

    def __post_init__(self) -> None:
        if self.strategy not in strategy_names():
            raise ConfigError(
                f"unknown strategy {self.strategy!r}; choose one of: {', '.join(strategy_names())}"
            )
        if not self.embedder.strip():
            raise ConfigError("embedder must not be empty")
        if self.bm25 is not None:
            check_analyzer(self.bm25)
        if self.min_relevance is not None:
            defaults.check_min_relevance(self.min_relevance)
        if self.rescore is not None:
            object.__setattr__(self, "rescore", defaults.check_rescore(self.rescore))
        if self.rescore is not None and self.embedder.strip().lower() == self.rescore:
            raise ConfigError(
                f"rescore = {self.rescore!r} would re-score with the embedder itself: the "
                "quality tier goes with another embedder (the default, use)"
            )
        if self.context_llm is not None:
            # "off" lets a flag or variable switch off what narezka.toml switched on.
            spec = self.context_llm.strip()
            object.__setattr__(
                self, "context_llm", None if spec.lower() in CONTEXT_OFF else parse_spec(spec).name
            )
        # Normalize the text forms (levels "2-3", lists) and check the split values by the
        # rules SplitParams has; the size itself is resolved (and checked) by chunk_config.
        split = self.split_values()
        if split:
            checked = checked_split_values(split)
            for name in ("levels", "separators"):
                if split.get(name) is not None:
                    object.__setattr__(self, name, getattr(checked, name))
        for name in ("include", "exclude"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, (value,))
            elif value is not None:
                object.__setattr__(self, name, tuple(str(v) for v in value))

    @property
    def relevance_floor(self) -> float:
        """The ``min_relevance`` in force: the setting, else the measured default."""
        return defaults.MIN_RELEVANCE if self.min_relevance is None else self.min_relevance

    def split_values(self) -> dict[str, Any]:
        """The split parameters that are set (unset ones take the library's defaults)."""
        return {name: v for name in SPLIT_FIELDS if (v := getattr(self, name)) is not None}

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied (None values leave a field as it is)."""
        given = {k: v for k, v in changes.items() if v is not None}
        unknown = sorted(set(given) - {f.name for f in fields(self)})
        if unknown:
            raise ConfigError(f"unknown setting {', '.join(unknown)}")
        # Frozen: nothing to change is this very object (Settings.load layers four sources,
        # most of them empty, and each copy would be checked again).
        return dataclasses.replace(self, **given) if given else self

    def to_record(self) -> dict[str, Any]:
        """The settings as JSON-ready data (``index.json`` keeps them for ``sync``)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Settings:
        """Settings from :meth:`to_record` output (unknown keys are refused)."""
        return cls().replace(**dict(record))

    @classmethod
    def load(
        cls,
        corpus: str | Path | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        base: Mapping[str, Any] | None = None,
        trust: bool | None = None,
        **flags: Any,
    ) -> Settings:
        """The settings :func:`resolve` decides (see there)."""
        return resolve(corpus, environ=environ, base=base, trust=trust, **flags).settings


ORIGINS = ("user config", "narezka.toml", "environment", "flags")
"""Where a setting can come from, besides the defaults (in the order they apply)."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """Settings and where each one that is not a default came from (``ORIGINS``)."""

    settings: Settings
    origins: Mapping[str, str]

    def describe(self) -> str:
        """``narezka.toml: strategy, exclude; flags: size`` (the rest: defaults)."""
        parts = []
        for origin in ORIGINS:
            names = sorted(n for n, o in self.origins.items() if o == origin)
            if names:
                parts.append(f"{origin}: {', '.join(names)}")
        return "; ".join(parts) + ("; the rest: defaults" if parts else "defaults")


def resolve(
    corpus: str | Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    base: Mapping[str, Any] | None = None,
    trust: bool | None = None,
    **flags: Any,
) -> Resolved:
    """Defaults, then ``base`` (a command's own defaults: ``chunk`` measures in
    characters), then the user's config file ``[settings]``, then ``corpus/narezka.toml``
    ``[settings]``, then ``NAREZKA_*`` variables, then ``flags`` (None means "not given").

    A safety setting from the corpus's ``narezka.toml`` is a ``ConfigError`` naming the file,
    the setting and how to confirm it, unless ``trust`` (``--trust-corpus-config``),
    ``NAREZKA_TRUST_CORPUS=1`` or the user's config lists the corpus
    (:func:`narezka.config.refuse_lowered`)."""
    env = environment.current() if environ is None else Environment.read(environ)
    user = read_user_config(env)
    layers: list[tuple[str, Mapping[str, Any]]] = [
        ("user config", _checked(user.settings, f"{user.path} [settings]"))
    ]
    if corpus is not None:
        found = _from_toml(Path(corpus))
        if found is not None:
            path, values = found
            if not (confirmed(env, trust) or user.trusts(corpus_root(Path(corpus)))):
                refuse_lowered(path, values, user.path)
            layers.append(("narezka.toml", values))
    layers += [("environment", _from_env(env.settings)), ("flags", flags)]
    # The layers merge into one set of values and make one Settings: checked once, as a
    # whole (a value a later layer replaces is never checked on its own, nor a mix of layers
    # that no source asked for).
    values = {name: value for name, value in (base or {}).items() if value is not None}
    origins: dict[str, str] = {}
    for origin, layer in layers:
        given = {name: value for name, value in layer.items() if value is not None}
        values.update(given)
        origins.update(dict.fromkeys(given, origin))
    return Resolved(Settings().replace(**values), origins)


def chunk_config(settings: Settings, embedder: Embedder | None = None) -> ChunkConfig:
    """The chunking ``settings`` resolve to: **the** one place a size, unit and counter are
    decided, for every command and the library.

    With ``unit = "tokens"`` (the default) and no tokenizer named, or the embedder's own
    (``index.json`` records it by name), chunks are measured by the embedder's counter and
    sized, unless ``size`` says otherwise, to its budget: the calibrated one if
    ``narezka calibrate`` measured a served model, when lower. ``embedder`` is that model
    (default: ``settings.embedder``, loaded only then: in characters no model loads). Any
    other unit or tokenizer takes its own counter, and the size :data:`narezka.defaults.SIZE`.
    """
    values = settings.split_values()
    unit = values.get("unit") or defaults.UNIT
    tokenizer = values.get("tokenizer") or None
    model = _own_model(settings, embedder, tokenizer) if unit == "tokens" else None
    budget = None
    if model is not None:
        from narezka.embed.calibrate import calibrated_budget, calibration_path

        counter = model.counter
        # A served model narezka cannot tokenize exactly may have a measured budget.
        budget = min(
            model.budget,
            calibrated_budget(model.name, calibration_path(environment.current())) or model.budget,
        )
        size = budget if values.get("size") is None else values["size"]
        params = make_params(
            **{**values, "unit": "tokens", "tokenizer": counter.name, "size": size}
        )
    else:
        params = make_params(**{**values, "unit": unit})
        counter = get_counter(params.unit, params.tokenizer)
    return ChunkConfig(
        settings.strategy,
        params,
        counter,
        budget=budget,
        include=settings.include,
        exclude=settings.exclude,
        follow_symlinks=bool(settings.follow_symlinks),
        context_llm=settings.context_llm,
        embedder=settings.embedder,
        rescore=settings.rescore,
    )


def _own_model(
    settings: Settings, embedder: Embedder | None, tokenizer: str | None
) -> Embedder | None:
    """The embedder whose own tokens size the chunks, or None for a named tokenizer."""
    if tokenizer is not None and embedder is not None:
        return embedder if tokenizer == embedder.counter.name else None
    if tokenizer is not None:
        try:
            get_counter("tokens", tokenizer)
            return None
        except ConfigError:
            # Not a tokenizer of its own: perhaps the name index.json records for the
            # embedder's (``spm:use-m3@…``); if not, the tokenizer's error stands.
            model = _load(settings.embedder)
            if model.counter.name == tokenizer:
                return model
            raise
    return embedder if embedder is not None else _load(settings.embedder)


def _load(spec: str) -> Embedder:
    from narezka.embed import get_embedder

    return get_embedder(spec, servers=servers())


def qdrant_key() -> str | None:
    """``QDRANT_API_KEY``, read at the top: the index hands it to every server store it
    opens (the store stage reads no environment)."""
    return environment.current().qdrant_api_key


def convert_options() -> ConvertOptions:
    """OCR on or off and the conversion limits as the environment says now (``NAREZKA_OCR``,
    ``NAREZKA_MAX_FILE_MB``, ``NAREZKA_CONVERT_*``): read here, at the top, and handed down
    to the walk, the converters and their child processes."""
    return ConvertOptions.of(environment.current())


def servers() -> Servers:
    """The embedding and LLM servers as the environment names them now (``OLLAMA_HOST``,
    ``OPENAI_API_KEY``, ``NAREZKA_EMBED_*``): read here, at the top, and handed down."""
    return Servers.of(environment.current())


_LISTS = ("include", "exclude", "separators")
# What narezka.toml may hold outside [settings] (zones and projects: narezka.config; qdrant:
# narezka.store.cluster; [[sources]]: narezka.sources.several).
_TOP_LEVEL = {
    *("settings", "zones", "projects", "default_zone", "default_project", "qdrant"),
    "sources",
}
_INTS = ("size", "overlap", "min_chars", "parent_size")
_FLOATS = ("threshold", "percentile", "min_relevance")


def _from_toml(corpus: Path) -> tuple[Path, dict[str, Any]] | None:
    found = read_toml(corpus)
    if found is None:
        return None
    path, data = found
    # A setting written above every table used to be dropped without a word (the file's
    # embedder silently lost to the default): name it and say where it belongs.
    settable = {f.name for f in fields(Settings)}
    for key in sorted(set(data) - _TOP_LEVEL):
        where = "under [settings]" if key in settable else "nowhere: no such setting"
        raise ConfigError(f"{path}: {key} at the top level belongs {where}")
    table = data.get("settings", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [settings] must be a table of name = value")
    return path, _checked(table, f"{path} [settings]")


def _from_env(variables: Mapping[str, str]) -> dict[str, Any]:
    """The settings among the ``NAREZKA_*`` variables (``Environment.settings``: by
    lower-case name; names that are no setting belong to other tools and are left alone)."""
    names = {f.name for f in fields(Settings)}
    raw = {name: value for name, value in variables.items() if name in names}
    values: dict[str, Any] = {}
    for name, text in raw.items():
        values[name] = [p.strip() for p in text.split(",") if p.strip()] if name in _LISTS else text
    return _checked(values, "environment")


def _checked(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    check_known(values, Settings, where, "setting")
    out: dict[str, Any] = {}
    for name, value in values.items():
        try:
            if name in _INTS:
                out[name] = int(value)
            elif name in _FLOATS:
                out[name] = float(value)
            elif name in ("breadcrumbs", "redact", "follow_symlinks") and isinstance(value, str):
                out[name] = value.strip().lower() in ("1", "true", "yes", "on")
            elif name in _LISTS and isinstance(value, str):
                out[name] = (value,)
            else:
                out[name] = value
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: {name} = {value!r} is not a valid value") from None
    return out
