"""Keeping an index current: ``sync`` (cron, systemd), ``watch`` (file events), ``push``.

``sync`` re-runs ``index`` with the settings the index was built with, read from its
``index.json``; ``watch`` does the same whenever files change, debounced; ``push`` copies an
embedded index into a Qdrant server (same ids, vectors and payloads).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from narezka import environment
from narezka.defaults import WATCH_DEBOUNCE_MS
from narezka.embed import Embedder, get_embedder
from narezka.embed.calibrate import (
    Calibration,
    ServerCounted,
    calibrate,
    calibration_path,
    save_calibration,
)
from narezka.errors import ConfigError, MissingDependencyError
from narezka.index import Index, resolve_home
from narezka.index.records import corpus_of, read_record
from narezka.index.syncing import STORE_DIRNAME, IndexReport, Progress
from narezka.runs.chunking import chunk_documents
from narezka.settings import convert_options, servers
from narezka.store import VectorStore


def sync(
    location: str | Path,
    corpus: str | Path | None = None,
    *,
    embedder: Embedder | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    context_llm: str | None = None,
    follow_symlinks: bool | None = None,
    prune: bool = False,
) -> IndexReport:
    """Re-index the corpus of an existing index with the settings it was built with
    (``context_llm``, when given, replaces the recorded LLM context model; ``"off"`` stops it;
    ``follow_symlinks``, when given, replaces the recorded choice). ``prune`` removes indexed
    files the include/exclude patterns no longer match (see :meth:`narezka.Index.sync`).

    ``corpus`` says where the corpus is now, when it moved away from its index folder (the
    new place is recorded); ``embedder`` is needed for an index built with an embedder
    object. ``jobs``: worker processes that chunk (default: the machine's cores)."""
    home = resolve_home(location)
    if corpus is not None and not Path(corpus).is_dir():
        raise ConfigError(f"{corpus}: not a folder (the corpus of {home})")
    if not read_record(home).embedder_spec and embedder is None:
        raise ConfigError(f"{home} was built with an embedder object: pass it to sync")
    # The flags are recorded with the rest by this sync: later syncs, watch and serve keep to
    # them (a new context model re-processes every file: the fingerprint changes).
    with Index.open(
        home,
        embedder=embedder,
        corpus=corpus,
        follow_symlinks=follow_symlinks,
        context_llm=context_llm,
    ) as index:
        return index.sync(progress=progress, jobs=jobs, prune=prune)


def watch(
    location: str | Path,
    *,
    debounce_ms: int = WATCH_DEBOUNCE_MS,
    on_sync: Callable[[IndexReport], None] | None = None,
    stop_event: threading.Event | None = None,
    follow_symlinks: bool | None = None,
) -> Iterator[IndexReport]:
    """Sync once, then again after every burst of file changes in the corpus
    (``follow_symlinks``, when given, replaces the recorded choice, as in :func:`sync`)."""
    home = resolve_home(location)
    corpus = corpus_of(home, read_record(home))
    report = sync(home, follow_symlinks=follow_symlinks)  # recorded for the syncs below
    if on_sync:
        on_sync(report)
    yield report

    for _changes in corpus_changes(home, corpus, debounce_ms=debounce_ms, stop_event=stop_event):
        report = sync(home)
        if on_sync:
            on_sync(report)
        yield report


def corpus_changes(
    home: Path,
    corpus: Path,
    *,
    debounce_ms: int = WATCH_DEBOUNCE_MS,
    stop_event: threading.Event | None = None,
) -> Iterator[object]:
    """Each settled burst of file events in ``corpus``, leaving out the index's own writes
    (``home`` may lie inside the corpus); ends when ``stop_event`` is set. ``watch`` and the
    server's watcher both listen through this."""
    try:
        from watchfiles import watch as file_events
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingDependencyError("watchfiles", "watch") from exc
    own = home.resolve()

    def outside_index(_: object, path: str) -> bool:
        # The index may live inside the corpus: its own writes must not trigger a sync.
        changed = Path(path)
        return STORE_DIRNAME not in changed.parts and own not in changed.parents

    yield from file_events(
        corpus,
        watch_filter=outside_index,
        debounce=debounce_ms,
        stop_event=stop_event,
        yield_on_timeout=False,
    )


def push(location: str | Path, target: VectorStore) -> int:
    """Copy every point of an index into ``target``; returns how many
    (:meth:`narezka.Index.push` copies to a server by URL and makes the copy readable there)."""
    with Index.open(location) as index:
        return index.push_to(target)


def calibrate_corpus(
    corpus: str | Path, embedder: str, *, sample: int = 40, safety: float = 0.9
) -> tuple[Calibration, Path]:
    """Measure a served model's real token counts on the corpus's largest chunks and store a
    safe budget that later ``index`` runs use; returns the result and where it was stored."""
    model = get_embedder(embedder, servers=servers())
    if not hasattr(model, "server_token_count"):
        raise ConfigError(f"{embedder} is counted exactly by narezka: nothing to calibrate")
    # The model's whole nominal window, not chunk_config's calibrated one: a calibration
    # measures that window afresh, whatever an older one found.
    report = chunk_documents(
        [corpus], counter=model.counter, size=model.budget, convert=convert_options()
    )
    texts = sorted((c.embed_text for c in report.chunks), key=len, reverse=True)[:sample]
    result = calibrate(cast(ServerCounted, model), texts, safety=safety)
    return result, save_calibration(result, calibration_path(environment.current()))
