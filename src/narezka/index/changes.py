"""One sync's pass over the corpus: what changed since the last sync (a survey, each file
stat-ed once, the manifest read in step with the sorted walk), those files synced in corpus
order while workers chunk ahead, and the points of files that are gone deleted.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from narezka.convert.limits import stored_size
from narezka.discover import iter_files
from narezka.discover.kinds import describe_unread
from narezka.discover.naming import error_in_corpus
from narezka.diskspace import ensure_free, write_needs
from narezka.embed.cache import prefetching
from narezka.errors import ConfigError, DiskFullError, NarezkaError, RefusedFileError, SourceError
from narezka.index.syncing import IndexReport, Progress, Syncer, relative
from narezka.parse.embeds import embed_name
from narezka.runs.chunking import FileOutcome, chunk_pool
from narezka.store import Manifest
from narezka.store.errors import IndexDamagedError, StoreUnavailableError


def sync_files(
    syncer: Syncer,
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    manifest: Manifest,
    progress: Progress,
    *,
    paths: set[str] | None = None,
    jobs: int | None = None,
    follow_symlinks: bool = False,
    prune: bool = False,
) -> None:
    """Sync every file of the corpus (or only ``paths``), then delete the points of files
    that are gone; problems with one file are recorded in the report and the run goes on.

    Files are read and chunked by ``jobs`` workers a few files ahead while this process
    embeds and writes, one file after another in corpus order (so the write-ahead protocol
    and the report are what a serial run gives).

    An indexed file that is still there but no longer matches the patterns is removed only
    with ``prune``; otherwise it is kept and named (a changed pattern must not silently
    empty the index). One that must never be read (a symlink leading outside the corpus
    without ``follow_symlinks``, a FIFO) is removed."""
    syncer.on_bytes = progress.on_bytes
    syncer.on_stage = progress.on_stage
    syncer.on_rate = progress.on_rate
    errors: list[SourceError] = []
    survey = _survey(syncer, root, globs, exclude, progress, paths, errors, follow_symlinks)
    _add_embedding(syncer, root, survey)
    if survey.work is not None:
        changes: Iterable[_Changed] = survey.work
    else:  # too many to hold: found again by a second walk (see HELD_CHANGES)
        changes = _changed_again(syncer, root, globs, exclude, paths, follow_symlinks)
    _sync_changed(syncer, root, changes, survey, progress, jobs)
    survey.work = None
    _delete_gone(syncer, root, globs, exclude, manifest, survey, errors, prune=prune)


class _Changed(NamedTuple):
    """A file to chunk again, as the survey found it: its path relative to the corpus (the
    same string ``seen`` holds) and the two fields of its stat the manifest keeps. A tuple of
    these is ~130 B a file; a ``Path`` pair and an ``os.stat_result`` were ~500 B."""

    source: str
    st_size: int
    st_mtime: float


HELD_CHANGES = 50_000
"""How many changed files a survey holds (~130 B each: 6.5 MB). Past that it only counts
them and the sync finds them again by a second walk, ~20 CPU µs a file, against the ~4 ms a
changed file costs to chunk, embed and write: a first index of a million files holds no list
of them (130 MB)."""


@dataclass(slots=True)
class _Survey:
    """What the walk found: how many files it met, the indexed files it did not meet, and
    the files to chunk again."""

    whole: bool
    """Whether the whole corpus was synced, not some paths of it."""
    walked: int
    unseen: set[str]
    """Indexed files the walk did not meet (of ``paths`` only, when the sync was given
    some): gone, unless they only could not be read or no longer match the patterns."""
    work: list[_Changed] | None
    """The changed files, in walk order; None when there were more than ``HELD_CHANGES``."""
    changed: int
    changed_bytes: int


def _corpus_files(
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    paths: set[str] | None,
    follow_symlinks: bool,
    errors: list[SourceError],
    unread: list[str] | None,
) -> Iterator[tuple[str, Path]]:
    """The corpus's files a sync looks at (only ``paths``, when given), sorted: each one's
    path relative to ``root`` and its ``Path``."""
    found = iter_files(
        [root], globs, exclude, errors=errors, follow_symlinks=follow_symlinks, unread=unread
    )
    for base, file in found:
        source = relative(base, file)
        if paths is None or source in paths:
            yield source, file


def _survey(
    syncer: Syncer,
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    progress: Progress,
    paths: set[str] | None,
    errors: list[SourceError],
    follow_symlinks: bool,
) -> _Survey:
    """The files of the corpus (each stat-ed once, here), those that changed since the last
    sync, with their stat, and the indexed ones it no longer holds; unchanged files count on
    the progress bar at once.

    The walk yields sorted paths and the manifest is read in step with it: an indexed path
    the merge passes over is one the walk did not meet. So nothing is held per file but the
    changed ones (a set of every path walked was ~120 MB at a million files)."""
    report = syncer.report
    found = _corpus_files(root, globs, exclude, paths, follow_symlinks, errors, report.not_read)
    work: list[_Changed] | None = []
    changed = changed_bytes = 0
    # Unchanged files named to ``on_file`` after the total is known (held only if asked).
    fresh: list[tuple[str, int]] = []
    fresh_bytes = 0
    walked = total = 0
    seen: set[str] = set()  # only for a sync of some paths: at most those
    unseen: list[str] | None = [] if paths is None else None
    syncer.known.scan(unseen=unseen)
    try:
        for source, file in found:
            if paths is not None:
                seen.add(source)
            walked += 1
            try:
                stat = file.stat()
            except OSError as exc:
                syncer.known.get(source)  # met, so not gone: its points stay
                report.skipped.append(SourceError(source, f"cannot read: {exc}"))
                continue
            total += stat.st_size
            if not syncer.unchanged(source, stat):
                changed += 1
                changed_bytes += stored_size(source, stat.st_size, syncer.convert)
                if work is not None and len(work) < HELD_CHANGES:
                    work.append(_Changed(source, stat.st_size, stat.st_mtime))
                else:
                    work = None
            elif progress.on_file is not None:
                fresh.append((source, stat.st_size))
            else:
                fresh_bytes += stat.st_size
        if unseen is not None:
            syncer.known.rest_unseen()
    finally:
        syncer.known.close()
    _tell_unchanged(progress, total, fresh, fresh_bytes)
    if unseen is not None:
        gone = set(unseen)
    else:  # the paths asked for that the walk did not meet, of those indexed
        gone = {p for p in paths or () if p not in seen and syncer.known.get(p) is not None}
    return _Survey(paths is None, walked, gone, work, changed, changed_bytes)


def _add_embedding(syncer: Syncer, root: Path, survey: _Survey) -> None:
    """Add to the work the Obsidian notes whose ``![[embeds]]`` name a note that changed,
    appeared or went: their text holds that note's, so their own stat says nothing of it.
    (Past ``HELD_CHANGES`` changed files the survey holds no list of them, so none is added:
    a sync that big re-reads most of the vault anyway.)"""
    if survey.work is None:
        return
    names = {
        embed_name(source)
        for source in itertools.chain((c.source for c in survey.work), survey.unseen)
        if source.lower().endswith(".md")
    }
    queued = {c.source for c in survey.work}
    embedding = syncer.manifest.embedding(names) - queued - survey.unseen if names else set()
    for source in sorted(embedding):
        try:
            stat = (root / source).stat()
        except OSError:
            continue  # gone since the walk: the next sync sees it
        survey.work.append(_Changed(source, stat.st_size, stat.st_mtime))
        survey.changed += 1
        survey.changed_bytes += stored_size(source, stat.st_size, syncer.convert)
        if survey.whole:
            syncer.report.files_unchanged -= 1  # the survey met it and counted it unchanged


def _tell_unchanged(
    progress: Progress, total: int, fresh: list[tuple[str, int]], fresh_bytes: int
) -> None:
    """The survey's news for the progress: the corpus's size, then the unchanged files'
    bytes (named one by one when ``on_file`` is asked for)."""
    if progress.on_total is not None:
        progress.on_total(total)
    if progress.on_bytes is not None and fresh_bytes:
        progress.on_bytes(fresh_bytes)
    for source, size in fresh:
        if progress.on_bytes is not None:
            progress.on_bytes(size)
        if progress.on_file is not None:
            progress.on_file(source)


def _changed_again(
    syncer: Syncer,
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    paths: set[str] | None,
    follow_symlinks: bool,
) -> Iterator[_Changed]:
    """The files that are not indexed as they are, found by walking again (the survey met
    too many to hold, and named what it could not read). Each file is looked up by itself:
    the manifest is written as they are synced, so no ordered read may stay open."""
    for source, file in _corpus_files(root, globs, exclude, paths, follow_symlinks, [], None):
        try:
            stat = file.stat()
        except OSError:
            continue
        if not syncer.is_current(source, stat):
            yield _Changed(source, stat.st_size, stat.st_mtime)


def _sync_changed(
    syncer: Syncer,
    root: Path,
    work: Iterable[_Changed],
    survey: _Survey,
    progress: Progress,
    jobs: int | None,
) -> None:
    """Chunk, embed and write each changed file in corpus order (workers chunk ahead); a
    file's failure is its own, except those every later file would share, which stop it."""
    report = syncer.report
    # The workers take tasks a few files ahead of the files written: two walks of one
    # sequence, the tee holding only what lies between them.
    ahead, work = itertools.tee(work)
    # Made as the workers ask for them, not all up front (a million tasks were ~200 MB).
    tasks = (syncer.task(root, root / c.source, c.st_size) for c in ahead)
    work_bytes, count = survey.changed_bytes, survey.changed
    if (folder := getattr(syncer.store, "path", None)) is not None and count:
        needed = write_needs(work_bytes, syncer.embedder.dim)
        ensure_free(Path(folder), needed, f"store {count} files ({work_bytes} bytes)")
    pool = chunk_pool(syncer.strategy, syncer.counter, jobs, work_bytes=work_bytes, background=True)
    with pool, syncer.writes.kept_on_stop():
        outcomes = pool.map(tasks)
        if syncer.context is None:  # contexts change what is embedded: nothing to guess ahead
            outcomes = prefetching(outcomes, _embed_texts, syncer.embedder)
        for changed in work:
            source = changed.source
            syncer.stage("chunking", source)
            outcome = next(outcomes)
            try:
                syncer.apply(root, root / source, changed, outcome)
            except SourceError as exc:
                report.skipped.append(error_in_corpus(exc, root / source, source))
            except (DiskFullError, IndexDamagedError):
                raise  # every later file would fail alike: stop, naming the cause
            except OSError as exc:
                report.skipped.append(SourceError(source, f"cannot read: {exc}"))
            except StoreUnavailableError:
                # Not this file's fault, and every next file would fail alike: stop (what is
                # committed stays; a rebuild must not swap in an index missing these files).
                raise
            except NarezkaError as exc:
                # An embedding failure names the file; its old points stay in place.
                report.skipped.append(SourceError(source, str(exc)))
            syncer.finish_file()
            if progress.on_file is not None:
                progress.on_file(source)
        syncer.flush()


