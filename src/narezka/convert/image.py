"""Images (``.png .jpg .jpeg .tif .tiff``) → Markdown by OCR, one page per frame.

Pillow reads the image (its header first: a picture declaring more pixels than Pillow's
decompression-bomb limit, ``Image.MAX_IMAGE_PIXELS``, is refused before its pixels are
decoded); each frame (a multi-page TIFF has several) is turned grey, scaled down to
``ocr.MAX_PIXELS`` if larger or enlarged if narrower than ``MIN_WIDTH``, and read by
tesseract through ``narezka.convert.ocr`` as a scanned PDF page is: turned upright by OSD, in
its script's languages. Every block of text is located by its page (``SourceLocation.page``,
1-based frame number).

Without tesseract (or with ``NAREZKA_OCR=off``) an image is named as not read ("no OCR
available"), never indexed as empty; so is an image in which OCR finds no text.
"""

from __future__ import annotations

import io
import subprocess
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from narezka.convert import ocr
from narezka.convert.markdown import Converted, MarkdownWriter, escape_line
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.errors import ConvertError, NoTextLayerError, UnsafeFileError
from narezka.types import SourceLocation

__all__ = ["MAX_FRAMES", "MIN_WIDTH", "NO_OCR", "convert_image"]

MAX_FRAMES = 500
"""Frames of one image read: a TIFF of thousands of tiny frames would cost an OCR run each."""
MIN_WIDTH = 1200
"""Pixels across below which a frame is enlarged (by a whole factor, at most 4) before OCR.
A page saved at 72–96 dpi (a screenshot, an exported page: 612 px across a letter page)
has letters some 10 px high; tesseract reads best near 30 (300 dpi). Read as it is, such a
page came back at 50 % word confidence; doubled, at 90 %."""
_MAX_ENLARGE = 4
NO_OCR = "image not read: no OCR available (install tesseract-ocr and tesseract-ocr-rus)"


def _open(data: bytes, path: str) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            # Pillow warns between its limit and twice it, and raises above: both refused.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise UnsafeFileError(
            path,
            f"image declares more than {Image.MAX_IMAGE_PIXELS:,} pixels "
            "(a decompression bomb?): not decoded",
        ) from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ConvertError(path, "not a readable image (unknown or damaged format)") from exc
    return image


def _grey(frame: Any) -> Any:
    """The frame in grey; transparent parts white, as a viewer shows them on a page (a logo's
    transparent background would otherwise turn black, under black text)."""
    from PIL import Image

    if frame.mode in ("RGBA", "LA", "PA") or "transparency" in frame.info:
        rgba = frame.convert("RGBA")
        page = Image.new("RGBA", rgba.size, "white")
        page.alpha_composite(rgba)
        return page.convert("L")
    return frame.convert("L")


