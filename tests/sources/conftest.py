from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """narezka's cache for this test alone: sources stage there, whether the top hands them
    ``NAREZKA_CACHE_DIR`` or they are opened bare (the user cache dir, under this ``HOME``)."""
    cache = tmp_path / "home" / ".cache" / "narezka"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("NAREZKA_CACHE_DIR", str(cache))
    return cache
