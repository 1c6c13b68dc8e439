"""One file's chunks: ``chunk_raw`` (a decoded document through parse, split and the
file's metadata), and ``chunk_file``, its form that runs in a worker process (it reads the
file, and can render the file's JSONL there), with the pool that runs it.

:mod:`narezka.runs.chunking` builds the runs (``chunk_text``, ``chunk_documents``) on
these.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
import warnings as warnings_module
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeGuard

from narezka.convert import locate
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.discover import read_document, replace_surrogates
from narezka.discover.vault import is_vault
from narezka.enrich.hashes import doc_hash
from narezka.errors import ConfigError, NarezkaError, NarezkaWarning, SourceError
from narezka.formats import place
from narezka.parse.markdown import parse_document, plain_document
from narezka.parse.obsidian import callout_spans, note_meta, with_callout_blocks
from narezka.parse.redaction import count_kinds, find_secrets
from narezka.parse.sanitize import body_removed_characters
from narezka.runs.workers import (
    PoolKind,
    WorkerPool,
    default_jobs,
    start_server,
)
from narezka.split import (
    NEEDS_EMBEDDER,
    Chooser,
    SplitParams,
    Strategy,
)
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document, ProvenanceSpan, RawDocument


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
    raw: RawDocument,
    strategy: Strategy,
    params: SplitParams,
    counter: TokenCounter,
    *,
    note: bool = False,
) -> FileChunks:
    """Chunks of one decoded document; ``auto`` first picks the strategy for this file.
    A ``note`` of an Obsidian vault has its callouts kept whole where they fit."""
    text, surrogates = replace_surrogates(raw.text)
    if surrogates:
        raw = dataclasses.replace(raw, text=text)
    chosen = strategy.choose(raw) if _chooses(strategy) else strategy
    # Once per document, over its whole text: every range the strategy tries reuses it.
    secrets = find_secrets(raw.text) if params.redact else ()
    if chosen.markdown:
        doc, warnings = parse_document(raw, secrets)
        if note:
            doc = with_callout_blocks(doc)
    else:
        doc, warnings = plain_document(raw, secrets), []
    with warnings_module.catch_warnings(record=True) as caught:
        warnings_module.simplefilter("always", NarezkaWarning)
        if surrogates:
            warnings_module.warn(_surrogates_note(surrogates), NarezkaWarning, stacklevel=2)
        chunks = (
            _split_parts(chosen, doc, raw.parts, params, counter)
            if raw.parts and chosen.markdown
            else chosen.split(doc, params, counter)
        )
    notes = [*warnings, *(f"{raw.source}: {w.message}" for w in caught)]
    removed = body_removed_characters(doc.text, doc.body_start)
    return FileChunks(chunks, notes, removed, chosen.name, caught, count_kinds(doc.secrets))


def _split_parts(
    strategy: Strategy,
    doc: Document,
    parts: tuple[int, ...],
    params: SplitParams,
    counter: TokenCounter,
) -> list[Chunk]:
    """Chunks of a document holding several (a mail and its attachments,
    ``RawDocument.parts``), each part split on its own so that no chunk reaches across two:
    the strategy sees the text up to the part's end with its body starting at the part, and
    the headings before it still give its chunks their path (the mail's subject)."""
    chunks: list[Chunk] = []
    parent_base = 0
    bounds = [doc.body_start, *(p for p in parts if p > doc.body_start), len(doc.text)]
    for start, end in itertools.pairwise(bounds):
        if not doc.text[start:end].strip():
            continue
        window = dataclasses.replace(
            doc,
            text=doc.text[:end],
            body_start=start,
            blocks=tuple(b for b in doc.blocks if b.end <= end),
            secrets=tuple(s for s in doc.secrets if s.end <= end),
        )
        parents = 0
        for c in strategy.split(window, params, counter):
            parent = c.meta.get("parent")
            if isinstance(parent, Mapping):
                # A parent-child index folds children by their parent's index: numbered
                # across the parts, so an attachment's first parent is not the body's.
                parents = max(parents, int(parent["index"]) + 1)
                meta = {**c.meta, "parent": {**parent, "index": parent["index"] + parent_base}}
                c = dataclasses.replace(c, meta=meta)
            chunks.append(dataclasses.replace(c, index=len(chunks)))
        parent_base += parents
    return chunks


def _surrogates_note(count: int) -> str:
    return (
        f"{count} surrogate code point{'s' if count > 1 else ''} (U+D800–U+DFFF, not text "
        "UTF-8 can hold) read as U+FFFD"
    )


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
    convert_cache: Path | None = None
    """The sqlite file that keeps converted PDF, Word, HTML… files (in the index folder)."""
    convert: ConvertOptions = DEFAULT
    """OCR on or off and the size limits, as the top read them (a worker reads none)."""


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
    lacks: str = ""
    """The mark of a capability the file's conversion lacked (``RawDocument.lacks``)."""
    embeds: tuple[str, ...] = ()
    """The note names an Obsidian note's embeds asked for (``RawDocument.embeds``)."""

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
    return [_with_meta(c, {**c.meta, **extra}) for c in chunks]


def with_note_meta(
    chunks: list[Chunk], text: str, provenance: tuple[ProvenanceSpan, ...] = ()
) -> list[Chunk]:
    """Chunks of an Obsidian note with its tags (front matter and inline ``#tags``), aliases
    and wikilink targets: the note's, on each of its chunks, so a tag filter finds them all.
    A chunk holding a callout names its kinds (``callouts``), and one holding text an embed
    brought in names the notes it came from (``embedded_from``, from ``provenance``)."""
    # The note's own tags and links, not those of the notes it embeds (as Obsidian counts them).
    own_text = text
    for p in provenance:
        if p.where.note:
            own_text = own_text[: p.start] + " " * (p.end - p.start) + own_text[p.end :]
    extra = note_meta(chunks[0].meta, own_text)
    embedded = [
        p.where.note.split("#")[0].rsplit("/", 1)[-1][:-3] for p in provenance if p.where.note
    ]
    if embedded:
        extra["links"] = list(dict.fromkeys([*extra.get("links", []), *embedded]))
    spans = callout_spans(text)
    out = []
    for c in chunks:
        own: dict[str, Any] = {}
        kinds = [kind for start, _, kind in spans if c.start <= start < c.end]
        if kinds:
            own["callouts"] = list(dict.fromkeys(kinds))
        notes = [p.where.note for p in provenance if p.start < c.end and c.start < p.end]
        if notes:
            own["embedded_from"] = list(dict.fromkeys(n for n in notes if n))
        out.append(_with_meta(c, {**c.meta, **extra, **own}))
    return out


def is_note(root: Path, file: Path) -> bool:
    """Whether ``file`` is a note of an Obsidian vault (``root`` holds ``.obsidian/``)."""
    return file.suffix == ".md" and is_vault(root)


def with_document_meta(
    chunks: list[Chunk], raw: RawDocument, digest: str, *, note: bool, resplit: bool = False
) -> list[Chunk]:
    """Chunks with what their document adds: :func:`with_file_meta`, the place of a converted
    file's chunk (:func:`with_provenance`) and a note's tags and embeds (:func:`with_note_meta`)."""
    chunks = with_file_meta(chunks, raw.mtime, digest, resplit=resplit)
    chunks = with_provenance(chunks, raw.provenance, raw.comments)
    return with_note_meta(chunks, raw.text, raw.provenance) if chunks and note else chunks


def _note_name(origin: str) -> str:
    """``Folder/Note.md#Heading`` → ``Note``: how a link names the note."""
    return origin.split("#", 1)[0].rsplit("/", 1)[-1].removesuffix(".md")


def with_provenance(
    chunks: list[Chunk],
    provenance: tuple[ProvenanceSpan, ...],
    comments: tuple[Mapping[str, Any], ...] = (),
) -> list[Chunk]:
    """Chunks of a converted file with where they lie in the original: the place keys of
    :func:`narezka.formats.place` (pages, slide, sheet and cells, the first HTML id or Word
    block), and in ``meta["comments"]`` the ``comments`` anchored in their span
    (``RawDocument.comments``: author, text, and what it is ``on``)."""
    if not provenance and not comments:
        return chunks
    out = []
    for c in chunks:
        found = locate(provenance, c.start, c.end) if provenance else None
        extra: dict[str, Any] = place(*found) if found is not None else {}
        # A comment anchored across two chunks belongs to both: each holds some of its text.
        own = [
            {k: v for k, v in note.items() if k != "at"}
            for note in comments
            if note["at"][0] < max(c.end, c.start + 1) and note["at"][1] > c.start
        ]
        if own:
            extra["comments"] = own
        out.append(_with_meta(c, {**c.meta, **extra}) if extra else c)
    return out


def _with_meta(c: Chunk, meta: dict[str, Any]) -> Chunk:
    """``dataclasses.replace(c, meta=meta)``, a third of its cost: it looks the fields up
    and checks them for every one of a run's chunks (0.2 s over md_corpus)."""
    return Chunk(
        c.source,
        c.index,
        c.start,
        c.end,
        c.text,
        c.embed_text,
        c.section,
        c.anchor,
        c.url,
        c.chars,
        c.tokens,
        c.tokenizer,
        c.strategy,
        c.content_hash,
        meta,
        c.secrets,
    )


def render_jsonl(chunks: Iterable[Chunk]) -> bytes:
    """Chunks as JSON Lines, UTF-8: the ``--format jsonl`` output (:meth:`Chunk.to_json`)."""
    encode = _JSONL.encode
    return "".join(encode(c.to_json()) + "\n" for c in chunks).encode()


_JSONL = json.JSONEncoder(ensure_ascii=False)
"""``json.dumps(..., ensure_ascii=False)``'s encoder, made once: dumps builds one per call."""


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
        raw, warnings = read_document(
            task.root,
            task.file,
            convert_cache=task.convert_cache,
            redact=task.params.redact,
            options=task.convert,
        )
    except SourceError as exc:
        return FileOutcome(source, error=exc, read_failed=True)
    except OSError as exc:
        return FileOutcome(
            source, error=SourceError(source, f"cannot read: {exc}"), read_failed=True
        )
    digest = doc_hash(raw.text)
    base = FileOutcome(raw.source, warnings, len(raw.text), raw.mtime, digest, lacks=raw.lacks,
                       embeds=raw.embeds)  # fmt: skip
    if not raw.text.strip():
        return dataclasses.replace(base, seconds=time.perf_counter() - started)
    note = is_note(task.root, task.file)
    try:
        result = chunk_raw(raw, strategy, task.params, counter, note=note)
    except SourceError as exc:
        return dataclasses.replace(base, error=exc)
    except NarezkaError as exc:
        return dataclasses.replace(base, error=SourceError(raw.source, str(exc)))
    except Exception as exc:  # a strategy's bug must not stop the other files
        failed = f"chunking failed: {type(exc).__name__}: {exc}"
        return dataclasses.replace(base, error=SourceError(raw.source, failed))
    chunks = with_document_meta(result.chunks, raw, digest, note=note)
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
    """Workers that run :func:`chunk_file` (see :class:`~narezka.runs.workers.WorkerPool`).

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
        prepare=(load_counter, (counter,)),
    )


def load_counter(counter: TokenCounter) -> None:
    """Load what ``counter`` counts with (a tokenizer's model, if it loads on first use):
    run by the fork server, so the workers forked from it share one copy."""
    counter.count("")


def start_workers_early(strategy: str, jobs: int | None, counter: TokenCounter) -> None:
    """Start what chunk workers are forked from before the pool exists (a no-op where the
    run will stay in one process), ``counter`` loaded in it: see
    :func:`~narezka.runs.workers.start_server`."""
    if strategy not in NEEDS_EMBEDDER and (default_jobs() if jobs is None else jobs) > 1:
        start_server(chunk_file, (load_counter, (counter,)))


def _died(task: ChunkTask, why: str) -> FileOutcome:
    source = task.file.relative_to(task.root).as_posix()
    return FileOutcome(
        source, error=SourceError(source, f"a chunking worker died on this file ({why})")
    )
