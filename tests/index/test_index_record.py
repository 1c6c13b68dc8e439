"""``IndexRecord``: ``index.json`` as a typed value, its JSON the file's key for key.

Records written by real syncs (an embedded index, and a server index's file and the copy it
publishes on the fake Qdrant server) read back into records that write the same bytes; a
hand-written format-1 record (only ``params``, no ``settings``, the shard in the index folder
itself) opens, searches and syncs; a malformed record fails naming its file, as before.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from narezka import Index, Settings
from narezka.errors import ConfigError
from narezka.index import layout
from narezka.index.records import IndexRecord, read_record, write_record
from narezka.store import server_record
from narezka.store.cluster import ClusterParams
from store.fake_qdrant import FakeQdrant, fake_qdrant

HASH = Settings(embedder="hash")
QUERY = "можно ли вернуть вскрытый чай"
KB = Path(__file__).resolve().parents[2] / "examples" / "kb"

LOCAL_KEYS = [
    *("version", "corpus", "corpus_rel", "data", "embedder", "embedder_spec", "dim"),
    *("strategy", "fingerprint", "params", "include", "exclude", "url", "settings", "bm25"),
    "synced_at",
]
"""The keys of an embedded index's record, in the order narezka has always written them."""
SERVER_KEYS = [
    *LOCAL_KEYS[:4],
    "collection",
    *LOCAL_KEYS[4:-1],
    *("collection_name", "qdrant", "synced_at"),
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    shutil.copytree(KB, root, ignore=shutil.ignore_patterns(".narezka"))
    return root


@pytest.fixture
def fake() -> Iterator[FakeQdrant]:
    with fake_qdrant() as server:
        yield server


def _dumped(data: dict[str, Any]) -> str:
    """JSON text as ``index.json`` is written."""
    return json.dumps(data, ensure_ascii=False, indent=1)


def _round_trips(text: str) -> IndexRecord:
    """The record in ``text``; fails unless it writes ``text`` back byte for byte."""
    record = IndexRecord.from_json(json.loads(text), "index.json")
    assert _dumped(record.to_json()) == text
    assert IndexRecord.from_json(record.to_json(), "index.json") == record
    return record


def _answers(index: Index) -> list[str]:
    return [h.chunk_id for h in index.search(QUERY, k=5)]


# ---- records real syncs wrote ---------------------------------------------------------------


def test_an_embedded_index_record_round_trips_through_every_sync(corpus: Path) -> None:
    home = corpus / ".narezka"
    texts = []
    with Index.create(corpus, HASH) as index:
        index.sync()
        texts.append((home / "index.json").read_text(encoding="utf-8"))
        (corpus / "кофе.md").write_text("# Кофе\n\nКофе варят в турке.\n", encoding="utf-8")
        index.sync()
        index.sync(rebuild=True)
        texts.append((home / "index.json").read_text(encoding="utf-8"))
        index.compact()
        texts.append((home / "index.json").read_text(encoding="utf-8"))
    records = [_round_trips(text) for text in texts]
    assert [list(json.loads(text)) for text in texts] == [LOCAL_KEYS] * 3
    assert [r.data for r in records] == ["data-1", "data-2", "data-3"]
    first = records[0]
    assert first.corpus == str(corpus.resolve()) and first.corpus_rel == ".."
    assert (first.embedder_spec, first.dim, first.bm25, first.url) == ("hash", 64, "snowball", None)
    assert first.params["size"] == 256 and first.settings is not None
    assert first.settings["embedder"] == "hash" and first.extra == {}
    assert read_record(home) == records[-1]


def test_a_server_index_record_round_trips_in_its_folder_and_on_the_server(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    with Index.create(corpus, HASH, store=home, url=fake.url, collection="kb") as writer:
        writer.sync()
        answer = _answers(writer)
        local = _round_trips((home / "index.json").read_text(encoding="utf-8"))
        published = _round_trips(_dumped(server_record.fetch(fake.url, "kb")))
        writer.sync(rebuild=True)
        rebuilt = _round_trips(_dumped(server_record.fetch(fake.url, "kb")))
    assert list(local.to_json()) == SERVER_KEYS
    # The published copy names the alias readers query, pointed after the file was written.
    assert list(published.to_json()) == [*SERVER_KEYS, "alias"]
    assert (local.url, local.collection, local.collection_name) == (fake.url, "kb_g1", "kb")
    assert published.alias == "kb" and rebuilt.collection == "kb_g2"
    assert local.cluster("given") == ClusterParams.from_record(local.to_json()["qdrant"]["given"])
    assert published.cluster("applied").on_disk is False
    with Index.open(fake.url, collection="kb") as reader:
        assert _answers(reader) == answer
        assert reader.stats().synced_at == rebuilt.synced_at


def test_an_index_written_with_another_version_keeps_the_keys_it_does_not_know(
    corpus: Path,
) -> None:
    home = corpus / ".narezka"
    with Index.create(corpus, HASH) as index:
        index.sync()
        answer = _answers(index)
    data = json.loads((home / "index.json").read_text(encoding="utf-8"))
    newer = {"future": {"a": [1, 2]}, **data, "later": None}
    (home / "index.json").write_text(_dumped(newer), encoding="utf-8")
    record = _round_trips(_dumped(newer))
    assert record.extra == {"future": {"a": [1, 2]}, "later": None}
    with Index.open(home) as index:
        assert _answers(index) == answer
        index.compact()  # carries the record over, unknown keys and all
    after = json.loads((home / "index.json").read_text(encoding="utf-8"))
    assert after == {**newer, "data": "data-2"} and list(after) == list(newer)


# ---- format 1 -------------------------------------------------------------------------------


def _format_1(corpus: Path) -> tuple[Path, list[str]]:
    """An index as narezka wrote it before generations: its shard in the index folder
    itself, its record without ``data``, ``corpus_rel``, ``settings`` or ``bm25``."""
    home = corpus / ".narezka"
    settings = HASH.replace(size=200, unit="chars")
    with Index.create(corpus, settings) as index:
        index.sync()
        answer = _answers(index)
    record = json.loads((home / "index.json").read_text(encoding="utf-8"))
    for entry in (home / "data-1").iterdir():
        entry.rename(home / entry.name)
    (home / "data-1").rmdir()
    keys = ("corpus", "embedder", "embedder_spec", "dim", "strategy", "fingerprint", "params")
    legacy = {
        "version": 1,
        **{k: record[k] for k in keys},
        **{k: record[k] for k in ("include", "exclude", "url")},
    }
    (home / "index.json").write_text(json.dumps(legacy), encoding="utf-8")
    return home, answer


def test_a_format_1_record_round_trips_and_its_index_opens_searches_and_syncs(
    corpus: Path,
) -> None:
    home, answer = _format_1(corpus)
    text = (home / "index.json").read_text(encoding="utf-8")
    record = IndexRecord.from_json(json.loads(text), "index.json")
    assert json.dumps(record.to_json()) == text  # json.dumps's own spacing, key for key
    assert (record.version, record.data, record.settings, record.bm25) == (1, None, None, None)
    assert record.live == layout.LEGACY_DATA and record.data_dir(home) == home
    with Index.open(home) as index:
        # The settings come from the split parameters alone.
        assert (index.settings.size, index.settings.unit) == (200, "chars")
        assert index.settings.embedder == "hash"
        assert _answers(index) == answer
        report = index.sync()
    assert report.files_new == 0 and report.files_changed == 0 and report.files_unchanged > 0
    synced = read_record(home)
    assert synced.data == layout.LEGACY_DATA and synced.settings is not None
    assert synced.params == record.params and synced.fingerprint == record.fingerprint


def test_a_format_1_index_moves_into_a_generation_on_its_rebuild(corpus: Path) -> None:
    home, answer = _format_1(corpus)
    with Index.open(home) as index:
        index.sync(rebuild=True)
        assert _answers(index) == answer
    assert read_record(home).data == "data-1" and not (home / "manifest.sqlite").exists()


# ---- changing a record ----------------------------------------------------------------------


def test_replace_writes_new_keys_last_and_drops_optional_ones_set_to_none() -> None:
    record = IndexRecord(dim=4, embedder="e", data="data-1", retired=["data-0"])
    assert record.retired == ("data-0",)  # a list given is kept as a tuple
    assert list(record.to_json()) == [
        *("version", "corpus", "data", "embedder", "embedder_spec", "dim", "strategy"),
        *("fingerprint", "params", "include", "exclude", "url", "retired"),
    ]
    building = record.replace(building="data-2", url="http://q:6333")
    assert list(building.to_json())[-2:] == ["retired", "building"]
    assert building.to_json()["url"] == "http://q:6333"
    done = building.replace(retired=(), building=None, url=None)
    assert "retired" not in done.to_json() and "building" not in done.to_json()
    assert done.to_json()["url"] is None  # a key every format has stays, null
    assert record.to_json()["retired"] == ["data-0"]  # the original is untouched
    with pytest.raises(TypeError, match="no field nonsense"):
        record.replace(nonsense=1)


def test_extra_keys_can_be_replaced_and_a_record_keeps_no_shared_state() -> None:
    data = {"version": 2, "dim": 4, "params": {"levels": [1, 6]}, "x": 1, "y": 2}
    record = IndexRecord.from_json(data, "index.json")
    data["params"]["levels"].append(9)
    assert record.params == {"levels": [1, 6]}
    out = record.to_json()
    out["params"]["levels"].append(7)
    assert record.to_json()["params"] == {"levels": [1, 6]}
    assert list(record.replace(extra={"y": 3, "z": 4}).to_json()) == [
        *("version", "dim", "params", "y", "z")
    ]
    # A field set behind replace's back is still written (last), and nothing else.
    assert list(dataclasses.replace(record, building="data-2").to_json()) == [
        *("version", "dim", "params", "x", "y", "building")
    ]


def test_cluster_settings_are_recorded_given_and_applied() -> None:
    record = IndexRecord(dim=4)
    assert record.cluster("applied") == ClusterParams.from_record(None)
    given, applied = ClusterParams(shards=2), ClusterParams(shards=2, on_disk=True)
    both = record.with_cluster(given=given, applied=applied)
    assert (both.cluster("given"), both.cluster("applied")) == (given, applied)
    grown = both.with_cluster(applied=ClusterParams(shards=4))
    assert grown.cluster("given") == given and grown.cluster("applied").shards == 4


def test_write_record_writes_what_read_record_reads(tmp_path: Path) -> None:
    record = IndexRecord(dim=8, embedder="e", synced_at="2026-01-01T00:00:00+00:00")
    write_record(tmp_path, record)
    assert read_record(tmp_path) == record
    assert json.loads((tmp_path / "index.json").read_text(encoding="utf-8")) == record.to_json()


# ---- malformed records ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"dim": "64"}, r"dim is \"64\", not an integer"),
        ({"dim": True}, "dim is true, not an integer"),
        ({"data": 3}, "data is 3, not a string or null"),
        ({"embedder": None}, "embedder is null, not a string"),
        ({"exclude": ["a", 1]}, "exclude is .*, not a list of strings"),
        ({"include": "*.md"}, "include is .*, not a list of strings or null"),
        ({"params": None}, "params is null, not an object"),
        ({"qdrant": []}, r"qdrant is \[\], not an object or null"),
    ],
)
def test_a_record_with_a_value_of_the_wrong_kind_names_its_file(
    corpus: Path, change: dict[str, Any], problem: str
) -> None:
    home = corpus / ".narezka"
    with Index.create(corpus, HASH) as index:
        index.sync()
    data = json.loads((home / "index.json").read_text(encoding="utf-8"))
    (home / "index.json").write_text(json.dumps({**data, **change}), encoding="utf-8")
    wanted = f"{home / 'index.json'} cannot be read \\({problem}\\): re-create it with --rebuild"
    with pytest.raises(ConfigError, match=wanted):
        Index.open(home)
    # As with a torn file, a rebuild starts over beside it.
    with Index.create(corpus, HASH) as index:
        assert index.sync(rebuild=True).files_new > 0
    assert read_record(home).dim == 64


def test_a_record_without_dim_or_not_an_object_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text('{"version": 2}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"index.json cannot be read \(it records no dim\)"):
        read_record(tmp_path)
    (tmp_path / "index.json").write_text("[2]", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"index.json cannot be read \(not a JSON object\)"):
        read_record(tmp_path)
    with pytest.raises(ConfigError, match=r"somewhere cannot be read \(not a JSON object\)"):
        IndexRecord.from_json([2], "somewhere")


def test_a_malformed_record_on_the_server_names_its_collection(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    with Index.create(corpus, HASH, store=tmp_path / "home", url=fake.url) as writer:
        writer.sync()
    record = server_record.fetch(fake.url, "narezka")
    files = server_record.snapshot(server_record.fetch_files(fake.url, "narezka"))
    server_record.publish(fake.url, "narezka", {**record, "dim": "x"}, files)
    where = f"{fake.url}/narezka-record cannot be read"
    with pytest.raises(ConfigError, match=where):
        Index.open(fake.url)