def _delete_gone(
    syncer: Syncer,
    root: Path,
    globs: Sequence[str],
    exclude: Sequence[str],
    manifest: Manifest,
    survey: _Survey,
    errors: list[SourceError],
    *,
    prune: bool,
) -> None:
    """Delete the points of indexed files that are gone (or, with ``prune``, no longer
    matched), keeping those of files that only could not be read this time."""
    report = syncer.report
    report.skipped.extend(errors)
    kept = _kept_unread(survey.unseen, errors, report)
    # What lies at or under a refused path (a link to a folder out of the corpus) goes.
    refused = tuple(e.path for e in errors if isinstance(e, RefusedFileError))
    unseen = {
        p for p in survey.unseen - kept if not any(p == r or p.startswith(r + "/") for r in refused)
    }
    if report.not_read:
        report.warnings.append(describe_unread(report.not_read))
    met = survey.walked > 0 or bool(kept)
    if survey.whole and not met and unseen:
        # An unmounted drive or a wrong path looks like a corpus whose files were all
        # deleted: keep the index rather than empty it.
        raise ConfigError(
            f"no files matching {', '.join(globs)} in {root}, but the index holds "
            f"{manifest.file_count()}: nothing was deleted (check the path, or use --rebuild)"
        )
    kept_unmatched = _unmatched(root, unseen, report, prune=prune)
    if survey.whole and not met and not kept_unmatched:
        report.warnings.append(
            f"no files in {root} match {', '.join(globs)}"
            + (f" (excluding {', '.join(exclude)})" if exclude else "")
            + ": pass --include to read other files"
        )
    syncer.delete_files(sorted(survey.unseen - kept - kept_unmatched))


