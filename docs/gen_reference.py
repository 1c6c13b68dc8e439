#!/usr/bin/env python3
"""The documentation's generated reference pages: every command's ``--help`` and the HTTP API
from its OpenAPI document.

The site never holds a copy of either: ``docs/hooks.py`` calls these functions while mkdocs
builds, putting the text where ``docs/reference/cli.md`` and ``docs/reference/http.md`` say
``<!-- narezka:cli-reference -->`` and ``<!-- narezka:http-reference -->``, so the pages
cannot drift from the code (``tests/docs/test_docs_reference.py`` compares them with what
``narezka … --help`` prints). To read the generated Markdown without building the site:

    python docs/gen_reference.py cli     # or: http, python
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

import click

HELP_COLUMNS = "80"
"""The terminal width the help is rendered for (click wraps help to it, 80 at most)."""


def commands() -> Iterator[tuple[str, ...]]:
    """Every command's path under ``narezka``, the group itself first (``()``), then each
    command and each subcommand of a group, sorted as ``narezka --help`` lists them."""
    from narezka.cli import cli

    def walk(group: click.Group, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        yield path
        ctx = click.Context(group, info_name="narezka")
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if isinstance(command, click.Group):
                yield from walk(command, (*path, name))
            elif command is not None:
                yield (*path, name)

    yield from walk(cli, ())


def help_text(path: tuple[str, ...]) -> str:
    """What ``narezka PATH --help`` prints at HELP_COLUMNS columns."""
    from narezka.cli import COMMANDS, cli

    group = cli
    if not path:
        # `narezka --help` lists the commands without loading them (stand-ins carry their
        # first sentence, which click shortens its own way): list them as a fresh process
        # does, whatever this process has loaded already.
        group = copy.copy(cli)
        group.commands = {n: c for n, c in cli.commands.items() if n not in COMMANDS}
    # Not click's CliRunner: it forces its own width (80, where a terminal gets 78).
    out, columns = io.StringIO(), os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        with contextlib.redirect_stdout(out):
            code = group.main([*path, "--help"], prog_name="narezka", standalone_mode=False)
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    if code not in (0, None):
        raise RuntimeError(f"narezka {' '.join(path)} --help exited {code}")
    return out.getvalue()


def anchor(path: tuple[str, ...]) -> str:
    """The heading id of a command's section: ``narezka-cache-stats``."""
    return "-".join(("narezka", *path))


def cli_reference() -> str:
    """Markdown: a section per command holding its ``--help`` verbatim."""
    parts = []
    for path in [(), *(p for p in commands() if p)]:
        text = help_text(path)
        title = " ".join(("narezka", *path))
        parts.append(f"## `{title}` {{#{anchor(path)}}}\n\n```text\n{text.rstrip()}\n```\n")
    return "\n".join(parts)


