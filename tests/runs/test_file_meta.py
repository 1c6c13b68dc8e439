"""A file's metadata joins each chunk's own (narezka.runs.file_chunks.with_file_meta)
without changing anything else of the chunk."""

from __future__ import annotations

import dataclasses

from narezka.runs.file_chunks import with_file_meta
from narezka.types import Chunk, Secret


def test_file_meta_joins_each_chunk_and_every_other_field_stays() -> None:
    # Every field away from its default, so a field the copy forgot would show.
    chunk = Chunk(
        source="kb/a b.md",
        index=3,
        start=10,
        end=40,
        text="x" * 30,
        embed_text="A > B\n\n" + "x" * 30,
        section=("A", "B"),
        anchor="b",
        url="kb/a b.md#b",
        chars=37,
        tokens=9,
        tokenizer="cl100k_base",
        strategy="headings",
        content_hash="f" * 32,
        meta={"lang": "ru", "anchors": ["b"]},
        secrets=(Secret(12, 20, "password"),),
    )
    for resplit in (False, True):
        (out,) = with_file_meta([chunk], 1.5, "d" * 16, resplit=resplit)
        extra = {"mtime": 1.5, "doc_hash": "d" * 16} | ({"resplit": True} if resplit else {})
        assert out == dataclasses.replace(chunk, meta={**chunk.meta, **extra})
        assert list(out.meta) == [*chunk.meta, *extra]  # the JSONL keeps this order
        assert chunk.meta == {"lang": "ru", "anchors": ["b"]}  # the original is untouched
    assert [f.name for f in dataclasses.fields(Chunk)][-2:] == ["meta", "secrets"]
