"""Conversions in a child process with memory, CPU time, wall time and output limits.

A few hundred bytes of ODT, Word, Excel or PDF can ask a converter for gigabytes or hours
(a run of billions of spaces, a table cell spanning a million columns, a form drawn inside
itself). Converted in the process that indexes or serves, such a file took the whole run or
the server down with it, without a word. :func:`convert_bounded` converts in a child
process instead, under limits derived from the file's size (:class:`~narezka.convert.limits.
Limits`): its address space (``RLIMIT_AS``) and CPU time (``RLIMIT_CPU``) set in the child,
a wall clock kept by the parent, which kills the child when it runs over, and the Markdown's
length checked before it is sent back. A breach is a
:class:`~narezka.errors.ConversionLimitError` naming the file and the limit; the run goes on.

The child is a fresh interpreter (``subprocess``: fork and exec at once, safe from a parent
that runs threads, which a plain ``fork`` of the server or of a sync with embedding threads
is not), started on the first conversion and kept for the next ones: each conversion costs a
round trip through a pipe, not a process. A child whose memory grew past half its floor, or
that broke a limit, is replaced. Threads that convert at once get a child each (idle children
are kept up to ``MAX_IDLE``). Requests carry the file's bytes, the run's ``ConvertOptions``
and the environment of the
moment; answers come back as JSON (no pickle from the process that parsed
the hostile bytes).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection
from dataclasses import astuple
from pathlib import Path
from typing import IO, Any

from narezka import defaults, environment
from narezka.convert import Converted, convert
from narezka.convert.child import ANSWER, REQUEST, decode
from narezka.convert.limits import Limits, human_bytes
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.errors import (
    ConversionLimitError,
    ConvertError,
    NoTextLayerError,
    PasswordProtectedError,
    UnsafeFileError,
)

__all__ = ["convert_bounded", "shutdown"]

MAX_IDLE = 4
"""Idle children kept for the next conversion (one per thread that converts at once)."""
INLINE = False
"""For tests only: convert in this process, unbounded (a test that replaces a converter's
function in this process needs the conversion to see it). Never set by narezka itself."""
_ERRORS: dict[str, type[ConvertError]] = {
    cls.__name__: cls
    for cls in (
        ConvertError,
        PasswordProtectedError,
        NoTextLayerError,
        UnsafeFileError,
        ConversionLimitError,
    )
}
_CHILD = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from narezka.convert.child import serve_forever; serve_forever()"
)
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


class _Child:
    def __init__(self) -> None:
        self.pid_of_owner = os.getpid()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, _PACKAGE_ROOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def close(self, *, kill: bool = False) -> None:
        process = self.process
        if kill:
            with contextlib.suppress(OSError):
                process.kill()
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                process.kill()
            process.wait()

    def ask(self, request: bytes, data: bytes, limits: Limits) -> tuple[bytes, bytes]:
        """Send one request; the answer's kind and body. Raises ``_Died`` (the child is gone
        or ran out of time)."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(REQUEST.pack(len(request), len(data)) + request)
            stdin.write(data)
            stdin.flush()
        except OSError as exc:
            raise _Died("unsent") from exc
        deadline = time.monotonic() + limits.wall
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while True:
                kind, body = self._frame(stdout, selector, deadline)
                if kind != b"P":
                    return kind, body
                deadline += defaults.OCR_PAGE_SECONDS

    def _frame(
        self, stdout: IO[bytes], selector: selectors.BaseSelector, deadline: float
    ) -> tuple[bytes, bytes]:
        head = self._read(stdout, selector, ANSWER.size, deadline)
        kind, size = ANSWER.unpack(head)
        return kind, self._read(stdout, selector, size, deadline) if size else b""

    def _read(
        self, stdout: IO[bytes], selector: selectors.BaseSelector, size: int, deadline: float
    ) -> bytes:
        parts: list[bytes] = []
        got = 0
        fd = stdout.fileno()
        while got < size:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                raise _Died("time")
            part = os.read(fd, min(size - got, 1 << 20))
            if not part:
                raise _Died("gone")
            parts.append(part)
            got += len(part)
        return b"".join(parts)


