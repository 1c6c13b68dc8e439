from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """narezka's cache for this test alone: sources stage there."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("NAREZKA_CACHE_DIR", str(cache))
    return cache
