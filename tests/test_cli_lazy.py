"""The command group loads a command's module only when that command runs or shows its own
help: ``import narezka.cli`` is the start-up of every command, of ``narezka --help`` and of
every ``--jobs`` worker the console script starts (a worker re-imports the script's module)."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
import textwrap
from importlib import import_module

import click
import pytest

import narezka.cli
from narezka.cli import COMMANDS, cli

HEAVY = (
    "narezka.cli.chunk",
    "narezka.cli.eval",
    "narezka.cli.index",
    "narezka.cli.inspect",
    "narezka.cli.search",
    "narezka.cli.serve",
    "narezka.cli.tools",
    "narezka.embed",
    "narezka.runs",
    "narezka.settings",
    "narezka.split",
    "numpy",
    "rich",
)
"""What ``import narezka.cli`` must not load: every command's module and the stages and
libraries behind them."""

WIDTHS = (30, 45, 60, 80, 120, 200)


def _loaded_after(code: str) -> tuple[list[str], str]:
    """The modules of HEAVY that a fresh interpreter holds after running ``code`` (which may
    print), and what it printed before."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    *printed, loaded = done.stdout.splitlines()
    return json.loads(loaded), "\n".join(printed)


def test_importing_the_cli_loads_no_command_and_no_stage() -> None:
    loaded, _ = _loaded_after("import narezka.cli")
    assert loaded == []


def test_the_command_list_loads_no_command() -> None:
    loaded, printed = _loaded_after(
        """
        import click
        from narezka.cli import cli
        print(cli.get_help(click.Context(cli, info_name="narezka")))
        """
    )
    assert loaded == []
    for name in COMMANDS:
        assert f"\n  {name} " in printed, name


def test_a_command_loads_its_own_module_only() -> None:
    loaded, printed = _loaded_after(
        """
        import click
        from narezka.cli import cli
        ctx = click.Context(cli, info_name="narezka")
        command = cli.get_command(ctx, "chunk")
        print(command.get_help(click.Context(command, info_name="chunk")))
        """
    )
    assert "--jobs" in printed
    assert {"narezka.cli.chunk", "narezka.runs"} <= set(loaded)
    commands = {target.partition(":")[0] for target, _ in COMMANDS.values()}
    others = (set(loaded) & commands) - {"narezka.cli.chunk"}
    assert not others
    assert "rich" not in loaded  # chunk loads rich after it has started its --jobs workers


def test_every_lazy_name_is_a_command_of_that_name() -> None:
    ctx = click.Context(cli)
    for name, (target, _help) in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert isinstance(command, click.Command), target
        assert command.name == name
        assert not command.hidden and not command.deprecated and not command.short_help


def test_every_command_in_the_cli_modules_is_reachable() -> None:
    # A command added to a narezka.cli module but not to COMMANDS would exist and never run.
    defined = {
        f"{info.name}:{attribute}": value
        for info in pkgutil.iter_modules(narezka.cli.__path__, "narezka.cli.")
        for attribute, value in vars(import_module(info.name)).items()
        if isinstance(value, click.Command)
    }
    ctx = click.Context(cli)
    reachable = [cli.get_command(ctx, name) for name in cli.list_commands(ctx)]
    reachable += [s for g in reachable if isinstance(g, click.Group) for s in g.commands.values()]
    missing = [label for label, command in defined.items() if command not in reachable]
    assert defined and not missing


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listed_help_is_the_commands_own_at_every_width(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    stand_in = click.Command(name, help=COMMANDS[name][1])
    for limit in range(10, 200):
        assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), limit


def test_the_help_screen_is_the_one_with_every_command_loaded() -> None:
    # A fresh process lists from the static help; then every command is loaded and the
    # screens must not change at any width.
    _, printed = _loaded_after(
        f"""
        import click
        from narezka.cli import COMMANDS, cli

        def screens():
            return [
                cli.get_help(click.Context(cli, info_name="narezka", terminal_width=w))
                for w in {WIDTHS!r}
            ]

        before = screens()
        for name in COMMANDS:
            cli.get_command(click.Context(cli), name)
        print(before == screens())
        """
    )
    assert printed == "True"


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [("serch", "'search', 'serve'"), ("chnk", "'chunk'"), ("evl", "'eval'")],
)
def test_a_mistyped_name_is_answered_with_the_lazy_commands_too(typed: str, suggested: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "narezka", typed],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert f"No such command {typed!r}" in done.stderr and suggested in done.stderr


def test_a_command_that_is_no_command_is_named() -> None:
    saved = dict(COMMANDS)
    COMMANDS["bogus"] = ("narezka.cli.common:fail", "Not a command.")
    try:
        with pytest.raises(TypeError, match=r"narezka\.cli\.common:fail is not a click command"):
            cli.get_command(click.Context(cli), "bogus")
    finally:
        COMMANDS.clear()
        COMMANDS.update(saved)


def test_the_index_command_loads_no_reader_crawler_or_converter() -> None:
    # An index run of a Markdown folder uses none of these: each is a part of its start-up
    # paid by every run when imported eagerly (the search stack alone ~0.02 s).
    probe = textwrap.dedent(
        """
        import json, sys
        WATCHED = (
            "narezka.search", "narezka.index.querying", "narezka.index.maintenance",
            "narezka.sources.site", "narezka.sources.crawl", "urllib.request",
            "narezka.sources.confluence", "narezka.sources.notion",
            "narezka.convert.html", "narezka.convert.sheets", "email.utils", "http.client",
        )
        import narezka.api.indexing, narezka.cli.index
        from narezka.index import Index
        from narezka.sources import open_source
        print(json.dumps([m for m in WATCHED if m in sys.modules]))
        from narezka.index import IndexStats
        print(json.dumps([m for m in WATCHED if m in sys.modules]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    at_start, after = (json.loads(line) for line in done.stdout.splitlines())
    assert at_start == []
    assert after == ["narezka.search", "narezka.index.querying"]  # asked for: loaded


def test_the_lazily_loaded_names_are_still_there() -> None:
    import narezka.index
    import narezka.index.handle
    import narezka.sources
    from narezka.index.querying import IndexStats, SourceInfo
    from narezka.sources.confluence import CONFLUENCE_PREFIX, ConfluenceSource
    from narezka.sources.notion import NOTION_PREFIXES, NotionSource
    from narezka.sources.site import SiteSource

    assert narezka.sources.SiteSource is SiteSource
    assert narezka.sources.ConfluenceSource is ConfluenceSource
    assert narezka.sources.NotionSource is NotionSource
    assert (CONFLUENCE_PREFIX, NOTION_PREFIXES) == ("confluence+", ("notion://", "notion+"))
    assert narezka.index.IndexStats is narezka.index.handle.IndexStats is IndexStats
    assert narezka.index.SourceInfo is narezka.index.handle.SourceInfo is SourceInfo
    with pytest.raises(AttributeError):
        _ = narezka.sources.NoSuchSource
    with pytest.raises(AttributeError):
        _ = narezka.index.handle.NoSuchName
