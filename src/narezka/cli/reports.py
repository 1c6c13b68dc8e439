"""How ``index``, ``sync`` and ``watch`` show a sync: progress, the report's table or line,
problems on stderr."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.progress import Progress as RichProgress
from rich.progress import TaskID
from rich.table import Table

from narezka.api import IndexReport
from narezka.cli.terminal import echo, plain, shown
from narezka.discover import describe_unread
from narezka.enrich import ContextEstimate
from narezka.index import Progress

STAGE_SOURCE_CHARS = 40
"""The tail of the current file's name shown beside the stage."""


def stage_text(stage: str, source: str) -> str:
    """A progress bar's description: the stage and the tail of the file's name."""
    tail = source if len(source) <= STAGE_SOURCE_CHARS else "…" + source[-STAGE_SOURCE_CHARS:]
    return shown(f"{stage} {tail}")


def sync_progress(progress: RichProgress, err: Console) -> Progress:
    """A sync's callbacks on one bar of ``progress``: bytes read, the stage and the file, the
    embedding rate, and the LLM context estimate and calls."""
    task = progress.add_task("", total=None)
    return Progress(
        on_total=lambda total: progress.update(task, total=total),
        on_bytes=lambda n: progress.advance(task, n),
        on_stage=lambda stage, source: progress.update(task, description=stage_text(stage, source)),
        on_rate=lambda rate: progress.update(task, rate=rate),
        **context_progress(progress, err),
    )


def context_progress(progress: RichProgress, err: Console) -> dict[str, Any]:
    """The callbacks that print the LLM context estimate, then count its calls on the bar."""
    calls: list[TaskID] = []

    def estimate(est: ContextEstimate) -> None:
        if not est.chunks:  # nothing changed: a cron log needs no line about it
            return
        err.print(plain(est.describe()), highlight=False, soft_wrap=True)
        calls.append(progress.add_task("context LLM", total=est.to_generate, calls=True))

    def called() -> None:
        if calls:
            progress.advance(calls[0])

    return {"on_context_estimate": estimate, "on_context_call": called}


def report_problems(report: IndexReport) -> None:
    """Each skipped file and warning of a run, one line each, on stderr."""
    for problem in report.skipped:
        echo(f"skipped: {problem}", err=True)
    for warning in report.warnings:
        echo(f"warning: {warning}", err=True)


def print_index_report(report: IndexReport, settings_from: str | None = None) -> None:
    """``narezka index``'s table for people (``settings_from``: which settings came from
    where, :meth:`narezka.settings.Resolved.describe`)."""
    table = Table(title=plain(f"narezka index → {report.store}"), show_header=False, box=None)
    rows = [
        (
            "Files",
            f"{report.files_new} new, {report.files_changed} changed, "
            f"{report.files_unchanged} unchanged, {report.files_deleted} deleted",
        ),
        (
            "Chunks",
            f"{report.chunks_embedded} embedded, {report.chunks_reused} reused, "
            f"{report.chunks_kept} kept, {report.chunks_deleted} deleted",
        ),
        ("Embedding cache", f"{report.cache_hits} hits, {report.cache_misses} misses"),
        *_context_rows(report),
        ("Time", times(report.seconds)),
        ("Embedder", report.embedder),
        *([("Source", source_line(report.source))] if report.source else []),
        *([("Settings from", settings_from)] if settings_from else []),
        ("Skipped files", str(len(report.skipped))),
    ]
    if report.not_read:
        rows.append(("Not read", describe_unread(report.not_read, shown=0)))
    if report.recovered:
        rows.append(("Repaired", ", ".join(report.recovered)))
    for label, value in rows:
        table.add_row(label, plain(value))
    Console().print(table)


def times(seconds: dict[str, float]) -> str:
    """The run's wall time, then each stage's: the time spent in it file by file, added up
    over the worker processes that chunk side by side, so a stage may exceed the wall time."""
    stages = ", ".join(f"{k} {_seconds(v)} s" for k, v in seconds.items() if k != "total")
    return f"{_seconds(seconds['total'])} s wall; per stage, summed over parallel workers: {stages}"


def _seconds(value: float) -> str:
    # Three figures where they matter: a small run's stages would all read 0.0.
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def _context_rows(report: IndexReport) -> list[tuple[str, str]]:
    c = report.context
    if not c:
        return []
    without = c["chunks"] - c["with_context"]
    return [
        (
            "LLM context",
            f"{c['with_context']} of {c['chunks']} chunks ({c['cached']} cached, "
            f"{c['generated']} generated); {without} without: {c['failed']} failed, "
            f"{c['not_asked']} not asked, {c['dropped']} did not fit; {c['cut']} shortened",
        )
    ]


def summary(report: IndexReport) -> str:
    """``narezka sync``'s one line (a cron log's)."""
    return (
        f"{report.files_new} new, {report.files_changed} changed, "
        f"{report.files_unchanged} unchanged, {report.files_deleted} deleted files; "
        f"{report.chunks_embedded} chunks embedded, {report.chunks_deleted} deleted; "
        f"{len(report.skipped)} skipped"
        + (f", {describe_unread(report.not_read, shown=0)}" if report.not_read else "")
        + f"; {_seconds(report.seconds['total'])} s wall"
        + _context_summary(report.context)
        + (f"; {source_line(report.source)}" if report.source else "")
    )


def source_line(done: dict[str, Any]) -> str:
    """What a source's refresh did, in one phrase: its version and the files it touched."""
    version = re.sub(r"\b([0-9a-f]{12})[0-9a-f]{28}\b", r"\1", str(done["version"]))
    return (
        f"{done['spec']} at {version}: {len(done['fetched'])} fetched "
        f"({done['fetched_bytes']} bytes), {len(done['moved'])} moved, "
        f"{len(done['deleted'])} removed"
    )


def _context_summary(c: dict[str, Any]) -> str:
    if not c.get("chunks"):
        return ""
    without = c["chunks"] - c["with_context"]
    return (
        f"; LLM context on {c['with_context']} of {c['chunks']} chunks ({c['generated']} "
        f"generated), {without} without ({c['failed']} failed, {c['not_asked']} not asked)"
    )
