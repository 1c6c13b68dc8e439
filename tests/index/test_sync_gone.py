"""A sync finds the files that are gone by merging its sorted walk with the manifest, and
past ``HELD_CHANGES`` changed files it finds them again by a second walk (issue 27: no set
of every path walked, no list of every changed file is held): the same result either way."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import narezka.index.changes as changes
from narezka.api.indexing import index
from narezka.embed import HashEmbedder
from narezka.store import Manifest

from conftest import index_data

NAMES = [
    "a.md", "a-b.md", "a/b.md", "a/c/d.md", "a0.md", "ab.md", "m/n.md", "m.md", "z.md",
    "Я/ё.md", "ж.md", "é.md", "日本.md",
]  # fmt: skip


def _indexed(corpus: Path) -> set[str]:
    with Manifest(index_data(corpus / ".narezka")) as manifest:
        return set(manifest.paths())


def _write(corpus: Path, names: list[str]) -> None:
    for name in names:
        path = corpus / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n\nТекст {name}.\n", encoding="utf-8")


@pytest.mark.parametrize("seed", range(6))
def test_a_sync_deletes_exactly_the_files_that_are_gone(tmp_path: Path, seed: int) -> None:
    corpus = tmp_path / "kb"
    _write(corpus, NAMES)
    index(corpus, embedder=HashEmbedder(64))
    rng = random.Random(seed)
    gone = set(rng.sample(NAMES, rng.randint(1, len(NAMES) - 1)))
    for name in gone:
        (corpus / name).unlink()
    added = ["a.c.md", "zz/new.md"][: seed % 3]
    _write(corpus, added)
    report = index(corpus, embedder=HashEmbedder(64))
    assert (report.files_deleted, report.files_new) == (len(gone), len(added))
    assert report.files_unchanged == len(NAMES) - len(gone)
    assert _indexed(corpus) == set(NAMES) - gone | set(added)


def test_a_file_met_but_not_stat_ed_is_not_taken_for_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the walk met whose stat then failed is named and keeps its points: only files
    the walk did not meet are gone."""
    corpus = tmp_path / "kb"
    _write(corpus, NAMES)
    index(corpus, embedder=HashEmbedder(64))
    (corpus / "z.md").unlink()
    real_stat = Path.stat

    def failing(self: Path, **kwargs: Any) -> Any:
        if self.name == "m.md":
            raise PermissionError(13, "Permission denied")
        return real_stat(self, **kwargs)

    monkeypatch.setattr(Path, "stat", failing)
    report = index(corpus, embedder=HashEmbedder(64))
    monkeypatch.undo()
    assert [e.path for e in report.skipped] == ["m.md"]
    assert not report.unmatched  # not taken for a file the patterns no longer match
    assert report.files_deleted == 1
    assert _indexed(corpus) == set(NAMES) - {"z.md"}


def _store_count(corpus: Path) -> int:
    with Manifest(index_data(corpus / ".narezka")) as manifest:
        return manifest.chunk_count()


def _run(corpus: Path) -> list[tuple[int, ...]]:
    """A first index, then a sync after edits, deletions and an addition: the counts of
    each report and of the index."""
    _write(corpus, NAMES)
    runs = []
    first = index(corpus, embedder=HashEmbedder(64))
    runs.append((first.files_new, first.chunks_embedded, _store_count(corpus)))
    for name in NAMES[::3]:
        (corpus / name).write_text(f"# {name}\n\nДругой текст.\n\nЕщё абзац.\n", "utf-8")
    for name in NAMES[1:3]:
        (corpus / name).unlink()
    _write(corpus, ["b-new.md"])
    again = index(corpus, embedder=HashEmbedder(64))
    runs.append(
        (
            again.files_new,
            again.files_changed,
            again.files_unchanged,
            again.files_deleted,
            again.chunks_embedded,
            _store_count(corpus),
        )
    )
    return runs


def test_past_the_changes_held_a_second_walk_syncs_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = _run(tmp_path / "held")
    assert held[0][0] == len(NAMES) and held[1][:4] == (1, 5, len(NAMES) - 7, 2)
    monkeypatch.setattr(changes, "HELD_CHANGES", 2)
    walked_again = _run(tmp_path / "again")
    assert walked_again == held
    assert _indexed(tmp_path / "again") == _indexed(tmp_path / "held")
