"""Chunk runs over texts and folders: ``chunk_text``, ``chunk_documents`` and their helpers."""

from __future__ import annotations

import warnings as warnings_module
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.defaults import STRATEGY as DEFAULT_STRATEGY
from narezka.discover import iter_files, normalize_newlines, read_document
from narezka.discover.naming import error_in_corpus, note_in_corpus
from narezka.errors import SourceError
from narezka.formats import MARKDOWN_GLOBS
from narezka.runs.config import ChunkConfig

# Re-exported: callers import the one-file stage from here with the runs built on it.
from narezka.runs.file_chunks import (
    ChunkTask,
    FileChunks,
    FileOutcome,
    chunk_file,
    chunk_pool,
    chunk_raw,
    chunk_sizes,
    make_params,
    render_jsonl,
    start_workers_early,
    with_file_meta,
)
from narezka.runs.workers import PARALLEL_MIN_BYTES
from narezka.split import (
    EmbedFunction,
    SplitParams,
    Strategy,
    get_strategy,
)
from narezka.tokens import TokenCounter
from narezka.types import Chunk, RawDocument

if TYPE_CHECKING:
    from narezka.embed.servers import Servers
    from narezka.enrich.llm_context import ContextWriter

# The embedders, the LLM context step and the index layout are imported where a run uses
# them: a ``--jobs`` worker imports this module and needs none of them.

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
    not_read: list[str] = field(default_factory=list)
    """Files of a document type narezka does not read (``.pdf``…) beside the inputs."""
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


def include_for(strategy: Strategy, include: Sequence[str] | None) -> tuple[str, ...]:
    """The globs to read: the user's, else the strategy's own (code reads ``*.py``…)."""
    return tuple(include) if include else tuple(strategy.include)


def chunk_text(
    text: str,
    strategy: str | None = None,
    *,
    source: str = "<text>",
    embed: EmbedFunction | None = None,
    config: ChunkConfig | None = None,
    **params: Any,
) -> list[Chunk]:
    """Chunk one text. ``params`` are :class:`~narezka.split.SplitParams` fields (sugar for
    a ``config``: :class:`~narezka.runs.config.ChunkConfig`, e.g. from
    :func:`narezka.settings.chunk_config`); ``source`` is the file name it came from
    (``auto`` and ``code`` choose by its extension); ``embed`` serves ``semantic`` (default:
    the default embedder).

    Example::

        chunks = chunk_text(open("kb/delivery.md").read(), "headings", size=800)
    """
    config = _config(config, strategy, params)
    raw = RawDocument(source=source, text=normalize_newlines(text))
    chosen = get_strategy(config.strategy, embed=embed or lazy_signal_embedder())
    result = chunk_raw(raw, chosen, config.params, config.counter)
    # A single text has no report to carry warnings: hand them to the caller as warnings.
    for caught in result.caught:
        warnings_module.warn(caught.message, caught.category, stacklevel=2)
    return result.chunks


def _config(
    config: ChunkConfig | None,
    strategy: str | None,
    params: Mapping[str, Any],
    counter: TokenCounter | None = None,
    **files: Any,
) -> ChunkConfig:
    """The config a run follows: the one given, else one built from the keyword sugar."""
    if config is None:
        return ChunkConfig.build(strategy or DEFAULT_STRATEGY, counter, **files, **params)
    given = [k for k, v in files.items() if v not in (None, (), False)]
    if params or counter is not None or given or strategy not in (None, config.strategy):
        named = sorted([*params, *given, *(["counter"] if counter is not None else [])])
        raise TypeError(f"give a config or the chunking arguments, not both ({', '.join(named)})")
    return config


def cached_signal_embedder(cache: Path | None = None) -> EmbedFunction:
    """:func:`narezka.embed.cached_signal_embedder` of the default embedder (behind
    ``cache``), the embed stage imported only now (the one place this module opens an
    embedder)."""
    from narezka.embed import cached_signal_embedder as default_signal_embedder

    return default_signal_embedder(cache=cache)


def lazy_signal_embedder(cache: Path | None = None) -> EmbedFunction:
    """The default embedder's embed function (behind the user's embedding cache), loaded on
    its first call: building a strategy, or a semantic split with no gap to judge, never pays
    for the model. The split stage never opens an embedder itself; the pipeline wires it."""
    loaded: list[EmbedFunction] = []

    def embed(texts: list[str]) -> Any:
        if not loaded:
            loaded.append(cached_signal_embedder(cache))
        return loaded[0](texts)

    return embed


