"""Scanned pages read by OCR (tesseract), placed as a text layer's lines would be."""

from __future__ import annotations

from narezka.convert.pdf.base import _MARGIN, _Line, _unhyphen


def _has_content(page: object) -> bool:
    """Whether a page draws anything (an image, paths): a blank page has nothing to read."""
    import pypdfium2.raw as raw

    return int(raw.FPDFPage_CountObjects(page.raw)) > 0  # type: ignore[attr-defined]


def _render(page: object, pixels: float, rotate: int) -> tuple[bytes, int]:
    """The page in grey as a PGM image, turned ``rotate`` degrees clockwise; its height."""
    from narezka.convert import ocr

    bitmap = page.render(scale=pixels, rotation=rotate, grayscale=True)  # type: ignore[attr-defined]
    try:
        image = ocr.pgm(bitmap.width, bitmap.height, bitmap.stride, bytes(bitmap.buffer))
        return image, int(bitmap.height)
    finally:
        bitmap.close()


def _ocr_lines(page: object, number: int, exe: str, languages: str) -> list[_Line]:
    """The lines tesseract reads on a page rendered at ``ocr.DPI``, placed as a text layer's
    would be (running headers found in the margins, paragraphs as tesseract groups them).

    Raises ``OSError`` or ``subprocess.SubprocessError`` when tesseract fails."""
    from narezka.convert import ocr
    from narezka.convert.child import progress

    pixels = ocr.scale_for(float(page.get_width()), float(page.get_height()))  # type: ignore[attr-defined]
    image, height = _render(page, pixels, 0)
    progress()  # tesseract's time is its own (ocr.TIMEOUT a page): the wall clock allows it
    # Turned pages are read upright, each in its script's languages (OSD tells both).
    turned_height = [height]

    def turned(degrees: int) -> bytes:
        picture, turned_height[0] = _render(page, pixels, degrees)
        return picture

    read = ocr.read_upright(image, exe, languages, turned)
    height = turned_height[0]
    scale = 1 / pixels
    lines = []
    for found in read:
        margin = found.top < height * _MARGIN or found.bottom > height * (1 - _MARGIN)
        size = (found.bottom - found.top) * scale
        baseline = (height - found.bottom) * scale
        text = _unhyphen(found.text)
        line = _Line(
            text,
            number,
            size,
            False,
            False,
            baseline,
            margin,
            paragraph=found.paragraph,
            edge=margin,
        )
        lines.append(line)
    for extreme in (*lines[:2], *lines[-2:]):
        extreme.margin = True
    return lines
