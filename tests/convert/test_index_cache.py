"""An index keeps converted files in its folder: an unchanged file is never converted twice,
even when its modification time changes (changed bytes: tests/convert/test_cache.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from narezka import Index, Settings
from narezka.convert import Converted

import convert_samples as samples


def test_sync_converts_unchanged_bytes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    import narezka.convert.cache as cache_module

    real = cache_module.convert

    def spy(data: bytes, suffix: str, path: str = "", **kw: object) -> Converted:
        calls.append(Path(path).name)
        return real(data, suffix, path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(cache_module, "convert", spy)
    kb = tmp_path / "kb"
    kb.mkdir()
    deck = kb / "deck.pptx"
    deck.write_bytes(samples.make_pptx())
    with Index.create(kb, Settings(embedder="hash")) as index:
        assert index.sync().files_new == 1
        hits = index.search("Самовывоз", k=1, mode="bm25")
        assert hits and hits[0].file_path == "deck.pptx"
        assert hits[0].payload["slide"] == 1  # where in the deck: stored with the point
        # Expansion re-reads the file: it sees the same canonical Markdown the index holds.
        expanded = index.search("Самовывоз", k=1, mode="bm25", expand="section")
        assert not expanded[0].stale and "- Курьером" in expanded[0].text
    assert (kb / ".narezka" / "converted.sqlite").is_file()
    os.utime(deck, (1, 1))  # touched, same bytes: read again, not converted again
    with Index.open(kb) as index:
        index.sync()
    assert calls == ["deck.pptx"]


def test_reading_a_hit_again_takes_the_conversion_from_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Section expansion, folded neighbours and the server's /sources re-read a hit's file:
    for a converted one they take the index's conversion, so a scanned PDF is not read by OCR
    on every search."""
    from narezka.serve.service import Service

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "deck.pptx").write_bytes(samples.make_pptx())
    with Index.create(kb, Settings(embedder="hash")) as index:
        index.sync()
    import narezka.convert.cache as cache_module
    import narezka.discover.converted as converted_module

    def refuse(*args: object, **kw: object) -> Converted:
        raise AssertionError("converted again")

    monkeypatch.setattr(cache_module, "convert", refuse)
    monkeypatch.setattr(converted_module, "convert", refuse)
    with Index.open(kb) as index:
        expanded = index.search("Самовывоз", k=1, mode="bm25", expand="section")
        folded = index.search("Самовывоз", k=3, mode="bm25", fold=0)
    assert expanded and expanded[0].file_path == "deck.pptx" and not expanded[0].stale
    assert "Самовывоз" in expanded[0].text
    assert folded and not any(h.stale for h in folded)
    with Service(kb, watch=False) as service:
        assert "Самовывоз" in service.source_text("deck.pptx")
