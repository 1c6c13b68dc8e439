"""The wiring between stages: the only module that crosses them (besides the CLI)."""

from __future__ import annotations

import dataclasses
import json
import time
import warnings as warnings_module
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeGuard

from narezka.discover import iter_files, normalize_newlines, read_document
from narezka.embed import cached_signal_embedder
from narezka.embed.cache import default_cache_path
from narezka.enrich.hashes import doc_hash
from narezka.enrich.llm_context import ContextWriter, open_context
from narezka.enrich.redaction import count_kinds, find_secrets
from narezka.errors import ConfigError, NarezkaError, NarezkaWarning, SourceError
from narezka.parse.markdown import parse_document, plain_document
from narezka.parse.sanitize import removed_characters
from narezka.pipeline import layout
from narezka.pipeline.workers import (
    PARALLEL_MIN_BYTES,
    PoolKind,
    WorkerPool,
    default_jobs,
    start_server,
)
from narezka.split import (
    NEEDS_EMBEDDER,
    Chooser,
    EmbedFunction,
    SplitParams,
    Strategy,
    get_strategy,
)
from narezka.tokens import TokenCounter, get_counter
from narezka.types import MARKDOWN_GLOBS, Chunk, RawDocument

DEFAULT_INCLUDE = MARKDOWN_GLOBS

ProgressCallback = Callable[[str], None]
"""Called with each file's source name once it is done (for progress bars)."""


