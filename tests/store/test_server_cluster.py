"""A server index's cluster layout, payload indexes and alias switch.

No Qdrant cluster runs here: these tests drive qdrant-client's real HTTP transport against
``fake_qdrant`` and assert on what it received (create params, payload indexes, alias
actions, query params), which is what a cluster would be told.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from qdrant_client import QdrantClient
from qdrant_client.http import models as qm
from qdrant_client.http.exceptions import UnexpectedResponse

from narezka import Filter, Index, Settings
from narezka.cli import cli
from narezka.embed import get_embedder
from narezka.errors import ConfigError
from narezka.store import cluster as cluster_module
from narezka.store.cluster import LARGE, ClusterParams
from narezka.store.collections import point_alias
from narezka.store.errors import StoreUnavailableError
from narezka.store.server import ServerStore

from .fake_qdrant import FakeQdrant, fake_qdrant

KB = Path(__file__).resolve().parents[2] / "examples" / "kb"
HASH = Settings(embedder="hash")
QUERY = "можно ли вернуть вскрытый чай"


@pytest.fixture
def fake() -> Iterator[FakeQdrant]:
    with fake_qdrant() as server:
        yield server


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    shutil.copytree(KB, root)
    shutil.rmtree(root / ".narezka", ignore_errors=True)
    return root


def _build(corpus: Path, url: str, home: Path, cluster: ClusterParams | None = None) -> None:
    with Index.create(corpus, HASH, store=home, url=url, cluster=cluster) as index:
        assert index.sync().files_new > 0


def _visible(fake: FakeQdrant, alias: str) -> frozenset[str] | None:
    """The point ids a query of ``alias`` reaches now (None: the alias reaches nothing)."""
    with fake.lock:
        if not fake.engine.collection_exists(alias):
            return None
        points, _ = fake.engine.scroll(alias, limit=100_000, with_payload=False)
        return frozenset(str(p.id) for p in points)


def _add_file(corpus: Path) -> None:
    (corpus / "новый.md").write_text("# Кофе\n\nКофе варят в турке долго.\n", encoding="utf-8")


# ---- the layout ---------------------------------------------------------------------------


def test_a_collection_is_created_with_the_configured_layout(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    wanted = ClusterParams(
        shards=3, replicas=2, write_consistency=2, on_disk=True, quantize=True, oversampling=3.0
    )
    home = tmp_path / "home"
    _build(corpus, fake.url, home, wanted)
    create = fake.created["narezka_g1"]
    assert (create.shard_number, create.replication_factor, create.write_consistency_factor) == (
        3,
        2,
        2,
    )
    assert create.on_disk_payload is True
    assert isinstance(create.vectors, dict) and create.vectors["dense"].on_disk is True
    assert create.sparse_vectors is not None
    sparse_index = create.sparse_vectors["bm25"].index
    assert sparse_index is not None and sparse_index.on_disk is True
    quantization = create.quantization_config
    assert isinstance(quantization, qm.ScalarQuantization)
    assert quantization.scalar.type == qm.ScalarType.INT8 and quantization.scalar.always_ram
    record = fake.created["narezka-record"]  # as replicated as the index, in one shard
    assert (record.shard_number, record.replication_factor) == (1, 2)
    # Recorded with the index, locally and for readers by URL.
    recorded = json.loads((home / "index.json").read_text(encoding="utf-8"))["qdrant"]
    assert recorded["applied"] == wanted.to_record()
    with Index.open(fake.url) as reader:
        assert reader.cluster == wanted
        before = len(fake.searches)
        assert reader.search(QUERY, k=3)
    # A reader learns the quantization from the collection and asks for re-scoring.
    asked = fake.searches[before:]
    assert asked and all(
        p is not None
        and p.quantization is not None
        and p.quantization.rescore is True
        and p.quantization.oversampling == 3.0
        for p in asked
    )


def test_an_unquantized_collection_is_searched_without_quantization_params(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    _build(corpus, fake.url, tmp_path / "home")
    create = fake.created["narezka_g1"]
    assert create.quantization_config is None and create.on_disk_payload is False
    with Index.open(fake.url) as reader:
        before = len(fake.searches)
        reader.search(QUERY, k=3)
    assert fake.searches[before:] and all(p is None for p in fake.searches[before:])


def test_payload_indexes_cover_every_field_a_search_filters_by(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    _build(corpus, fake.url, tmp_path / "home")
    where = Filter(zone="z", project="p", category="c").store_filter()
    filtered = {c.field for c in (*where.must, *where.must_not)}
    indexes = fake.indexes["narezka_g1"]
    assert filtered <= set(indexes)
    assert indexes["archived"] == qm.PayloadSchemaType.INTEGER
    assert indexes["zone"] == indexes["category"] == qm.PayloadSchemaType.KEYWORD
    project = indexes["project"]
    assert isinstance(project, qm.KeywordIndexParams) and project.is_tenant
    # And the server reports them back, by the alias, where a client reads them.
    client = QdrantClient(url=fake.url, check_compatibility=False)
    try:
        schema = client.get_collection("narezka").payload_schema
    finally:
        client.close()
    assert filtered <= set(schema) and schema["archived"].data_type == qm.PayloadSchemaType.INTEGER


# ---- defaults by size ---------------------------------------------------------------------


@given(
    points=st.integers(min_value=0, max_value=10 * LARGE),
    given_=st.sampled_from([None, True, False]),
)
def test_the_rule_by_size_fills_only_what_is_unset(points: int, given_: bool | None) -> None:
    sized = ClusterParams(on_disk=given_, quantize=given_, shards=2).sized(points)
    large = points >= LARGE
    assert sized.quantize is (large if given_ is None else given_)
    assert sized.on_disk is (large if given_ is None else given_)
    assert sized.shards == 2 and sized.replicas is None  # left to the server


def test_a_rebuild_sizes_its_collection_by_the_points_it_will_hold(
    fake: FakeQdrant, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    _build(corpus, fake.url, home)  # a first index has no size yet: small defaults
    assert fake.created["narezka_g1"].quantization_config is None
    monkeypatch.setattr(cluster_module, "LARGE", 5)  # kb holds more than 5 chunks
    with Index.open(home) as index:
        index.sync(rebuild=True)
    assert isinstance(fake.created["narezka_g2"].quantization_config, qm.ScalarQuantization)
    assert fake.created["narezka_g2"].on_disk_payload is True
    with Index.open(home) as index:  # told otherwise, the size does not decide
        index.cluster = ClusterParams(quantize=False)
        index.sync(rebuild=True)
    assert fake.created["narezka_g3"].quantization_config is None
    recorded = json.loads((home / "index.json").read_text(encoding="utf-8"))["qdrant"]
    assert recorded["given"]["quantize"] is False and recorded["applied"]["on_disk"] is True


def test_a_collection_that_grows_past_the_size_is_switched_over_in_place(
    fake: FakeQdrant, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    _build(corpus, fake.url, home)
    assert fake.updates == []  # small: nothing to change
    with Index.open(home) as index:
        chunks = index.stats().chunks
    monkeypatch.setattr(cluster_module, "LARGE", chunks + 1)
    _add_file(corpus)
    with Index.open(home) as index:
        index.sync()
    assert fake.updates == ["narezka_g1"]  # one PATCH, on the live collection
    grown = fake.created["narezka_g1"]
    assert isinstance(grown.quantization_config, qm.ScalarQuantization)
    assert grown.on_disk_payload is True
    assert isinstance(grown.vectors, dict) and grown.vectors["dense"].on_disk is True
    assert grown.sparse_vectors is not None
    assert grown.sparse_vectors["bm25"].modifier == qm.Modifier.IDF  # kept
    applied = json.loads((home / "index.json").read_text(encoding="utf-8"))["qdrant"]["applied"]
    assert applied["quantize"] is True and applied["on_disk"] is True
    with Index.open(fake.url) as reader:
        before = len(fake.searches)
        reader.search(QUERY, k=3)
    assert all(p is not None and p.quantization for p in fake.searches[before:])
    with Index.open(home) as index:
        index.sync()
    assert fake.updates == ["narezka_g1"]  # done once


def test_a_first_index_told_not_to_quantize_is_not_quantized_as_it_grows(
    fake: FakeQdrant, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_module, "LARGE", 5)  # kb holds more than 5 chunks
    _build(corpus, fake.url, tmp_path / "home", ClusterParams(quantize=False))
    # Created empty (small), then grown once filled: on disk, but not quantized as told.
    assert fake.updates == ["narezka_g1"]
    assert fake.created["narezka_g1"].quantization_config is None
    assert fake.created["narezka_g1"].on_disk_payload is True


def test_a_push_sizes_its_copy_and_a_re_push_grows_it(
    fake: FakeQdrant, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Index.create(corpus, HASH) as local:
        local.sync()
        local.push(fake.url, collection="copy", cluster=ClusterParams(replicas=2))
        assert fake.created["copy"].quantization_config is None  # small
        assert fake.created["copy"].replication_factor == 2
        monkeypatch.setattr(cluster_module, "LARGE", 5)
        local.push(fake.url, collection="copy")
    assert fake.updates == ["copy"]
    assert isinstance(fake.created["copy"].quantization_config, qm.ScalarQuantization)
    with Index.open(fake.url, collection="copy") as copy:
        record = copy.stats()  # readable, and its record says what the copy has now
        assert record.chunks > 5
    with ServerStore(fake.url, collection="copy") as store:
        store.ensure(get_embedder("hash").dim, sparse=True)
        assert store.cluster.quantize is True and store.cluster.replicas == 2


# ---- the alias switch ---------------------------------------------------------------------


def test_a_reader_sees_the_old_or_the_new_index_during_a_rebuild_never_a_part(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _build(corpus, fake.url, home)
    old = _visible(fake, "narezka")
    with Index.open(fake.url) as reader:
        old_hits = [h.chunk_id for h in reader.search(QUERY, k=5)]
    _add_file(corpus)
    seen: list[frozenset[str] | None] = []
    mid_rebuild: list[list[str]] = []

    def between_steps(method: str, path: str) -> None:
        seen.append(_visible(fake, "narezka"))
        if (method, path) == ("PUT", "/collections/narezka_g2/points") and not mid_rebuild:
            with Index.open(fake.url) as reader:  # a real reader, by URL, mid-fill
                mid_rebuild.append([h.chunk_id for h in reader.search(QUERY, k=5)])

    fake.after_request = between_steps
    start = len(fake.requests)
    with Index.open(home) as writer:
        writer.sync(rebuild=True)
    fake.after_request = None
    new = _visible(fake, "narezka")
    assert old is not None and new is not None and new > old
    assert set(seen) == {old, new}  # never a half-filled collection, never nothing
    assert seen.index(new) > 0 and all(s == new for s in seen[seen.index(new) :])
    assert mid_rebuild == [old_hits]
    rebuild = fake.requests[start:]
    switches = [i for i, r in enumerate(rebuild) if r == ("POST", "/collections/aliases")]
    assert len(switches) == 1 and switches[0] < rebuild.index(("DELETE", "/collections/narezka_g1"))
    assert fake.aliases() == {"narezka": "narezka_g2"}
    assert fake.collections() == ["narezka-record", "narezka_g2"]
    assert set(fake.indexes["narezka_g2"]) == {
        "file_path",
        "zone",
        "category",
        "project",
        "archived",
    }


@pytest.mark.parametrize(
    ("method", "path", "skip"),
    [
        # the first batch of points fails, after the new collection and its indexes were made
        ("PUT", "/collections/narezka_g2/points", 0),
        ("POST", "/collections/aliases", 0),  # the switch itself fails
    ],
)
def test_a_failed_rebuild_leaves_the_old_index_serving_and_drops_the_half_built_one(
    fake: FakeQdrant, corpus: Path, tmp_path: Path, method: str, path: str, skip: int
) -> None:
    home = tmp_path / "home"
    _build(corpus, fake.url, home)
    with Index.open(fake.url) as reader:
        before = [h.chunk_id for h in reader.search(QUERY, k=5)]
    _add_file(corpus)
    fake.fail_matching, fake.fail_skip = (method, path, 503), skip
    with Index.open(home) as writer, pytest.raises(StoreUnavailableError):
        writer.sync(rebuild=True)
    fake.fail_matching = None
    assert fake.aliases() == {"narezka": "narezka_g1"}
    assert fake.collections() == ["narezka-record", "narezka_g1"]
    with Index.open(fake.url) as reader:
        assert [h.chunk_id for h in reader.search(QUERY, k=5)] == before
    with Index.open(home) as writer:  # the next run finds nothing of it left in the way
        writer.sync(rebuild=True)
    assert fake.aliases() == {"narezka": "narezka_g2"}
    assert fake.collections() == ["narezka-record", "narezka_g2"]


def test_a_sync_stops_when_the_server_stops_answering_and_the_next_one_finishes(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _build(corpus, fake.url, home)
    with Index.open(home) as index:
        before = index.stats().chunks
    # More files than one write batch holds (64), so the outage falls between two batches.
    names = [f"новый-{i:02d}" for i in range(80)]
    for name in names:
        (corpus / f"{name}.md").write_text(f"# {name}\n\nТекст {name}.\n", encoding="utf-8")
    fake.fail_matching, fake.fail_skip = ("PUT", "/collections/narezka_g1/points", 503), 1
    with Index.open(home) as index, pytest.raises(StoreUnavailableError):
        index.sync()  # not one skipped file after another: the run stops at the outage
    fake.fail_matching = None
    with Index.open(home) as index:
        stored = index.stats().chunks
        assert before < stored  # what was stored before the outage stays
        report = index.sync()
        assert 0 < report.files_new < len(names) and not report.skipped
    with Index.open(fake.url) as reader:
        assert {f"{n}.md" for n in names} <= {s.path for s in reader.sources()}


def test_a_rebuild_that_could_not_drop_its_half_built_collection_drops_it_next_run(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _build(corpus, fake.url, home)

    def outage(method: str, path: str) -> None:
        if (method, path) == ("PUT", "/collections/narezka_g2/points") and not fake.fail_statuses:
            # The server goes away after the first upsert: the next one fails, and so does
            # the failed rebuild's attempt to drop what it had made.
            fake.fail_statuses.extend([503] * 3)
            fake.after_request = None

    fake.after_request = outage
    with Index.open(home) as writer, pytest.raises(StoreUnavailableError):
        writer.sync(rebuild=True)
    fake.fail_statuses.clear()
    assert "narezka_g2" in fake.collections()  # left behind by the outage
    with Index.open(home) as writer:
        writer.sync()
    assert fake.collections() == ["narezka-record", "narezka_g1"]
    assert fake.aliases() == {"narezka": "narezka_g1"}


def test_an_index_from_before_aliases_moves_behind_one_on_its_next_rebuild(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    # Before aliases, a server index kept its points in the collection NAME itself and its
    # record named that collection: made here from an embedded index pushed to "narezka".
    home = corpus / ".narezka"
    with Index.create(corpus, HASH) as local:
        local.sync()
        local.push(fake.url)
        answer = [h.chunk_id for h in local.search(QUERY, k=5)]
    meta = json.loads((home / "index.json").read_text(encoding="utf-8"))
    legacy = {**meta, "url": fake.url, "collection": "narezka", "collection_name": "narezka"}
    (home / "index.json").write_text(json.dumps(legacy), encoding="utf-8")
    with Index.open(home) as writer:
        writer.sync()  # the name is a collection: no alias, readers follow the record
    assert fake.aliases() == {} and "narezka" in fake.collections()
    with Index.open(fake.url) as reader:
        assert [h.chunk_id for h in reader.search(QUERY, k=5)] == answer
    with Index.open(home) as writer:
        writer.sync(rebuild=True)
    assert fake.collections() == ["narezka-record", "narezka_g2"]
    assert fake.aliases() == {"narezka": "narezka_g2"}
    with Index.open(fake.url) as reader:
        assert [h.chunk_id for h in reader.search(QUERY, k=5)] == answer


def test_an_alias_goes_only_where_narezka_put_it(fake: FakeQdrant) -> None:
    def make(name: str) -> None:
        with ServerStore(fake.url, collection=name) as store:
            store.ensure(4, sparse=False)

    make("kb")  # an index from before aliases keeps its points in the collection "kb"
    make("kb_g2")
    assert point_alias(fake.url, "kb", "kb_g2") is False  # the name is taken: not moved
    with ServerStore(fake.url, collection="kb") as legacy:
        legacy.drop()
    assert point_alias(fake.url, "kb", "kb_g2") is True
    assert fake.aliases() == {"kb": "kb_g2"}
    make("theirs")
    with ServerStore(fake.url, collection="theirs") as store:
        store.point_alias("shop")
    with pytest.raises(ConfigError, match="did not create"):
        point_alias(fake.url, "shop", "kb_g2")
    assert fake.aliases()["shop"] == "theirs"
    # As on the server, an action list with a bad action is applied not at all.
    client = QdrantClient(url=fake.url, check_compatibility=False)
    gone = qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name="nope"))
    moved = qm.CreateAliasOperation(
        create_alias=qm.CreateAlias(collection_name="theirs", alias_name="kb")
    )
    try:
        with pytest.raises(UnexpectedResponse, match="does not exist"):
            client.update_collection_aliases(change_aliases_operations=[moved, gone])
    finally:
        client.close()
    assert fake.aliases() == {"kb": "kb_g2", "shop": "theirs"}


# ---- options -----------------------------------------------------------------------------


def test_cli_flags_and_narezka_toml_set_the_layout(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    (corpus / "narezka.toml").write_text(
        "[qdrant]\nshards = 4\nreplicas = 2\nquantize = true\n", encoding="utf-8"
    )
    runner = CliRunner()
    built = runner.invoke(
        cli,
        ["index", str(corpus), "--store", str(tmp_path / "h"), "--embedder", "hash",
         "--qdrant-url", fake.url, "--shards", "2", "--write-consistency", "2", "--on-disk"],
    )  # fmt: skip
    assert built.exit_code == 0, built.output
    create = fake.created["narezka_g1"]
    assert (create.shard_number, create.replication_factor, create.write_consistency_factor) == (
        2,
        2,
        2,
    )
    assert create.quantization_config is not None and create.on_disk_payload is True
    pushed = runner.invoke(
        cli,
        ["push", str(tmp_path / "h"), "--qdrant-url", fake.url, "--collection", "copy",
         "--no-quantize", "--replicas", "3"],
    )  # fmt: skip
    assert pushed.exit_code == 0, pushed.output
    assert fake.created["copy"].quantization_config is None
    assert fake.created["copy"].replication_factor == 3
    with Index.open(fake.url, collection="copy") as copy:
        assert copy.search(QUERY, k=1)


@pytest.mark.parametrize(
    ("toml", "flags", "message"),
    [
        ("[qdrant]\nshards = 0\n", [], r"narezka.toml \[qdrant\]: qdrant shards"),
        ("[qdrant]\nshard = 2\n", [], "unknown qdrant setting shard"),
        ("[qdrant]\nquantize = 1\n", [], "quantize = 1 is not a valid value"),
        ("[qdrant]\noversampling = 0.5\n", [], "oversampling must be at least 1"),
        ("qdrant = 3\n", [], r"\[qdrant\] must be a table"),
        ("", ["--replicas", "2", "--write-consistency", "3"], "exceeds the 2 replica"),
        ("", ["--qdrant-url", "", "--shards", "2"], "--shards lay out a server index"),
    ],
)
def test_a_bad_layout_is_refused_before_anything_is_written(
    fake: FakeQdrant, corpus: Path, tmp_path: Path, toml: str, flags: list[str], message: str
) -> None:
    (corpus / "narezka.toml").write_text(toml, encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        ["index", str(corpus), "--store", str(tmp_path / "h"), "--embedder", "hash",
         "--qdrant-url", fake.url, *flags],
    )  # fmt: skip
    assert result.exit_code == 2
    assert re.search(message, result.output.replace("\n", " ")), result.output
    assert fake.collections() == []
