"""A full disk (issue 23, item 6): every command stops with a clear error naming the device
and the space needed, before the engine writes through its memory maps (a bus error, exit
135, before); a search never needs to write its query's vector; freeing space is enough."""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from narezka import diskspace
from narezka.api.indexing import index
from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder
from narezka.errors import DiskFullError
from narezka.index import Index

from conftest import copy_examples


class Usage(NamedTuple):
    total: int
    used: int
    free: int


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    corpus = copy_examples(tmp_path / "kb")
    index(corpus, embedder="hash")
    gc.collect()
    return corpus


def full_disk(monkeypatch: pytest.MonkeyPatch, free: int = 0) -> None:
    monkeypatch.setattr(diskspace.shutil, "disk_usage", lambda _: Usage(2**30, 2**30 - free, free))


def test_a_first_index_on_a_full_disk_names_the_device_and_the_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = copy_examples(tmp_path / "kb")
    full_disk(monkeypatch, free=2**20)
    with pytest.raises(
        DiskFullError, match=r"not enough free space on .* MiB needed, 1\.0 MiB free"
    ):
        index(corpus, embedder="hash")


def test_a_sync_needing_more_than_is_free_stops_before_writing(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (kb / "big.md").write_text("# Большой\n\n" + "Много текста про чай. " * 20000, encoding="utf-8")
    # Room to open the engine, not to store a 440 KB file's points.
    full_disk(monkeypatch, free=diskspace.OPEN_HEADROOM + 2**20)
    with pytest.raises(DiskFullError, match="to store 1 files"), Index.open(kb) as idx:
        idx.sync()
    monkeypatch.undo()
    with Index.open(kb) as idx:  # space freed: the next sync converges
        report = idx.sync()
        assert report.files_new == 1
        assert idx.search("Много текста про чай", k=1)[0].file_path == "big.md"


def test_search_on_a_full_disk_says_why_it_cannot(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full_disk(monkeypatch)
    with pytest.raises(DiskFullError, match="to open the index"), Index.open(kb) as idx:
        idx.search("чай", k=1)
    monkeypatch.undo()
    with Index.open(kb) as idx:
        assert idx.search("чай", k=1)


def test_write_needs_grows_with_text_and_dimension() -> None:
    small = diskspace.write_needs(1000, 64)
    assert diskspace.write_needs(10_000, 64) > small
    assert diskspace.write_needs(1000, 768) > small
    assert small >= 4 * 1000  # the text is stored at least four times over


def test_a_full_disk_under_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache._db.execute("PRAGMA max_page_count=8")  # sqlite's own "disk": 8 pages
    vectors = [(os.urandom(32), np.ones(4096, dtype=np.float32)) for _ in range(8)]
    with pytest.raises(DiskFullError, match=r"c\.sqlite: .* is full \(database or disk is full\)"):
        cache.put_many("e", vectors)
    assert cache.stats().entries == 0  # rolled back, still usable
    cache.close()


def test_a_query_whose_vector_cannot_be_cached_still_embeds(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache._db.execute("PRAGMA max_page_count=2")
    model = CachedEmbedder(get_embedder("hash:2048"), cache)
    assert model.embed_queries(["чай " * 50]).shape == (1, 2048)
    with pytest.raises(DiskFullError):
        model.embed(["другой текст " * 50])  # what a sync stores must be stored
    cache.close()


def test_the_lock_holds_without_room_for_its_pid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.store import IndexInUseError
    from narezka.store.lock import DirectoryLock

    real = os.write

    def enospc(fd: int, data: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", enospc)
    lock = DirectoryLock(tmp_path)
    monkeypatch.setattr(os, "write", real)
    with pytest.raises(IndexInUseError):
        DirectoryLock(tmp_path)
    lock.release()


# ---- a real small file system, where this machine lets us mount one --------------------


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_index_on_an_8_mb_tmpfs_exits_2_with_a_message_not_a_bus_error(
    tmp_path: Path, tmpfs: Path
) -> None:
    corpus = copy_examples(tmp_path / "kb")
    done = subprocess.run(
        [sys.executable, "-m", "narezka", "index", str(corpus), "--embedder", "hash",
         "--store", str(tmpfs / "idx")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "not enough free space on tmpfs" in done.stderr and "MiB needed" in done.stderr


def test_a_full_cache_disk_on_tmpfs_is_named(tmpfs: Path) -> None:
    with EmbeddingCache(tmpfs / "c.sqlite") as cache:
        rows = ((os.urandom(32), np.ones(65536, dtype=np.float32)) for _ in range(64))
        with pytest.raises(DiskFullError, match="tmpfs"):
            cache.put_many("e", rows)


def test_sqlite_names_a_full_database_as_full() -> None:
    from narezka.sqlite_cache import is_full

    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA max_page_count=2")
    db.execute("CREATE TABLE t (x BLOB)")
    with pytest.raises(sqlite3.OperationalError) as caught:
        db.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
    assert is_full(caught.value)


def test_compact_without_room_for_the_copy_changes_nothing(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full_disk(monkeypatch, free=diskspace.OPEN_HEADROOM + 2**10)
    with pytest.raises(DiskFullError, match="to compact the index"), Index.open(kb) as idx:
        idx.compact()
    assert sorted(p.name for p in (kb / ".narezka").glob("data-*")) == ["data-1"]
