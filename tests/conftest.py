"""Shared fixtures: where the read-only shared data lives (configurable), example paths."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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
