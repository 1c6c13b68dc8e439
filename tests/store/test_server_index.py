"""An index whose points live on a Qdrant server: written from its folder, read by URL.

No Qdrant server can run here: these tests drive qdrant-client's real HTTP transport against
``fake_qdrant``, a local server implementing the documented REST routes on top of
qdrant-client's local mode.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka import Filter, Index, Settings
from narezka.cli import cli
from narezka.embed import get_embedder
from narezka.errors import ConfigError
from narezka.formats import CONVERTED_SUFFIXES
from narezka.store.base import StoredPoint, point_id
from narezka.store.errors import StoreUnavailableError
from narezka.store.server import ServerStore

from .fake_qdrant import FakeQdrant, fake_qdrant

KB = Path(__file__).resolve().parents[2] / "examples" / "kb"
HASH = Settings(embedder="hash")
HASH_DIM = get_embedder("hash").dim


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


def _build(corpus: Path, url: str, home: Path, **kwargs: str) -> None:
    with Index.create(corpus, HASH, store=home, url=url, **kwargs) as index:
        report = index.sync()
    assert report.files_new > 0 and not report.warnings


def _ids(hits: list[object]) -> list[str]:
    return [h.chunk_id for h in hits]  # type: ignore[attr-defined]


def test_a_reader_by_url_sees_what_the_writer_sees(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _build(corpus, fake.url, home)
    assert fake.collections() == ["narezka-record", "narezka_g1"]
    assert fake.aliases() == {"narezka": "narezka_g1"}
    with Index.open(home) as writer, Index.open(fake.url) as reader:
        assert reader.home is None
        for query in ("можно ли вернуть вскрытый чай", "доставка в другой город"):
            mine = writer.search(query, k=5)
            theirs = reader.search(query, k=5)
            assert _ids(theirs) == _ids(mine) and mine
            assert [h.text for h in theirs] == [h.text for h in mine]
        narrowed = reader.search("чай", k=5, filters=Filter(path="faq*"))
        assert narrowed and all(h.file_path.startswith("faq") for h in narrowed)
        assert reader.sources() == writer.sources()
        assert _ids(list(reader.chunks())) == _ids(list(writer.chunks()))
        first = next(iter(writer.chunks()))
        assert reader.get(first.chunk_id) == writer.get(first.chunk_id)
        assert _ids(reader.neighbours(first.chunk_id, 2)) == _ids(
            writer.neighbours(first.chunk_id, 2)
        )
        stats, own = reader.stats(), writer.stats()
        assert (stats.files, stats.chunks, stats.embedder) == (own.files, own.chunks, own.embedder)
        assert stats.store == fake.url


def test_a_reader_by_url_is_read_only(fake: FakeQdrant, corpus: Path, tmp_path: Path) -> None:
    _build(corpus, fake.url, tmp_path / "home")
    with Index.open(fake.url) as reader, pytest.raises(ConfigError, match="read-only"):
        reader.sync()


def test_the_reader_follows_syncs_and_rebuilds(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _build(corpus, fake.url, home)
    with Index.open(fake.url) as reader:
        before = reader.stats().files
        (corpus / "новый.md").write_text("# Кофе\n\nКофе варят в турке долго.\n", encoding="utf-8")
        with Index.open(home) as writer:
            writer.sync()
        assert reader.stats().files == before + 1
        assert any(h.file_path == "новый.md" for h in reader.search("кофе в турке", k=3))
        with Index.open(home) as writer:
            writer.sync(rebuild=True)
        # The rebuild wrote a new collection, published it, then dropped the old one.
        assert fake.collections() == ["narezka-record", "narezka_g2"]
        assert any(h.file_path == "новый.md" for h in reader.search("кофе в турке", k=3))


def test_two_indexes_share_a_server_by_name_and_never_touch_each_other(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# Лампа\n\nЛампа светит ярко.\n", encoding="utf-8")
    _build(corpus, fake.url, tmp_path / "h1")
    with (
        Index.create(other, HASH, store=tmp_path / "h2", url=fake.url) as second,
        pytest.raises(ConfigError, match="did not create"),
    ):
        second.sync()  # the default name is taken by the first index
    _build(other, fake.url, tmp_path / "h2b", collection="lamps")
    with Index.open(fake.url) as kb, Index.open(fake.url, collection="lamps") as lamps:
        assert [s.path for s in lamps.sources()] == ["a.md"]
        documents = [p for p in corpus.rglob("*") if p.suffix in (".md", *CONVERTED_SUFFIXES)]
        assert kb.stats().files == len(documents)
        assert {h.file_path for h in lamps.search("лампа", k=5)} == {"a.md"}


def test_an_index_keeps_its_server_name(fake: FakeQdrant, corpus: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    _build(corpus, fake.url, home, collection="kb")
    with pytest.raises(ConfigError, match="named 'kb', not 'other'"):
        Index.create(corpus, HASH, store=home, url=fake.url, collection="other")
    with pytest.raises(ConfigError, match="collection name"):
        Index.create(corpus, HASH, store=tmp_path / "x", url=fake.url, collection="a/b")


def test_opening_an_unknown_name_says_what_is_missing(fake: FakeQdrant) -> None:
    with pytest.raises(ConfigError, match=r"no narezka index 'kb' on .*kb-record"):
        Index.open(fake.url, collection="kb")


def test_a_failed_record_upload_is_a_warning_not_a_lost_sync(corpus: Path, tmp_path: Path) -> None:
    with fake_qdrant() as fake:
        home = tmp_path / "home"
        _build(corpus, fake.url, home)
        (corpus / "faq.md").write_text("# FAQ\n\nЧай можно вернуть.\n", encoding="utf-8")
        fake.fail_matching = ("PUT", "/collections/narezka-record/points", 503)
        with Index.open(home) as writer:
            report = writer.sync()
        assert report.files_changed == 1
        assert any("not updated" in w for w in report.warnings)
        with Index.open(home) as writer:  # the points and the local record are current
            assert any("вернуть" in h.text for h in writer.search("чай вернуть", k=3))
        fake.fail_matching = None
        with Index.open(home) as writer:
            assert not writer.sync().warnings  # the next sync publishes again
        with Index.open(fake.url) as reader:
            faq = next(s for s in reader.sources() if s.path == "faq.md")
            assert faq.chunks == 1


# qdrant-client warns that a key over plain http is readable on the wire: true, and expected here.
@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_a_server_that_wants_a_key_is_refused_without_it(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fake_qdrant(api_key="s3cret") as fake:
        monkeypatch.delenv("QDRANT_API_KEY", raising=False)
        with (
            Index.create(corpus, HASH, store=tmp_path / "a", url=fake.url) as index,
            pytest.raises(StoreUnavailableError, match=fake.url.split("//")[1]),
        ):
            index.sync()
        monkeypatch.setenv("QDRANT_API_KEY", "s3cret")
        _build(corpus, fake.url, tmp_path / "b")
        with Index.open(fake.url) as reader:
            assert reader.search("чай", k=1)
        with Index.open(tmp_path / "b") as writer:
            assert writer.push(fake.url, collection="copy") > 0  # the key reaches a push too
        # The store itself reads no environment: its opener hands the key down.
        with (
            ServerStore(fake.url, collection="copy") as bare,
            pytest.raises(StoreUnavailableError),
        ):
            bare.ensure(1, sparse=False)
        with ServerStore(fake.url, collection="copy", api_key="s3cret") as keyed:
            assert keyed.exists()


def test_cli_index_and_search_by_url(fake: FakeQdrant, corpus: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    built = runner.invoke(
        cli,
        ["index", str(corpus), "--store", str(tmp_path / "h"), "--embedder", "hash",
         "--qdrant-url", fake.url, "--collection", "kb", "--json"],
    )  # fmt: skip
    assert built.exit_code == 0, built.output
    found = runner.invoke(
        cli,
        ["search", "вернуть вскрытый чай", "--store", fake.url, "--collection", "kb",
         "--format", "json", "-k", "3"],
    )  # fmt: skip
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)
    assert len(hits) == 3 and all(h["file_path"] for h in hits)
    missing = runner.invoke(cli, ["search", "чай", "--store", fake.url, "--collection", "nope"])
    assert missing.exit_code == 2 and "no narezka index 'nope'" in missing.output


def test_push_makes_a_copy_readable_by_url_and_a_re_push_updates_it(
    fake: FakeQdrant, corpus: Path
) -> None:
    with Index.create(corpus, HASH) as local:
        local.sync()
        assert local.push(fake.url, collection="copy") == local.stats().chunks
        query = "можно ли вернуть вскрытый чай"
        with Index.open(fake.url, collection="copy") as copy:
            assert _ids(copy.search(query, k=5)) == _ids(local.search(query, k=5))
        gone = sorted(corpus.glob("*.md"))[0]
        gone.unlink()
        local.sync()
        local.push(fake.url, collection="copy")
        with Index.open(fake.url, collection="copy") as copy:
            assert gone.name not in {s.path for s in copy.sources()}
            assert copy.stats().chunks == local.stats().chunks
        with ServerStore(fake.url, collection="copy") as points:
            points.ensure(HASH_DIM, sparse=True)
            assert points.count() == local.stats().chunks  # the deleted file's points went


def test_push_refuses_a_collection_narezka_did_not_write(fake: FakeQdrant, corpus: Path) -> None:
    with ServerStore(fake.url, collection="theirs") as theirs:
        theirs.ensure(HASH_DIM, sparse=True)
        theirs.upsert([StoredPoint(point_id("x"), [1.0] * HASH_DIM, {"mine": True})])
    with Index.create(corpus, HASH) as local:
        local.sync()
        with pytest.raises(ConfigError, match="did not write"):
            local.push(fake.url, collection="theirs")
    with ServerStore(fake.url, collection="theirs") as theirs:
        theirs.ensure(HASH_DIM, sparse=True)
        assert theirs.count() == 1


def test_a_search_by_url_reads_the_record_not_the_file_list(
    fake: FakeQdrant, corpus: Path, tmp_path: Path
) -> None:
    _build(corpus, fake.url, tmp_path / "home")
    reads = ("POST", "/collections/narezka-record/points")
    with Index.open(fake.url) as reader:
        before = fake.requests.count(reads)
        reader.search("чай", k=3)
        assert fake.requests.count(reads) - before == 1  # the record alone
        before = fake.requests.count(reads)
        reader.sources()
        assert fake.requests.count(reads) - before == 2  # the record, then the file list
