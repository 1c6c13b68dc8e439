"""The stderr progress bars of the long commands (drawn only on a terminal).

Apart from :mod:`narezka.cli.common` because rich's progress machinery is the heavier half of
rich: ``import narezka.cli`` (``narezka --help``, every ``--jobs`` worker started from the
console script) then does not load it.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


def progress_bar(label: str, console: Console, *, enabled: bool = True) -> Progress:
    """The stderr progress bar every long command shows (only on a terminal)."""
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not (enabled and console.is_terminal),
    )


class _BytesOrCalls(ProgressColumn):
    """Bytes for the indexing task; ``done/total`` for a task counting LLM calls."""

    def __init__(self) -> None:
        super().__init__()
        self._bytes = DownloadColumn()
        self._count = MofNCompleteColumn()

    def render(self, task: Task) -> Text:
        if task.fields.get("calls"):
            return self._count.render(task)
        return self._bytes.render(task)


class _ChunkRate(ProgressColumn):
    """Chunks embedded per second, once the sync has reported a rate (``rate`` field)."""

    def render(self, task: Task) -> Text:
        rate = task.fields.get("rate")
        return Text(f"{rate:.0f} chunks/s" if rate else "", style="progress.data.speed")


def byte_progress(label: str, console: Console) -> Progress:
    """A progress bar that counts bytes: one big file moves it as much as many small ones.
    Its task's description is shown after ``label`` (the stage: ``embedding docs/a.md``); a
    task added with ``calls=True`` counts LLM calls instead, with the time left."""
    return Progress(
        TextColumn(label),
        # The description names a file: its text, never Rich markup (and escaped by the caller).
        TextColumn("{task.description}", style="dim", markup=False),
        BarColumn(),
        _BytesOrCalls(),
        _ChunkRate(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
