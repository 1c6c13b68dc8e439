"""The index record (``index.json``) a sync writes, and the generations it retires.

The record says where the corpus is (relative to the index folder, so the two can move
together), which generation is live, and every setting a later sync must repeat. A rebuild
fills a new generation and retires the old one; what a run could not remove yet (a
generation a reader still holds, a half-built one after a crash) is listed in the record and
removed by a later run. See :mod:`narezka.index.layout` for the folder itself.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from narezka.embed import Embedder
from narezka.errors import ConfigError, NarezkaError
from narezka.globs import literal_glob
from narezka.index import layout
from narezka.index.layout import INDEX_META, INDEX_VERSION, LEGACY_DATA
from narezka.split import SplitParams
from narezka.store.collections import collection_for


def existing_meta(home: Path, *, tolerate_bad: bool) -> dict[str, Any] | None:
    """The record of the index at ``home``, None if there is none (or, with
    ``tolerate_bad``, if it cannot be read: a rebuild then starts over beside it)."""
    if not (home / INDEX_META).is_file():
        return None
    try:
        return layout.read_meta(home)
    except ConfigError:
        if not tolerate_bad:
            raise
        # An unreadable record of another version: a rebuild starts over next to it and
        # leaves its files (it cannot tell which generation they belong to).
        return None


def home_inside(home: Path, root: Path) -> tuple[str, ...]:
    """An exclude glob for the index folder when it sits inside the corpus."""
    try:
        rel = home.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return ()
    return (literal_glob(rel),) if rel != "." else ()


def retire(home: Path, generation: str, collection: str | None, url: str | None) -> bool:
    """Remove a generation narezka made (and its server collection); False if still in use."""
    if url and collection:
        from narezka.store.server import ServerStore

        with contextlib.suppress(NarezkaError), ServerStore(url, collection=collection) as old:
            old.drop()
    return layout.remove_generation(home, generation)


def retire_leftovers(home: Path, old: Mapping[str, Any] | None) -> list[str]:
    """Finish what an earlier run left: generations retired while in use, a half rebuild,
    and any other generation folder beside the live one (a rebuild over an unreadable record
    could not tell which was live). Run under the writer lock, so none of them is being
    built."""
    if old is None:
        return []
    live = str(old.get("data") or LEGACY_DATA)
    named = [*old.get("retired", ()), *([old["building"]] if old.get("building") else [])]
    strays = [g for g in layout.generations(home) if g != live and g not in named]
    url, name = old.get("url"), old.get("collection_name")
    # A server index's leftover generation may still hold its collection (a rebuild that
    # could not drop it when it failed): NAME_gN is narezka's own, made by that generation.
    still = [
        g
        for g in [*named, *strays]
        if g != live and not retire(home, g, collection_for(name, g) if url and name else None, url)
    ]
    if named or still:
        rest = {k: v for k, v in old.items() if k not in ("retired", "building")}
        layout.write_meta(home, {**rest, **({"retired": still} if still else {})})
    return [f"{home / g}: still in use, removed on a later run" for g in still]


def removes_text(old: Mapping[str, Any], fingerprint: str) -> bool:
    """Whether chunking with ``fingerprint`` takes out text that the index recorded by ``old``
    holds in plain: redaction turned on, or a rule set that finds more. Such an index is
    rebuilt in a fresh generation rather than synced point by point, because the engine keeps
    replaced payloads in its log and pages until its generation goes."""
    return _redaction_rules(fingerprint) > _redaction_rules(str(old.get("fingerprint") or ""))


def _redaction_rules(fingerprint: str) -> int:
    """The redaction rule set a fingerprint names (0: none; see ``SplitParams.fingerprint``)."""
    try:
        fields = json.loads(fingerprint.partition(":")[2])
    except ValueError:
        return 0
    rules = fields.get("redact") if isinstance(fields, dict) else None
    return rules if isinstance(rules, int) and not isinstance(rules, bool) else 0


def corpus_of(home: Path, meta: Mapping[str, Any]) -> Path:
    """Where the corpus of an index is now: recorded relative to the index folder (so the two
    move together), else at its absolute path; a clear error if it is in neither place."""
    relative, absolute = meta.get("corpus_rel"), meta.get("corpus")
    if relative is not None and (candidate := Path(home, str(relative))).exists():
        return candidate.resolve()
    if absolute and Path(str(absolute)).exists():
        return Path(str(absolute))
    raise ConfigError(
        f"the corpus of the index {home} is gone from {absolute}"
        + (f" (and from {home / relative})" if relative is not None else "")
        + f": if it moved, run `narezka sync {home} --corpus NEW_PATH`"
    )


def index_meta(
    home: Path,
    root: Path,
    model: Embedder,
    spec: str | Embedder,
    strategy: str,
    params: SplitParams,
    url: str | None,
    include: Sequence[str] | None,
    exclude: Sequence[str],
    *,
    data: str,
    collection: str | None,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of an index built from these settings, ready to write."""
    optional = {
        name: value
        for name in ("threshold", "percentile", "parent_size")
        if (value := getattr(params, name)) is not None
    }
    named = spec if isinstance(spec, str) else None
    return {
        "version": INDEX_VERSION,
        "corpus": str(root.resolve()),
        "corpus_rel": os.path.relpath(root.resolve(), home.resolve()),
        "data": data,
        **({"collection": collection} if collection else {}),
        "embedder": model.name,
        "embedder_spec": named,
        "dim": model.dim,
        "strategy": strategy,
        "fingerprint": params.fingerprint(strategy),
        "params": {
            "size": params.size,
            "unit": params.unit,
            "tokenizer": None if named and params.unit == "tokens" else params.tokenizer,
            "overlap": params.overlap,
            "levels": list(params.levels),
            "min_chars": params.min_chars,
            **optional,
            # Off only when asked: sync must not start redacting behind the user's back.
            **({} if params.redact else {"redact": False}),
        },
        # sync and watch must read the same files the first run read.
        "include": list(include) if include else None,
        "exclude": [e for e in exclude if e not in home_inside(home, root)],
        "url": url,
        **({"settings": dict(settings)} if settings is not None else {}),
    }