def _schema(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        kind = " or ".join(f"`{v}`" for v in schema["enum"])
    else:
        kind = f"`{schema.get('type', 'any')}`"
    limits = [
        f"{word} {schema[key]}"
        for key, word in (
            ("minimum", "≥"),
            ("maximum", "≤"),
            ("minLength", "length ≥"),
            ("maxLength", "length ≤"),
        )
        if key in schema
    ]
    return kind + (f" ({', '.join(limits)})" if limits else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def http_reference(document: dict[str, Any] | None = None) -> str:
    """Markdown: each route of the OpenAPI document with its parameters and replies, then the
    document itself."""
    if document is None:
        from narezka.serve.openapi import openapi_document

        document = openapi_document()
    parts = [f"OpenAPI version {document['openapi']}.\n"]
    for route, methods in document["paths"].items():
        for method, op in methods.items():
            parts.append(f"## `{method.upper()} {route}`\n\n{op['summary']}\n")
            params = op.get("parameters", [])
            if params:
                rows = ["| parameter | in | type | default | required | meaning |"]
                rows.append("|---|---|---|---|---|---|")
                for p in params:
                    default = p["schema"].get("default")
                    rows.append(
                        f"| `{p['name']}` | {p['in']} | {_cell(_schema(p['schema']))} | "
                        f"{'' if default is None else '`' + json.dumps(default) + '`'} | "
                        f"{'yes' if p.get('required') else 'no'} | {_cell(p['description'])} |"
                    )
                parts.append("\n".join(rows) + "\n")
            by_meaning: dict[str, list[str]] = {}
            for code, reply in sorted(op["responses"].items()):
                by_meaning.setdefault(reply["description"], []).append(f"`{code}`")
            replies = "; ".join(f"{', '.join(c)}: {d}" for d, c in by_meaning.items())
            parts.append(f"Replies: {replies}\n")
    parts.append(
        "## The document\n\n```json\n"
        + json.dumps(document, indent=2, ensure_ascii=False)
        + "\n```\n"
    )
    return "\n".join(parts)


def _markdown(rst: str) -> str:
    """A docstring's reStructuredText roles and literals as Markdown code spans."""
    text = re.sub(r":[a-z]+:`~?(?:[\w.]+\.)?([^`]+)`", r"`\1`", rst)
    return text.replace("``", "`")


def python_reference() -> str:
    """Markdown: a table of ``narezka.__all__``, each name with the first line of its docstring
    and a link into the pdoc reference (``docs/api/narezka.html``)."""
    import inspect

    import narezka

    rows = ["| name | what it is |", "|---|---|"]
    for name in narezka.__all__:
        if name.startswith("_"):
            continue
        doc = inspect.getdoc(getattr(narezka, name)) or ""
        first = _markdown(doc.split("\n\n")[0].replace("\n", " "))
        rows.append(f"| [`{name}`](../api/narezka.html#{name}) | {_cell(first)} |")
    return "\n".join(rows) + "\n"


def search_options_reference() -> str:
    """Markdown: the one table of search options (``narezka.search.options``) as every front
    shows it: the flat name (HTTP parameter, MCP argument, retriever field, ``Index.search``
    keyword), the command-line flag, the default, what it may take, and where it is shown."""
    from narezka.search import OPTIONS

    rows = [
        "| option | flag | default | takes | shown by | what it does |",
        "|---|---|---|---|---|---|",
    ]
    for o in OPTIONS.values():
        takes = (
            " / ".join(f"`{c}`" for c in o.choices)
            if o.choices
            else {"whole": "a whole number", "number": "a number", "flag": "true / false"}.get(
                o.kind, "text" if o.kind == "text" else "a share or `auto`/`off`"
            )
        )
        if o.minimum is not None or o.maximum is not None:
            low = "" if o.minimum is None else f"{o.minimum:g}"
            high = "" if o.maximum is None else f"{o.maximum:g}"
            takes += f" in [{low}, {high}]" if high else f", at least {low}"
        shown = ", ".join(sorted(o.fronts))
        default = o.default_text or "—"
        rows.append(
            f"| `{o.name}` | `{o.flag}` | {_cell(default)} | {_cell(takes)} | {shown} | "
            f"{_cell(o.help)} |"
        )
    return "\n".join(rows) + "\n"


GENERATED = {
    "search-options-reference": search_options_reference,
    "cli-reference": cli_reference,
    "http-reference": http_reference,
    "python-reference": python_reference,
}
"""Each marker ``<!-- narezka:NAME -->`` a page may hold, and what replaces it."""


def expand(markdown: str) -> str:
    """A page's Markdown with each generated marker replaced by its text."""
    for name, make in GENERATED.items():
        marker = f"<!-- narezka:{name} -->"
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


if __name__ == "__main__":
    os.environ.setdefault("COLUMNS", HELP_COLUMNS)
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if f"{which}-reference" not in GENERATED:
        sys.exit("usage: python docs/gen_reference.py cli|http|python|search-options")
    sys.stdout.write(GENERATED[f"{which}-reference"]())
