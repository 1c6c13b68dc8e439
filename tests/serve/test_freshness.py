"""The server keeps its index fresh as the single writer: edits, additions and deletions
show in answers within the debounce interval; a server killed with SIGKILL mid-sync and
restarted leaves exactly what a clean build gives."""

from __future__ import annotations

import random
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("uvicorn", reason="the serve extra is not installed")

from index.test_crash_safety import mutate, state
from narezka.api.indexing import index

from conftest import copy_examples
from serve.helpers import poll, start_http, stop

WAIT = 60.0
"""Generous for a loaded 2-core machine; a passing run returns as soon as the change shows."""


def files_with(base: str, word: str) -> set[str]:
    r = httpx.get(f"{base}/search", params={"q": word, "k": 5, "mode": "bm25"}, timeout=30)
    assert r.status_code == 200, r.text
    return {h["file_path"] for h in r.json()["hits"] if word in h["text"]}


def test_edits_additions_and_deletions_show_while_serving(built_kb: Path) -> None:
    proc, base = start_http(built_kb, "--debounce-ms", "200")
    try:
        page = built_kb / "fresh.md"
        page.write_text("# Новинка\n\nЧай зюзюколь появился в продаже.\n", encoding="utf-8")
        assert poll(lambda: files_with(base, "зюзюколь") == {"fresh.md"}, WAIT)

        page.write_text("# Новинка\n\nЧай кракозябр заменил прежний.\n", encoding="utf-8")
        assert poll(lambda: files_with(base, "кракозябр") == {"fresh.md"}, WAIT)
        assert files_with(base, "зюзюколь") == set(), "the old text of an edited file is gone"

        page.unlink()
        assert poll(lambda: files_with(base, "кракозябр") == set(), WAIT)
        status = httpx.get(f"{base}/status").json()
        assert status["files"] == 18 and status["writer"]["last_error"] is None
    finally:
        stop(proc)


@pytest.mark.parametrize("trial", range(3))
def test_kill_9_mid_sync_then_restart_equals_a_clean_build(tmp_path: Path, trial: int) -> None:
    corpus = copy_examples(tmp_path / "kb")
    index(corpus, embedder="hash")
    mutate(corpus, 100 + trial)

    # The server answers before its first sync (work in every file, ~0.5 s with the hash
    # embedder) is done: the kill lands inside it, at a different moment each trial.
    victim, _ = start_http(corpus, "--no-watch")
    time.sleep(random.Random(trial).uniform(0.0, 0.3))
    victim.send_signal(signal.SIGKILL)
    victim.wait()

    again, base = start_http(corpus, "--no-watch")
    try:
        assert poll(lambda: not httpx.get(f"{base}/status").json()["writer"]["syncing"], WAIT)
        assert httpx.get(f"{base}/status").json()["writer"]["last_error"] is None
    finally:
        stop(again)
    got_count, got = state(corpus)

    clean = tmp_path / "clean"
    shutil.copytree(corpus, clean, ignore=shutil.ignore_patterns(".narezka", "serve-*.log"))
    index(clean, embedder="hash")
    want_count, want = state(clean)
    assert got == want
    assert got_count == want_count == len(want), "no duplicates or orphans in the store"


def test_hits_from_files_changed_since_the_sync_say_stale(built_kb: Path) -> None:
    # Issue 23 item 15: between a change and the next sync, hits carried the old text and
    # hits of deleted files came back, all "stale": false. One stat per file tells.
    from narezka import Index

    with Index.open(built_kb) as index:
        fresh = index.search("чай", k=8, mode="bm25")
        assert fresh and not any(h.stale for h in fresh)
        edited, deleted = (
            fresh[0].file_path,
            next(h.file_path for h in fresh if h.file_path != fresh[0].file_path),
        )
        with (built_kb / edited).open("a", encoding="utf-8") as f:
            f.write("\nДописано после синхронизации.\n")
        (built_kb / deleted).unlink()
        hits = index.search("чай", k=8, mode="bm25")
        assert {h.file_path for h in hits if h.stale} == {edited, deleted}
        assert all(h.stale == (h.file_path in (edited, deleted)) for h in hits)
        sections = index.search("чай", k=8, mode="bm25", expand="section")
        assert all(h.stale for h in sections if h.file_path in (edited, deleted))
        index.sync()
        assert not any(h.stale for h in index.search("чай", k=8, mode="bm25"))


