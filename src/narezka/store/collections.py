"""Server collection names: what a server index is called, and which collections narezka may
write into or drop (only those it created).

A server index named ``NAME`` keeps its points in one collection per generation,
``NAME_gN``, and readers query the alias ``NAME``: a rebuild fills ``NAME_g(N+1)`` beside
the live one, then moves the alias in one atomic ``update_aliases`` call, and only then
drops the old collection. An index from before aliases (its points in the collection
``NAME`` itself) is read through its record until its next rebuild frees the name.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING

from narezka.errors import ConfigError, NarezkaError

if TYPE_CHECKING:  # qdrant-client is imported only for an index on a server
    from narezka.store import server_record
    from narezka.store.manifest import Manifest

DEFAULT_COLLECTION = "narezka"
COLLECTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,200}")


def collection_for(name: str, generation: str) -> str:
    """The collection of the generation ``data-N``: ``NAME_gN``."""
    return f"{name}_g{generation.rsplit('-', 1)[-1]}"


def point_alias(url: str, name: str, collection: str, api_key: str | None = None) -> bool:
    """Point the alias ``name`` at ``collection`` (one atomic switch; nothing if it points
    there already). False when a collection of that name holds it (an index from before
    aliases): readers then follow the record. An alias narezka did not make is refused."""
    from narezka.store.server import ServerStore

    with ServerStore(url, collection=collection, api_key=api_key) as store:
        target = store.alias_target(name)
        if target == collection:
            return True
        if target is None and store.exists_named(name):
            return False
        if target is not None and not target.startswith(f"{name}_g"):
            raise ConfigError(
                f"{url} has an alias {name!r} on {target!r}, which this index did not create: "
                "narezka will not move it; choose another name (--collection)"
            )
        store.point_alias(name)
        return True


def snapshot_files(manifest: Manifest) -> server_record.Files:
    """The manifest's file list as published beside a server index's record."""
    from narezka.store import server_record

    return server_record.snapshot(manifest)


def collection_name(given: str | None, recorded: str | None) -> str:
    """A server index's name: the one an existing index records (``recorded``; None when
    there is no index yet), since an index keeps its name; else the given one."""
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


def drop_quietly(url: str, collection: str, api_key: str | None = None) -> None:
    """Drop ``collection`` on ``url`` if the server lets it now (a retired generation's: one
    left behind is dropped at the next retire)."""
    from narezka.store.server import ServerStore

    with (
        contextlib.suppress(NarezkaError),
        ServerStore(url, collection=collection, api_key=api_key) as old,
    ):
        old.drop()


def refuse_foreign(url: str, collection: str, api_key: str | None = None) -> None:
    """A new generation's collection must not exist yet: narezka writes into (and later
    drops) only collections it created."""
    from narezka.store.server import ServerStore

    with ServerStore(url, collection=collection, api_key=api_key) as store:
        if store.exists():
            raise ConfigError(
                f"{url} already has a collection {collection!r} that this index did not "
                "create: narezka will not write into it or drop it; choose another name "
                "(--collection) or remove it yourself"
            )
