"""Command-line interface: parse options, call one pipeline function, format the result.

Each command lives in a module of this package (``narezka.cli.chunk``…), imported only when
that command runs (or shows its own ``--help``): ``import narezka.cli`` loads click and
little else. That is the start-up of every command, of ``narezka --help``, and of every
``--jobs`` worker, which re-imports the module the console script ran.

Exit codes are listed in :mod:`narezka.cli.common` (and the README).
"""

from __future__ import annotations

import errno
import os
import sys
import warnings
from collections.abc import Sequence
from importlib import import_module
from typing import Any

import click

from narezka import environment
from narezka.cli.common import EXIT_INTERRUPTED, EXIT_OK, fail
from narezka.cli.terminal import echo, shown
from narezka.errors import ConfigError, NarezkaWarning

COMMANDS: dict[str, tuple[str, str]] = {
    "cache": (
        "narezka.cli.tools:cache_group",
        "The embedding cache kept beside an index, and the LLM-written contexts beside it.",
    ),
    "calibrate": (
        "narezka.cli.tools:calibrate_command",
        "Measure a served model's real token density on a corpus and store a safe budget.",
    ),
    "check": (
        "narezka.cli.tools:check_command",
        "Check an index's files against its manifest: chunks the store lost, cannot read, or "
        "holds unknown; --repair re-indexes the damaged files from the embedding cache, or "
        "rebuilds when only that repairs it.",
    ),
    "chunk": ("narezka.cli.chunk:chunk", "Split Markdown files into retrieval-ready chunks."),
    "compact": (
        "narezka.cli.tools:compact_command",
        "Rewrite an index with only its live points, so text deleted from the corpus leaves no "
        "trace in the index folder (the engine keeps deleted payloads on disk until then).",
    ),
    "eval": (
        "narezka.cli.eval:eval_command",
        "Index CORPUS once per strategy, ask the golden questions, report hit@k, MRR, ceiling "
        "(and span recall, precision, IoU for span golden sets) plus a size-normalized view.",
    ),
    "index": (
        "narezka.cli.index:index_command",
        "Chunk, embed and store a corpus; re-runs only touch what changed.",
    ),
    "inspect": (
        "narezka.cli.inspect:inspect_command",
        "Write an HTML page showing each document's chunks: boundaries, overlaps, atoms, "
        "breadcrumbs, sizes against the limit and the embed_text of each.",
    ),
    "models": (
        "narezka.cli.tools:models_command",
        "List embedders: dimension, window, tokenizer, and whether they run offline here.",
    ),
    "push": (
        "narezka.cli.index:push_command",
        "Copy an index to a Qdrant server: same ids, vectors and payloads, readable there by URL.",
    ),
    "search": (
        "narezka.cli.search:search_command",
        "Search an index: dense, BM25 or hybrid (min-max score fusion, or as --fusion says).",
    ),
    "serve": (
        "narezka.cli.serve:serve_command",
        "Serve an index (STORE, or a CORPUS folder: indexed first if it has none) to agents over "
        "MCP and to apps over HTTP, syncing it as files change.",
    ),
    "sync": (
        "narezka.cli.index:sync_command",
        "Bring an index up to date with its corpus, with the settings it was built with.",
    ),
    "watch": (
        "narezka.cli.index:watch_command",
        "Sync now, then again whenever files in the corpus change (Ctrl-C stops cleanly).",
    ),
}
"""Each command loaded on demand: its name → ``"module:attribute"`` and the first sentence of
its help, which ``narezka --help`` lists without importing the module (a test checks that
both still match the command)."""


class _Group(click.Group):
    """The command group: its commands load on first use (:data:`COMMANDS`), and a closed
    pipe ends any command quietly (click would exit 1)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in COMMANDS:
            return command
        module, _, attribute = COMMANDS[cmd_name][0].partition(":")
        command = getattr(import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{COMMANDS[cmd_name][0]} is not a click command")
        self.add_command(command, cmd_name)  # loaded once
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Click lists commands by loading each one for its short help. Stand-ins that carry
        # only that first sentence list exactly the same (click shortens them alike) without
        # importing every command's module for a help screen.
        listed = {
            name: self.commands.get(name) or click.Command(name, help=COMMANDS[name][1])
            for name in self.list_commands(ctx)
        }
        click.Group(self.name, commands=listed).format_commands(ctx, formatter)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and self.get_command(ctx, args[0]) is None:
            # A mistyped name: click suggests close ones among the commands it has, so give
            # it all of them (an error's cost, not a start-up's).
            for name in COMMANDS:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            # Read before a command's module is loaded: importing one reads the environment
            # (the native core's NAREZKA_PURE), and a bad variable must be named, not traced.
            environment.current()
        except ConfigError as exc:
            fail(exc)
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            _quiet_stdout()
            raise click.exceptions.Exit(EXIT_OK) from None


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import version

    from narezka._native import implementation  # loads the core only when asked

    click.echo(f"narezka, version {version('narezka')} ({implementation()})")
    ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version, and whether the native core or pure Python runs, then exit.",
)
def cli() -> None:
    """narezka: Markdown-aware chunking for retrieval (RAG)."""


@cli.command()
def strategies() -> None:
    """List the splitting strategies.

    Example: narezka strategies
    """
    from narezka.split import strategy_names  # the split stage: not for every command's start

    for name in strategy_names():
        click.echo(name)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``narezka`` console script (exit codes: :mod:`narezka.cli.common`).

    Click's own handling would turn Ctrl-C and a closed pipe into exit 1, which a script
    cannot tell from "nothing found": run it non-standalone and map them here."""
    warnings.showwarning = _show_warning
    try:
        code = cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="narezka",
            standalone_mode=False,
        )
    except click.ClickException as exc:
        # It may quote a file name or an option's value; click types it Final, not frozen.
        exc.message = shown(exc.message)  # type: ignore[misc]
        exc.show()
        sys.exit(exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        click.echo("interrupted: what was already stored stays searchable", err=True)
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(code if isinstance(code, int) else EXIT_OK)


def _show_warning(
    message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any
) -> None:
    """narezka's own warnings as one line on stderr (they name the file they are about);
    a library's as Python shows them, its message escaped (it may quote a document)."""
    if issubclass(category, NarezkaWarning):
        echo(f"Warning: {message}", err=True)
    else:
        _default_show(shown(message), category, *args, **kwargs)


_default_show = warnings.showwarning


def _quiet_stdout() -> None:
    """The reader (``| head``) has gone: point stdout at /dev/null so the interpreter's final
    flush does not raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
