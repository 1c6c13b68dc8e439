"""Images read by OCR: each frame a page, located; no OCR, no text, a damaged picture or a
decompression bomb named with why — never an empty document."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from narezka.convert import image, locate, ocr
from narezka.convert.image import convert_image
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.errors import ConvertError, NoTextLayerError, UnsafeFileError

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _picture(lines: list[str], size: tuple[int, int] = (1400, 400)) -> Image.Image:
    picture = Image.new("L", size, 255)
    if lines:
        draw = ImageDraw.Draw(picture)
        font = ImageFont.truetype(str(DEJAVU), 40) if DEJAVU.exists() else None
        for n, line in enumerate(lines):
            draw.text((60, 60 + 70 * n), line, font=font, fill=0)
    return picture


def _save(frames: list[Image.Image], fmt: str) -> bytes:
    out = io.BytesIO()
    frames[0].save(out, format=fmt, save_all=len(frames) > 1, append_images=frames[1:])
    return out.getvalue()


class _FakeTesseract:
    """Stands in for tesseract: answers each page with the lines it is given, and records
    the size of each image it was sent."""

    def __init__(self, answers: list[list[str] | Exception]) -> None:
        self.answers = answers
        self.sizes: list[tuple[int, int]] = []
        self.pgms: list[bytes] = []

    def __call__(self, pgm: bytes, exe: str, languages: str) -> list[ocr.OcrLine]:
        head = pgm.split(b"\n", 3)
        width, height = (int(v) for v in head[1].split())
        assert len(head[3]) == width * height  # a whole grey PGM
        self.sizes.append((width, height))
        self.pgms.append(head[3])
        answer = self.answers[len(self.sizes) - 1]
        if isinstance(answer, Exception):
            raise answer
        return [
            ocr.OcrLine(t, 0, 10 * n, 100, 10 * n + 9, (1, n // 2)) for n, t in enumerate(answer)
        ]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> _FakeTesseract:
    reader = _FakeTesseract([])
    monkeypatch.setattr(ocr, "engine", lambda env=None: ("tesseract", "rus+eng"))
    monkeypatch.setattr(ocr, "available", lambda env=None: "tesseract rus+eng")
    monkeypatch.setattr(ocr, "recognise", reader)
    monkeypatch.setattr(ocr, "orientation", lambda image, exe: ocr.UPRIGHT)
    return reader


def test_each_tiff_frame_is_a_located_page(fake: _FakeTesseract) -> None:
    fake.answers = [["Первая страница", "продолжение", "второй абзац"], ["Вторая страница"]]
    data = _save([_picture([]), _picture([])], "TIFF")
    result = convert_image(data, "scan.tiff")
    assert result.markdown == ("Первая страница\nпродолжение\n\nвторой абзац\n\nВторая страница\n")
    for needle, page in (("продолжение", 1), ("второй абзац", 1), ("Вторая", 2)):
        start = result.markdown.index(needle)
        found = locate(result.provenance, start, start + 1)
        assert found is not None and found[0].page == page
    assert result.meta["pages"] == 2 and "notes" not in result.meta


def test_a_page_ocr_fails_on_or_finds_empty_is_named(fake: _FakeTesseract) -> None:
    fake.answers = [OSError("tesseract failed: bad image"), [], ["Текст"]]
    data = _save([_picture([]) for _ in range(3)], "TIFF")
    result = convert_image(data, "scan.tif")
    assert result.markdown == "Текст\n"
    assert result.meta["notes"] == [
        "page 1: tesseract failed: bad image",
        "page 2: OCR found no text",
    ]


def test_ocr_timeout_and_nothing_found_are_named(fake: _FakeTesseract) -> None:
    fake.answers = [subprocess.TimeoutExpired("tesseract", 300)]
    with pytest.raises(NoTextLayerError, match=r"found no text in 1 page\(s\): page 1: OCR ran"):
        convert_image(_save([_picture([])], "PNG"), "blank.png")


def test_a_large_image_is_scaled_to_the_ocr_budget(
    fake: _FakeTesseract, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ocr, "MAX_PIXELS", 10_000)
    fake.answers = [["x"], ["x"]]
    for fmt in ("PNG", "JPEG"):
        convert_image(_save([_picture([], (1000, 500))], fmt), f"big.{fmt.lower()}")
    for width, height in fake.sizes:
        assert width * height <= 10_000 and width >= 2 * height - 2


def test_without_ocr_an_image_is_named_not_indexed_empty() -> None:
    with pytest.raises(NoTextLayerError, match=r"scan\.png: image not read: no OCR available"):
        convert_image(_save([_picture(["Текст"])], "PNG"), "scan.png", ConvertOptions(ocr=False))


def test_damaged_image_is_named(fake: _FakeTesseract) -> None:
    with pytest.raises(ConvertError, match="not a readable image"):
        convert_image(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "broken.png")
    truncated = _save([_picture([])], "PNG")[:200]
    with pytest.raises(ConvertError, match="cannot be decoded"):
        convert_image(truncated, "cut.png")


@pytest.mark.parametrize("pixels", [1_500, 10_000])  # Pillow's warning zone, its error zone
def test_decompression_bombs_are_refused_undecoded(
    fake: _FakeTesseract, monkeypatch: pytest.MonkeyPatch, pixels: int
) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1_000)
    side = int(pixels**0.5)
    with pytest.raises(UnsafeFileError, match="decompression bomb"):
        convert_image(_save([_picture([], (side, side))], "PNG"), "bomb.png")
    assert fake.sizes == []


def test_frames_beyond_the_cap_are_named(
    fake: _FakeTesseract, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(image, "MAX_FRAMES", 2)
    fake.answers = [["a"], ["b"], ["c"]]
    result = convert_image(_save([_picture([]) for _ in range(3)], "TIFF"), "many.tiff")
    assert result.markdown == "a\n\nb\n" and len(fake.sizes) == 2
    assert result.meta["notes"] == ["pages after the first 2 not read"]


needs_tesseract = pytest.mark.skipif(
    ocr.engine(DEFAULT) is None or "rus" not in ocr.available(DEFAULT) or not DEJAVU.exists(),
    reason="tesseract-ocr with Russian data and DejaVu fonts are not installed",
)


@needs_tesseract
def test_real_ocr_reads_russian_text_from_a_png() -> None:
    data = _save([_picture(["Возврат товара в течение", "14 календарных дней."])], "PNG")
    text = " ".join(convert_image(data, "scan.png").markdown.split())
    assert "Возврат товара в течение 14 календарных дней." in text


def test_transparent_images_are_read_on_white(fake: _FakeTesseract) -> None:
    fake.answers = [["x"], ["x"]]
    logo = Image.new("RGBA", (40, 20), (0, 0, 0, 0))  # black, wholly transparent
    palette = Image.new("P", (40, 20), 0)
    palette.info["transparency"] = b"\x00"
    for picture in (logo, palette):
        convert_image(_save([picture], "PNG"), "logo.png")
    for width, height in fake.sizes:
        assert (width, height) == (160, 80)  # enlarged four times: narrower than MIN_WIDTH
    assert len(fake.pgms) == 2 and all(set(p) == {255} for p in fake.pgms)


def test_a_low_resolution_page_is_enlarged_before_ocr(fake: _FakeTesseract) -> None:
    # A letter page saved at 72 dpi is 612 px across: its letters are too small for
    # tesseract (half its words misread) until the page is doubled.
    fake.answers = [["x"], ["x"]]
    convert_image(_save([_picture([], (612, 792))], "JPEG"), "page.jpg")
    convert_image(_save([_picture([], (1400, 400))], "PNG"), "wide.png")
    assert fake.sizes == [(1224, 1584), (1400, 400)]


def test_an_image_is_turned_as_osd_says_before_it_is_read(
    fake: _FakeTesseract, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ocr, "orientation", lambda image, exe: ocr.Orientation(90, "Latin"))
    fake.answers = [["Delivery"]]
    picture = _picture([], (1400, 400))
    picture.paste(0, (0, 0, 10, 10))  # a mark in the top-left corner
    assert convert_image(_save([picture], "PNG"), "sideways.png").markdown == "Delivery\n"
    # Read once, turned clockwise: 400 wide, the mark now top-right.
    assert fake.sizes == [(400, 1400)]
    width = fake.sizes[0][0]
    assert fake.pgms[0][width - 1] < 128 and fake.pgms[0][0] == 255


@needs_tesseract
def test_real_ocr_reads_a_sideways_english_image_upright_without_cyrillic() -> None:
    if "osd" not in ocr._languages(ocr.engine(DEFAULT)[0]):  # type: ignore[index]
        pytest.skip("tesseract's osd data is not installed")
    lines = [
        "Items can be returned within fourteen",
        "calendar days of delivery to the customer.",
        "Refunds reach the card within five working days.",
    ]
    picture = _picture(lines, (1600, 400)).transpose(Image.Transpose.ROTATE_90)
    text = convert_image(_save([picture], "PNG"), "sideways.png").markdown
    words = {w.strip(".,").lower() for w in text.split()}
    assert {"returned", "calendar", "delivery", "refunds"} <= words, text
    assert not any("\u0400" <= ch <= "\u04ff" for ch in text), text


def test_a_page_in_a_script_no_installed_language_reads_is_said_so(
    fake: _FakeTesseract, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Chinese picture read with rus+eng gives noise: it is indexed, and the run says why.
    monkeypatch.setattr(ocr, "orientation", lambda image, exe: ocr.Orientation(0, "Han"))
    fake.answers = [["noise"]]
    result = convert_image(_save([_picture([], (1400, 400))], "PNG"), "chinese.png")
    assert result.markdown == "noise\n"
    assert result.meta["notes"] == [
        "page 1: its script is Han, which no installed OCR language reads"
    ]


@pytest.mark.parametrize(("confidence", "noted"), [(30.0, True), (56.0, False)])
def test_a_block_read_as_noise_in_a_script_no_language_reads_is_said_so(
    fake: _FakeTesseract, monkeypatch: pytest.MonkeyPatch, confidence: float, noted: bool
) -> None:
    # OSD calls an English page with a paragraph of Korean "Latin"; the paragraph reads as
    # noise. Its crop alone is asked, and named; a merely doubtful block (addresses,
    # superscripts: OSD calls such crops Greek) is not asked.
    lines = [
        ocr.OcrLine("Rules and instructions", 0, 0, 300, 20, (1, 0), 96.0),
        ocr.OcrLine("for day one", 0, 25, 300, 45, (1, 0), 96.0),
        ocr.OcrLine("StS ofAl2, AS|E", 10, 100, 210, 120, (2, 0), confidence),
        ocr.OcrLine("BHEYLICH, BHO AY", 10, 125, 190, 150, (2, 0), confidence),
    ]
    monkeypatch.setattr(ocr, "recognise", lambda pgm, exe, languages: lines)
    asked: list[tuple[int, int]] = []

    def osd(pgm: bytes, exe: str) -> ocr.Orientation:
        width, height = (int(v) for v in pgm.split(b"\n", 3)[1].split())
        asked.append((width, height))
        return ocr.Orientation(0, "Latin" if width == 1400 else "Korean")

    monkeypatch.setattr(ocr, "orientation", osd)
    result = convert_image(_save([_picture([], (1400, 400))], "PNG"), "mixed.png")
    assert "StS ofAl2" in result.markdown  # read all the same
    if noted:
        assert asked[1:] == [(200, 50)]
        assert result.meta["notes"] == [
            "page 1: part of it is in Korean script, which no installed OCR language reads"
        ]
    else:
        assert asked[1:] == []
        assert "notes" not in result.meta


def test_crop_pgm_cuts_a_box_and_keeps_inside_the_image() -> None:
    whole = ocr.pgm(4, 3, 4, bytes(range(12)))
    assert whole.split(b"\n", 3)[3] == bytes(range(12))
    assert ocr.crop_pgm(whole, (1, 1, 3, 3)) == ocr.pgm(2, 2, 2, bytes([5, 6, 9, 10]))
    assert ocr.crop_pgm(whole, (2, -5, 9, 1)) == ocr.pgm(2, 1, 2, bytes([2, 3]))
    assert ocr.crop_pgm(whole, (3, 3, 3, 3)) == whole  # an empty box: the page
