"""Every ``narezka …`` command the documentation writes — in a code span or a shell block —
names a command that exists and only options that command takes, so a renamed flag fails
here rather than in a reader's terminal. The JSON the guides give to copy parses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from docs.site import DOCS

PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")  # narezka COMMAND --help


def _commands(text: str) -> list[str]:
    found = re.findall(r"`(narezka [^`]+)`", text)
    for block in re.findall(r"```(?:bash|sh|text)?\n(.*?)```", text, re.S):
        found += block.replace("\\\n", " ").splitlines()
    parts = (p.strip() for line in found for p in re.split(r"&&|\||;", line))
    return [p for p in parts if p.startswith("narezka ")]


def _resolve(words: list[str]) -> click.Command | None:
    from narezka.cli import cli

    command: click.Command = cli
    ctx = click.Context(cli, info_name="narezka")
    for word in words:
        if not isinstance(command, click.Group) or word.startswith("-"):
            break
        sub = command.get_command(ctx, word)
        if sub is None:
            return None
        command = sub
    return command


def _options(command: click.Command) -> set[str]:
    names = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    return names | {"--help", "-h"}


PAGES = [DOCS.parent / "README.md", *sorted(DOCS.rglob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS.parent).as_posix() for p in PAGES])
def test_documented_commands_and_flags_exist(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for line in _commands(text):
        words = line.split("#")[0].split()[1:]
        if any(PLACEHOLDER.match(w) for w in words[:1]):
            continue
        command = _resolve(words)
        assert command is not None, f"{page}: no such command: {line}"
        for flag in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", line.split("#")[0]):
            assert flag in _options(command), f"{page}: {line!r}: {flag} is not an option"


def test_the_documented_json_parses() -> None:
    blocks = [
        (page, block)
        for page in PAGES
        for block in re.findall(r"```json\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    ]
    assert len(blocks) >= 2  # the MCP clients' configurations
    for page, block in blocks:
        try:
            json.loads(block)
        except json.JSONDecodeError as exc:
            pytest.fail(f"{page}: {exc}")
