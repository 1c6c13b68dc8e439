"""Scanned PDF pages: read by tesseract when it is installed, named as unread when not."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from narezka.convert import convert, locate, ocr
from narezka.convert.cache import ConvertCache
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.discover.walk import read_document
from narezka.errors import NoTextLayerError
from narezka.settings import convert_options
from narezka.types import SourceLocation

import convert_samples as samples

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
pytestmark = pytest.mark.skipif(not DEJAVU.exists(), reason="DejaVu fonts draw the scans")

POLICY = [
    "Возврат товара",
    "",
    "Товар надлежащего качества можно вернуть в течение",
    "14 календарных дней со дня получения.",
    "",
    "Вскрытые чай и кофе к возврату не принимаются.",
]
SECOND = ["Деньги возвращаются в течение 10 календарных дней."]


@pytest.fixture
def scans() -> bytes:
    """Page 1 a scan, page 2 typed, page 3 a scan."""
    return samples.make_scan_pdf([POLICY, None, SECOND])


@pytest.fixture
def no_ocr(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A machine without tesseract: nothing of that name on the PATH."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert ocr.engine(DEFAULT) is None


def _words(text: str) -> str:
    return " ".join(text.split())


needs_tesseract = pytest.mark.skipif(
    ocr.engine(DEFAULT) is None or "rus" not in ocr.available(DEFAULT),
    reason="tesseract-ocr with Russian data (tesseract-ocr-rus) is not installed",
)


@needs_tesseract
def test_scanned_pages_are_read_by_ocr_and_located(scans: bytes, tmp_path: Path) -> None:
    result = convert(scans, ".pdf", "scan.pdf")
    md = _words(result.markdown)
    assert "Товар надлежащего качества можно вернуть в течение 14 календарных дней" in md
    assert "Вскрытые чай и кофе к возврату не принимаются." in md
    assert "10 календарных дней" in md and "A typed page between the scans." in md
    assert result.meta["ocr_pages"] == [1, 3] and result.meta["ocr"] == "tesseract rus+eng"
    assert "no_text_pages" not in result.meta
    # OCR keeps tesseract's paragraphs: the wrapped sentence is one, the heading another.
    assert "\n\nТовар надлежащего качества можно вернуть в течение 14 календарных дней" in (
        result.markdown
    )
    at = result.markdown.index("Вскрытые")
    assert locate(result.provenance, at, at + 8) == (SourceLocation(page=1),) * 2
    at = result.markdown.index("Деньги")
    assert locate(result.provenance, at, at + 6) == (SourceLocation(page=3),) * 2
    file = tmp_path / "scan.pdf"
    file.write_bytes(scans)
    _, notes = read_document(tmp_path, file)
    assert notes == [f"{file}: pages 1, 3 read by OCR (tesseract rus+eng)"]


def test_without_tesseract_a_scanned_page_is_named_never_silently_empty(
    scans: bytes, no_ocr: None, tmp_path: Path
) -> None:
    result = convert(scans, ".pdf", "scan.pdf")
    assert result.markdown == "A typed page between the scans.\n"
    assert result.meta["no_text_pages"] == [1, 3] and "ocr_pages" not in result.meta
    file = tmp_path / "scan.pdf"
    file.write_bytes(scans)
    doc, notes = read_document(tmp_path, file)
    assert doc.text == result.markdown
    assert notes == [
        f"{file}: pages 1, 3: no text layer, not indexed (a scan? install tesseract-ocr and "
        "tesseract-ocr-rus to read it by OCR)"
    ]


def test_without_tesseract_an_all_scanned_pdf_fails_naming_the_file(
    no_ocr: None,
) -> None:
    data = samples.make_scan_pdf([POLICY, SECOND])
    with pytest.raises(NoTextLayerError, match=r"^scan\.pdf: no text layer in 2 page\(s\)") as e:
        convert(data, ".pdf", "scan.pdf")
    assert "install tesseract-ocr" in str(e.value)


def test_ocr_off_by_the_environment(scans: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAREZKA_OCR", "off")
    off = convert_options()  # read at the top, handed down
    assert ocr.engine(off) is None and ocr.available(off) == ""
    assert convert(scans, ".pdf", "scan.pdf", options=off).meta["no_text_pages"] == [1, 3]


def _fake_tesseract(folder: Path, ocr_exit: int) -> None:
    """A ``tesseract`` that lists Russian and English and fails (or prints nothing) on OCR."""
    folder.mkdir()
    exe = folder / "tesseract"
    exe.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--list-langs" ]; then\n'
        '  printf "List of languages:\\neng\\nrus\\n"; exit 0\n'
        "fi\n"
        f'echo "Error: image unreadable" >&2; exit {ocr_exit}\n'
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def test_a_failing_tesseract_leaves_the_page_named_with_its_error(
    scans: bytes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_tesseract(tmp_path / "bin", ocr_exit=1)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert ocr.available(DEFAULT) == "tesseract rus+eng"
    result = convert(scans, ".pdf", "scan.pdf")
    assert result.meta["no_text_pages"] == [1, 3]
    assert result.meta["ocr_failed"][0] == "page 1: tesseract failed: Error: image unreadable"
    file = tmp_path / "scan.pdf"
    file.write_bytes(scans)
    notes = read_document(tmp_path, file)[1]
    assert notes[0].endswith(
        "no text layer, not indexed (OCR failed (page 1: tesseract failed: "
        "Error: image unreadable))"
    )
    with pytest.raises(NoTextLayerError, match=r"OCR .* found no text: page 1: tesseract failed"):
        convert(samples.make_scan_pdf([POLICY]), ".pdf", "scan.pdf")


def test_an_ocr_that_reads_nothing_reports_no_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_tesseract(tmp_path / "bin", ocr_exit=0)  # an empty TSV: no words on the page
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(NoTextLayerError, match=r"no text layer in 1 page\(s\) \(OCR .* found no"):
        convert(samples.make_scan_pdf([POLICY]), ".pdf", "scan.pdf")


def test_a_blank_page_is_not_a_scan(no_ocr: None) -> None:
    data = samples.make_pdf([[(11, "Text on the first page.")], []])
    result = convert(data, ".pdf", "blank.pdf")
    assert result.markdown == "Text on the first page.\n" and "no_text_pages" not in result.meta


@needs_tesseract
def test_the_cache_converts_unread_scans_again_once_ocr_is_there(
    scans: bytes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with ConvertCache(tmp_path / "converted.sqlite") as cache:
        off = ConvertOptions(ocr=False)
        first = cache.convert(scans, ".pdf", "scan.pdf", options=off)
        assert first.meta["no_text_pages"] == [1, 3]
        read = cache.convert(scans, ".pdf", "scan.pdf", options=DEFAULT)
        assert read.meta["ocr_pages"] == [1, 3] and cache.misses == 2
        # Pages read by OCR stay read when tesseract is gone.
        assert cache.convert(scans, ".pdf", "scan.pdf", options=off) == read and cache.hits == 1


ENGLISH = [
    "Return policy",
    "",
    "Goods of proper quality can be returned within",
    "fourteen calendar days of delivery to the customer.",
]


def _stretched_words(text: str) -> set[str]:
    return {w.strip(".,").lower() for w in text.split()}


@needs_tesseract
@pytest.mark.parametrize("turn", [90, 180])
def test_a_page_scanned_sideways_or_upside_down_is_read_upright(turn: int) -> None:
    if "osd" not in ocr._languages(ocr.engine(DEFAULT)[0]):  # type: ignore[index]
        pytest.skip("tesseract's osd data is not installed")
    # The picture is squeezed back into the page's shape: the words are what matters.
    data = samples.make_scan_pdf([ENGLISH], turns=[turn])
    words = _stretched_words(convert(data, ".pdf", "turned.pdf").markdown)
    assert {"returned", "calendar", "delivery"} <= words


@needs_tesseract
def test_each_scanned_page_is_read_in_its_own_script() -> None:
    data = samples.make_scan_pdf([ENGLISH, POLICY])
    markdown = convert(data, ".pdf", "two.pdf").markdown
    english, russian = markdown.split("Возврат")[0], markdown
    assert not any("\u0400" <= ch <= "\u04ff" for ch in english), english
    assert "календарных" in russian


@needs_tesseract
def test_a_scan_whose_pages_share_their_lines_keeps_every_page() -> None:
    # Four pages of one form: the same lines at the same places on every page, as running
    # headers are. A page is never emptied by the running-line rule.
    data = samples.make_scan_pdf([POLICY] * 4)
    converted = convert(data, ".pdf", "forms.pdf")
    pages = {span.where.page for span in converted.provenance}
    assert pages == {1, 2, 3, 4}
    assert converted.markdown.count("календарных") == 4


def test_osd_answers_are_read() -> None:
    answer = "Page number: 0\nOrientation in degrees: 270\nRotate: 90\nScript: Cyrillic\n"
    assert ocr.parse_osd(answer) == ocr.Orientation(90, "Cyrillic")
    assert ocr.parse_osd("Rotate: 45\n") == ocr.Orientation(0, "")
    assert ocr.parse_osd("garbage") == ocr.Orientation(0, "")


def test_languages_follow_the_script() -> None:
    assert ocr.languages_for("Latin", "rus+eng") == "eng"
    assert ocr.languages_for("Cyrillic", "rus+eng") == "rus+eng"
    assert ocr.languages_for("Han", "rus+eng") == "rus+eng"
    assert ocr.languages_for("Latin", "rus") == "rus"


CAPITALS = [
    "HOME TAX ACT",
    "",
    "TAKE A COPY OF THE MOTOR TAX",
    "CHECK THE TERM AT HOME",
    "Hometown cooperative tax checks, filed within twenty days.",
]


@needs_tesseract
def test_an_english_page_of_capitals_gets_no_cyrillic_letters() -> None:
    # Capitals that look alike in both scripts make OSD say Cyrillic; the text read decides.
    markdown = convert(samples.make_scan_pdf([CAPITALS]), ".pdf", "caps.pdf").markdown
    assert "HOME TAX ACT" in markdown
    assert not any("\u0400" <= ch <= "\u04ff" for ch in markdown), markdown


def test_the_script_is_told_by_letters_one_script_alone_has() -> None:
    assert ocr.script_of("НОМЕ ТАХ АСТ Hometown cooperative tax checks, filed within") == "Latin"
    russian = "Товар надлежащего качества можно вернуть в течение четырнадцати дней без чека"
    assert ocr.script_of(russian) == "Cyrillic"
    assert ocr.script_of("НОМЕ ТАХ АСТ") == ""


def _reader(confidences: dict[str, float]) -> Any:
    """A stand-in for ``ocr.recognise``: one line per call, as sure as its languages say."""
    calls: list[str] = []

    def recognise(image: bytes, exe: str, languages: str) -> list[ocr.OcrLine]:
        calls.append(languages)
        return [ocr.OcrLine(languages, 0, 0, 9, 9, (1, 1), confidences[languages])]

    recognise.calls = calls  # type: ignore[attr-defined]
    return recognise


@pytest.mark.parametrize(
    ("confidences", "kept", "calls"),
    [
        # A Cyrillic page OSD called Latin: English reads it at 32, Russian at 70.
        ({"eng": 32.0, "rus+eng": 70.0}, "rus+eng", ["eng", "rus+eng"]),
        # A blurred English page reads as badly in both: English stays (no Cyrillic letters).
        ({"eng": 50.4, "rus+eng": 50.6}, "eng", ["eng", "rus+eng"]),
        # A sure reading is never read twice.
        ({"eng": 91.0, "rus+eng": 99.0}, "eng", ["eng"]),
    ],
)
def test_a_doubtful_reading_is_read_again_in_every_language(
    monkeypatch: pytest.MonkeyPatch, confidences: dict[str, float], kept: str, calls: list[str]
) -> None:
    reader = _reader(confidences)
    monkeypatch.setattr(ocr, "recognise", reader)
    monkeypatch.setattr(ocr, "orientation", lambda image, exe: ocr.Orientation(0, "Latin"))
    lines = ocr.read_upright(b"page", "tesseract", "rus+eng", lambda degrees: b"turned")
    assert [line.text for line in lines] == [kept]
    assert reader.calls == calls


def test_a_turned_page_is_read_as_turned(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bytes] = []

    def recognise(image: bytes, exe: str, languages: str) -> list[ocr.OcrLine]:
        seen.append(image)
        return [ocr.OcrLine("Возврат", 0, 0, 9, 9, (1, 1), 95.0)]

    monkeypatch.setattr(ocr, "recognise", recognise)
    languages: list[str] = []
    monkeypatch.setattr(
        ocr,
        "recognise",
        lambda image, exe, lang: languages.append(lang) or recognise(image, exe, lang),
    )
    # Turned, OSD calls the page Latin; upright, Cyrillic: the upright answer counts.
    told = {b"page": ocr.Orientation(270, "Latin"), b"turned 270": ocr.Orientation(0, "Cyrillic")}
    monkeypatch.setattr(ocr, "orientation", lambda image, exe: told[image])
    turns: list[int] = []
    ocr.read_upright(b"page", "t", "rus+eng", lambda d: turns.append(d) or b"turned %d" % d)
    assert turns == [270] and seen == [b"turned 270"] and languages == ["rus+eng"]


@needs_tesseract
def test_the_converter_child_goes_by_the_options_it_is_handed(
    scans: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.convert.isolate import convert_bounded

    monkeypatch.setenv("NAREZKA_OCR", "off")  # the child's environment says off…
    read = convert_bounded(scans, ".pdf", "scan.pdf", options=DEFAULT)  # …its options on
    assert read.meta["ocr_pages"] == [1, 3]
    monkeypatch.delenv("NAREZKA_OCR")
    unread = convert_bounded(scans, ".pdf", "scan.pdf", options=ConvertOptions(ocr=False))
    assert unread.meta["no_text_pages"] == [1, 3]