def chunk_documents(
    paths: Sequence[str | Path],
    strategy: str | None = None,
    *,
    config: ChunkConfig | None = None,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    on_file: ProgressCallback | None = None,
    counter: TokenCounter | None = None,
    embed: EmbedFunction | None = None,
    jobs: int | None = None,
    context: str | ContextWriter | None = None,
    write: Callable[[bytes], object] | None = None,
    follow_symlinks: bool = False,
    convert_cache: Path | None = None,
    servers: Servers | None = None,
    cache: Path | None = None,
    convert: ConvertOptions = DEFAULT,
    **params: Any,
) -> ChunkReport:
    """Chunk every matching file under ``paths``; a bad file is reported, never fatal.

    ``config`` (:class:`~narezka.runs.config.ChunkConfig`, e.g. from
    :func:`narezka.settings.chunk_config`) says how: the strategy, split parameters, counter,
    globs and LLM context; ``strategy``, ``include``, ``exclude``, ``counter``,
    ``follow_symlinks``, ``context`` (a spec) and ``params`` are sugar that builds one, given
    instead of it.

    ``include`` defaults to the strategy's own globs (Markdown and text for most). ``counter``
    measures sizes in a model's own tokens (an embedder's); its ``name`` is then the tokenizer
    recorded in the chunks and the strategy fingerprint. ``embed`` serves ``semantic``.
    ``jobs`` worker processes chunk files side by side (default: the machine's cores, for a
    megabyte of input or more); the report is the same for any ``jobs``, in file order.
    ``context`` (a ``context_llm`` spec, or a writer) prepends LLM-written context to each
    chunk's ``embed_text`` within the size limit (:mod:`narezka.enrich.llm_context`); it runs
    in this process, after the workers, its LLM reached as ``servers`` say (``OLLAMA_HOST``,
    ``OPENAI_API_KEY``: the caller reads them, as the CLI does; none: the defaults).
    ``cache`` is the user's embedding cache file, which the default embedder (``semantic``'s)
    and the LLM contexts' cache beside it use: the CLI hands ``NAREZKA_CACHE_DIR``'s down;
    none: the user cache dir. ``jobs`` has no default from ``NAREZKA_JOBS`` either: the CLI
    hands it down.

    ``write`` streams the chunks out as JSONL (:func:`render_jsonl`), file by file in file
    order, instead of keeping them: ``report.chunks`` stays empty and ``report.written``
    holds their sizes, so memory stays flat however big the corpus (workers render them).
    Symlinks that lead outside a folder given are skipped, named, unless ``follow_symlinks``.
    ``convert_cache`` (an index's ``converted.sqlite``) gives PDF, Word, HTML… files their
    cached conversions: unchanged bytes are not converted again. ``convert`` says whether
    scans are read by OCR and how much one file may cost (``NAREZKA_OCR``,
    ``NAREZKA_MAX_FILE_MB``, ``NAREZKA_CONVERT_*``: the CLI reads them with
    :func:`narezka.settings.convert_options`; none: the defaults).
    """
    spec = context if isinstance(context, str) else None
    config = _config(
        config, strategy, params, counter,
        include=include, exclude=tuple(exclude), follow_symlinks=follow_symlinks, context_llm=spec,
    )  # fmt: skip
    split_params, counter = config.params, config.counter
    include, exclude, follow_symlinks = config.include, config.exclude, config.follow_symlinks
    if context is None or isinstance(context, str):
        context = config.context_llm
    chosen = get_strategy(config.strategy, embed=embed or lazy_signal_embedder(cache))
    report = ChunkReport()
    writer = _context_writer(context, split_params, servers, cache)
    jsonl = write is not None and writer is None  # with context, lines follow the LLM step

    def listed() -> list[ChunkTask]:
        tasks, seen = [], 0
        globs = include_for(chosen, include)
        for root, file in _files(paths, globs, exclude, report, follow_symlinks):
            tasks.append(
                ChunkTask(root, file, split_params, _size(file), jsonl, convert_cache, convert)
            )
            seen += tasks[-1].size
            if jobs is None and seen - tasks[-1].size < PARALLEL_MIN_BYTES <= seen:
                # Enough for workers: the rest of the listing overlaps their start.
                start_workers_early(chosen.name, jobs, counter)
        return tasks

    # The default jobs depends on how much there is to read; an explicit one lets the
    # workers start up while the files are being listed.
    tasks = None if jobs is not None else listed()
    work = None if tasks is None else sum(t.size for t in tasks)
    with chunk_pool(chosen, counter, jobs, work_bytes=work) as pool:
        if tasks is None:
            tasks = listed()
        for task, outcome in zip(tasks, pool.map(tasks), strict=True):
            taken = _taken(task, outcome, report, writer, counter, split_params.size)
            if taken is None:
                continue
            result, chunks = taken
            report.warnings.extend(result.warnings)
            report.removed_chars += result.removed
            if result.secrets:
                report.secrets[outcome.source] = result.secrets
            report.strategies[outcome.source] = result.strategy
            if not _kept(report, task, outcome, chunks, write):
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