@dataclass(slots=True)
class ChunkReport:
    """What a chunking run produced and everything it had to say about its inputs."""

    chunks: list[Chunk] = field(default_factory=list)
    written: list[tuple[int, int]] = field(default_factory=list)
    """``(chars, tokens)`` of each chunk handed to ``write`` instead of kept in ``chunks``."""
    files: int = 0
    empty_files: list[str] = field(default_factory=list)
    skipped: list[SourceError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    removed_chars: int = 0
    """Control and invisible characters that sanitization dropped from ``embed_text``."""
    secrets: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per file with any: how many secrets of each kind were redacted."""
    input_chars: int = 0
    strategies: dict[str, str] = field(default_factory=dict)
    """Which strategy each file got."""
    embedding: dict[str, int] = field(default_factory=dict)
    """What a strategy that embeds while splitting (``semantic``) spent: calls, texts, chars."""
    context: dict[str, Any] = field(default_factory=dict)
    """With ``context``: what the LLM context step did (``ContextStats.as_dict``)."""


def make_params(**params: Any) -> SplitParams:
    """SplitParams from keyword arguments, accepting lists where tuples are stored and the
    text forms an eval spec or a settings file writes (``levels=2-3``, ``breadcrumbs=false``)."""
    levels = params.get("levels")
    if isinstance(levels, str | int):
        lo, _, hi = str(levels).partition("-")
        try:
            params["levels"] = (int(lo), int(hi or lo))
        except ValueError:
            raise ConfigError(f"levels must look like 2-3, not {levels!r}") from None
    breadcrumbs = params.get("breadcrumbs")
    if isinstance(breadcrumbs, str | int) and not isinstance(breadcrumbs, bool):
        flag = str(breadcrumbs).lower()
        if flag not in ("true", "false", "1", "0", "on", "off", "yes", "no"):
            raise ConfigError(f"breadcrumbs must be true or false, not {breadcrumbs!r}")
        params["breadcrumbs"] = flag in ("true", "1", "on", "yes")
    separators = params.get("separators")
    if isinstance(separators, str):
        params["separators"] = (separators,)
    for key in ("levels", "separators"):
        if key in params and params[key] is not None:
            params[key] = tuple(params[key])
    return SplitParams(**{k: v for k, v in params.items() if v is not None})


@dataclass(frozen=True, slots=True)
class FileChunks:
    """One file's chunks, its warnings, what sanitization drops, and the strategy it got."""

    chunks: list[Chunk]
    warnings: list[str]
    removed: int
    strategy: str
    caught: list[warnings_module.WarningMessage] = field(default_factory=list)
    """The strategy's own warnings (also in ``warnings`` as text)."""
    secrets: dict[str, int] = field(default_factory=dict)
    """Secrets found in the file and redacted, by kind (empty with ``redact=False``)."""


def chunk_raw(
    raw: RawDocument, strategy: Strategy, params: SplitParams, counter: TokenCounter
) -> FileChunks:
    """Chunks of one decoded document; ``auto`` first picks the strategy for this file."""
    chosen = strategy.choose(raw) if _chooses(strategy) else strategy
    if chosen.markdown:
        doc, warnings = parse_document(raw)
    else:
        doc, warnings = plain_document(raw), []
    if params.redact:
        # Once per document, over its whole text: every range the strategy tries reuses it.
        doc = dataclasses.replace(doc, secrets=find_secrets(doc.text))
    with warnings_module.catch_warnings(record=True) as caught:
        warnings_module.simplefilter("always", NarezkaWarning)
        chunks = chosen.split(doc, params, counter)
    notes = [*warnings, *(f"{raw.source}: {w.message}" for w in caught)]
    removed = removed_characters(doc.text[doc.body_start :])
    return FileChunks(chunks, notes, removed, chosen.name, caught, count_kinds(doc.secrets))


def _chooses(strategy: Strategy | Chooser) -> TypeGuard[Chooser]:
    return _chooser_type(type(strategy))


@lru_cache(maxsize=64)
def _chooser_type(kind: type) -> bool:
    # A runtime Protocol check walks the protocol's attributes on every call, once per file.
    return issubclass(kind, Chooser)


@dataclass(frozen=True, slots=True)
class ChunkTask:
    """One file to read and chunk."""

    root: Path
    file: Path
    params: SplitParams
    size: int = 0
    """The file's size in bytes, if known (to batch small files together)."""
    jsonl: bool = False
    """Render the chunks as JSONL here: a caller that only writes them then receives one
    string of bytes per file, not thousands of chunk objects to unpickle and render itself
    (that work would run in its one process, beside workers that wait for it)."""


@dataclass(frozen=True, slots=True)
class FileOutcome:
    """What reading and chunking one file gave: its chunks (file metadata attached), or the
    problem that skipped it, and what it cost in the worker."""

    source: str
    read_warnings: list[str] = field(default_factory=list)
    chars: int = 0
    """Characters of the decoded text (0 when it could not be read)."""
    mtime: float = 0.0
    digest: str = ""
    result: FileChunks | None = None
    """None for an empty (whitespace) file or a file with an ``error``."""
    error: SourceError | None = None
    """Why the file was skipped, naming it."""
    read_failed: bool = False
    """The error came from reading (the file does not count as read)."""
    seconds: float = 0.0
    lines: bytes = b""
    """With :attr:`ChunkTask.jsonl`: the chunks as JSONL; ``result.chunks`` is then empty."""
    sizes: tuple[tuple[int, int], ...] = ()
    """With :attr:`ChunkTask.jsonl`: ``(chars, tokens)`` of each chunk in ``lines``."""

    @property
    def problem(self) -> str | None:
        """The error's text without the file name (None if there was none)."""
        return None if self.error is None else self.error.problem


def with_file_meta(
    chunks: list[Chunk], mtime: float, digest: str, *, resplit: bool = False
) -> list[Chunk]:
    """Chunks with their file's mtime and document hash (search compares the hash to tell
    whether the file still says what the index holds); ``resplit`` marks a finer re-cut."""
    extra: dict[str, Any] = {"mtime": mtime, "doc_hash": digest}
    if resplit:
        extra["resplit"] = True
    return [dataclasses.replace(c, meta={**c.meta, **extra}) for c in chunks]


def render_jsonl(chunks: Iterable[Chunk]) -> bytes:
    """Chunks as JSON Lines, UTF-8: the ``--format jsonl`` output (:meth:`Chunk.to_json`)."""
    return "".join(json.dumps(c.to_json(), ensure_ascii=False) + "\n" for c in chunks).encode()


def chunk_sizes(chunks: Iterable[Chunk]) -> tuple[tuple[int, int], ...]:
    """``(chars, tokens)`` of each chunk: what the run's statistics need of it."""
    return tuple((c.chars, c.tokens) for c in chunks)


def chunk_file(task: ChunkTask, strategy: Strategy, counter: TokenCounter) -> FileOutcome:
    """Read and chunk one file: what a worker does per file (``--jobs``), and the one place
    a file becomes its chunks (:func:`chunk_raw`, then the file's metadata).

    Every failure becomes an outcome naming the file, a bug in a strategy included: one file
    never stops a run over many."""
    started = time.perf_counter()
    source = task.file.relative_to(task.root).as_posix()
    try:
        raw, warnings = read_document(task.root, task.file)
    except SourceError as exc:
        return FileOutcome(source, error=exc, read_failed=True)
    except OSError as exc:
        return FileOutcome(
            source, error=SourceError(source, f"cannot read: {exc}"), read_failed=True
        )
    digest = doc_hash(raw.text)
    base = FileOutcome(raw.source, warnings, len(raw.text), raw.mtime, digest)
    if not raw.text.strip():
        return dataclasses.replace(base, seconds=time.perf_counter() - started)
    try:
        result = chunk_raw(raw, strategy, task.params, counter)
    except SourceError as exc:
        return dataclasses.replace(base, error=exc)
    except NarezkaError as exc:
        return dataclasses.replace(base, error=SourceError(raw.source, str(exc)))
    except Exception as exc:  # a strategy's bug must not stop the other files
        failed = f"chunking failed: {type(exc).__name__}: {exc}"
        return dataclasses.replace(base, error=SourceError(raw.source, failed))
    chunks = with_file_meta(result.chunks, raw.mtime, digest)
    # The caught warning objects stay behind: their text is in ``warnings``, and warning
    # classes with their own constructors do not survive pickling.
    if not task.jsonl:
        shipped = dataclasses.replace(result, chunks=chunks, caught=[])
        return dataclasses.replace(base, result=shipped, seconds=time.perf_counter() - started)
    return dataclasses.replace(
        base,
        result=dataclasses.replace(result, chunks=[], caught=[]),
        lines=render_jsonl(chunks),
        sizes=chunk_sizes(chunks),
        seconds=time.perf_counter() - started,
    )


def chunk_pool(
    strategy: Strategy,
    counter: TokenCounter,
    jobs: int | None = None,
    *,
    work_bytes: int | None = None,
    kind: PoolKind = "process",
    background: bool = False,
) -> WorkerPool[ChunkTask, FileOutcome]:
    """Workers that run :func:`chunk_file` (see :class:`~narezka.pipeline.workers.WorkerPool`).

    ``semantic`` embeds while it splits: it stays in this process, beside the model and its
    cache, rather than load a model in every worker."""
    if strategy.name in NEEDS_EMBEDDER:
        jobs = 1
    return WorkerPool(
        chunk_file,
        (strategy, counter),
        jobs,
        died=_died,
        size_of=lambda task: task.size,
        work_bytes=work_bytes,
        kind=kind,
        background=background,
    )


def start_workers_early(strategy: str, jobs: int | None) -> None:
    """Start what chunk workers are forked from before the pool exists (a no-op where the
    run will stay in one process): see :func:`~narezka.pipeline.workers.start_server`."""
    if strategy not in NEEDS_EMBEDDER and (default_jobs() if jobs is None else jobs) > 1:
        start_server(chunk_file)


def _died(task: ChunkTask, why: str) -> FileOutcome:
    source = task.file.relative_to(task.root).as_posix()
    return FileOutcome(
        source, error=SourceError(source, f"a chunking worker died on this file ({why})")
    )


def include_for(strategy: Strategy, include: Sequence[str] | None) -> tuple[str, ...]:
    """The globs to read: the user's, else the strategy's own (code reads ``*.py``…)."""
    return tuple(include) if include else tuple(strategy.include)


def chunk_text(
    text: str,
    strategy: str = "headings",
    *,
    source: str = "<text>",
    embed: EmbedFunction | None = None,
    **params: Any,
) -> list[Chunk]:
    """Chunk one text. ``params`` are :class:`~narezka.split.SplitParams` fields; ``source``
    is the file name it came from (``auto`` and ``code`` choose by its extension); ``embed``
    serves ``semantic`` (default: the default embedder).

    Example::

        chunks = chunk_text(open("kb/delivery.md").read(), "headings", size=800)
    """
    split_params = make_params(**params)
    counter = get_counter(split_params.unit, split_params.tokenizer)
    raw = RawDocument(source=source, text=normalize_newlines(text))
    chosen = get_strategy(strategy, embed=embed or lazy_signal_embedder())
    result = chunk_raw(raw, chosen, split_params, counter)
    # A single text has no report to carry warnings: hand them to the caller as warnings.
    for caught in result.caught:
        warnings_module.warn(caught.message, caught.category, stacklevel=2)
    return result.chunks


def lazy_signal_embedder() -> EmbedFunction:
    """The default embedder's embed function (behind the user's embedding cache), loaded on
    its first call: building a strategy, or a semantic split with no gap to judge, never pays
    for the model. The split stage never opens an embedder itself; the pipeline wires it."""
    loaded: list[EmbedFunction] = []

    def embed(texts: list[str]) -> Any:
        if not loaded:
            loaded.append(cached_signal_embedder())
        return loaded[0](texts)

    return embed


def chunk_documents(
    paths: Sequence[str | Path],
    strategy: str = "headings",
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    on_file: ProgressCallback | None = None,
    counter: TokenCounter | None = None,
    embed: EmbedFunction | None = None,
    jobs: int | None = None,
    context: str | ContextWriter | None = None,
    write: Callable[[bytes], object] | None = None,
    **params: Any,
) -> ChunkReport:
    """Chunk every matching file under ``paths``; a bad file is reported, never fatal.

    ``include`` defaults to the strategy's own globs (Markdown and text for most). ``counter``
    measures sizes in a model's own tokens (an embedder's); its ``name`` is then the tokenizer
    recorded in the chunks and the strategy fingerprint. ``embed`` serves ``semantic``.
    ``jobs`` worker processes chunk files side by side (default: the machine's cores, for a
    megabyte of input or more); the report is the same for any ``jobs``, in file order.
    ``context`` (a ``context_llm`` spec, or a writer) prepends LLM-written context to each
    chunk's ``embed_text`` within the size limit (:mod:`narezka.enrich.llm_context`); it runs
    in this process, after the workers.

    ``write`` streams the chunks out as JSONL (:func:`render_jsonl`), file by file in file
    order, instead of keeping them: ``report.chunks`` stays empty and ``report.written``
    holds their sizes, so memory stays flat however big the corpus (workers render them).
    """
    if counter is not None:
        params = {**params, "unit": "tokens", "tokenizer": counter.name}
    split_params = make_params(**params)
    if counter is None:
        counter = get_counter(split_params.unit, split_params.tokenizer)
    chosen = get_strategy(strategy, embed=embed or lazy_signal_embedder())
    report = ChunkReport()
    writer = _context_writer(context, split_params)
    jsonl = write is not None and writer is None  # with context, lines follow the LLM step

    def listed() -> list[ChunkTask]:
        tasks, seen = [], 0
        for root, file in _files(paths, include_for(chosen, include), exclude, report):
            tasks.append(ChunkTask(root, file, split_params, _size(file), jsonl))
            seen += tasks[-1].size
            if jobs is None and seen - tasks[-1].size < PARALLEL_MIN_BYTES <= seen:
                start_workers_early(chosen.name, jobs)  # enough for workers: the rest overlaps
        return tasks

    # The default jobs depends on how much there is to read; an explicit one lets the
    # workers start up while the files are being listed.
    tasks = None if jobs is not None else listed()
    work = None if tasks is None else sum(t.size for t in tasks)
    with chunk_pool(chosen, counter, jobs, work_bytes=work) as pool:
        if tasks is None:
            tasks = listed()
        for task, outcome in zip(tasks, pool.map(tasks), strict=True):
            if outcome.read_failed and outcome.error is not None:
                report.skipped.append(outcome.error)
                continue
            report.files += 1
            report.warnings.extend(outcome.read_warnings)
            report.input_chars += outcome.chars
            if outcome.error is not None:
                report.skipped.append(outcome.error)
                continue
            result = outcome.result
            if result is None:
                report.empty_files.append(outcome.source)
                continue
            chunks = result.chunks
            if writer is not None and chunks:  # LLM-written context: after splitting
                try:
                    text = read_document(task.root, task.file)[0].text  # the worker kept its copy
                except SourceError as exc:  # gone or changed since the worker read it
                    report.skipped.append(exc)
                    continue
                done = writer.apply(
                    outcome.source, text, chunks, counter=counter, limit=split_params.size
                )
                chunks = done.chunks
                report.warnings.extend(done.problems)
            report.warnings.extend(result.warnings)
            report.removed_chars += result.removed
            if result.secrets:
                report.secrets[outcome.source] = result.secrets
            report.strategies[outcome.source] = result.strategy
            if write is None:
                report.chunks.extend(chunks)
                count = len(chunks)
            else:
                lines, sizes = (
                    (outcome.lines, outcome.sizes)
                    if task.jsonl
                    else (render_jsonl(chunks), chunk_sizes(chunks))
                )
                write(lines)
                report.written.extend(sizes)
                count = len(sizes)
            if not count:
                report.empty_files.append(outcome.source)
            if on_file is not None:
                on_file(outcome.source)
    if writer is not None:
        report.context = writer.stats.as_dict()
        if writer is not context:
            writer.close()
    spent = getattr(chosen, "stats", None)
    if isinstance(spent, Mapping):
        report.embedding = {str(k): int(v) for k, v in spent.items()}
    return report


def _context_writer(
    context: str | ContextWriter | None, params: SplitParams
) -> ContextWriter | None:
    if context is None or isinstance(context, ContextWriter):
        return context
    # No index: the cache sits beside the user's embedding cache.
    cache = layout.context_cache_file(default_cache_path())
    return open_context(context, cache, redact=params.redact)


def chunk_path(path: str | Path, strategy: str = "headings", **kwargs: Any) -> list[Chunk]:
    """Chunks of a file or of every matching file under a folder (skipped files are dropped;
    use :func:`chunk_documents` to see why)."""
    return chunk_documents([path], strategy, **kwargs).chunks


def count_files(
    paths: Sequence[str | Path],
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    strategy: str = "headings",
) -> int:
    """How many files a run over ``paths`` would read (for a progress bar's total)."""
    try:
        globs = include_for(get_strategy(strategy), include)
        return sum(1 for _ in iter_files(paths, globs, exclude))
    except SourceError:
        return 0


def _files(
    paths: Sequence[str | Path],
    include: Sequence[str],
    exclude: Sequence[str],
    report: ChunkReport,
) -> Iterable[tuple[Path, Path]]:
    # A missing path is one bad input among several, like an unreadable file.
    for path in paths:
        try:
            yield from iter_files([path], include, exclude)
        except SourceError as exc:
            report.skipped.append(exc)


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0
