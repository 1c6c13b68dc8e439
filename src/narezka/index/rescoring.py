"""The quality tier at sync time: every point written also carries its second (e5) vector.

A sync writes a file's points in one go (:meth:`narezka.index.syncing.Syncer.apply`): new
chunks with fresh first vectors, and kept or moved chunks with the vectors of their donor
points. :func:`with_second_vectors` completes that list before it is written: a donor's
second vector is copied like its first, every other point's is embedded (through the
embedding cache, so a rebuild or a re-sync of an unchanged text embeds nothing). Deletes need
nothing: both vectors live in one point, and go with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from narezka.embed.rescore import RescoreModel
from narezka.store import StoredPoint


def with_second_vectors(
    points: Sequence[StoredPoint],
    texts: Mapping[str, str],
    donors: Mapping[str, StoredPoint],
    copied_from: Mapping[str, str],
    model: RescoreModel,
) -> list[StoredPoint]:
    """``points`` with their second vectors: a copied point's from its donor
    (``copied_from`` maps a point id to the donor's, ``donors`` holds the donors read with
    their vectors), the rest embedded from ``texts`` (point id → ``embed_text``)."""
    out = list(points)
    missing = []
    for i, point in enumerate(out):
        donor = donors.get(copied_from.get(point.id, ""))
        if donor is not None and donor.rescore is not None:
            out[i] = dataclasses.replace(point, rescore=donor.rescore)
        else:
            missing.append(i)
    if missing:
        vectors = model.passages([texts[out[i].id] for i in missing])
        for row, i in enumerate(missing):
            out[i] = dataclasses.replace(out[i], rescore=vectors[row])
    return out


__all__ = ["with_second_vectors"]
