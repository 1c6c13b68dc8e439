"""A read-only index (#38 row 10): searched from a private copy that is removed on close;
writing commands refuse, naming the folder."""

from __future__ import annotations

import gc
import os
import tempfile
from pathlib import Path

import pytest

from narezka.api.indexing import index
from narezka.errors import ConfigError
from narezka.index import Index, sharing


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "tea.md").write_text("# Tea\n\nOpened packs return within 14 days.\n", "utf-8")
    index(corpus, embedder="hash")
    gc.collect()
    # As if this user could not write it (tests run as root, whom chmod does not stop).
    monkeypatch.setattr(sharing.os, "access", lambda path, mode: False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return corpus


def test_a_read_only_index_is_searched_from_a_copy_removed_on_close(kb: Path) -> None:
    before = sorted(p.name for p in (kb / ".narezka").rglob("*"))
    with Index.open(kb) as ix:
        assert ix.home is not None and ix.home.name.startswith(sharing.READONLY_PREFIX)
        assert [h.file_path for h in ix.search("return opened packs", mode="bm25")] == ["tea.md"]
        assert ix.corpus == kb.resolve()
        copy = ix.home
    assert not copy.exists()
    assert sorted(p.name for p in (kb / ".narezka").rglob("*")) == before


@pytest.mark.parametrize("action", ["sync", "compact", "check"])
def test_writing_a_read_only_index_is_refused_by_name(kb: Path, action: str) -> None:
    with Index.open(kb) as ix, pytest.raises(ConfigError, match="read-only for you") as caught:
        getattr(ix, action)()
    assert str(kb / ".narezka") in str(caught.value) and action in str(caught.value)


def test_a_copy_that_cannot_be_made_is_named_and_leaves_nothing(
    kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sharing.shutil, "copytree", fail)
    with pytest.raises(ConfigError, match="private copy to search could not be made"):
        Index.open(kb)
    assert os.listdir(tmp_path / "tmp") == []


def test_the_copy_needs_its_room(kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from narezka import diskspace
    from narezka.errors import DiskFullError

    monkeypatch.setattr(diskspace, "free_bytes", lambda _: 0)
    with pytest.raises(DiskFullError, match="read-only index"):
        Index.open(kb)
    assert os.listdir(tmp_path / "tmp") == []


# ---- the reserve a sync holds to close the engine on a disk filled meanwhile (row 11) ----


def test_a_sync_holds_its_reserve_and_gives_it_back(tmp_path: Path) -> None:
    from narezka.index.layout import remove_generation

    folder = tmp_path / "data-1"
    folder.mkdir()
    with sharing.reserve(folder):
        spare = folder / sharing.RESERVE_NAME
        assert spare.stat().st_size == sharing.RESERVE_BYTES
        assert spare.stat().st_blocks * 512 >= sharing.RESERVE_BYTES  # blocks, not a hole
    assert not spare.exists()
    with pytest.raises(RuntimeError), sharing.reserve(folder):
        raise RuntimeError("the run failed")
    assert os.listdir(folder) == []
    with sharing.reserve(folder):  # a run killed here leaves it; retiring removes it by name
        assert remove_generation(tmp_path, "data-1")
    assert not folder.exists()


def test_no_reserve_where_there_is_no_room_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sharing, "free_bytes", lambda _: sharing.RESERVE_BYTES)
    with sharing.reserve(tmp_path):
        assert os.listdir(tmp_path) == []
    monkeypatch.undo()

    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sharing, "_allocate", full)
    with sharing.reserve(tmp_path):
        assert os.listdir(tmp_path) == []


class _Store:
    def __init__(self, path: Path, fails: bool) -> None:
        self.path, self.fails, self.optimize_on_close, self.closed = path, fails, True, False

    def close(self) -> None:
        self.closed = True
        if self.fails:
            raise Exception("Service runtime error: failed to write: No space left on device")


def test_a_store_on_a_full_disk_closes_without_merging_and_names_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.errors import DiskFullError

    roomy = _Store(tmp_path, fails=False)
    sharing.close_store(roomy)  # type: ignore[arg-type]
    assert roomy.closed and roomy.optimize_on_close
    monkeypatch.setattr(sharing, "free_bytes", lambda _: 0)
    full = _Store(tmp_path, fails=False)
    sharing.close_store(full)  # type: ignore[arg-type]
    assert full.closed and not full.optimize_on_close
    with pytest.raises(DiskFullError, match=r"is full \(closing the index") as caught:
        sharing.close_store(_Store(tmp_path, fails=True))  # type: ignore[arg-type]
    assert str(tmp_path) in str(caught.value) and "Service runtime" in str(caught.value)
