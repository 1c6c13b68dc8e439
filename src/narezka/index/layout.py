"""Where an index keeps its files, and the rules that keep narezka out of everyone else's.

An index home (``CORPUS/.narezka/`` by default, or ``--store DIR``) holds::

    index.json           the record: settings, where the corpus is, which generation is live
    embeddings.sqlite    the embedding cache, shared by every generation (keyed by model+text)
    contexts.sqlite      LLM-written chunk contexts, beside it (only with context_llm set)
    *.sqlite.damaged-T   a damaged cache moved aside at time T (see ``narezka.sqlite_cache``)
    writer.lock          held by the one process writing to this home
    data-N/              one generation: the engine's shard, narezka_store.json, manifest.sqlite

``index.json`` is replaced atomically, so a reader sees either the old or the new live
generation. A rebuild fills a fresh ``data-N`` while searches keep answering from the live one,
then swaps the record and retires the old generation; a failed or interrupted rebuild leaves the
live one untouched. Format 1 (narezka before generations) kept the shard in the home itself; it
is read as it is and moved to ``data-N`` by its next rebuild.

narezka deletes only names it created: the entries below, one by one, and a generation folder
only once it is empty. A home that holds anything else is not narezka's and is refused before
anything is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from narezka.convert.failures import FAILED_NAME
from narezka.enrich.context_cache import CONTEXT_CACHE_NAME
from narezka.errors import ConfigError
from narezka.store.errors import IndexInUseError
from narezka.store.lock import DirectoryLock

STORE_DIRNAME = ".narezka"
INDEX_META = "index.json"
INDEX_VERSION = 2
READABLE_VERSIONS = (1, 2)
CACHE_NAME = "embeddings.sqlite"
CONVERT_CACHE_NAME = "converted.sqlite"
"""PDF, Word, HTML… files converted to Markdown, by bytes and converter version."""
WRITER_LOCK = "writer.lock"
DATA_PREFIX = "data-"
LEGACY_DATA = "."
"""The generation of a format-1 index: the home itself."""

_SQLITE_SUFFIXES = ("", "-journal", "-wal", "-shm")
GENERATION_FILES = frozenset(
    {
        "narezka_store.json",
        "edge_config.json",
        "narezka.lock",
        "narezka.reserve",  # room kept during a sync to close the engine on a full disk
        *(f"manifest.sqlite{s}" for s in _SQLITE_SUFFIXES),
    }
)
GENERATION_DIRS = frozenset({"segments", "wal", "temp_segments", "snapshots"})
"""What the engine (qdrant-edge) and the manifest write inside one generation."""
HOME_FILES = frozenset(
    {
        INDEX_META,
        INDEX_META + ".tmp",
        WRITER_LOCK,
        *(
            f"{name}{s}"
            for name in (CACHE_NAME, CONTEXT_CACHE_NAME, CONVERT_CACHE_NAME, FAILED_NAME)
            for s in _SQLITE_SUFFIXES
        ),
    }
)


def default_home(corpus: Path) -> Path:
    """Where the index of a corpus lives unless told otherwise: inside it, ``.narezka/``."""
    return (corpus if corpus.is_dir() else corpus.parent) / STORE_DIRNAME


def cache_file(location: Path) -> Path:
    """The embedding cache of the index in ``location`` (an index folder, or a corpus folder
    holding ``.narezka/``); it may not exist yet."""
    own = (location / INDEX_META).is_file() or (location / CACHE_NAME).exists()
    return (location if own else default_home(location)) / CACHE_NAME


def _is_generation(name: str) -> bool:
    return name.startswith(DATA_PREFIX) and name[len(DATA_PREFIX) :].isdigit()


def _own_entry(name: str) -> bool:
    return (
        name in HOME_FILES
        or name.startswith(tuple(f"{cache}.damaged-" for cache in (CACHE_NAME, CONTEXT_CACHE_NAME)))
        or name in GENERATION_FILES
        or name in GENERATION_DIRS
        or (_is_generation(name))
    )


def foreign_entries(home: Path) -> list[str]:
    """Names in ``home`` that narezka did not write (sorted); empty for a new folder."""
    if not home.is_dir():
        return []
    return sorted(entry.name for entry in home.iterdir() if not _own_entry(entry.name))


def check_home(home: Path, corpus: Path) -> None:
    """Refuse, before anything is written, a home that would put the user's files at risk:
    the corpus itself, a folder containing the corpus, or one holding files narezka did not
    write."""
    where, root = home.resolve(), corpus.resolve()
    if where == root or where in root.parents:
        raise ConfigError(
            f"--store {home} is the corpus {corpus} or contains it: an index needs a folder of "
            f"its own (the default is {default_home(corpus)})"
        )
    if home.exists() and not home.is_dir():
        raise ConfigError(f"--store {home} is a file, not a folder")
    foreign = foreign_entries(home)
    if foreign and not (home / INDEX_META).is_file():
        shown = ", ".join(foreign[:5]) + (" …" if len(foreign) > 5 else "")
        raise ConfigError(
            f"--store {home} already holds files narezka did not write ({shown}): "
            "give an empty or new folder"
        )


def read_meta(home: Path) -> dict[str, Any]:
    """The index's record; ``ConfigError`` naming the folder if there is none."""
    path = home / INDEX_META
    if not path.is_file():
        raise ConfigError(f"no narezka index in {home}: run `narezka index CORPUS` first")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} cannot be read ({exc}): re-create it with --rebuild") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} cannot be read (not a JSON object): re-create it with --rebuild")
    version = data.get("version")
    if version not in READABLE_VERSIONS:
        raise ConfigError(
            f"{home} was written by another narezka version (index format {version}, this one "
            f"reads {', '.join(map(str, READABLE_VERSIONS))}): re-create it with --rebuild"
        )
    return data


