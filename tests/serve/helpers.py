"""Helpers of the serving tests."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import httpx


def exact_span(corpus: Path, hit: dict[str, object]) -> bool:
    """Whether a served hit's text is exactly its span of the file (of its canonical
    Markdown, for a PDF, Word or HTML file)."""
    from narezka.discover.walk import read_document

    text = read_document(corpus, corpus / str(hit["file_path"]))[0].text
    return text[int(str(hit["start"])) : int(str(hit["end"]))] == hit["text"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http(
    corpus: Path, *extra: str, env: dict[str, str] | None = None, key: str | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """`narezka serve CORPUS --http 127.0.0.1:PORT` as a real process, once it answers."""
    port = free_port()
    log = corpus.parent / f"serve-{port}.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
        [sys.executable, "-m", "narezka", "serve", str(corpus), "--http", f"127.0.0.1:{port}",
         *extra],
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=sink,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/status", headers=headers, timeout=5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise AssertionError("the server did not answer within 90 s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def poll(check: Callable[[], bool], timeout: float = 60.0) -> bool:
    """Whether ``check`` became true within ``timeout`` seconds (checked every 0.2 s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


T = TypeVar("T")


def run_async(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run(main())`` on a thread of its own: an earlier test (Playwright's sync API)
    may have left an event loop set on the main thread, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(main())).result()
