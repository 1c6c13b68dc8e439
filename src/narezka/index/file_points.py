"""One changed file's points, from its chunks planned against the manifest: new vectors for
new content, vectors copied from the points that held the same content before (a moved chunk
is not embedded again), and the quality tier's second vectors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from narezka.embed import Embedder, Matrix, embed_all
from narezka.embed.rescore import RescoreModel
from narezka.index.reports import IndexReport
from narezka.index.rescoring import with_second_vectors
from narezka.runs.file_chunks import FileChunks
from narezka.store import ChunkEntry, FilePlan, StoredPoint, VectorStore
from narezka.types import Chunk

MakePoint = Callable[[str, Chunk, Any], StoredPoint]
"""A stored point from its id, its chunk and its dense vector (payload and sparse vector
made as the sync makes them)."""


@dataclass(frozen=True, slots=True)
class FileCut:
    """One file cut into chunks, planned against the manifest and its new content embedded."""

    result: FileChunks | None
    """The chunking that was embedded (a re-cut one after a refusal); None for no chunks."""
    entries: list[ChunkEntry]
    """Every chunk of the file as the manifest records it."""
    plan: FilePlan
    by_index: dict[int, Chunk]
    vectors: Matrix
    """The vectors of ``plan.embed``, in its order."""


def file_points(
    cut: FileCut,
    store: VectorStore,
    embedder: Embedder,
    rescore: RescoreModel | None,
    point: MakePoint,
    report: IndexReport,
) -> list[StoredPoint]:
    """Every point the file's write upserts; the report counts the chunks embedded here
    after all (a donor vanished) and those whose vector moved to a new id."""
    plan, by_index = cut.plan, cut.by_index
    # A kept chunk (same id, same content) still gets its payload rewritten: its offsets
    # may have moved and its document hash has changed. Its vector is copied as it is.
    donors = [*(old_id for _, old_id in plan.reuse), *(c.point_id for c in plan.keep)]
    reused = {p.id: p for p in store.get(donors, with_vectors=True)} if donors else {}
    points = [
        point(entry.point_id, by_index[entry.index], vector)
        for entry, vector in zip(plan.embed, cut.vectors, strict=True)
    ]
    copies = [*plan.reuse, *((c, c.point_id) for c in plan.keep)]
    for entry, old_id in copies:
        chunk, donor = by_index[entry.index], reused.get(old_id)
        if donor is None or donor.dense is None:  # vanished under us: embed it after all
            points.append(point(entry.point_id, chunk, embed_all([chunk.embed_text], embedder)[0]))
            report.chunks_embedded += 1
        else:
            points.append(point(entry.point_id, chunk, donor.dense))
            if entry.point_id != old_id:
                report.chunks_reused += 1
    if rescore is not None:  # the quality tier: each point's second vector too
        texts = {e.point_id: by_index[e.index].embed_text for e in cut.entries}
        copied = {entry.point_id: old_id for entry, old_id in copies}
        points = with_second_vectors(points, texts, reused, copied, rescore)
    return points