def write_meta(home: Path, meta: Mapping[str, Any]) -> None:
    """Replace ``index.json`` atomically (readers see the old record or the new one)."""
    home.mkdir(parents=True, exist_ok=True)
    tmp = home / (INDEX_META + ".tmp")
    tmp.write_text(json.dumps(dict(meta), ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, home / INDEX_META)


def data_dir(home: Path, meta: Mapping[str, Any]) -> Path:
    """The live generation's folder (the home itself for a format-1 index)."""
    return live_dir(home, str(meta.get("data") or LEGACY_DATA))


def live_dir(home: Path, name: str) -> Path:
    """The folder of the generation ``name`` that a record names live; a ConfigError for a
    name narezka does not make (the record would point outside its own folders)."""
    if name != LEGACY_DATA and not _is_generation(name):
        raise ConfigError(f"{home / INDEX_META} names an unknown data folder {name!r}")
    return home if name == LEGACY_DATA else home / name


def new_generation(home: Path) -> str:
    """Create the next empty ``data-N`` folder and return its name."""
    home.mkdir(parents=True, exist_ok=True)
    taken = [int(e.name[len(DATA_PREFIX) :]) for e in home.iterdir() if _is_generation(e.name)]
    name = f"{DATA_PREFIX}{max(taken, default=0) + 1}"
    (home / name).mkdir()
    return name


def generations(home: Path) -> list[str]:
    """The generation folders (``data-N``) in ``home``, by number."""
    if not home.is_dir():
        return []
    found = [e.name for e in home.iterdir() if _is_generation(e.name) and e.is_dir()]
    return sorted(found, key=lambda name: int(name[len(DATA_PREFIX) :]))


def generation_folder(home: Path, name: str) -> Path:
    """Where the generation ``name`` lives (a legacy index kept it in the home itself)."""
    return home if name == LEGACY_DATA else home / name


def generation_entries(folder: Path) -> Iterator[Path]:
    """What narezka wrote in a generation folder, by name: the engine's folders (never
    through a symlink) and the store and manifest files; nothing else is touched."""
    for entry in folder.iterdir():
        if entry.name in GENERATION_DIRS:
            if entry.is_dir() and not entry.is_symlink():
                yield entry
        elif entry.name in GENERATION_FILES:
            yield entry


def remove_generation(home: Path, name: str) -> bool:
    """Delete one generation's files by name; the folder goes only once it is empty.

    Returns False when the generation is in use by another process (its lock is held) and
    was left for a later run."""
    folder = generation_folder(home, name)
    if not folder.is_dir():
        return True
    try:
        lock = DirectoryLock(folder)
    except IndexInUseError:  # a search still has it open: a later run retires it
        return False
    try:
        for entry in generation_entries(folder):
            if entry.name in GENERATION_DIRS:
                shutil.rmtree(entry)
            elif entry.name != "narezka.lock":
                entry.unlink()
    finally:
        lock.release()
    if folder != home:
        with contextlib.suppress(OSError):  # something not ours is inside: leave the folder
            folder.rmdir()
    return True


@contextlib.contextmanager
def writer(home: Path) -> Iterator[None]:
    """Hold the home's writer lock: one ``index``/``sync``/rebuild at a time per index."""
    home.mkdir(parents=True, exist_ok=True)
    lock = DirectoryLock(home, name=WRITER_LOCK)
    try:
        yield
    finally:
        lock.release()
