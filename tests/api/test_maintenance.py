"""sync with the settings an index was built with, watch on file events, push to a server."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from qdrant_client import QdrantClient

from narezka.api.indexing import index, read_index_meta
from narezka.api.maintenance import push, sync, watch
from narezka.cli import cli
from narezka.store import Manifest
from narezka.store.server import ServerStore

from conftest import copy_examples, index_data


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    corpus = tmp_path / "kb"
    copy_examples(corpus)
    index(corpus, embedder="hash", strategy="sentences", size=300, unit="chars")
    return corpus


def test_sync_reuses_the_settings_the_index_was_built_with(kb: Path) -> None:
    meta = read_index_meta(kb / ".narezka")
    assert meta["strategy"] == "sentences" and meta["params"]["size"] == 300
    page = kb / "orders.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nНовая строка.\n", encoding="utf-8")
    report = sync(kb)
    # Same strategy and size: only the edited file changes, nothing else is re-embedded.
    assert (report.files_changed, report.files_unchanged) == (1, 17)
    assert 1 <= report.chunks_embedded <= 2


def test_sync_cli_prints_a_summary(kb: Path) -> None:
    result = CliRunner().invoke(cli, ["sync", str(kb)])
    assert result.exit_code == 0 and "18 unchanged" in result.stdout


def test_watch_syncs_after_a_change(kb: Path) -> None:
    stop = threading.Event()
    reports = []

    def run() -> None:
        for report in watch(kb, debounce_ms=200, stop_event=stop):
            reports.append(report)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not reports and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    (kb / "new-page.md").write_text("# Новая страница\n\nПро чай.\n", encoding="utf-8")
    while len(reports) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    stop.set()
    thread.join(timeout=10)
    assert len(reports) >= 2, "a change triggers a sync"
    assert reports[0].files_unchanged == 18
    assert sum(r.files_new for r in reports[1:]) == 1


def test_push_copies_every_point_with_ids_vectors_and_payloads(kb: Path) -> None:
    target = ServerStore(client=QdrantClient(":memory:"), collection="copy")
    copied = push(kb, target)
    with Manifest(index_data(kb / ".narezka")) as manifest:
        ids = manifest.point_ids()
    assert copied == len(ids) == target.count()
    sample = target.get(ids[:5], with_vectors=True)
    assert [p.id for p in sample] == ids[:5]
    assert all(p.dense is not None and p.payload["content_hash"] for p in sample)


def test_watch_and_serve_share_one_debounce_default() -> None:
    # Written twice before (1,600 ms for watch, 800 for serve): one default, read by all four.
    import inspect

    from narezka.cli.index import watch_command
    from narezka.cli.serve import serve_command
    from narezka.defaults import WATCH_DEBOUNCE_MS
    from narezka.serve.service import Service

    def flag(command: object) -> object:
        return next(p.default for p in command.params if p.name == "debounce_ms")  # type: ignore[attr-defined]

    found = {
        "watch()": inspect.signature(watch).parameters["debounce_ms"].default,
        "Service": inspect.signature(Service).parameters["debounce_ms"].default,
        "narezka watch": flag(watch_command),
        "narezka serve": flag(serve_command),
    }
    assert found == dict.fromkeys(found, WATCH_DEBOUNCE_MS)
