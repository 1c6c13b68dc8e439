"""The core both front ends (MCP and HTTP) call: one open :class:`~narezka.Index`, replies
bounded by a token budget and paged by cursors, source files served only from inside the
corpus, and a background writer that keeps the index fresh.

Each request works for at most ``request_seconds`` (30 s; ``serve --http`` answers 503 at the
same limit): a thread cannot be interrupted, so the request's own loops (the sources listed,
the wait for a core, the cutting of a long text) check the time and stop with
:class:`~narezka.serve.errors.RequestTimeoutError`. What has no such loop is bounded by
construction: ``k`` and the candidates a search looks at, a path glob matched in time linear
in the path (:mod:`narezka.globs`).

The writer thread is the process's only writer: it syncs once at start, then after every
burst of file events (debounced) and on :meth:`Service.request_sync`. Searches run in other
threads meanwhile; the ``Index``'s read/write lock lets each see a file before or after its
sync, never half-written.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from narezka.api.maintenance import corpus_changes
from narezka.defaults import WATCH_DEBOUNCE_MS
from narezka.discover.walk import served_refusal
from narezka.errors import ConfigError, NarezkaError
from narezka.globs import compile_glob, glob_matches
from narezka.index import Index, SyncReport
from narezka.parse.redaction import redact
from narezka.search import Hit, Query
from narezka.search.expansion import read_source
from narezka.serve.cursors import cursor_offset, make_cursor
from narezka.serve.errors import NotFoundError, ServiceError
from narezka.serve.limits import REQUEST_SECONDS, checked, limited, on_time
from narezka.settings import Settings, convert_options
from narezka.tokens import TokenCounter, get_counter

DEFAULT_REPLY_TOKENS = 8000
"""Well under the ~25k tokens at which MCP clients start failing replies."""
MIN_REPLY_TOKENS = 500
MAX_K = 50
MAX_QUERY_CHARS = 2000
MAX_CONTEXT = 10
SOURCES_PAGE = 200
TRUNCATION_MARK = "\n[… truncated to fit the reply budget]"
T = TypeVar("T")


@dataclass(slots=True)
class WriterState:
    """What the writer thread last did (``index_status`` reports it)."""

    syncs: int = 0
    last_sync_at: str | None = None
    last_report: dict[str, Any] | None = None
    last_error: str | None = None
    running: bool = False
    watching: bool = False
    done: int = 0
    """Sync requests served so far (a waiter compares it with the number it was given)."""
    wanted: int = 0
    cond: threading.Condition = field(default_factory=threading.Condition)


class Service:
    """One open index served to many callers; see the module docstring."""

    def __init__(
        self,
        location: str | Path,
        *,
        max_reply_tokens: int = DEFAULT_REPLY_TOKENS,
        watch: bool = True,
        debounce_ms: int = WATCH_DEBOUNCE_MS,
        search_threads: int | None = None,
        follow_symlinks: bool | None = None,
        request_seconds: float = REQUEST_SECONDS,
    ) -> None:
        if max_reply_tokens < MIN_REPLY_TOKENS:
            raise ConfigError(f"the reply budget must be at least {MIN_REPLY_TOKENS} tokens")
        self.index = _open_or_create(Path(location), follow_symlinks)
        self.corpus = self.index.corpus
        self.budget = max_reply_tokens
        self.request_seconds = request_seconds
        self.debounce_ms = debounce_ms
        self._counter: TokenCounter = get_counter("tokens", "cl100k_base")
        self._writer = WriterState()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._watch = watch
        # Searches at once: more than the cores only queue inside the embedder's BLAS, whose
        # threads then fight over the cores (8 clients on 2 cores: p95 ~4 s against ~0.2 s).
        self._searching = threading.BoundedSemaphore(search_threads or os.cpu_count() or 1)

    # ---- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Start the writer (first sync at once) and, unless disabled, the file watcher."""
        writer = threading.Thread(target=self._write_loop, name="narezka-writer", daemon=True)
        self._threads.append(writer)
        writer.start()
        self.request_sync(wait=False)
        if self._watch:
            watcher = threading.Thread(target=self._watch_loop, name="narezka-watch", daemon=True)
            self._threads.append(watcher)
            watcher.start()

    def close(self) -> None:
        self._stop.set()
        with self._writer.cond:
            self._writer.cond.notify_all()
        for thread in self._threads:
            thread.join(timeout=30)
        self.index.close()

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the writer ---------------------------------------------------------------------

    def request_sync(self, *, wait: bool = True, timeout: float = 120.0) -> dict[str, Any]:
        """Ask the writer for a sync; with ``wait``, return its report once it has run."""
        state = self._writer
        with state.cond:
            state.wanted += 1
            ticket = state.wanted
            state.cond.notify_all()
            if not wait:
                return {"queued": True}
            # Not the caller's mistake (not a ServiceError): the front ends answer 5xx.
            if not state.cond.wait_for(lambda: state.done >= ticket, timeout=timeout):
                raise NarezkaError(f"the sync did not finish within {timeout:.0f} s")
            if state.last_error:
                raise NarezkaError(f"the sync failed: {state.last_error}")
            return dict(state.last_report or {})

    def _write_loop(self) -> None:
        state = self._writer
        while True:
            with state.cond:
                state.cond.wait_for(lambda: self._stop.is_set() or state.wanted > state.done)
                if self._stop.is_set():
                    return
                ticket = state.wanted
                state.running = True
            report: SyncReport | None = None
            error: str | None = None
            try:
                report = self.index.sync()
            except Exception as exc:  # a failed sync must not end the server; status says why
                error = f"{type(exc).__name__}: {exc}"
            with state.cond:
                state.running = False
                state.done = ticket
                state.last_error = error
                if report is not None:
                    state.syncs += 1
                    state.last_sync_at = datetime.now(UTC).isoformat(timespec="seconds")
                    state.last_report = _report_json(report)
                state.cond.notify_all()

    def _watch_loop(self) -> None:
        home = self.index.home
        assert home is not None  # serve opens an index folder (it syncs), never a URL
        self._writer.watching = True
        try:
            for _changes in corpus_changes(
                home, self.corpus, debounce_ms=self.debounce_ms, stop_event=self._stop
            ):
                self.request_sync(wait=False)
        finally:
            self._writer.watching = False

    def wait_idle(self, timeout: float = 120.0) -> bool:
        """Whether every requested sync has run within ``timeout`` seconds (tests, start-up)."""
        state = self._writer
        with state.cond:
            return state.cond.wait_for(
                lambda: state.done >= state.wanted and not state.running, timeout=timeout
            )

    # ---- reading ------------------------------------------------------------------------

    @limited
    def search(self, query: str, *, cursor: str | None = None, **options: Any) -> dict[str, Any]:
        """The best hits for ``query`` under its flat ``options``
        (:data:`narezka.search.OPTIONS`, in their text forms too: a URL's ``k=5``),
        those reaching ``min_relevance`` (default: the index's setting), as many as fit the
        reply budget; ``next_cursor`` (same arguments plus the cursor) returns the rest.
        ``best_relevance`` is the best of all ``k``, kept or not: no hits with it means the
        index holds nothing relevant."""
        if len(query) > MAX_QUERY_CHARS:
            raise ServiceError(f"the query is longer than {MAX_QUERY_CHARS} characters")
        asked = self._request_check(lambda: Query.parse(query, options))
        if not 1 <= asked.k <= MAX_K:
            raise ServiceError(f"k must be between 1 and {MAX_K}, got {asked.k}")
        args = [query, *asked.options().values()]
        offset = cursor_offset(cursor, args)
        if asked.expand == "parent" and self.index.settings.strategy != "parent-child":
            raise ServiceError(
                "expand=parent needs an index built with --strategy parent-child; this one "
                f"was built with {self.index.settings.strategy!r} (use expand=section)"
            )
        # Searches queue here for the cores: one that waited past its limit gives up.
        while not self._searching.acquire(timeout=min(on_time(), threading.TIMEOUT_MAX)):
            pass
        try:
            hits = self.index.search(asked)
        finally:
            self._searching.release()
        items = [_hit_json(h) for h in hits]
        page, after = self._fit(items, offset, {"query": query, "next_cursor": "x" * 40})
        more = make_cursor(after, args) if after < len(items) else None
        best = hits.best_relevance
        return {
            "query": query,
            "hits": page,
            "next_cursor": more,
            "total": len(items),
            "best_relevance": None if best is None else round(best, 4),
            "min_relevance": hits.min_relevance,
        }

    @limited
    def get_context(self, chunk_id: str, *, before: int = 1, after: int = 1) -> dict[str, Any]:
        """The chunk with ``chunk_id`` and up to ``before``/``after`` chunks around it in its
        file, in order (small-to-big)."""
        for name, value in (("before", before), ("after", after)):
            if not 0 <= value <= MAX_CONTEXT:
                raise ServiceError(f"{name} must be between 0 and {MAX_CONTEXT}, got {value}")
        own = self.index.get(chunk_id)
        if own is None:
            raise NotFoundError(f"no chunk with id {chunk_id!r} (ids come from search results)")
        near = self.index.neighbours(chunk_id, max(before, after))
        lo, hi = own.chunk_index - before, own.chunk_index + after
        items = [_hit_json(h, score=False) for h in near if lo <= h.chunk_index <= hi]
        page, _ = self._fit(items, 0, {"chunk_id": chunk_id, "truncated": True})
        return {"chunk_id": chunk_id, "chunks": page, "truncated": len(page) < len(items)}

    @limited
    def chunk(self, chunk_id: str) -> dict[str, Any]:
        """One stored chunk by id."""
        found = self.index.get(chunk_id)
        if found is None:
            raise NotFoundError(f"no chunk with id {chunk_id!r}")
        item = _hit_json(found, score=False)
        page, _ = self._fit([item], 0, {})
        return page[0]

    @limited
    def list_sources(
        self, path_glob: str | None = None, cursor: str | None = None
    ) -> dict[str, Any]:
        """Indexed files (path, size, chunks), a page at a time."""
        if path_glob:  # a malformed glob is the caller's error, before the listing
            self._request_check(lambda: compile_glob(path_glob))
        rows = [
            {
                "path": s.path,
                "size": s.size,
                "chunks": s.chunks,
                "uri": f"narezka://source/{s.path}",
            }
            for s in checked(self.index.sources())
            if not path_glob or glob_matches(path_glob, s.path)
        ]
        offset = cursor_offset(cursor, [path_glob])
        page, after = self._fit(rows[offset : offset + SOURCES_PAGE], 0, {"next_cursor": "x" * 40})
        after += offset
        more = make_cursor(after, [path_glob]) if after < len(rows) else None
        return {"sources": page, "next_cursor": more, "total": len(rows)}

    def status(self) -> dict[str, Any]:
        """Files, chunks, embedder, strategy, last sync, changed files, the writer's state."""
        stats = self.index.stats().to_json()
        changed = stats.pop("changed_files")
        stats.pop("settings", None)
        state = self._writer
        with state.cond:
            writer = {
                "syncs": state.syncs,
                "last_sync_at": state.last_sync_at,
                "last_report": state.last_report,
                "last_error": state.last_error,
                "syncing": state.running or state.wanted > state.done,
                "watching": state.watching,
            }
        return {
            **stats,
            "changed_files": changed[:SOURCES_PAGE],
            "changed_count": len(changed),
            "writer": writer,
            "reply_budget_tokens": self.budget,
        }

    @limited
    def source_text(self, path: str) -> str:
        """An indexed file's text (redacted unless the index was built with --no-redact),
        cut to the reply budget. Only files the index holds, inside the corpus, are read."""
        file = self._inside(path)
        plain = self.index.settings.redact is False
        raw = read_source(
            self.corpus, file, self.index.convert_cache, redact=not plain, options=convert_options()
        )
        if raw is None:
            raise NotFoundError(f"{path}: cannot be read now (gone or unreadable)")
        text = raw.text if plain else redact(raw.text)[0]
        return self._cut(text, self.budget)

    @staticmethod
    def _request_check(check: Callable[[], T]) -> T:
        """``check()``, its ConfigError (a bad argument) made the caller's ServiceError: every
        other error from the index is the server's fault."""
        try:
            return check()
        except ConfigError as exc:
            raise ServiceError(str(exc)) from None

    def _inside(self, path: str) -> str:
        relative = Path(path)
        if not path or relative.is_absolute() or ".." in relative.parts or "\\" in path:
            raise ServiceError(f"{path!r}: not a path inside the corpus")
        wanted = relative.as_posix()
        if all(s.path != wanted for s in checked(self.index.sources())):
            raise NotFoundError(f"{path!r}: not an indexed file (see list_sources)")
        root = self.corpus if self.corpus.is_dir() else self.corpus.parent
        # Re-checked as it is opened: a link put in an indexed file's place since.
        refused = served_refusal(root, wanted, self.index.settings.exclude)
        if refused is not None:
            raise ServiceError(f"{path!r}: {refused}")
        return wanted

    # ---- the budget ---------------------------------------------------------------------

    def tokens(self, data: Any) -> int:
        """The reply's size as a client counts it: tokens of its JSON text."""
        return self._counter.count(json.dumps(data, ensure_ascii=False))

    def _fit(
        self, items: Sequence[dict[str, Any]], offset: int, envelope: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], int]:
        """Items from ``offset`` while the reply stays in budget; the first is cut to fit if
        it alone is too big. Returns the page and the offset after it."""
        room = self.budget - self.tokens(envelope) - 64
        page: list[dict[str, Any]] = []
        used = 0
        index = offset
        while index < len(items):
            item = items[index]
            size = self.tokens(item)
            if used + size > room:
                if page:
                    break
                item = self._shrink(item, room)
                size = self.tokens(item)
            page.append(item)
            used += size
            index += 1
        return page, index

    def _shrink(self, item: dict[str, Any], room: int) -> dict[str, Any]:
        text = str(item.get("text", ""))
        bare = self.tokens({**item, "text": ""})
        return {**item, "text": self._cut(text, max(room - bare, 50)), "truncated": True}

    def _cut(self, text: str, limit: int) -> str:
        if self._counter.count(json.dumps(text, ensure_ascii=False)) <= limit:
            return text
        lo, hi = 0, len(text)
        while lo < hi:  # the longest prefix (with the mark) that fits
            on_time()  # each step counts a whole file's tokens: seconds for a big one
            mid = (lo + hi + 1) // 2
            if self._counter.count(json.dumps(text[:mid] + TRUNCATION_MARK)) <= limit:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo] + TRUNCATION_MARK


