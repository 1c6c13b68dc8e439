"""The inspector reads converted files through the conversion cache of the corpus's index:
a PDF the index converted is not converted again (a scan would be read by OCR again)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka import Index, Settings
from narezka.cli import cli
from narezka.convert import Converted
from narezka.inspector import index_convert_cache

import convert_samples as samples


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Conversions run, by file name, with or without a cache."""
    import narezka.convert.cache as cache_module
    import narezka.discover.converted as converted_module

    calls: Counter[str] = Counter()
    real = cache_module.convert

    def spy(data: bytes, suffix: str, path: str = "", **kw: object) -> Converted:
        calls[Path(path).name] += 1
        return real(data, suffix, path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(cache_module, "convert", spy)
    monkeypatch.setattr(converted_module, "convert", spy)
    return calls


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    (kb / "docs").mkdir(parents=True)
    (kb / "docs" / "returns.pdf").write_bytes(
        samples.make_pdf([[(18, "Возврат"), (11, "Вернуть товар можно в течение 14 дней.")]])
    )
    (kb / "notes.md").write_text("# Заметки\n\nДоставка по городу.\n", encoding="utf-8")
    return kb


def _inspect(*args: str) -> str:
    result = CliRunner().invoke(cli, ["inspect", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_inspector_takes_conversions_from_the_index(
    kb: Path, tmp_path: Path, conversions: Counter[str]
) -> None:
    with Index.create(kb, Settings(embedder="hash")) as index:
        index.sync(jobs=1)
    assert conversions == {"returns.pdf": 1}
    cache = kb / ".narezka" / "converted.sqlite"
    before = cache.stat().st_size, cache.stat().st_mtime_ns
    out = tmp_path / "page.html"
    # Two runs side by side and the sources read again: without the cache, three conversions.
    _inspect(str(kb), "--compare", "overlap:size=200,overlap=20", "--out", str(out))
    assert conversions == {"returns.pdf": 1}
    assert "Вернуть товар можно" in out.read_text(encoding="utf-8")
    assert (cache.stat().st_size, cache.stat().st_mtime_ns) == before  # nothing written
    # A folder inside the corpus finds the same index.
    _inspect(str(kb / "docs"), "--out", str(out))
    assert conversions == {"returns.pdf": 1}


def test_without_an_index_the_inspector_converts_and_creates_nothing(
    kb: Path, tmp_path: Path, conversions: Counter[str]
) -> None:
    out = tmp_path / "page.html"
    _inspect(str(kb), "--out", str(out))
    assert conversions["returns.pdf"] >= 1  # the spy sees conversions: the test above can fail
    assert not (kb / ".narezka").exists()
    assert "Вернуть товар можно" in out.read_text(encoding="utf-8")


def test_the_cache_is_used_only_when_every_path_shares_it(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for corpus in (one, two):
        (corpus / ".narezka").mkdir(parents=True)
        (corpus / ".narezka" / "converted.sqlite").write_bytes(b"")
    (one / "sub").mkdir()
    (one / "sub" / "a.pdf").write_bytes(b"%PDF")
    assert index_convert_cache([one]) == (one / ".narezka" / "converted.sqlite").resolve()
    assert index_convert_cache([one / "sub", one / "sub" / "a.pdf"]) == index_convert_cache([one])
    assert index_convert_cache([one, two]) is None
    assert index_convert_cache([tmp_path]) is None  # no index in or above it