def _frames(image: Any, path: str) -> Iterator[tuple[int, Any]]:
    """``(page number, grey image)`` of each frame, no larger than ``ocr.MAX_PIXELS``, and
    no narrower than ``MIN_WIDTH`` where that fits."""
    from PIL import Image

    count = min(int(getattr(image, "n_frames", 1) or 1), MAX_FRAMES)
    for index in range(count):
        try:
            image.seek(index)
            width, height = image.size
            if width * height > Image.MAX_IMAGE_PIXELS:  # a later frame may be the bomb
                raise UnsafeFileError(
                    path,
                    f"page {index + 1} declares {width * height:,} pixels, over "
                    f"{Image.MAX_IMAGE_PIXELS:,} (a decompression bomb?): not decoded",
                )
            if width * height > ocr.MAX_PIXELS:
                # JPEG decodes at a fraction of its size for free; the rest is scaled after.
                scale = (ocr.MAX_PIXELS / (width * height)) ** 0.5
                image.draft("L", (int(width * scale), int(height * scale)))
            grey = _grey(image)
            if grey.width * grey.height > ocr.MAX_PIXELS:
                scale = (ocr.MAX_PIXELS / (grey.width * grey.height)) ** 0.5
                size = (max(1, int(grey.width * scale)), max(1, int(grey.height * scale)))
                grey = grey.resize(size, Image.Resampling.BILINEAR)
            factor = min(_MAX_ENLARGE, -(-MIN_WIDTH // max(1, grey.width)))
            while factor > 1 and grey.width * grey.height * factor * factor > ocr.MAX_PIXELS:
                factor -= 1
            if factor > 1:
                size = (grey.width * factor, grey.height * factor)
                grey = grey.resize(size, Image.Resampling.LANCZOS)
        except (OSError, ValueError, SyntaxError, EOFError) as exc:
            raise ConvertError(
                path, f"page {index + 1} of the image cannot be decoded (damaged?)"
            ) from exc
        yield index + 1, grey


def _pgm(grey: Any) -> bytes:
    return ocr.pgm(grey.width, grey.height, grey.width, grey.tobytes())


def _turned(grey: Any) -> Callable[[int], bytes]:
    """The frame turned ``degrees`` clockwise, as PGM (what OSD says an upright read needs)."""
    from PIL import Image

    clockwise = {
        90: Image.Transpose.ROTATE_270,
        180: Image.Transpose.ROTATE_180,
        270: Image.Transpose.ROTATE_90,
    }

    def turn(degrees: int) -> bytes:
        return _pgm(grey.transpose(clockwise[degrees])) if degrees in clockwise else _pgm(grey)

    return turn


def _ocr_failure(exc: BaseException) -> str:
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"OCR ran over {ocr.TIMEOUT} s"
    text = str(exc)
    return text if text.startswith("tesseract failed") else "tesseract could not be run"


def convert_image(data: bytes, path: str, options: ConvertOptions = DEFAULT) -> Converted:
    """Read an image's text by OCR: one paragraph per paragraph tesseract finds, located by
    page (frame). Raises ``NoTextLayerError`` when OCR is unavailable or finds nothing,
    ``UnsafeFileError`` for a decompression bomb, ``ConvertError`` for a damaged image."""
    from narezka.convert.child import progress

    reader = ocr.engine(options)
    if reader is None:
        raise NoTextLayerError(path, NO_OCR)
    image = _open(data, path)
    writer = MarkdownWriter()
    pages: list[int] = []
    failed: list[str] = []
    empty: list[int] = []
    scripts: list[str] = []
    total = 0
    with image:
        total = int(getattr(image, "n_frames", 1) or 1)
        for number, grey in _frames(image, path):
            progress()  # tesseract's time is its own (ocr.TIMEOUT a page)
            told: list[str] = []
            try:
                lines = ocr.read_upright(_pgm(grey), *reader, _turned(grey), told)
            except (OSError, subprocess.SubprocessError) as exc:
                failed.append(f"page {number}: {_ocr_failure(exc)}")
                continue
            paragraphs: dict[tuple[int, int], list[str]] = {}
            for line in lines:
                paragraphs.setdefault(line.paragraph, []).append(escape_line(line.text))
            scripts.extend(f"page {number}: {note}" for note in told)
            where = SourceLocation(page=number)
            for paragraph in paragraphs.values():
                writer.block("\n".join(paragraph), where)
            (pages if paragraphs else empty).append(number)
    if not pages:
        why = f"OCR ({ocr.available(options)}) found no text in {total} page(s)"
        raise NoTextLayerError(path, why + (f": {failed[0]}" if failed else ""))
    # Not ``ocr_pages``: an image is always read by OCR, a run need not say so each time.
    meta: dict[str, Any] = {"pages": total, "ocr": ocr.available(options)}
    notes = [*failed, *(f"page {n}: OCR found no text" for n in empty), *scripts]
    if total > MAX_FRAMES:
        notes.append(f"pages after the first {MAX_FRAMES} not read")
    if failed:
        meta["ocr_failed"] = failed
    if notes:
        meta["notes"] = notes
    return writer.result(meta)