def test_a_hit_read_before_a_sync_replaced_its_file_is_stale(tmp_path: Path) -> None:
    import contextlib
    import os

    from narezka.enrich.hashes import doc_hash
    from narezka.search.hits import Hit
    from narezka.search.staleness import mark_stale
    from narezka.store.manifest import FileEntry

    page = tmp_path / "a.md"
    page.write_text("# A\n\ntext\n", encoding="utf-8")
    stat = page.stat()
    opened: list[str] = []

    def records(entry: FileEntry | None) -> object:
        @contextlib.contextmanager
        def open_records() -> Iterator[object]:
            opened.append("x")
            yield type("Records", (), {"get": staticmethod(lambda _: entry)})()

        return open_records

    def hit(mtime: float, doc_hash: str = "old") -> Hit:
        payload = {"mtime": mtime, "doc_hash": doc_hash}
        return Hit(1.0, "a.md", "a.md", ("A",), "text", "text", 0, 5, 9, payload)

    def stale(h: Hit, entry: FileEntry | None) -> bool:
        return mark_stale([h], tmp_path, records(entry))[0].stale  # type: ignore[arg-type]

    now = FileEntry("a.md", stat.st_size, stat.st_mtime, "new", "", "")
    same = FileEntry("a.md", stat.st_size, stat.st_mtime, "old", "", "")
    earlier = stat.st_mtime - 10
    assert stale(hit(earlier), now)  # the points read are an older version than the record
    assert not stale(hit(earlier), same)  # only touched since, and the sync recorded it
    assert stale(hit(earlier), None)  # synced away meanwhile
    assert opened == ["x", "x", "x"]
    opened.clear()
    # An unmoved mtime asks the record too (#38 row 15: an edit can restore the old mtime).
    assert not stale(hit(stat.st_mtime, "old"), same), "untouched since indexed"
    assert stale(hit(stat.st_mtime), now), "a sync replaced its points, the mtime kept"
    assert opened == ["x", "x"], "one record opening per search"
    os.utime(page, (earlier - 5, earlier - 5))
    assert stale(hit(earlier), same), "changed since the last sync (not the hash recorded)"
    real = doc_hash(page.read_text(encoding="utf-8"))
    recorded = FileEntry("a.md", stat.st_size, stat.st_mtime, real, "", "")
    assert not stale(hit(earlier, real), recorded), "touched only: same size, same content"
    page.write_text("# A\n\nTEXT\n", encoding="utf-8")  # the same size, other words
    assert stale(hit(earlier, real), recorded)
    page.unlink()
    assert stale(hit(earlier), same) and stale(hit(stat.st_mtime), same)


def test_the_server_marks_hits_of_files_changed_since_its_sync(built_kb: Path) -> None:
    proc, base = start_http(built_kb, "--no-watch")
    try:
        page = built_kb / "faq.md"
        page.write_text(page.read_text(encoding="utf-8") + "\nПравка.\n", encoding="utf-8")
        r = httpx.get(f"{base}/search", params={"q": "чай", "k": 10, "mode": "bm25"}, timeout=30)
        hits = r.json()["hits"]
        assert any(h["file_path"] == "faq.md" for h in hits)
        assert all(h["stale"] == (h["file_path"] == "faq.md") for h in hits), hits
    finally:
        stop(proc)


CHANGES = ("untouched", "touched", "same_size_edit", "longer", "deleted")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    changes=st.lists(st.sampled_from(CHANGES), min_size=1, max_size=4),
    picks=st.lists(st.integers(0, 3), min_size=1, max_size=8),
)
def test_stale_exactly_when_the_content_changed_or_went(
    tmp_path: Path, changes: list[str], picks: list[int]
) -> None:
    # The invariant behind issue 23 item 15: whatever happened to each file since the sync,
    # its hits are stale exactly when its text is no longer what the index holds.
    import contextlib
    import os
    import uuid

    from narezka.enrich.hashes import doc_hash
    from narezka.search.hits import Hit
    from narezka.search.staleness import mark_stale
    from narezka.store.manifest import FileEntry

    root = tmp_path / uuid.uuid4().hex
    root.mkdir()
    records: dict[str, FileEntry] = {}
    hits: list[Hit] = []
    for n, change in enumerate(changes):
        page = root / f"p{n}.md"
        page.write_text(f"# P{n}\n\nabc\n", encoding="utf-8")
        os.utime(page, (1000.0 + n, 1000.0 + n))
        stat = page.stat()
        digest = doc_hash(page.read_text(encoding="utf-8"))
        records[page.name] = FileEntry(page.name, stat.st_size, stat.st_mtime, digest, "", "")
        payload = {"mtime": stat.st_mtime, "doc_hash": digest}
        hits.append(Hit(1.0, page.name, page.name, (), "abc", "abc", 0, 0, 3, payload))
        if change == "touched":
            os.utime(page, (2000.0, 2000.0))
        elif change == "same_size_edit":
            page.write_text(f"# P{n}\n\nxyz\n", encoding="utf-8")
        elif change == "longer":
            page.write_text(f"# P{n}\n\nabc and more\n", encoding="utf-8")
        elif change == "deleted":
            page.unlink()

    @contextlib.contextmanager
    def manifest() -> Iterator[object]:
        yield type("Records", (), {"get": staticmethod(records.get)})()

    chosen = [hits[i % len(hits)] for i in picks]
    marked = mark_stale(chosen, root, manifest)  # type: ignore[arg-type]
    for hit in marked:
        change = changes[int(hit.file_path[1:-3])]
        assert hit.stale == (change in ("same_size_edit", "longer", "deleted")), change
