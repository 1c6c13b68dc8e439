"""Shared fixtures: where the read-only shared data lives (configurable), example paths."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "kb"
TEST_DATA = REPO / "tests" / "data"
SHARED = Path(os.environ.get("NAREZKA_SHARED", REPO.parent / "shared"))


def copy_examples(dest: Path) -> Path:
    """A private copy of the example KB, without any index a user's run left in it: tests
    never read state the README's quick start leaves behind."""
    shutil.copytree(EXAMPLES, dest, ignore=shutil.ignore_patterns(".narezka"))
    return dest


def index_data(home: Path) -> Path:
    """The live data folder (engine shard and manifest) of the index kept in ``home``."""
    from narezka.index.layout import data_dir, read_meta

    return data_dir(home, read_meta(home))


def store_count(corpus: Path, dim: int = 64) -> int:
    """Points in the store of the index kept in ``corpus/.narezka`` (vectors of ``dim``)."""
    from narezka.store import open_store

    store = open_store(index_data(corpus / ".narezka"))
    try:
        store.ensure(dim)
        return store.count()
    finally:
        store.close()


settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60
)
settings.register_profile(
    "ci",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    max_examples=120,
    derandomize=True,
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session")
def check_chunks_tool() -> Path:
    """The chunk contract in executable form (shared/tools/check_chunks.py)."""
    tool = SHARED / "tools" / "check_chunks.py"
    if not tool.is_file():
        pytest.skip(f"{tool} not found; set NAREZKA_SHARED to the shared/ folder")
    return tool


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The trust audit's slow bombs (``@pytest.mark.bomb``) run only when asked:
    ``NAREZKA_BOMBS=1 python -m pytest tests/trust``; the quick probes always run."""
    if os.environ.get("NAREZKA_BOMBS") == "1":
        return
    skip = pytest.mark.skip(reason="a slow bomb of the trust audit: set NAREZKA_BOMBS=1 to run it")
    for item in items:
        if item.get_closest_marker("bomb"):
            item.add_marker(skip)


# A real headless Chromium (Debian's, driven by Playwright) for the HTML page tests, one per
# test module and defined once here: while a sync Playwright is open its event loop counts as
# running in this thread, so a second one refuses to start, and so does any later test's
# asyncio.run or anyio.run; a module's browser is closed before the next module runs. Without
# Chromium or Playwright
# the browser tests skip, saying why, except under CI=true, where a missing browser is a
# failure: CI installs it (.ci/run).
CHROMIUM = Path(os.environ.get("NAREZKA_CHROMIUM", "/usr/bin/chromium"))
# Offline and quiet: no first-run, sync, component or network chatter of its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run the browser tests (.ci/run installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    if not CHROMIUM.is_file():
        _unavailable(f"{CHROMIUM} not found: apt-get install chromium (or set NAREZKA_CHROMIUM)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
