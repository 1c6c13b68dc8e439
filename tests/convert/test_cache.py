"""Conversions are cached by the source's bytes and the converter version."""

from __future__ import annotations

from pathlib import Path

import pytest

import narezka.convert
from narezka.convert import Converted
from narezka.convert.cache import ConvertCache, cache_key

import convert_samples as samples


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = narezka.convert.convert

    def spy(data: bytes, suffix: str, path: str = "", **kw: object) -> Converted:
        calls.append(path)
        return real(data, suffix, path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("narezka.convert.cache.convert", spy)
    return calls


def test_unchanged_bytes_are_converted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting(monkeypatch)
    data = samples.make_pptx()
    with ConvertCache(tmp_path / "convert.sqlite") as cache:
        first = cache.convert(data, ".pptx", "deck.pptx")
    with ConvertCache(tmp_path / "convert.sqlite") as cache:  # survives reopening
        again = cache.convert(data, ".pptx", "renamed.pptx")
        assert (cache.hits, cache.misses) == (1, 0)
    assert again == first and calls == ["deck.pptx"]


def test_changed_bytes_or_converter_version_convert_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting(monkeypatch)
    path = tmp_path / "convert.sqlite"
    with ConvertCache(path) as cache:
        cache.convert(b"a;b\n1;2\n", ".csv", "v1.csv")
        cache.convert(b"a;b\n1;3\n", ".csv", "v2.csv")
    with ConvertCache(path, version="next") as cache:
        cache.convert(b"a;b\n1;2\n", ".csv", "v1.csv")
    assert calls == ["v1.csv", "v2.csv", "v1.csv"]
    assert cache_key(b"x", ".CSV") == cache_key(b"x", ".csv") != cache_key(b"x", ".csv", "0")


def test_provenance_and_meta_round_trip(tmp_path: Path) -> None:
    data = samples.make_pdf([[(11, "Page one.")], [(11, "Page two.")]], header="Running")
    with ConvertCache(tmp_path / "c.sqlite") as cache:
        fresh = cache.convert(data, ".pdf", "r.pdf")
        cached = cache.get(data, ".pdf")
    assert cached == fresh and cached.provenance[1].where.page == 2
    assert cached.meta["running_text"] == ["Running", "1"]


def test_a_crawled_page_is_cached_under_its_boilerplate_set(tmp_path: Path) -> None:
    from narezka.convert.html import block_key

    page = b"<p>Menu</p><p>Body</p>"
    menu = {block_key("Menu")}
    with ConvertCache(tmp_path / "c.sqlite") as cache:
        assert cache.convert(page, ".html", "p.html", boilerplate=menu).markdown == "Body\n"
        assert cache.get(page, ".html") is None  # without the set: another page text
        assert cache.convert(page, ".html", "p.html").markdown == "Menu\n\nBody\n"
        assert cache.convert(page, ".html", "p.html", boilerplate=menu).markdown == "Body\n"
        assert (cache.hits, cache.misses) == (1, 2)
