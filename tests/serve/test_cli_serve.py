"""`narezka serve` refusing to start: each reason is one line on stderr and exit 2 (the
README's table), never a traceback and never "serving…" first."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the serve extra is not installed")

from serve.helpers import free_port, start_http, stop


def serve(
    *args: str, env: dict[str, str] | None = None, code: str | None = None
) -> subprocess.CompletedProcess[str]:
    command = ["-c", code, "serve"] if code else ["-m", "narezka", "serve"]
    return subprocess.run(
        [sys.executable, *command, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "NAREZKA_API_KEY": "", **(env or {})},
        timeout=120,
        check=False,
    )


def one_line_exit_2(result: subprocess.CompletedProcess[str], needle: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert "Traceback" not in result.stderr and "narezka: serving" not in result.stderr


def test_without_the_serve_extra_one_line(built_kb: Path) -> None:
    # Issue 23 item 13: a 34-line traceback.
    blocked = (
        "import sys\n"
        "for name in ('mcp', 'starlette', 'uvicorn'):\n"
        "    sys.modules[name] = None\n"
        "from narezka.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    result = serve(str(built_kb), code=blocked)
    one_line_exit_2(result, "pip install 'narezka[serve]'")
    assert "starlette.applications" not in result.stderr  # the package, not a module in it


def test_a_port_out_of_range_is_a_usage_error(built_kb: Path) -> None:
    # Issue 23 item 13: "serving…" then an 82-line uvicorn traceback.
    result = serve(str(built_kb), "--http", "127.0.0.1:99999")
    assert result.returncode == 2 and "65535" in result.stderr
    assert "Traceback" not in result.stderr and "narezka: serving" not in result.stderr


def test_a_port_in_use_one_line(built_kb: Path) -> None:
    # Issue 23 item 13: exit 3 after "serving…" and uvicorn's own error.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = serve(str(built_kb), "--http", f"127.0.0.1:{port}", "--no-watch")
    one_line_exit_2(result, f"cannot listen on 127.0.0.1:{port}")


def test_a_blank_api_key_does_not_open_a_public_address(built_kb: Path) -> None:
    # Issue 23 item 13: NAREZKA_API_KEY="  " was accepted for 0.0.0.0.
    result = serve(str(built_kb), "--http", f"0.0.0.0:{free_port()}", env={"NAREZKA_API_KEY": "  "})
    one_line_exit_2(result, "NAREZKA_API_KEY")


def test_a_second_server_of_the_same_index_stops_at_once(built_kb: Path) -> None:
    # Issue 23 item 13: it started and answered every search with 400.
    proc, _ = start_http(built_kb, "--no-watch")
    try:
        again = serve(str(built_kb), "--http", f"127.0.0.1:{free_port()}", "--no-watch")
        one_line_exit_2(again, f"in use by PID {proc.pid}")
        stdio = serve(str(built_kb), "--no-watch")
        one_line_exit_2(stdio, f"in use by PID {proc.pid}")
    finally:
        stop(proc)
