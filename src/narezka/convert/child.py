"""The converter child of :mod:`narezka.convert.isolate`: reads one request at a time from
its stdin (a JSON header, then the file's bytes), converts under the request's limits, and
answers on its stdout with one JSON frame (``R`` the conversion, ``E`` a ``ConvertError``,
``L`` a limit broken, ``P`` a slow step begun). It is started by the parent as
``python -c … serve_forever()`` and leaves when its stdin closes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct
import sys
from pathlib import Path
from typing import IO, Any

from narezka import environment
from narezka.convert import Converted, convert
from narezka.convert.limits import Limits
from narezka.convert.options import ConvertOptions
from narezka.errors import ConvertError

__all__ = ["ANSWER", "REQUEST", "decode", "progress", "serve_forever"]

REQUEST = struct.Struct(">IQ")
"""A request's frame: the JSON header's length, the file's length."""
ANSWER = struct.Struct(">cQ")
"""An answer's frame: its kind, its JSON body's length."""


_OUT: IO[bytes] | None = None
"""The child's channel to its parent (its stdout, moved aside so that nothing a library
prints can corrupt it)."""


def progress() -> None:
    """Tell the parent a slow step with its own timeout begins (a page read by OCR): the
    wall clock allows ``defaults.OCR_PAGE_SECONDS`` more. A no-op outside a child."""
    if _OUT is not None:
        _OUT.write(ANSWER.pack(b"P", 0))
        _OUT.flush()


def _read_exact(stream: IO[bytes], size: int) -> bytes | None:
    parts, got = [], 0
    while got < size:
        part = stream.read(size - got)
        if not part:
            return None
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _status(field: str) -> int:
    """A ``/proc/self/status`` field in bytes (0 where there is none)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _set_limits(limits: Limits) -> tuple[int, int] | None:
    """Set the child's soft address-space and CPU limits for one conversion; the address
    space's former limits, to restore (hard limits are left: a long-lived child must be able
    to lift its soft ones again)."""
    try:
        import resource
    except ImportError:  # not a POSIX system: the parent's wall clock is the limit
        return None
    before = resource.getrlimit(resource.RLIMIT_AS)
    hard = before[1]
    memory = limits.memory if hard == resource.RLIM_INFINITY else min(limits.memory, hard)
    resource.setrlimit(resource.RLIMIT_AS, (memory, hard))
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime) + 1
    cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    cpu = spent + int(limits.cpu + 0.5)
    if cpu_hard != resource.RLIM_INFINITY:
        cpu = min(cpu, cpu_hard)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu_hard))
    return before


def _restore(before: tuple[int, int] | None) -> None:
    if before is not None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, before)


def _memory_cause(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, MemoryError):
            return True
        text = str(seen)
        if "MemoryError" in text or "Memory allocation failed" in text or "bad_alloc" in text:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _encode(converted: Converted) -> dict[str, Any]:
    return {"markdown": converted.markdown, **converted.rest_json()}


def decode(answer: dict[str, Any]) -> Converted:
    return Converted.from_json(answer["markdown"], answer)


def _answer(kind: bytes, body: dict[str, Any]) -> None:
    assert _OUT is not None
    blob = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
    _OUT.write(ANSWER.pack(kind, len(blob)) + blob)
    _OUT.flush()


RECYCLE_RSS = 160 << 20
"""A child holding more memory than this after a conversion (a big file's heap, which Python
rarely gives back) is replaced: idle, it would hold it for the rest of the run."""


def _grown(limits: Limits) -> bool:
    return _status("VmRSS") > RECYCLE_RSS or _status("VmSize") > limits.memory // 2


def _one(request: dict[str, Any], data: bytes) -> bool:
    """Convert one file and answer; whether this child should be replaced afterwards."""
    environment.adopt(request["env"])  # the parent's of the moment: PATH, for tesseract…
    limits = Limits(*request["limits"])
    path = request["path"]
    before = _set_limits(limits)
    try:
        result: Converted | BaseException = convert(
            data,
            request["suffix"],
            path,
            boilerplate=frozenset(request["boilerplate"]),
            options=ConvertOptions(*request["options"]),
        )
    except (ConvertError, MemoryError, RecursionError) as exc:
        result = exc
    except Exception as exc:  # a converter's bug: a ConvertError, not a dead run
        result = ConvertError(path, f"cannot be converted ({type(exc).__name__})")
        result.__cause__ = exc
    finally:
        _restore(before)
    del data
    peak = _status("VmPeak")
    if isinstance(result, BaseException):
        if _memory_cause(result) or (peak and peak >= 0.9 * limits.memory):
            _answer(b"L", {"what": "memory", "peak": peak})
            return True
        recycle = _grown(limits)
        if isinstance(result, ConvertError):
            body = {"class": type(result).__name__, "problem": result.problem}
        else:
            body = {"class": "ConvertError", "problem": "too deep to convert"}
        _answer(b"E", {**body, "recycle": recycle})
        return recycle
    if len(result.markdown) > limits.output:
        _answer(b"L", {"what": "output", "chars": len(result.markdown)})
        return True
    recycle = _grown(limits) or peak >= 0.9 * limits.memory
    _answer(b"R", {**_encode(result), "recycle": recycle})
    return recycle


def serve_forever() -> None:
    """The child's loop: one request at a time from stdin, one answer each on stdout, until
    the parent closes stdin (or this child should be replaced)."""
    global _OUT
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a killed child leaves no core
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _OUT = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    source = sys.stdin.buffer
    while True:
        head = _read_exact(source, REQUEST.size)
        if head is None:
            return
        size, data_size = REQUEST.unpack(head)
        blob = _read_exact(source, size)
        data = _read_exact(source, data_size)
        if blob is None or data is None:
            return
        if _one(json.loads(blob), data):
            return
