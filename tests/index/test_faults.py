"""Damaged files under ``.narezka/`` (issue 23, items 8 and 9): a damaged cache is moved aside
and rebuilt; a damaged record, manifest or store file is named with the ``--rebuild`` that
fixes it; a rebuild leaves no generation of the index it replaced."""

from __future__ import annotations

import gc
import os
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.api.indexing import index
from narezka.cli import cli
from narezka.embed.cache import EmbeddingCache
from narezka.errors import NarezkaWarning
from narezka.index import Index
from narezka.sqlite_cache import CacheDamagedWarning
from narezka.store import IndexDamagedError

from conftest import copy_examples, index_data


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    corpus = copy_examples(tmp_path / "kb")
    index(corpus, embedder="hash")
    gc.collect()  # index() leaves its cache connection to the collector: close it, as a CLI run
    return corpus


def scribble(path: Path, size: int = 8192) -> None:
    """Random bytes over the head of a file, as the audit did."""
    with path.open("r+b") as f:
        f.write(os.urandom(size))


def search_cli(corpus: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["search", "чай", "--store", str(corpus), "-k", "1"])
    return result.exit_code, result.stdout, result.stderr


# ---- item 8: a damaged cache is a cache ---------------------------------------------------


def test_a_damaged_embedding_cache_is_moved_aside_and_search_answers(kb: Path) -> None:
    cache = kb / ".narezka" / "embeddings.sqlite"
    scribble(cache)
    with (
        pytest.warns(CacheDamagedWarning, match="embeddings.sqlite is damaged"),
        Index.open(kb) as idx,
    ):
        hits = idx.search("чай", k=1)
    assert hits
    aside = sorted(cache.parent.glob("embeddings.sqlite.damaged-*"))
    assert len(aside) == 1 and aside[0].stat().st_size > 8192  # the bytes are kept, not lost
    with EmbeddingCache(cache) as fresh:  # a sound cache again, with the query just cached
        assert fresh.stats().entries == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["cache", "stats", "--store"],
        ["cache", "clear", "--store"],
        ["sync"],
        ["index", "--rebuild"],
    ],
)
def test_every_command_survives_a_damaged_cache(kb: Path, argv: list[str]) -> None:
    scribble(kb / ".narezka" / "embeddings.sqlite")
    args = [*argv, str(kb)] if argv[-1] != "--rebuild" else ["index", str(kb), "--rebuild"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert any(issubclass(w.category, NarezkaWarning) for w in caught)


def test_two_damaged_copies_keep_both(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    for _ in range(2):
        path.write_bytes(os.urandom(8192))
        with pytest.warns(CacheDamagedWarning), EmbeddingCache(path):
            pass
    assert len(list(tmp_path.glob("c.sqlite.damaged-*"))) == 2


def test_the_moved_aside_cache_is_narezkas_own(kb: Path) -> None:
    from narezka.index.layout import foreign_entries

    scribble(kb / ".narezka" / "embeddings.sqlite")
    with pytest.warns(CacheDamagedWarning), EmbeddingCache(kb / ".narezka" / "embeddings.sqlite"):
        pass
    assert foreign_entries(kb / ".narezka") == []


# ---- item 9: damaged record files are named, with the fix --------------------------------


def test_a_damaged_store_record_names_the_file_and_the_rebuild(kb: Path) -> None:
    (index_data(kb / ".narezka") / "narezka_store.json").write_text("{bad", encoding="utf-8")
    code, _, err = search_cli(kb)
    assert code == 2
    assert "narezka_store.json cannot be read" in err and "--rebuild" in err
    assert "Traceback" not in err
    rebuilt = CliRunner().invoke(cli, ["index", str(kb), "--rebuild"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert search_cli(kb)[0] == 0


def test_a_damaged_manifest_names_the_file_and_the_rebuild(kb: Path) -> None:
    scribble(index_data(kb / ".narezka") / "manifest.sqlite")
    result = CliRunner().invoke(cli, ["sync", str(kb)])
    assert result.exit_code == 2
    assert "manifest.sqlite cannot be read" in result.stderr and "--rebuild" in result.stderr
    with pytest.raises(IndexDamagedError), Index.open(kb) as idx:
        idx.sources()
    assert CliRunner().invoke(cli, ["index", str(kb), "--rebuild"]).exit_code == 0
    assert search_cli(kb)[0] == 0


def test_a_rebuild_over_a_damaged_record_removes_the_old_generation(kb: Path) -> None:
    home = kb / ".narezka"
    (home / "index.json").write_text("{bad", encoding="utf-8")
    assert CliRunner().invoke(cli, ["index", str(kb), "--rebuild"]).exit_code == 0
    assert sorted(p.name for p in home.glob("data-*")) == ["data-2"]


def test_compact_removes_stray_generations_but_nothing_it_did_not_write(kb: Path) -> None:
    home = kb / ".narezka"
    (home / "data-5").mkdir()
    (home / "data-5" / "segments").mkdir()
    (home / "data-7").mkdir()
    (home / "data-7" / "mine.txt").write_text("not narezka's", encoding="utf-8")
    assert CliRunner().invoke(cli, ["compact", str(kb)]).exit_code == 0
    assert sorted(p.name for p in home.glob("data-*")) == ["data-7", "data-8"]
    assert (home / "data-7" / "mine.txt").is_file()
