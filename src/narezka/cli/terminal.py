"""User data on a terminal line, made inert: every name, heading, URL, snippet, query and
message a command prints goes through here.

A file name or a heading is the corpus author's text, and a terminal obeys what it prints:
``ESC ] 0 ;`` retitles the window, ``ESC ] 52 ;`` writes the clipboard, a carriage return
overwrites the line, a newline forges a ``warning:`` line of its own, a bidi override shows
text in another order than it is. And Rich reads ``[link=…]`` or ``[/]`` in a string as its
markup. So :func:`shown` writes every control character (C0, DEL, C1, bidi and line
separators; a tab stays) as a visible escape — ``\\x1b``, ``\\r``, ``\\n``, ``\\u202e`` —
and :func:`plain` hands Rich a :class:`~rich.text.Text`, which it never parses as markup.
``--json`` output needs none of it: a JSON string escapes every control character itself.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["echo", "plain", "shown"]

_UNSAFE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]"
)
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def shown(value: object) -> str:
    """``value`` as text for one terminal line: control characters as visible escapes."""
    text = str(value)
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def plain(value: object, style: str = "") -> Text:
    """``value`` for Rich (a table cell, a title, a progress bar): escaped, never markup."""
    from rich.text import Text  # not at import: `narezka --help` and chunk's workers skip rich

    return Text(shown(value), style=style)


def echo(message: object, *, err: bool = False) -> None:
    """One line of a message that carries user data (a file's name, a warning), escaped."""
    click.echo(shown(message), err=err)
