"""Data safety of index, rebuild, sync and search: nothing of the user's is deleted, nothing
stale is served as current, an interrupted run leaves what it committed searchable."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from narezka.api.indexing import index, read_index_meta
from narezka.api.maintenance import sync
from narezka.api.searching import search
from narezka.embed import HashEmbedder
from narezka.errors import ConfigError
from narezka.index.layout import foreign_entries
from narezka.store import Manifest

from conftest import copy_examples, index_data, store_count


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return copy_examples(tmp_path / "kb")


def model() -> HashEmbedder:
    return HashEmbedder(64)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (outside narezka's own folder) with its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".narezka" not in p.relative_to(folder).parts
    }


class Interrupt(Exception):
    """Stands for Ctrl-C inside a run (KeyboardInterrupt would stop pytest itself)."""


def stop_after(files: int) -> object:
    seen: list[str] = []

    def on_file(source: str) -> None:
        seen.append(source)
        if len(seen) == files:
            raise Interrupt

    return on_file


# ---- 1. the store folder is narezka's own, and rebuild deletes only what it made ----------


def test_a_store_that_is_the_corpus_is_refused_before_anything_is_written(kb: Path) -> None:
    before = tree(kb)
    with pytest.raises(ConfigError, match="is the corpus"):
        index(kb, store_dir=kb, embedder=model())
    with pytest.raises(ConfigError, match="contains it"):
        index(kb, store_dir=kb.parent, embedder=model())
    assert tree(kb) == before
    assert not (kb / "index.json").exists() and not (kb / ".narezka").exists()


def test_rebuild_into_the_corpus_folder_never_deletes_the_corpus(kb: Path) -> None:
    # The reported case: `index kb --store kb` then `--rebuild` deleted all 18 pages.
    before = tree(kb)
    for rebuild in (False, True):
        with pytest.raises(ConfigError):
            index(kb, store_dir=kb, embedder=model(), rebuild=rebuild)
    assert tree(kb) == before


def test_a_store_folder_holding_other_files_is_refused(kb: Path, tmp_path: Path) -> None:
    store = tmp_path / "mine"
    store.mkdir()
    (store / "notes.txt").write_text("мои заметки", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"did not write \(notes.txt\)"):
        index(kb, store_dir=store, embedder=model())
    assert [p.name for p in store.iterdir()] == ["notes.txt"]


def test_rebuild_removes_only_narezka_files_and_keeps_a_users_file(kb: Path) -> None:
    index(kb, embedder=model())
    home = kb / ".narezka"
    (home / "README.txt").write_text("a file the user put here", encoding="utf-8")
    old_data = index_data(home)
    before = tree(kb)
    report = index(kb, embedder=model(), rebuild=True)
    assert report.files_new == 18
    assert tree(kb) == before
    assert (home / "README.txt").read_text(encoding="utf-8") == "a file the user put here"
    assert not old_data.exists(), "the retired generation is removed"
    assert foreign_entries(home) == ["README.txt"]


def test_rebuild_keeps_the_embedding_cache(kb: Path) -> None:
    index(kb, embedder=model())
    report = index(kb, embedder=model(), rebuild=True)
    assert report.chunks_embedded > 50
    assert report.cache_misses == 0 and report.cache_hits == report.chunks_embedded


def test_search_answers_from_the_old_index_while_a_rebuild_runs(kb: Path) -> None:
    index(kb, embedder=model())
    before = [h.url for h in search("возврат чая", kb, mode="bm25", embedder=model())]
    during: list[list[str]] = []

    def on_file(_: str) -> None:
        if not during:
            hits = search("возврат чая", kb, mode="bm25", embedder=model())
            during.append([h.url for h in hits])

    index(kb, embedder=model(), rebuild=True, on_file=on_file, strategy="sentences")
    assert during == [before]
    assert read_index_meta(kb / ".narezka")["strategy"] == "sentences"


def test_an_interrupted_rebuild_leaves_the_old_index_untouched_and_is_cleaned_up(
    kb: Path,
) -> None:
    index(kb, embedder=model())
    home = kb / ".narezka"
    meta_before = read_index_meta(home)
    before = [h.url for h in search("доставка", kb, mode="bm25", k=5, embedder=model())]
    with pytest.raises(Interrupt):
        index(kb, embedder=model(), rebuild=True, on_file=stop_after(5), strategy="fixed")
    meta_after = read_index_meta(home)
    assert meta_after["data"] == meta_before["data"] and meta_after["strategy"] == "headings"
    half = home / meta_after["building"]
    assert half.is_dir()
    assert [h.url for h in search("доставка", kb, mode="bm25", k=5, embedder=model())] == before
    # The next run removes the half-built generation by name.
    index(kb, embedder=model())
    assert not half.exists() and "building" not in read_index_meta(home)


# ---- 3. an interrupted first index is searchable -------------------------------------------


def test_an_interrupted_first_index_is_searchable_and_the_next_run_completes_it(
    kb: Path,
) -> None:
    with pytest.raises(Interrupt):
        index(kb, embedder=model(), on_file=stop_after(6))
    hits = search("доставка", kb, mode="bm25", k=50, include_archived=True, embedder=model())
    assert hits, "what was committed before the interrupt answers"
    committed = {h.file_path for h in hits}
    with Manifest(index_data(kb / ".narezka")) as manifest:
        assert committed <= set(manifest.paths())
        assert len(manifest.paths()) <= 6
    report = index(kb, embedder=model())
    assert report.files_new + report.files_unchanged == 18 and report.files_new >= 12


# ---- 2. a hit is what the index holds, or says it is stale --------------------------------


def _shift(path: Path, prefix: str) -> None:
    """Insert text at the top of a page body: every stored offset now points elsewhere."""
    text = path.read_text(encoding="utf-8")
    cut = text.index("\n---", 3) + 4 if text.startswith("---") else 0
    path.write_text(text[:cut] + prefix + text[cut:], encoding="utf-8")


def test_expand_section_on_a_changed_file_returns_the_stored_text_marked_stale(
    kb: Path,
) -> None:
    index(kb, embedder=model())
    query = "вскрытый чай вернуть"
    fresh = search(query, kb, mode="bm25", k=3, expand="section", embedder=model())
    assert fresh and not any(h.stale for h in fresh)
    target = kb / fresh[0].file_path
    original = target.read_text(encoding="utf-8")
    _shift(target, "# Совсем другой раздел\n\nНовый текст, сдвигающий всё ниже.\n\n")
    hits = search(query, kb, mode="bm25", k=3, expand="section", embedder=model())
    changed = [h for h in hits if h.file_path == fresh[0].file_path]
    assert changed and all(h.stale for h in changed)
    for hit in changed:
        # The text is the indexed chunk: a span of the file as it was indexed.
        assert hit.text == hit.payload["text"]
        assert original[hit.start : hit.end] == hit.text
    assert all(not h.stale for h in hits if h.file_path != fresh[0].file_path)
    assert json.loads(json.dumps(changed[0].to_json()))["stale"] is True


def test_folding_on_a_changed_file_keeps_the_stored_chunk_marked_stale(tmp_path: Path) -> None:
    corpus = tmp_path / "notes"
    corpus.mkdir()
    page = corpus / "page.md"
    lines = [f"Альфа бета номер {i} стоит в этом ряду." for i in range(8)]
    page.write_text("# Раздел\n\n" + " ".join(lines) + "\n", encoding="utf-8")
    index(corpus, embedder=model(), size=60, unit="chars", strategy="sentences")
    fresh = search("альфа бета", corpus, mode="bm25", k=3, embedder=model())
    assert any(h.merged for h in fresh), "neighbouring chunks of one section fold together"
    original = page.read_text(encoding="utf-8")
    _shift(page, "Вставка в начало.\n\n")
    hits = search("альфа бета", corpus, mode="bm25", k=3, embedder=model())
    assert hits
    for hit in hits:
        assert hit.stale and not hit.merged
        assert hit.text == hit.payload["text"] == original[hit.start : hit.end]


def test_an_unchanged_file_is_never_marked_stale_even_if_touched(kb: Path) -> None:
    index(kb, embedder=model())
    for page in kb.rglob("*.md"):
        os.utime(page, (1, 1))  # a new mtime, same content
    hits = search("доставка", kb, mode="bm25", k=5, expand="section", embedder=model())
    assert hits and not any(h.stale for h in hits)


# ---- 8. the corpus and its index can move -------------------------------------------------


def test_a_corpus_moved_with_its_index_keeps_syncing(kb: Path, tmp_path: Path) -> None:
    index(kb, embedder="hash")
    moved = tmp_path / "elsewhere" / "kb"
    moved.parent.mkdir()
    shutil.move(kb, moved)
    report = sync(moved)
    assert report.files_unchanged == 18 and report.files_new == 0 and not report.skipped
    assert search("доставка", moved, mode="bm25", embedder=model())


def test_a_store_outside_a_moved_corpus_says_how_to_fix_it(kb: Path, tmp_path: Path) -> None:
    store = tmp_path / "index"
    index(kb, store_dir=store, embedder="hash")
    moved = tmp_path / "moved"
    shutil.move(kb, moved)
    with pytest.raises(ConfigError, match="--corpus"):
        sync(store)
    assert sync(store, corpus=moved).files_unchanged == 18
    assert sync(store).files_unchanged == 18, "the new place is recorded"


# ---- 9. failures leave nothing behind; nothing indexed is lost -----------------------------


def test_a_failed_index_leaves_nothing_behind(kb: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        index(kb, embedder="no-such-embedder")
    with pytest.raises(ConfigError):
        index(kb, embedder=model(), overlap=10_000)
    with pytest.raises(ConfigError):
        index(kb, embedder=model(), strategy="no-such-strategy")
    assert not (kb / ".narezka").exists()
    store = tmp_path / "fresh"
    with pytest.raises(ConfigError):
        index(kb, store_dir=store, embedder="no-such-embedder")
    assert not store.exists()


def test_a_corpus_that_suddenly_looks_empty_does_not_empty_the_index(kb: Path) -> None:
    index(kb, embedder=model())
    with pytest.raises(ConfigError, match="nothing was deleted"):
        index(kb, embedder=model(), include=["*.nothing"])
    with Manifest(index_data(kb / ".narezka")) as manifest:
        assert len(manifest.paths()) == 18


def test_a_folder_with_no_matching_files_names_the_patterns(tmp_path: Path) -> None:
    corpus = tmp_path / "code"
    corpus.mkdir()
    (corpus / "main.py").write_text("print(1)\n", encoding="utf-8")
    report = index(corpus, embedder=model())
    assert any("*.md" in w and "--include" in w for w in report.warnings)


READ_SUFFIXES = {".md", ".pdf", ".docx", ".html"}


def test_progress_counts_every_byte_once(kb: Path) -> None:
    totals: list[int] = []
    advanced: list[int] = []
    index(kb, embedder=model(), on_total=totals.append, on_bytes=advanced.append)
    # The example KB's Markdown and its converted documents (PDF, Word, a web page).
    size = sum(p.stat().st_size for p in kb.rglob("*") if p.suffix in READ_SUFFIXES)
    assert totals == [size] and sum(advanced) == size
    assert len(advanced) >= 18


def test_a_store_inside_the_corpus_is_not_read_as_input(kb: Path) -> None:
    store = kb / "index-here"
    index(kb, store_dir=store, embedder=model(), strategy="auto")
    # auto reads *.json: without the exclusion it would index index.json and its own shard.
    report = index(kb, store_dir=store, embedder=model(), strategy="auto")
    sources = _sources(store)
    assert "golden.jsonl" in sources
    assert not any(s.startswith("index-here") for s in sources)
    assert report.files_new == 0 and report.files_deleted == 0


def _sources(store: Path) -> list[str]:
    with Manifest(index_data(store)) as manifest:
        return manifest.paths()


def test_chunks_kept_across_an_edit_get_their_new_offsets_and_are_not_stale(
    tmp_path: Path,
) -> None:
    corpus = tmp_path / "notes"
    corpus.mkdir()
    page = corpus / "page.md"
    sections = [f"## Раздел {i}\n\nТекст раздела номер {i} про доставку.\n" for i in range(6)]
    page.write_text("# Страница\n\n" + "\n".join(sections), encoding="utf-8")
    index(corpus, embedder=model(), size=60, unit="chars", min_chars=0)
    # Lengthen the first section: later chunks keep index and content, their offsets move.
    page.write_text(
        "# Страница\n\n" + "\n".join([sections[0].replace("номер 0", "номер 00"), *sections[1:]]),
        encoding="utf-8",
    )
    report = index(corpus, embedder=model(), size=60, unit="chars", min_chars=0)
    assert report.chunks_kept >= 5, "the case under test: chunks kept as they were"
    text = page.read_text(encoding="utf-8")
    from narezka import Index

    with Index.open(corpus) as ix:
        stored = list(ix.chunks("page.md"))
        assert stored and all(text[c.start : c.end] == c.text for c in stored)
        hits = ix.search("доставку раздела", mode="bm25", k=6, expand="section")
        assert hits and not any(h.stale for h in hits)


# ---- 10. merged short sections keep their anchors; search links the one that matched ------


def test_search_links_the_anchor_of_the_merged_section_that_matched(tmp_path: Path) -> None:
    corpus = tmp_path / "faq"
    corpus.mkdir()
    (corpus / "faq.md").write_text(
        "# Вопросы {#faq}\n\n## Доставка {#delivery}\n\nКурьер привозит заказ за день.\n\n"
        "## Новый вопрос {#new-q}\n\nПодарочные сертификаты не сгорают.\n",
        encoding="utf-8",
    )
    index(corpus, embedder=model(), size=400, unit="chars", min_chars=200)
    from narezka import Index

    with Index.open(corpus) as ix:
        [only] = list(ix.chunks("faq.md"))  # the short sections merged into one chunk
        assert [a["anchor"] for a in only.payload["anchors"]][-2:] == ["delivery", "new-q"]
        [hit] = ix.search("подарочные сертификаты", mode="bm25", k=1)
        assert hit.url == "faq.md#new-q"
        [hit] = ix.search("курьер заказ", mode="bm25", k=1)
        assert hit.url == "faq.md#delivery"


def _indexed_sources(corpus: Path) -> set[str]:
    with Manifest(index_data(corpus / ".narezka")) as manifest:
        return set(manifest.paths())


def test_what_the_walk_cannot_read_keeps_its_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder that cannot be listed (a lost mount, an I/O error) or a link to a missing
    target (an unmounted drive's) is not a deleted file: the sync names it and keeps its
    points; once it reads again, nothing has to be embedded."""
    corpus = tmp_path / "kb"
    notes = tmp_path / "drive" / "notes"
    for folder, name in ((corpus / "sub", "inner.md"), (notes, "linked.md"), (corpus, "top.md")):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"# {name}\n\nТекст файла {name}.\n", encoding="utf-8")
    (corpus / "mount").symlink_to(notes, target_is_directory=True)
    # The drive is linked in from outside the corpus: read only when asked.
    first = index(corpus, embedder=HashEmbedder(64), follow_symlinks=True)
    everything = {"sub/inner.md", "mount/linked.md", "top.md"}
    assert first.files_new == 3 and _indexed_sources(corpus) == everything
    points = store_count(corpus)

    real_scandir = os.scandir

    def failing_scandir(path: Any) -> Any:
        if Path(path).name == "sub":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr("narezka.discover.walk.os.scandir", failing_scandir)
    (tmp_path / "drive" / "notes").rename(tmp_path / "drive" / "away")  # the drive is gone
    report = index(corpus, embedder=HashEmbedder(64), follow_symlinks=True)
    assert (report.files_deleted, report.chunks_deleted) == (0, 0)
    assert {e.path: e.problem for e in report.skipped} == {
        "sub": "cannot list: Permission denied",
        "mount": "symlink to a missing target, skipped",
    }
    assert sorted(report.warnings) == [
        "mount: could not be read; its 1 indexed file(s) are kept",
        "sub: could not be read; its 1 indexed file(s) are kept",
    ]
    assert _indexed_sources(corpus) == everything and store_count(corpus) == points

    monkeypatch.undo()
    (tmp_path / "drive" / "away").rename(notes)
    back = index(corpus, embedder=HashEmbedder(64), follow_symlinks=True)
    assert (back.files_unchanged, back.chunks_embedded, back.skipped) == (3, 0, [])


def test_a_file_truly_deleted_beside_an_unreadable_folder_is_still_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "kb"
    (corpus / "sub").mkdir(parents=True)
    for rel in ("sub/inner.md", "gone.md", "kept.md"):
        (corpus / rel).write_text(f"# {rel}\n\nТекст.\n", encoding="utf-8")
    index(corpus, embedder=HashEmbedder(64))
    real_scandir = os.scandir
    monkeypatch.setattr(
        "narezka.discover.walk.os.scandir",
        lambda path: (
            (_ for _ in ()).throw(OSError(5, "I/O error"))
            if Path(path).name == "sub"
            else real_scandir(path)
        ),
    )
    (corpus / "gone.md").unlink()
    report = index(corpus, embedder=HashEmbedder(64))
    assert report.files_deleted == 1
    assert _indexed_sources(corpus) == {"sub/inner.md", "kept.md"}
