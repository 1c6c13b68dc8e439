"""The server keeps its index fresh as the single writer: edits, additions and deletions
show in answers within the debounce interval; a server killed with SIGKILL mid-sync and
restarted leaves exactly what a clean build gives."""

from __future__ import annotations

import random
import shutil
import signal
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn", reason="the serve extra is not installed")

from narezka.pipeline.indexing import index
from pipeline.test_crash_safety import mutate, state

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
