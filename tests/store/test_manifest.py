"""Manifest diffs, and the crash-repair protocol: a crash after any store step is repaired."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from narezka.store import ChunkEntry, FileEntry, Manifest, StoredPoint, VectorStore, point_id
from narezka.store.base import chunk_point_id

FP, EMB = "fp1", "hash-8"
StoreFactory = Callable[[], VectorStore]


class Crash(Exception):
    """Stands in for kill -9 between two steps."""


def entries(path: str, texts: list[str], fp: str = FP) -> list[ChunkEntry]:
    digest = [hashlib.sha256(f"{fp}\0{t}".encode()).hexdigest() for t in texts]
    return [ChunkEntry(i, chunk_point_id(path, fp, i), digest[i]) for i in range(len(texts))]


def vector(text: str) -> np.ndarray:
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    return np.random.default_rng(seed).standard_normal(4)


def sync_file(
    manifest: Manifest, store: VectorStore, path: str, texts: list[str] | None, crash_at: int = -1
) -> int:
    """The protocol a pipeline follows; raises ``Crash`` before step ``crash_at``. Returns how
    many chunks were embedded."""
    step = iter(range(100))

    def checkpoint() -> None:
        if next(step) == crash_at:
            raise Crash

    if texts is None:  # the file was deleted
        old = manifest.get(path)
        manifest.begin(path, [c.point_id for c in old.chunks] if old else [])
        checkpoint()
        store.delete_where("file_path", path)
        checkpoint()
        manifest.commit_delete(path)
        return 0
    chunks = entries(path, texts)
    by_hash = {c.content_hash: t for c, t in zip(chunks, texts, strict=True)}
    plan = manifest.plan(path, chunks, fingerprint=FP, embedder=EMB)
    sources = {p.id: p for p in store.get([s for _, s in plan.reuse], with_vectors=True)}
    manifest.begin(path, plan.touched)
    checkpoint()
    points = []
    for c in plan.embed:
        points.append((c, vector(by_hash[c.content_hash])))
    for c, source in plan.reuse:
        points.append((c, np.asarray(sources[source].dense)))
    for c, dense in points:  # one point per upsert so a crash can fall between them
        payload = {"file_path": path, "chunk_index": c.index, "content_hash": c.content_hash}
        store.upsert([StoredPoint(c.point_id, dense, payload)])
        checkpoint()
    store.delete(list(plan.delete))
    checkpoint()
    manifest.commit(FileEntry(path, len(texts), 1.0, "doc", FP, EMB, tuple(chunks)))
    return len(plan.embed)


def store_state(store: VectorStore, path: str) -> dict[str, str]:
    from narezka.store import Filter

    n = store.count(Filter.where(file_path=path))
    hits = store.query(np.ones(4), filter=Filter.where(file_path=path), k=max(n, 1))
    return {h.id: str(h.payload["content_hash"]) for h in hits}


def test_plan_classifies_chunks(tmp_path: Path) -> None:
    with Manifest(tmp_path) as m:
        old = entries("a.md", ["intro", "body", "tail"])
        m.commit(FileEntry("a.md", 10, 1.0, "h", FP, EMB, tuple(old)))
        assert m.is_fresh("a.md", 10, 1.0, fingerprint=FP, embedder=EMB)
        assert not m.is_fresh("a.md", 11, 1.0, fingerprint=FP, embedder=EMB)
        assert not m.is_fresh("a.md", 10, 1.0, fingerprint=FP, embedder="other")
        # A paragraph inserted at the top shifts every index: nothing needs embedding but it.
        plan = m.plan("a.md", entries("a.md", ["new", "intro", "body", "tail"]),
                      fingerprint=FP, embedder=EMB)  # fmt: skip
        assert [c.index for c in plan.embed] == [0]
        assert [(c.index, src) for c, src in plan.reuse] == [
            (1, old[0].point_id), (2, old[1].point_id), (3, old[2].point_id)]  # fmt: skip
        assert plan.delete == () and plan.keep == ()
        # A one-chunk edit: one embed, two kept, the dropped tail deleted.
        plan = m.plan("a.md", entries("a.md", ["intro", "BODY"]), fingerprint=FP, embedder=EMB)
        assert [c.index for c in plan.keep] == [0] and [c.index for c in plan.embed] == [1]
        assert plan.delete == (old[2].point_id,) and plan.changed
        assert set(plan.touched) == {c.point_id for c in old}
        # Another embedder: every vector is new.
        plan = m.plan("a.md", entries("a.md", ["intro"]), fingerprint=FP, embedder="e2")
        assert len(plan.embed) == 1 and not plan.keep and not plan.reuse
        # Another strategy: new ids, new hashes, old ids deleted.
        plan = m.plan("a.md", entries("a.md", ["intro"], fp="fp2"), fingerprint="fp2",
                      embedder=EMB)  # fmt: skip
        assert len(plan.embed) == 1 and len(plan.delete) == 3
        unchanged = m.plan("a.md", old, fingerprint=FP, embedder=EMB)
        assert not unchanged.changed and len(unchanged.keep) == 3
        assert m.paths() == ["a.md"] and m.stats_in_order().get("a.md") == (10, 1.0, FP, EMB)
        m.commit_delete("a.md")
        assert (
            m.get("a.md") is None and m.plan("a.md", [], fingerprint=FP, embedder=EMB).delete == ()
        )


def test_manifest_persists_and_rolls_back(tmp_path: Path) -> None:
    with Manifest(tmp_path / "m.sqlite") as m:
        m.commit(FileEntry("a.md", 1, 2.0, "h", FP, EMB, tuple(entries("a.md", ["x"]))))
        m.begin("a.md", ["id1"])
    with Manifest(tmp_path / "m.sqlite") as m:
        entry = m.get("a.md")
        assert entry is not None and entry.chunks == tuple(entries("a.md", ["x"]))
        assert m.pending() == {"a.md": ["id1"]}
        with pytest.raises(ValueError), m._transaction() as db:
            db.execute("DELETE FROM files")
            raise ValueError
        assert m.paths() == ["a.md"]


VERSIONS = [
    ["alpha", "beta", "gamma"],
    ["new top", "alpha", "beta", "gamma"],  # index shift: reuse
    ["new top", "alpha", "BETA changed"],  # edit + shrink
    None,  # file deleted
]


@pytest.mark.parametrize("version", range(len(VERSIONS)))
def test_crash_at_every_step_is_repaired(
    new_store: StoreFactory, tmp_path: Path, version: int
) -> None:
    """Crash the sync of VERSIONS[version] at each step, reopen, recover, sync again: the
    store and manifest must equal those of a clean run, and nothing is re-embedded twice."""
    crash_at = 0
    while True:
        store = new_store()
        store.ensure(4, sparse=False)
        manifest = Manifest(tmp_path / f"m{version}-{crash_at}.sqlite")
        store.delete_where("file_path", "a.md")
        for texts in VERSIONS[:version]:  # reach the state before the version under test
            sync_file(manifest, store, "a.md", texts)
        try:
            sync_file(manifest, store, "a.md", VERSIONS[version], crash_at=crash_at)
            finished = True
        except Crash:
            finished = False
        store.close()
        manifest.close()
        # ---- "restart" -------------------------------------------------------------------
        store = new_store()
        store.ensure(4, sparse=False)
        manifest = Manifest(tmp_path / f"m{version}-{crash_at}.sqlite")
        repaired = manifest.recover(store)
        assert repaired == ([] if finished else ["a.md"])
        entry = manifest.get("a.md")
        # Invariant after recovery: the manifest describes exactly the store's points.
        expected = {c.point_id: c.content_hash for c in entry.chunks} if entry else {}
        assert store_state(store, "a.md") == expected
        embedded = sync_file(manifest, store, "a.md", VERSIONS[version])
        final = VERSIONS[version]
        want = {c.point_id: c.content_hash for c in entries("a.md", final)} if final else {}
        assert store_state(store, "a.md") == want
        entry = manifest.get("a.md")
        assert ({c.point_id: c.content_hash for c in entry.chunks} if entry else {}) == want
        assert manifest.pending() == {}
        new_texts = set(final or ()) - {t for v in VERSIONS[:version] for t in v or ()}
        assert embedded <= len(new_texts)  # reuse survived the crash
        store.close()
        manifest.close()
        if finished:
            break
        crash_at += 1
    assert crash_at >= 1


def test_recover_drops_points_it_cannot_describe(store: VectorStore, tmp_path: Path) -> None:
    with Manifest(tmp_path) as m:
        stray = point_id("stray")
        m.begin("a.md", [stray])
        store.upsert([StoredPoint(stray, np.ones(4), {"file_path": "a.md"})])
        assert m.recover(store) == ["a.md"]
        assert store.get([stray]) == []
        entry = m.get("a.md")
        assert entry is not None and entry.chunks == () and entry.size == -1


def test_stats_share_one_fingerprint_string_between_files(tmp_path: Path) -> None:
    """A no-change sync reads every file's stats: the long fingerprint and the embedder
    name are one string each, not a copy per file (issue 27: 300 MB at 1M files)."""
    fingerprint = "headings:" + "x" * 250
    with Manifest(tmp_path / "m") as m:
        for name in ("a.md", "b.md"):
            m.commit(FileEntry(name, 10, 1.0, "d", fingerprint, EMB, ()))
        lookup = m.stats_in_order()
        lookup.scan()
        stats = {name: lookup.get(name) or () for name in ("a.md", "b.md")}
        lookup.close()
    assert stats["a.md"][2] == fingerprint and stats["a.md"][2] is stats["b.md"][2]
    assert stats["a.md"][3] is stats["b.md"][3]


def test_stats_in_order_merge_with_a_sorted_walk(tmp_path: Path) -> None:
    """Read in step with the walk, the manifest answers what was committed for every
    path, in the walk's order (code points; SQLite's is UTF-8 bytes: the same), for paths it
    does not know, and for a path asked out of order."""
    names = ["a.md", "a/b.md", "a-b.md", "ab.md", "z.md", "Я/ё.md", "ж.md", "é.md", "日本.md"]
    with Manifest(tmp_path / "m") as m:
        for size, name in enumerate(names):
            m.commit(FileEntry(name, size, 1.0, "d", "fp", EMB, ()))
        expected = {name: (size, 1.0, "fp", EMB) for size, name in enumerate(names)}
        lookup = m.stats_in_order()
        walk = sorted([*names, "new.md", "Я/new.md", "a/c.md"])
        lookup.scan()
        assert {p: lookup.get(p) for p in walk} == {p: expected.get(p) for p in walk}
        assert lookup.get("a.md") == expected["a.md"]  # behind the scan: asked by itself
        lookup.close()
        assert lookup.get("z.md") == expected["z.md"]  # after it: asked by itself


def test_stats_in_order_holds_no_rows(tmp_path: Path) -> None:
    """The scan reads rows as the walk passes them: past the first paths, none of the
    rows behind is kept (a dict of them was ~350 B a file)."""
    with Manifest(tmp_path / "m") as m:
        for i in range(2000):
            m.commit(FileEntry(f"f{i:05d}.md", i, 1.0, "d", "fp", EMB, ()))
        lookup = m.stats_in_order()
        lookup.scan()
        assert lookup.get("f01999.md") == (1999, 1.0, "fp", EMB)
        assert lookup.get("f00000.md") == (0, 1.0, "fp", EMB)  # behind: asked by itself
        assert not any(isinstance(v, dict) and len(v) > 2 for v in vars(lookup).values())


def test_an_ordered_scan_collects_the_rows_the_walk_passed_over(tmp_path: Path) -> None:
    """The rows a sorted walk never asks for are the indexed files it did not meet: before
    the first path asked, between two, and after the last; asking one twice or a path the
    manifest does not know changes nothing, and a path behind the scan is refused."""
    names = ["a.md", "a/b.md", "a-b.md", "ab.md", "m.md", "z.md", "Я.md"]
    with Manifest(tmp_path / "m") as m:
        for name in names:
            m.commit(FileEntry(name, 1, 1.0, "d", "fp", EMB, ()))
        lookup = m.stats_in_order()
        unseen: list[str] = []
        lookup.scan(unseen=unseen)
        for path in ("a.md", "a.md", "ab.md", "b-new.md", "m.md"):
            lookup.get(path)
        assert unseen == ["a-b.md", "a/b.md"]
        lookup.rest_unseen()
        assert unseen == ["a-b.md", "a/b.md", "z.md", "Я.md"]
        with pytest.raises(ValueError, match="asked after"):
            lookup.get("a.md")
        lookup.close()
        assert lookup.get("a.md") == (1, 1.0, "fp", EMB)  # alone again after the scan
