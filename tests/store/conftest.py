"""Store fixtures: every backend behind one parametrized ``store`` fixture."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from narezka.store.base import VectorStore

StoreFactory = Callable[[], VectorStore]


@pytest.fixture(params=["edge", "server", "rest"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def new_store(backend: str, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens the backend's store afresh on each call: the same directory for edge (so a call
    after ``close()`` reopens it), one shared in-memory client for the server adapter, and a
    real HTTP client of the fake Qdrant REST server (``fake_qdrant``) for ``rest``."""
    if backend == "edge":
        from narezka.store.edge import EdgeStore

        # No optimize on close: tests reopen often, and the merge is not what they check.
        yield lambda: EdgeStore(tmp_path / "index", optimize_on_close=False)
        return
    if backend == "rest":
        from narezka.store.server import ServerStore

        from .fake_qdrant import fake_qdrant

        with fake_qdrant() as fake:
            yield lambda: ServerStore(fake.url)
        return
    from qdrant_client import QdrantClient

    from narezka.store.server import ServerStore

    client = QdrantClient(":memory:")

    class Reopenable(ServerStore):
        def close(self) -> None:  # keep the in-memory client: it *is* the data
            self._ready = False

    yield lambda: Reopenable(client=client)


@pytest.fixture
def store(new_store: StoreFactory) -> Iterator[VectorStore]:
    """An ensured 4-d store with BM25 vectors, closed afterwards."""
    s = new_store()
    s.ensure(4, sparse=True)
    yield s
    s.close()
