"""Damaged engine files (issue 23, item 7): ``narezka check`` finds chunks the store lost or
cannot read, ``--repair`` re-indexes them from the embedding cache (or rebuilds), and every
sync starts with the cheap check, so damage is repaired before anyone misses an answer."""

from __future__ import annotations

import gc
import json
import os
import shutil
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.api.indexing import index
from narezka.cli import cli
from narezka.index import Index, writes
from narezka.index.integrity import IndexDamagedWarning, warn_if_damaged
from narezka.store import IndexDamagedError, Manifest

from conftest import copy_examples, index_data


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    corpus = copy_examples(tmp_path / "kb")
    # One file a write, so the engine has flushed most points into its segments: the damage
    # below hits them there (the last write stays in the engine's log, which replays it on
    # open, and one batch of the whole KB would come back whole).
    monkeypatch.setattr(writes, "WRITE_FILES", 1)
    index(corpus, embedder="hash")
    gc.collect()
    return corpus


@pytest.fixture
def chunks(kb: Path) -> int:
    """How many chunks the example KB's index holds, counted before a test damages it."""
    return len(everything(kb))


def segment(corpus: Path) -> Path:
    (found,) = (index_data(corpus / ".narezka") / "segments").iterdir()
    return found


def truncate_id_tracker(corpus: Path) -> None:
    mappings = segment(corpus) / "mutable_id_tracker.mappings"
    with mappings.open("r+b") as f:
        f.truncate(mappings.stat().st_size // 3)


def scribble_payloads(corpus: Path) -> None:
    with (segment(corpus) / "payload_storage" / "page_0.dat").open("r+b") as f:
        f.seek(4096)
        f.write(os.urandom(65536))


def everything(corpus: Path) -> list[tuple[str, str]]:
    with Index.open(corpus) as idx:
        return sorted((h.chunk_id, h.text) for h in idx.chunks())


def test_a_sound_index_checks_ok(kb: Path, chunks: int) -> None:
    result = CliRunner().invoke(cli, ["check", str(kb), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] and report["chunks"] == report["points"] == chunks


def test_a_truncated_id_tracker_is_found_and_repaired_from_the_cache(kb: Path, chunks: int) -> None:
    before = everything(kb)
    truncate_id_tracker(kb)
    with Index.open(kb) as idx:
        report = idx.check()
    assert not report.ok and report.points is not None and report.points < chunks
    assert len(report.missing) == chunks - report.points and report.files
    result = CliRunner().invoke(cli, ["check", str(kb)])
    assert result.exit_code == 1 and "missing from the store" in result.stdout
    assert "--repair" in result.stdout
    repaired = CliRunner().invoke(cli, ["check", str(kb), "--repair"])
    assert repaired.exit_code == 0, repaired.output
    assert "from the embedding cache" in repaired.stdout
    assert everything(kb) == before


def test_sync_finds_a_removed_segment_and_repairs_it(kb: Path, chunks: int) -> None:
    before = everything(kb)
    shutil.rmtree(segment(kb))
    with Index.open(kb) as idx:
        report = idx.sync()
        hits = idx.search("чай", k=3)
    assert any(f"{chunks} of {chunks} chunks are missing" in w for w in report.warnings)
    # Every vector came back from the embedding cache: the model was not asked again.
    assert (report.chunks_embedded, report.cache_hits, report.cache_misses) == (chunks, chunks, 0)
    assert hits and everything(kb) == before


def test_damaged_payload_pages_are_a_clear_error_then_rebuilt(kb: Path) -> None:
    before = everything(kb)
    scribble_payloads(kb)
    result = CliRunner().invoke(cli, ["search", "чай", "--store", str(kb), "-k", "10"])
    assert result.exit_code == 2
    assert "cannot be read" in result.stderr and "narezka check" in result.stderr
    assert "Traceback" not in result.stderr
    with Index.open(kb) as idx:
        report = idx.check()
    assert report.unreadable and report.needs_rebuild
    repaired = CliRunner().invoke(cli, ["check", str(kb), "--repair"])
    assert repaired.exit_code == 0 and "rebuilt the index" in repaired.stdout, repaired.output
    assert everything(kb) == before
    assert [p.name for p in (kb / ".narezka").glob("data-*")] == ["data-2"]


def test_sync_stops_on_unreadable_pages_naming_the_check(kb: Path) -> None:
    scribble_payloads(kb)
    for page in kb.glob("*.md"):
        page.write_text(page.read_text(encoding="utf-8") + "\nещё строка\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["sync", str(kb)])
    assert result.exit_code == 2 and "narezka check" in result.stderr, result.output


def test_an_unopenable_store_is_reported_and_rebuilt(kb: Path, chunks: int) -> None:
    seg = segment(kb)
    (seg / "segment.json").write_text("{bad", encoding="utf-8")
    with Index.open(kb) as idx:
        report = idx.check()
        assert report.problem and report.points is None and report.chunks == chunks
        repaired = idx.check(repair=True)
        assert repaired.repaired
        assert idx.check().ok
    with pytest.raises(IndexDamagedError):
        raise IndexDamagedError("named in the tree")  # the error is public


def test_a_search_warns_when_the_store_lost_points(kb: Path, chunks: int) -> None:
    shutil.rmtree(segment(kb))
    with warnings.catch_warnings(record=True) as caught, Index.open(kb) as idx:
        warnings.simplefilter("always")
        assert idx.search("чай", k=3) == []
        idx.search("чай", k=3)
    said = [str(w.message) for w in caught if issubclass(w.category, IndexDamagedWarning)]
    assert len(said) == 1  # once per generation, not per search
    assert f"0 points but the manifest {chunks}" in said[0] and "narezka check" in said[0]


def test_a_search_does_not_call_an_interrupted_write_damage(kb: Path, chunks: int) -> None:
    """Ctrl-C between the store's upsert and the manifest's commit leaves extra points: every
    answer is there and the next sync deletes them, so a reader is not told to repair."""

    class Counted:
        def __init__(self, points: int) -> None:
            self.points = points

        def count(self) -> int:
            return self.points

    folder = index_data(kb / ".narezka")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_damaged(Counted(chunks + 5), folder, "kb")  # type: ignore[arg-type]
        assert caught == []
        warn_if_damaged(Counted(chunks - 1), folder, "kb")  # type: ignore[arg-type]
    assert [w.category for w in caught] == [IndexDamagedWarning]


def test_check_repair_rebuilds_over_a_damaged_manifest(kb: Path) -> None:
    before = everything(kb)
    with (index_data(kb / ".narezka") / "manifest.sqlite").open("r+b") as f:
        f.write(os.urandom(8192))
    result = CliRunner().invoke(cli, ["check", str(kb), "--repair"])
    assert result.exit_code == 0 and "manifest.sqlite cannot be read" in result.stdout
    assert "rebuilt the index" in result.stdout
    assert everything(kb) == before


def test_a_search_answers_over_a_damaged_manifest_with_a_warning(kb: Path) -> None:
    with (index_data(kb / ".narezka") / "manifest.sqlite").open("r+b") as f:
        f.write(os.urandom(8192))
    with (
        pytest.warns(IndexDamagedWarning, match="manifest.sqlite cannot be read"),
        Index.open(kb) as idx,
    ):
        assert idx.search("чай", k=3)


def test_the_check_at_every_sync_compares_counts_before_ids(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sound index's sync costs two counts, not a read of every point id (issue 27: at
    100,000 files the ids alone took seconds of every no-change sync)."""

    def every_id(self: Manifest) -> list[str]:
        raise AssertionError("the ids were read although the counts agree")

    monkeypatch.setattr(Manifest, "point_ids", every_id)
    report = index(kb, embedder="hash")
    assert report.files_unchanged > 0 and not report.warnings


def test_a_search_over_a_damaged_manifest_tells_a_touched_file_by_its_text(kb: Path) -> None:
    """A hit whose file was touched since indexing sends the staleness check to the manifest;
    damaged, it cannot answer, and the search still does (with the warning), telling a touch
    from an edit by the file's text."""
    with Index.open(kb) as idx:
        touched = idx.search("чай", k=1)[0].file_path
    stat = (kb / touched).stat()
    os.utime(kb / touched, (stat.st_atime, stat.st_mtime + 60))
    with (index_data(kb / ".narezka") / "manifest.sqlite").open("r+b") as f:
        f.write(os.urandom(8192))
    with (
        pytest.warns(IndexDamagedWarning, match="manifest.sqlite cannot be read"),
        Index.open(kb) as idx,
    ):
        hits = idx.search("чай", k=3)
    assert hits and not any(h.stale for h in hits if h.file_path == touched)