def _taken(
    task: ChunkTask,
    outcome: FileOutcome,
    report: ChunkReport,
    writer: ContextWriter | None,
    counter: TokenCounter,
    limit: int,
) -> tuple[FileChunks, list[Chunk]] | None:
    """One file's chunking and its chunks (with LLM context, when a writer adds it); None
    for a file skipped or empty, which the report records."""
    # Named by its path in the folder given, as its chunks are (discover.naming).
    file, source = task.file, outcome.source
    if outcome.read_failed and outcome.error is not None:
        report.skipped.append(error_in_corpus(outcome.error, file, source))
        return None
    report.files += 1
    report.warnings.extend(note_in_corpus(w, file, source) for w in outcome.read_warnings)
    report.input_chars += outcome.chars
    if outcome.error is not None:
        report.skipped.append(error_in_corpus(outcome.error, file, source))
        return None
    result = outcome.result
    if result is None:
        report.empty_files.append(outcome.source)
        return None
    chunks = result.chunks
    if writer is not None and chunks:  # LLM-written context: after splitting
        try:
            # The worker kept its copy.
            text = read_document(
                task.root,
                task.file,
                convert_cache=task.convert_cache,
                redact=task.params.redact,
                options=task.convert,
            )[0].text
        except SourceError as exc:  # gone or changed since the worker read it
            report.skipped.append(error_in_corpus(exc, file, source))
            return None
        done = writer.apply(outcome.source, text, chunks, counter=counter, limit=limit)
        chunks = done.chunks
        report.warnings.extend(done.problems)
    return result, chunks


def _kept(
    report: ChunkReport,
    task: ChunkTask,
    outcome: FileOutcome,
    chunks: list[Chunk],
    write: Callable[[bytes], object] | None,
) -> int:
    """Keep one file's chunks in the report, or stream them out as JSONL (the worker's
    lines when it rendered them); returns how many."""
    if write is None:
        report.chunks.extend(chunks)
        return len(chunks)
    lines, sizes = (
        (outcome.lines, outcome.sizes)
        if task.jsonl
        else (render_jsonl(chunks), chunk_sizes(chunks))
    )
    write(lines)
    report.written.extend(sizes)
    return len(sizes)


def _context_writer(
    context: str | ContextWriter | None,
    params: SplitParams,
    servers: Servers | None,
    embeddings: Path | None,
) -> ContextWriter | None:
    if context is None:
        return None
    from narezka.embed.cache import default_cache_path
    from narezka.enrich.context_cache import context_cache_file
    from narezka.enrich.llm_context import ContextWriter, open_context
    from narezka.environment import Environment

    if isinstance(context, ContextWriter):
        return context
    # No index: the cache sits beside the user's embedding cache.
    cache = context_cache_file(embeddings or default_cache_path(Environment()))
    return open_context(context, cache, redact=params.redact, servers=servers)


def chunk_path(path: str | Path, strategy: str | None = None, **kwargs: Any) -> list[Chunk]:
    """Chunks of a file or of every matching file under a folder (skipped files are dropped;
    use :func:`chunk_documents` to see why)."""
    return chunk_documents([path], strategy, **kwargs).chunks


def count_files(
    paths: Sequence[str | Path],
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    strategy: str = DEFAULT_STRATEGY,
) -> int:
    """How many files a run over ``paths`` would read (for a progress bar's total)."""
    try:
        globs = include_for(get_strategy(strategy), include)
        return sum(1 for _ in iter_files(paths, globs, exclude, errors=[]))
    except SourceError:  # a bad strategy or glob: the run itself reports it
        return 0


def _files(
    paths: Sequence[str | Path],
    include: Sequence[str],
    exclude: Sequence[str],
    report: ChunkReport,
    follow_symlinks: bool = False,
) -> Iterable[tuple[Path, Path]]:
    # A missing path, a folder that cannot be listed or a name that is not UTF-8 is one bad
    # input among several, like an unreadable file: the rest of the walk goes on.
    problems: list[SourceError] = []
    found = iter_files(
        paths,
        include,
        exclude,
        errors=problems,
        follow_symlinks=follow_symlinks,
        unread=report.not_read,
    )
    for root, file in found:
        report.skipped.extend(problems)
        problems.clear()
        yield root, file
    report.skipped.extend(problems)


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


__all__ = [
    "DEFAULT_INCLUDE",
    "ChunkConfig",
    "ChunkReport",
    "ChunkTask",
    "FileChunks",
    "FileOutcome",
    "ProgressCallback",
    "chunk_documents",
    "chunk_file",
    "chunk_path",
    "chunk_pool",
    "chunk_raw",
    "chunk_sizes",
    "chunk_text",
    "count_files",
    "include_for",
    "lazy_signal_embedder",
    "make_params",
    "render_jsonl",
    "start_workers_early",
    "with_file_meta",
]