class _Died(Exception):
    """The child is gone (``gone``), was gone before it had the request (``unsent``), or ran
    out of wall time (``time``)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


_IDLE: list[_Child] = []
_LOCK = threading.Lock()


def _take() -> _Child:
    with _LOCK:
        while _IDLE:
            child = _IDLE.pop()
            if child.pid_of_owner == os.getpid() and child.process.poll() is None:
                return child
            if child.pid_of_owner == os.getpid():
                child.close()
            # A child of the process this one was forked from is that process's to close.
    return _Child()


def _give_back(child: _Child) -> None:
    with _LOCK:
        if len(_IDLE) < MAX_IDLE:
            _IDLE.append(child)
            return
    child.close()


def shutdown() -> None:
    """Close the idle children (at exit, and for tests)."""
    with _LOCK:
        children = [c for c in _IDLE if c.pid_of_owner == os.getpid()]
        _IDLE.clear()
    for child in children:
        child.close()


atexit.register(shutdown)


def _died_message(child: _Child, why: str, limits: Limits) -> str:
    if why == "time":
        return f"conversion ran over {limits.wall:.0f} s of time (limit: {limits.wall:.0f} s)"
    code = child.process.returncode
    if code is not None and -code == getattr(signal, "SIGXCPU", -1):
        return f"conversion exceeded {limits.cpu:.0f} s of CPU time (limit: {limits.cpu:.0f} s)"
    name = signal.Signals(-code).name if code is not None and code < 0 else f"exit {code}"
    return (
        f"conversion stopped ({name}) under its memory limit of {human_bytes(limits.memory)}"
        " (the converter crashed or ran out of memory)"
    )


def _limit_message(body: dict[str, Any], limits: Limits) -> str:
    if body.get("what") == "output":
        return (
            f"conversion gave {body.get('chars', 0):,} characters of text "
            f"(limit: {limits.output:,})"
        )
    return (
        f"conversion exceeded {human_bytes(limits.memory)} of memory "
        f"(limit: {human_bytes(limits.memory)}; NAREZKA_CONVERT_MEMORY_MB sets it)"
    )


def convert_bounded(
    data: bytes,
    suffix: str,
    path: str = "",
    *,
    boilerplate: Collection[str] = frozenset(),
    options: ConvertOptions = DEFAULT,
) -> Converted:
    """``narezka.convert.convert`` in a child process under ``Limits.for_size(len(data),
    options)``, the run's ``options`` (OCR, limits) handed to the child with the file.

    Raises what ``convert`` raises, and ``ConversionLimitError`` naming ``path`` and the
    limit when the conversion broke one (its child is killed; the next call starts another).
    """
    if INLINE:
        return convert(data, suffix, path, boilerplate=boilerplate, options=options)
    name = path or f"<{suffix.lower()} file>"
    limits = Limits.for_size(len(data), options)
    env = environment.for_child()
    request = json.dumps(
        {
            "suffix": suffix,
            "path": name,
            "boilerplate": sorted(boilerplate),
            "limits": [limits.memory, limits.cpu, limits.wall, limits.output],
            "env": env,
            "options": astuple(options),
        },
        ensure_ascii=False,
    ).encode("utf-8", "surrogatepass")
    for attempt in (1, 2):
        child = _take()
        try:
            kind, body = child.ask(request, data, limits)
            break
        except _Died as died:
            child.close(kill=True)
            if died.why == "unsent" and attempt == 1:
                continue  # an idle child that had died meanwhile: the file is not to blame
            raise ConversionLimitError(name, _died_message(child, died.why, limits)) from None
        except BaseException:  # Ctrl-C while waiting: the child's answer would be out of step
            child.close(kill=True)
            raise
    answer = json.loads(body) if body else {}
    if kind in (b"R", b"E"):
        if answer.pop("recycle", False):
            child.close()
        else:
            _give_back(child)
        if kind == b"R":
            return decode(answer)
        raise _ERRORS.get(answer.get("class", ""), ConvertError)(name, answer["problem"])
    child.close(kill=True)
    raise ConversionLimitError(name, _limit_message(answer, limits))
