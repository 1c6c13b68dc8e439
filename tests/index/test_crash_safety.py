"""kill -9 at random moments of a real sync: the next sync must leave exactly what a clean
build would — no duplicate, orphaned or missing chunk."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from narezka.api.indexing import index
from narezka.store import Manifest, open_store

from conftest import copy_examples, index_data

TRIALS = int(os.environ.get("NAREZKA_CRASH_TRIALS", "8"))


def mutate(corpus: Path, seed: int) -> None:
    """Edit every page a little, delete one, add one: a sync with work in every file."""
    rng = random.Random(seed)
    pages = sorted(corpus.rglob("*.md"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        cut = rng.randrange(len(text) // 2, len(text))
        page.write_text(
            text[:cut] + f"\n\nПравка {seed}: новое предложение.\n" + text[cut:], encoding="utf-8"
        )
    pages[rng.randrange(len(pages))].unlink()
    (corpus / f"new-{seed}.md").write_text(f"# Новая страница {seed}\n\nТекст.\n", encoding="utf-8")


def state(corpus: Path) -> tuple[int, dict[str, str]]:
    """(points in the store, point id → content hash per the manifest), checked consistent."""
    home = index_data(corpus / ".narezka")
    with Manifest(home) as manifest:
        assert not manifest.pending(), "a finished sync leaves nothing pending"
        expected = {
            c.point_id: c.content_hash for p in manifest.paths() for c in manifest.get(p).chunks
        }  # type: ignore[union-attr]
    store = open_store(home)
    try:
        store.ensure(64)
        count = store.count()
        points = store.get(sorted(expected))
    finally:
        store.close()
    assert {p.id: p.payload["content_hash"] for p in points} == expected
    return count, expected


def sync_cli(corpus: Path, *options: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "narezka", "index", str(corpus), "--embedder", "hash", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("trial", range(TRIALS))
def test_kill_9_mid_sync_then_resync_equals_a_clean_build(tmp_path: Path, trial: int) -> None:
    corpus = tmp_path / "kb"
    copy_examples(corpus)
    index(corpus, embedder="hash")
    mutate(corpus, trial)

    # Every other trial kills a run whose files are chunked by worker processes.
    victim = sync_cli(corpus, "--jobs", "2" if trial % 2 else "1")
    time.sleep(random.Random(trial).uniform(0.2, 2.5))
    victim.send_signal(signal.SIGKILL)
    victim.wait()

    assert sync_cli(corpus).wait(timeout=120) == 0
    got_count, got = state(corpus)

    clean = tmp_path / "clean"
    shutil.copytree(corpus, clean, ignore=shutil.ignore_patterns(".narezka"))
    index(clean, embedder="hash")
    want_count, want = state(clean)
    assert got == want
    assert got_count == want_count == len(want), "no duplicates or orphans in the store"
