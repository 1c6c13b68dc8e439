"""Compaction: text removed from the corpus leaves no bytes in the index folder, and the index
answers exactly as before; a failed compaction keeps the live generation."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka import Index, Settings
from narezka.cli import cli
from narezka.errors import ConfigError
from narezka.index import compaction, layout
from narezka.index.compaction import CompactionError
from narezka.store.edge import EdgeStore
from store.fake_qdrant import FakeQdrant, fake_qdrant

KB = Path(__file__).resolve().parents[2] / "examples" / "kb"
HASH = Settings(embedder="hash")
SECRET = "ZEBRAPLUMBUS42"
GONE_FILE = "payroll-ivanov-2026.md"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    shutil.copytree(KB, root)
    shutil.rmtree(root / ".narezka", ignore_errors=True)
    (root / "notes.md").write_text(
        f"# Заметки\n\nКодовое слово запуска — {SECRET}, его никто не должен видеть.\n\n"
        "## Прочее\n\nОбычный текст о доставке чая.\n",
        encoding="utf-8",
    )
    (root / GONE_FILE).write_text("# Зарплата\n\nОклад и премия за квартал.\n", encoding="utf-8")
    return root


def _holding(home: Path, needle: str) -> list[str]:
    """Files under ``home`` whose bytes contain ``needle`` (UTF-8)."""
    data = needle.encode("utf-8")
    return sorted(
        f.relative_to(home).as_posix()
        for f in home.rglob("*")
        if f.is_file() and data in f.read_bytes()
    )


def _forget(corpus: Path) -> None:
    (corpus / "notes.md").write_text(
        "# Заметки\n\nКодовое слово убрано.\n\n## Прочее\n\nОбычный текст о доставке чая.\n",
        encoding="utf-8",
    )
    (corpus / GONE_FILE).unlink()


def _answers(index: Index, modes: tuple[str, ...] = ("dense", "bm25", "hybrid")) -> list[object]:
    """Hits of a few queries in each mode; scores to 4 places (the engine sums float32s in
    segment order, so two equal indexes may differ in the last digits)."""
    queries = ("можно ли вернуть вскрытый чай", "доставка в другой город", "кодовое слово")
    return [
        [(h.chunk_id, round(h.score, 4), h.text) for h in index.search(q, k=5, mode=mode)]
        for q in queries
        for mode in modes
    ]


def test_compaction_removes_deleted_text_and_answers_like_a_fresh_index(
    corpus: Path, tmp_path: Path
) -> None:
    home = layout.default_home(corpus)
    with Index.create(corpus, HASH) as index:
        index.sync()
        _forget(corpus)
        report = index.sync()
        assert report.files_deleted == 1
        assert not any(SECRET in h.text for h in index.search("кодовое слово", k=10))
        # The point was deleted, yet its bytes are still in the engine's files: the reason
        # compaction exists (if the engine ever erases them itself, this says so).
        assert _holding(home, SECRET)
        dense, sources, stats = _answers(index, ("dense",)), index.sources(), index.stats()
        compacted = index.compact()
        assert _answers(index, ("dense",)) == dense
        assert index.sources() == sources
        assert (index.stats().files, index.stats().chunks) == (stats.files, stats.chunks)
    assert _holding(home, SECRET) == []
    assert _holding(home, GONE_FILE) == []
    assert compacted.points == stats.chunks and compacted.files == stats.files
    assert compacted.generation == "data-2" and compacted.bytes_after > 0
    assert sorted(p.name for p in home.iterdir() if p.name.startswith("data-")) == ["data-2"]
    # BM25 statistics forget the deleted points too (before, the engine still counted them):
    # every mode answers as an index built afresh from the corpus as it is now.
    with Index.create(corpus, HASH, store=tmp_path / "fresh") as fresh:
        fresh.sync()
        expected = _answers(fresh)
    # A fresh process sees the compacted generation, and syncs on from it incrementally.
    with Index.open(corpus) as index:
        assert _answers(index) == expected
        (corpus / "notes.md").write_text("# Заметки\n\nНовый текст.\n", encoding="utf-8")
        again = index.sync()
        assert again.files_changed == 1 and again.files_unchanged == stats.files - 1


def test_a_short_copy_keeps_the_live_generation(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = layout.default_home(corpus)
    with Index.create(corpus, HASH) as index:
        index.sync()
        before = _answers(index)
        meta = layout.read_meta(home)
        real_get = EdgeStore.get

        def lossy(self: EdgeStore, ids: list[str], *, with_vectors: bool = False) -> list[object]:
            return real_get(self, ids, with_vectors=with_vectors)[1:]  # type: ignore[return-value]

        monkeypatch.setattr(EdgeStore, "get", lossy)
        with pytest.raises(CompactionError, match="the index is kept as it was"):
            index.compact()
        monkeypatch.setattr(EdgeStore, "get", real_get)
        assert layout.read_meta(home) == meta
        assert not (home / "data-2").exists()
        assert _answers(index) == before
        assert index.compact().points == index.stats().chunks  # and it works once it can
        assert _answers(index) == before


def test_an_interrupted_compaction_is_undone(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = layout.default_home(corpus)
    with Index.create(corpus, HASH) as index:
        index.sync()
        meta = layout.read_meta(home)

        def interrupted(*args: object, **kwargs: object) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr("narezka.index.maintenance.copy_generation", interrupted)
        with pytest.raises(KeyboardInterrupt):
            index.compact()
        assert layout.read_meta(home) == meta
        assert not (home / "data-2").exists()
        assert index.search("чай", k=3)


def test_a_generation_still_in_use_is_retired_later(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = layout.default_home(corpus)
    with Index.create(corpus, HASH) as index:
        index.sync()
        monkeypatch.setattr("narezka.index.maintenance.retire", lambda *a: False)
        report = index.compact()
        assert any("another process still reads it" in w for w in report.warnings)
        assert layout.read_meta(home)["retired"] == ["data-1"]
        monkeypatch.undo()
        index.sync()  # the next run removes what was left
    assert "retired" not in layout.read_meta(home)
    assert not (home / "data-1").exists()


def test_the_cli_compacts_and_reports(corpus: Path) -> None:
    with Index.create(corpus, HASH) as index:
        index.sync()
    runner = CliRunner()
    text = runner.invoke(cli, ["compact", str(corpus)])
    assert text.exit_code == 0, text.output
    assert "into data-2" in text.output and " MB → " in text.output
    as_json = runner.invoke(cli, ["compact", str(corpus), "--json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    assert data["generation"] == "data-3" and data["points"] > 0 and data["files"] > 0
    missing = runner.invoke(cli, ["compact", str(corpus / "nowhere")])
    assert missing.exit_code == 2 and "no narezka index" in missing.output


@pytest.fixture
def fake() -> Iterator[FakeQdrant]:
    with fake_qdrant() as server:
        yield server


def test_a_server_index_compacts_into_a_new_collection(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    with Index.create(corpus, HASH, store=home, url=fake.url) as index:
        index.sync()
        before = _answers(index)
        report = index.compact()
        assert _answers(index) == before
    assert report.generation == "data-2"
    assert fake.collections() == ["narezka-record", "narezka_g2"]
    with Index.open(fake.url) as reader:  # readers by URL follow the published record
        assert _answers(reader) == before
        with pytest.raises(ConfigError, match="read-only"):
            reader.compact()


def test_generation_bytes_counts_only_the_generation(corpus: Path) -> None:
    home = layout.default_home(corpus)
    with Index.create(corpus, HASH) as index:
        index.sync()
    own = compaction.generation_bytes(home, "data-1")
    (home / "data-1" / "not-ours.bin").write_bytes(b"x" * 100_000)
    assert own > 0
    assert compaction.generation_bytes(home, "data-1") == own
    assert compaction.generation_bytes(home, "data-9") == 0