def _open_or_create(location: Path, follow_symlinks: bool | None) -> Index:
    """The index at ``location``, or a new one of the corpus folder ``location`` (its
    settings from narezka.toml and NAREZKA_*; the writer's first sync builds it), with the
    user's ``follow_symlinks`` flag over either (None: as recorded, or as resolved)."""
    try:
        index = Index.open(location, follow_symlinks=follow_symlinks)
    except ConfigError:
        if not location.is_dir() or (location / "index.json").exists():
            raise
        return Index.create(location, Settings.load(location, follow_symlinks=follow_symlinks))
    try:
        # Opening the store takes the index's one-process lock: a second server of the same
        # index must stop here, not start and then fail every search.
        index.get("0")
    except BaseException:
        index.close()
        raise
    return index


def _hit_json(hit: Hit, *, score: bool = True) -> dict[str, Any]:
    data = hit.to_json()
    data.pop("snippet", None)  # the text is there in full: the snippet would only cost budget
    data["breadcrumb"] = hit.breadcrumb
    if not score:  # a chunk read by id answers no query: nothing to score
        for key in ("score", "relevance", "signals"):
            data.pop(key, None)
    return data


def _report_json(report: SyncReport) -> dict[str, Any]:
    data = report.as_dict()
    data["skipped"] = data["skipped"][:50]
    data["warnings"] = data["warnings"][:50]
    data.pop("secrets", None)
    return data
