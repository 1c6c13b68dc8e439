"""A scanned PDF indexed while OCR was absent is read again by the first sync after OCR
appears, without a touch or a rebuild, while every other unchanged file stays skipped by its
stat (``narezka.convert.capability``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from narezka import Index, Settings
from narezka.convert import Converted, ocr
from narezka.convert.capability import LACKS_OCR, lacking, still_lacking
from narezka.convert.ocr import OcrLine
from narezka.convert.options import DEFAULT, ConvertOptions

import convert_samples as samples

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
pytestmark = pytest.mark.skipif(not DEJAVU.exists(), reason="DejaVu fonts draw the scans")

READ = "Вскрытые чай и кофе к возврату не принимаются."


@pytest.fixture
def fake_ocr(monkeypatch: pytest.MonkeyPatch) -> None:
    """An OCR engine that is there unless ``NAREZKA_OCR=off`` (as tesseract would be after
    ``apt install``) and reads one line on every scanned page: the test needs no tesseract."""

    def engine(options: ConvertOptions) -> tuple[str, str] | None:
        return ("tesseract", "rus+eng") if options.ocr else None

    def recognise(image: bytes, exe: str, languages: str) -> list[OcrLine]:
        return [OcrLine(READ, 300, 300, 2000, 350, (1, 1))]

    monkeypatch.setattr(ocr, "engine", engine)
    monkeypatch.setattr(ocr, "recognise", recognise)
    # The fake engine lives in this process: conversions must run here to meet it.
    monkeypatch.setattr("narezka.convert.isolate.INLINE", True)


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Files converted (not taken from the cache), by name."""
    import narezka.convert.cache as cache_module

    calls: Counter[str] = Counter()
    real = cache_module.convert

    def spy(data: bytes, suffix: str, path: str = "", **kw: object) -> Converted:
        calls[Path(path).name] += 1
        return real(data, suffix, path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(cache_module, "convert", spy)
    return calls


def _found(index: Index, text: str) -> list[str]:
    return [h.file_path for h in index.search(text, k=3, mode="bm25") if text in h.text]


def test_a_scan_is_read_again_once_ocr_appears_and_only_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_ocr: None,
    conversions: Counter[str],
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "scan.pdf").write_bytes(samples.make_scan_pdf([["Возврат"], None]))
    (kb / "typed.pdf").write_bytes(samples.make_pdf([[(11, "Доставка по городу бесплатна.")]]))
    monkeypatch.setenv("NAREZKA_OCR", "off")
    with Index.create(kb, Settings(embedder="hash")) as index:
        report = index.sync(jobs=1)
        assert report.files_new == 2
        assert any("page 1: no text layer" in w for w in report.warnings)
        assert not _found(index, "Вскрытые")
        # Without OCR nothing changes: both files are skipped by their stat.
        report = index.sync(jobs=1)
        assert report.files_unchanged == 2 and report.files_changed == 0
    assert conversions == {"scan.pdf": 1, "typed.pdf": 1}

    monkeypatch.delenv("NAREZKA_OCR")  # tesseract installed; no file touched
    with Index.open(kb) as index:
        report = index.sync(jobs=1)
        assert report.files_changed == 1 and report.files_unchanged == 1
        assert _found(index, "Вскрытые") == ["scan.pdf"]
        assert index.sync(jobs=1).files_unchanged == 2
    assert conversions == {"scan.pdf": 2, "typed.pdf": 1}

    # Tesseract gone again: the pages it read stay read, nothing is converted again.
    monkeypatch.setenv("NAREZKA_OCR", "off")
    with Index.open(kb) as index:
        assert index.sync(jobs=1).files_unchanged == 2
        assert _found(index, "Вскрытые") == ["scan.pdf"]
    assert conversions == {"scan.pdf": 2, "typed.pdf": 1}


def test_only_pages_left_unread_for_want_of_ocr_are_marked() -> None:
    assert lacking({"pages": 3, "no_text_pages": [1, 3]}) == LACKS_OCR
    assert lacking({"pages": 3, "ocr_pages": [1, 3]}) == ""
    # Tesseract was there and failed: retrying on every sync would run it every time.
    assert lacking({"no_text_pages": [1], "ocr_failed": ["page 1: timeout"]}) == ""
    assert lacking({}) == ""


def test_a_marked_record_is_fresh_only_while_ocr_is_absent(
    fake_ocr: None,
) -> None:
    now = (10, 1.5, "fp", "hash")
    marked = (10, 1.5, "fp" + LACKS_OCR, "hash")
    off = ConvertOptions(ocr=False)
    assert still_lacking(marked, now, off)
    assert not still_lacking(None, now, off)
    assert not still_lacking(now, now, off)  # an unmarked record is the plain stat test's
    assert not still_lacking((11, 1.5, "fp" + LACKS_OCR, "hash"), now, off)  # file changed
    assert not still_lacking((10, 1.5, "old" + LACKS_OCR, "hash"), now, off)  # chunked otherwise
    assert not still_lacking((10, 1.5, "fp" + LACKS_OCR, "other"), now, off)  # another model
    assert not still_lacking(marked, now, DEFAULT)
