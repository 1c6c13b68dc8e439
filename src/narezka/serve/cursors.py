"""Cursors: where the next page of a reply starts, bound to the request that gave it."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence

from narezka.serve.errors import ServiceError


def _fingerprint(args: Sequence[object]) -> str:
    return hashlib.sha256(json.dumps(list(args), ensure_ascii=False).encode()).hexdigest()[:16]


def make_cursor(offset: int, args: Sequence[object]) -> str:
    raw = json.dumps({"o": offset, "f": _fingerprint(args)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cursor_offset(cursor: str | None, args: Sequence[object]) -> int:
    """Where a page starts; a cursor only continues the request that gave it."""
    if not cursor:
        return 0
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset, fingerprint = int(data["o"]), str(data["f"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise ServiceError("the cursor is not one this server gave out") from None
    if fingerprint != _fingerprint(args) or offset < 0:
        raise ServiceError("the cursor belongs to a request with other arguments")
    return offset