def _embed_texts(outcome: FileOutcome) -> list[str]:
    return [c.embed_text for c in outcome.result.chunks] if outcome.result is not None else []


UNMATCHED_SHOWN = 5
"""How many of the files a pattern change would remove a warning names."""


def _unmatched(root: Path, unseen: set[str], report: IndexReport, *, prune: bool) -> set[str]:
    """Of the indexed files the walk did not yield, those still in the corpus (the patterns
    no longer match them): recorded in the report and named in a warning. Returns the ones
    to keep: all of them, unless ``prune``."""
    unmatched = sorted(p for p in unseen if os.path.lexists(root / p))
    if not unmatched:
        return set()
    report.unmatched = unmatched
    names = ", ".join(unmatched[:UNMATCHED_SHOWN])
    more = len(unmatched) - UNMATCHED_SHOWN
    names += f" and {more} more" if more > 0 else ""
    count = f"{len(unmatched)} indexed file(s) no longer match the include/exclude patterns"
    if prune:
        report.warnings.append(f"{count}, removed from the index (--prune): {names}")
        return set()
    report.warnings.append(f"{count}, kept in the index: {names}; --prune removes them")
    return set(unmatched)


def _kept_unread(
    known: Iterable[str], errors: Sequence[SourceError], report: IndexReport
) -> set[str]:
    """The indexed files at or under a path the walk could not read: a folder that could not
    be listed, a dangling symlink (an unmounted drive's), a loop. They are not known to be
    gone, so their points stay; each such path gets a warning saying how many files."""
    kept: set[str] = set()
    for error in errors:
        if isinstance(error, RefusedFileError):
            continue  # never to be read (a link out of the corpus, a FIFO): its points go
        prefix = error.path.rstrip("/") + "/"
        under = {p for p in known if p == error.path or p.startswith(prefix)}
        if under:
            kept |= under
            report.warnings.append(
                f"{error.path}: could not be read; its {len(under)} indexed file(s) are kept"
            )
    return kept
