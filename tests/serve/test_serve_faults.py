"""A damaged embedding cache under ``narezka serve`` (issue 23, item 8): /search answered 500
on b71bcf2; the cache is moved aside at start and the server answers."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the serve extra is not installed")

import httpx

from serve.helpers import start_http, stop


def test_search_answers_over_a_damaged_cache(built_kb: Path) -> None:
    gc.collect()  # the fixture's sync leaves its cache connection to the collector
    cache = built_kb / ".narezka" / "embeddings.sqlite"
    with cache.open("r+b") as f:
        f.write(os.urandom(8192))
    proc, base = start_http(built_kb, "--no-watch")
    try:
        response = httpx.get(f"{base}/search", params={"q": "чай", "k": 2}, timeout=30)
        assert response.status_code == 200, response.text
        assert response.json()
    finally:
        stop(proc)
    assert list(cache.parent.glob("embeddings.sqlite.damaged-*"))
