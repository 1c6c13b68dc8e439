"""narezka.Index as a program holds it: open between calls, shared in one process, one writer
across processes; and Settings loaded defaults → narezka.toml → environment → flags."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

import narezka
from narezka import Filter, Index, Settings
from narezka.embed import HashEmbedder
from narezka.errors import ConfigError
from narezka.store import IndexInUseError

from conftest import copy_examples


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return copy_examples(tmp_path / "kb")


@pytest.fixture
def built(kb: Path) -> Path:
    with Index.create(kb, Settings(embedder="hash")) as index:
        index.sync()
    return kb


def test_create_sync_search_and_the_typed_results(kb: Path) -> None:
    with Index.create(kb, Settings(embedder="hash")) as index:
        report = index.sync()
        assert isinstance(report, narezka.SyncReport) and report.files_new == 18
        hits = index.search("вернуть вскрытый чай", k=3, mode="bm25")
        assert hits and all(isinstance(h, narezka.Hit) for h in hits)
        best = hits[0]
        assert best.chunk_id and best.url.startswith(best.file_path)
        text = (kb / best.file_path).read_text(encoding="utf-8")
        assert text[best.start : best.end] == best.text
        assert index.sync().files_unchanged == 18


def test_open_by_corpus_or_store_folder(built: Path) -> None:
    for location in (built, built / ".narezka"):
        with Index.open(location) as index:
            assert index.search("доставка", mode="bm25")
    with pytest.raises(ConfigError, match="narezka index"):
        Index.open(built / "products")


def test_filters_are_typed(built: Path) -> None:
    with Index.open(built) as index:
        only = index.search("лампа", mode="bm25", k=10, filters=Filter(path="products/**"))
        assert only and all(h.file_path.startswith("products/") for h in only)
        archived = index.search(
            "возврат 2023", mode="bm25", k=20, filters=Filter(include_archived=True)
        )
        current = index.search("возврат 2023", mode="bm25", k=20)
        assert any(h.payload["archived"] for h in archived)
        assert not any(h.payload["archived"] for h in current)


def test_get_neighbours_chunks_sources_stats(built: Path) -> None:
    with Index.open(built) as index:
        sources = index.sources()
        assert len(sources) == 18 and sources == sorted(sources, key=lambda s: s.path)
        delivery = [c for c in index.chunks("delivery.md")]
        assert [c.chunk_index for c in delivery] == list(range(len(delivery)))
        middle = delivery[len(delivery) // 2]
        assert index.get(middle.chunk_id) == middle
        around = index.neighbours(middle.chunk_id, 1)
        assert [c.chunk_index for c in around] == [
            middle.chunk_index - 1,
            middle.chunk_index,
            middle.chunk_index + 1,
        ]
        assert index.get("00000000-0000-0000-0000-000000000000") is None
        stats = index.stats()
        assert stats.files == 18 and stats.chunks == sum(s.chunks for s in sources)
        assert stats.synced_at and stats.changed_files == ()
    (built / "delivery.md").write_text("# Новое\n\nДругое.\n", encoding="utf-8")
    with Index.open(built) as index:
        assert index.stats().changed_files == ("delivery.md",)


def test_sync_of_some_paths_touches_only_them(built: Path) -> None:
    (built / "faq.md").unlink()
    (built / "new.md").write_text("# Новая\n\nСтраница о скидках.\n", encoding="utf-8")
    (built / "delivery.md").write_text("# Доставка\n\nТолько самовывоз.\n", encoding="utf-8")
    with Index.open(built) as index:
        report = index.sync(["faq.md", "new.md"])
        assert (report.files_new, report.files_deleted, report.files_changed) == (1, 1, 0)
        assert index.stats().changed_files == ("delivery.md",)


def test_indexes_of_one_folder_share_the_open_store_in_a_process(built: Path) -> None:
    first = Index.open(built)
    second = Index.open(built)
    try:
        assert first.search("доставка", mode="bm25") == second.search("доставка", mode="bm25")
        assert first._state.shared is second._state.shared
        first.close()
        assert second.search("доставка", mode="bm25"), "the other one still reads"
    finally:
        first.close()
        second.close()
    with pytest.raises(ConfigError, match="closed"):
        second.search("доставка", mode="bm25")


def test_another_process_cannot_open_a_held_index(built: Path) -> None:
    with Index.open(built) as index:
        index.search("доставка", mode="bm25")  # the store is open now
        probe = (
            "import sys; from narezka import Index\n"
            "from narezka.store import IndexInUseError\n"
            "try:\n"
            f"    Index.open({str(built)!r}).search('доставка', mode='bm25')\n"
            "except IndexInUseError as e:\n"
            "    print(e); sys.exit(3)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=False
        )
        assert result.returncode == 3, result.stderr
        assert "in use by PID" in result.stdout
    assert IndexInUseError  # the error programs catch


def test_searches_during_a_sync_see_each_file_whole(built: Path) -> None:
    pages = sorted(built.glob("*.md"))
    for page in pages:  # every page changes: each file's points are replaced by the sync
        page.write_text(page.read_text(encoding="utf-8") + "\n\nДополнение.\n", encoding="utf-8")
    problems: list[str] = []
    done = threading.Event()
    with Index.open(built) as index:

        def reader() -> None:
            while not done.is_set():
                for hit in index.search("доставка дополнение", mode="bm25", k=10):
                    chunks = list(index.chunks(hit.file_path))
                    indices = [c.chunk_index for c in chunks]
                    # Half-written: some old points already deleted, or old and new mixed.
                    if indices != list(range(len(indices))):
                        problems.append(f"{hit.file_path}: chunks {indices}")
                    if len({c.payload["doc_hash"] for c in chunks}) > 1:
                        problems.append(f"{hit.file_path}: two versions mixed")

        thread = threading.Thread(target=reader)
        thread.start()
        try:
            index.sync()
        finally:
            done.set()
            thread.join(timeout=60)
    assert not problems


def test_an_index_built_with_an_embedder_object_needs_it_again(kb: Path) -> None:
    model = HashEmbedder(32)
    with Index.create(kb, embedder=model) as index:
        index.sync()
    with Index.open(kb) as index, pytest.raises(ConfigError, match="embedder object"):
        index.search("доставка", mode="dense")
    with Index.open(kb, embedder=model) as index:
        assert index.search("доставка", mode="dense")


def test_create_refuses_bad_settings_before_writing(kb: Path) -> None:
    with pytest.raises(ConfigError):
        Index.create(kb, Settings(embedder="no-such"))
    with pytest.raises(ConfigError):
        Index.create(kb, Settings(embedder="hash", size=8))
    with pytest.raises(ConfigError, match="unknown strategy"):
        Settings(strategy="nope")
    assert not (kb / ".narezka").exists()


# ---- Settings -----------------------------------------------------------------------------


def test_settings_load_defaults_then_toml_then_environment_then_flags(tmp_path: Path) -> None:
    (tmp_path / "narezka.toml").write_text(
        '[settings]\nstrategy = "recursive"\nsize = 300\nunit = "chars"\nlevels = "2-3"\n'
        'exclude = ["drafts/**"]\n',
        encoding="utf-8",
    )
    assert Settings.load(environ={}) == Settings()
    from_toml = Settings.load(tmp_path, environ={})
    assert (from_toml.strategy, from_toml.size, from_toml.levels) == ("recursive", 300, (2, 3))
    assert from_toml.exclude == ("drafts/**",)
    env = {"NAREZKA_SIZE": "200", "NAREZKA_INCLUDE": "*.md, *.txt", "OTHER": "x"}
    from_env = Settings.load(tmp_path, environ=env)
    assert from_env.size == 200 and from_env.include == ("*.md", "*.txt")
    assert from_env.strategy == "recursive"
    flagged = Settings.load(tmp_path, environ=env, size=150, strategy=None)
    assert flagged.size == 150 and flagged.strategy == "recursive"


@pytest.mark.parametrize(
    ("toml", "problem"),
    [
        ('[settings]\nsize = "big"\n', "size"),
        ("[settings]\ncolour = 1\n", "unknown setting colour"),
        ("[settings]\noverlap = 5000\nsize = 100\n", "overlap"),
        ("settings = 3\n", "must be a table"),
        ('embedder = "e5"\n[settings]\nsize = 300\n', "embedder at the top level belongs under"),
        ('colour = "red"\n', "colour at the top level belongs nowhere"),
    ],
)
def test_a_bad_settings_file_names_the_file_and_the_problem(
    tmp_path: Path, toml: str, problem: str
) -> None:
    (tmp_path / "narezka.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError, match=problem) as info:
        Settings.load(tmp_path, environ={})
    assert "narezka.toml" in str(info.value) or problem == "overlap"


def test_a_bad_environment_value_says_where_it_came_from() -> None:
    with pytest.raises(ConfigError, match="environment: size"):
        Settings.load(environ={"NAREZKA_SIZE": "many"})


def test_settings_round_trip_through_the_index_record(kb: Path) -> None:
    chosen = Settings(embedder="hash", strategy="sentences", size=200, unit="chars")
    with Index.create(kb, chosen) as index:
        index.sync()
    with Index.open(kb) as index:
        assert index.settings == chosen


def test_the_python_guides_example_runs(kb: Path) -> None:
    guide = Path(__file__).resolve().parents[1] / "docs" / "guides" / "python.md"
    text = guide.read_text(encoding="utf-8")
    start = text.index("```python")
    code = text[start + len("```python") : text.index("```", start + 3)]
    code = code.replace('"docs/"', repr(str(kb))).replace('embedder="use"', 'embedder="hash"')
    namespace: dict[str, object] = {}
    exec(compile(code, str(guide), "exec"), namespace)
    hits = namespace["hits"]
    assert isinstance(hits, list) and hits and isinstance(hits[0], narezka.Hit)
