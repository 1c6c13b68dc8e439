"""Server collection names: what a server index is called, and which collections narezka may
write into or drop (only those it created)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from narezka.errors import ConfigError

if TYPE_CHECKING:  # qdrant-client is imported only for an index on a server
    from narezka.store import server_record
    from narezka.store.manifest import Manifest

DEFAULT_COLLECTION = "narezka"
COLLECTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,200}")


def collection_for(name: str, generation: str, *, first: bool) -> str:
    """The collection of one generation: the name itself for the first, ``name-data-N`` for
    each rebuild (the old one is dropped once the new one is live)."""
    return name if first else f"{name}-{generation}"


def snapshot_files(manifest: Manifest) -> server_record.Files:
    """The manifest's file list as published beside a server index's record."""
    from narezka.store import server_record

    return server_record.snapshot(manifest)


def collection_name(given: str | None, meta: dict[str, Any] | None) -> str:
    """A server index's name: the recorded one (an index keeps its name), else the given."""
    recorded = str(meta.get("collection_name") or DEFAULT_COLLECTION) if meta else None
    if recorded is not None and given is not None and given != recorded:
        raise ConfigError(
            f"this index's server collections are named {recorded!r}, not {given!r}: "
            "a new name is a new index (another --store)"
        )
    return check_collection_name(recorded or given or DEFAULT_COLLECTION)


def check_collection_name(name: str) -> str:
    """``name`` if Qdrant and narezka's generation suffixes accept it, else a ConfigError."""
    if not COLLECTION_NAME.fullmatch(name):
        raise ConfigError(
            f"collection name {name!r}: use letters, digits, '_' and '-' (at most 200)"
        )
    return name


def refuse_foreign(url: str, collection: str) -> None:
    """A new generation's collection must not exist yet: narezka writes into (and later
    drops) only collections it created."""
    from narezka.store.server import ServerStore

    with ServerStore(url, collection=collection) as store:
        if store.exists():
            raise ConfigError(
                f"{url} already has a collection {collection!r} that this index did not "
                "create: narezka will not write into it or drop it; choose another name "
                "(--collection) or remove it yourself"
            )
