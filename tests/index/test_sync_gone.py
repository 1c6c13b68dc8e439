"""A sync finds the files that are gone by merging its sorted walk with the manifest (issue
27: no set of every path walked is held): exactly those, wherever they sort."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

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
