"""``narezka serve``: MCP on stdio (what desktop agents launch), or the HTTP API and MCP's
streamable HTTP endpoint with ``--http HOST:PORT``; the index kept fresh meanwhile."""

from __future__ import annotations

import logging
import socket
import sys
import traceback
from pathlib import Path
from typing import Any

import click

from narezka import environment
from narezka.cli.common import fail
from narezka.cli.options import debounce_option, follow_symlinks_option
from narezka.cli.terminal import echo, shown
from narezka.errors import ConfigError, MissingDependencyError, NarezkaError


class InertFormatter(logging.Formatter):
    """Log lines as :func:`~narezka.cli.terminal.shown` prints them; a traceback keeps its
    lines, each escaped."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return shown(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        out = []
        for part in traceback.format_exception(*ei):
            text = part.strip("\n")
            if part.startswith(_TRACE_LINES):  # lines of the trace: each escaped
                out.append("\n".join(shown(line) for line in text.split("\n")))
            else:  # "Error: message", the message maybe of many lines: one line
                out.append(shown(text))
        return "\n".join(out)


_TRACE_LINES = ("Traceback", "  ", "\nDuring handling", "\nThe above exception")


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not host or not 1 <= int(port) <= 65535:
        raise click.BadParameter(
            f"expected HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:8765, not {value!r}",
            param_hint="'--http'",
        )
    return host.strip("[]"), int(port)


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to the address, so a port in use is one clear error before the server
    says it is serving (uvicorn would print a traceback after)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise ConfigError(
            f"cannot listen on {host}:{port}: {reason} (another server there? pick another port)"
        ) from None
    sock.set_inheritable(True)
    return sock


@click.command("serve")
@click.argument("location", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--http",
    "http",
    default=None,
    metavar="HOST:PORT",
    help="Serve the HTTP API and MCP (at /mcp) on this address instead of MCP on stdio. "
    "Any address but loopback needs NAREZKA_API_KEY.",
)
@click.option(
    "--max-reply-tokens",
    type=int,
    default=None,
    help="Largest reply, in tokens (cl100k)  [default: 8000].",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    envvar="NAREZKA_ALLOWED_HOSTS",
    help="Another name clients reach the HTTP server by (repeatable; NAREZKA_ALLOWED_HOSTS, "
    "space-separated). Requests naming any other Host are refused (DNS rebinding)  "
    "[default: localhost, 127.0.0.1, [::1] and the address served].",
)
@click.option("--no-watch", is_flag=True, help="Do not sync on file changes (sync at start only).")
@debounce_option
@click.option(
    "--search-threads",
    type=click.IntRange(min=1),
    default=None,
    help="Searches run at once; more wait their turn  [default: the number of cores].",
)
@follow_symlinks_option
def serve_command(
    location: Path,
    http: str | None,
    max_reply_tokens: int | None,
    allowed_hosts: tuple[str, ...],
    no_watch: bool,
    debounce_ms: int,
    search_threads: int | None,
    follow_symlinks: bool | None,
) -> None:
    """Serve an index (STORE, or a CORPUS folder: indexed first if it has none) to agents
    over MCP and to apps over HTTP, syncing it as files change.

    Example: narezka serve examples/kb --http 127.0.0.1:8765
    """
    try:
        from narezka.serve import build_app, build_mcp, serve_stdio
    except ImportError as exc:
        fail(MissingDependencyError((exc.name or "mcp").partition(".")[0], "serve"))
    import anyio

    from narezka.serve import DEFAULT_REPLY_TOKENS, Service

    # stdout is the MCP channel on stdio: every log line goes to stderr, escaped (a request's
    # path or a file's name in an error is the caller's text).
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(InertFormatter(logging.BASIC_FORMAT))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    address = _address(http) if http else None
    api_key = environment.current().api_key
    try:
        service = Service(
            location,
            max_reply_tokens=max_reply_tokens or DEFAULT_REPLY_TOKENS,
            watch=not no_watch,
            debounce_ms=debounce_ms,
            search_threads=search_threads,
            follow_symlinks=follow_symlinks,
        )
    except NarezkaError as exc:
        fail(exc)
    with service:
        if address is None:
            service.start()
            anyio.run(serve_stdio, build_mcp(service))
            return
        import uvicorn

        host, port = address
        try:
            app = build_app(service, host=host, api_key=api_key, allowed_hosts=allowed_hosts)
            sock = _listen(host, port)
        except NarezkaError as exc:
            fail(exc)
        service.start()
        echo(f"narezka: serving {service.corpus} on http://{host}:{port}", err=True)
        echo(f"narezka: search it in a browser at http://{host}:{port}/", err=True)
        config = uvicorn.Config(app, log_level="warning", access_log=False)
        with sock:
            uvicorn.Server(config).run(sockets=[sock])
