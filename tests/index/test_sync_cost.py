"""What a no-change sync costs per file (issue 27): one ``stat`` of each file, whatever the
progress callbacks ask for, so a sync of 100,000 unchanged files stays a few seconds."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from narezka.api.indexing import index
from narezka.index import Index
from narezka.index.syncing import Progress

from corpus_gen import write_corpus


def test_a_no_change_sync_stats_each_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    files = write_corpus(corpus, 10)
    index(corpus, embedder="hash")
    stats: Counter[str] = Counter()
    real_stat = Path.stat

    def counting(self: Path, **kwargs: Any) -> Any:
        if self.suffix == ".md":
            stats[str(self)] += 1
        return real_stat(self, **kwargs)

    monkeypatch.setattr(Path, "stat", counting)
    seen: list[str] = []
    sizes: list[int] = []
    totals: list[int] = []
    progress = Progress(on_file=seen.append, on_bytes=sizes.append, on_total=totals.append)
    with Index.open(corpus) as idx:
        report = idx.sync(progress=progress)
    assert report.files_unchanged == len(files) == 20
    assert len(stats) == 20 and max(stats.values()) == 1
    # The progress still hears of every file and every byte.
    whole = sum(f.stat().st_size for f in files)
    assert len(seen) == 20 and sum(sizes) == whole and totals == [whole]


def test_a_no_change_sync_knows_every_file_whatever_its_name(tmp_path: Path) -> None:
    """The survey reads the manifest in step with the sorted walk: names that sort across
    scripts, folders beside files of the same stem, and a file added between two indexed
    ones are each recognised (a wrong merge would re-chunk files or miss the new one)."""
    corpus = tmp_path / "corpus"
    names = ["a.md", "a/b.md", "a-b.md", "ab.md", "Я/ё.md", "ж.md", "é.md", "z/z.md"]
    for name in names:
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(f"# {name}\n\nText of {name}.\n", encoding="utf-8")
    index(corpus, embedder="hash")
    (corpus / "a" / "c.md").write_text("# new\n\nA file added between two.\n", encoding="utf-8")
    with Index.open(corpus) as idx:
        report = idx.sync()
    assert report.files_unchanged == len(names)
    assert report.files_new == 1
