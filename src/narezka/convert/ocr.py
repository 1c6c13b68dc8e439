"""OCR of scanned PDF pages through the ``tesseract`` program (Debian's ``tesseract-ocr`` with
``tesseract-ocr-rus``), found at run time: optional, nothing to install in Python.

A page is rendered by PDFium in grey at ``DPI`` and handed to tesseract as a PGM image on
its stdin; its TSV answer gives each word with its box and its block, paragraph and line, so
the page's lines come back with positions as a text layer's do. ``NAREZKA_OCR=off`` turns
OCR off (a scanned page is then reported as having no text layer): read at the top, it
comes here as :attr:`ConvertOptions.ocr <narezka.convert.options.ConvertOptions.ocr>`.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from narezka import environment
from narezka.convert.options import ConvertOptions

__all__ = [
    "DPI",
    "MAX_PIXELS",
    "OcrLine",
    "Orientation",
    "available",
    "engine",
    "languages_for",
    "orientation",
    "pgm",
    "read_upright",
    "recognise",
    "scale_for",
    "script_of",
]

DPI = 300
"""Rendering resolution: tesseract reads body text best at 300 dpi."""
MAX_PIXELS = 40_000_000
"""The most pixels a page is rendered to for OCR (A4 at 300 dpi is 8.7 million, A2 35
million): a larger page is rendered at a lower resolution. A 200-inch page at 300 dpi would
be 3.6 billion pixels, gigabytes before tesseract sees it."""
WANTED = ("rus", "eng")
"""Languages asked for when installed; any other installed data is not used."""
TIMEOUT = 300
"""Seconds one page may take before it is reported unread."""


@dataclass(frozen=True, slots=True)
class OcrLine:
    """One recognised line: its words and its box in pixels (top-left origin)."""

    text: str
    left: int
    top: int
    right: int
    bottom: int
    paragraph: tuple[int, int]
    """(block, paragraph) numbers: lines of one paragraph share them."""
    confidence: float = 100.0
    """Tesseract's mean confidence in the line's words, 0–100."""


@dataclass(frozen=True, slots=True)
class Orientation:
    """What tesseract's orientation and script detection (OSD) says of a page."""

    rotate: int
    """Degrees (0, 90, 180, 270) to turn the page clockwise so its text stands upright."""
    script: str
    """``Cyrillic``, ``Latin``…; empty when not told."""


UPRIGHT = Orientation(0, "")
_SCRIPT_LANGUAGES = {"Cyrillic": ("rus", "eng"), "Latin": ("eng",)}
"""Languages to read a page in by its script. A Latin page read with Russian as well gets
Cyrillic letters inside English words (``Тhе``); a Cyrillic page keeps English for the terms
it quotes."""


_CYRILLIC_ONLY = frozenset("бгджзийлпфцчшщъыьэюяБГДЖЗИЙЛПФЦЧШЩЪЫЬЭЮЯ")
_LATIN_ONLY = frozenset("bdfghijklmnqrstuvwzDFGIJLNQRSUVWZ")
"""Letters of one script with no look-alike in the other: ``НОМЕ ТАХ`` read in Russian and
``HOME TAX`` in English differ in none of them."""
_SCRIPT_EVIDENCE = 20
"""Distinctive letters needed before a page's text tells its script."""


def script_of(text: str) -> str:
    """``Latin`` or ``Cyrillic`` by the letters only one script has, or ``""`` when the text
    does not tell. OSD takes a page of capitals for Cyrillic (``HOME TAX ACT``)."""
    latin = sum(ch in _LATIN_ONLY for ch in text)
    cyrillic = sum(ch in _CYRILLIC_ONLY for ch in text)
    if latin >= _SCRIPT_EVIDENCE and latin >= 5 * cyrillic:
        return "Latin"
    if cyrillic >= _SCRIPT_EVIDENCE and cyrillic >= 5 * latin:
        return "Cyrillic"
    return ""


@lru_cache(maxsize=4)
def _languages(exe: str) -> tuple[str, ...]:
    try:
        done = subprocess.run(
            [exe, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    # The first line is a title ("List of available languages in ...").
    found = {line.strip() for line in (done.stdout + done.stderr).splitlines()[1:]}
    return tuple(lang for lang in (*WANTED, "osd") if lang in found)


def engine(options: ConvertOptions) -> tuple[str, str] | None:
    """``(tesseract's path, languages like "rus+eng")`` when OCR can run under ``options``
    (the run's, handed down from the top), else None."""
    if not options.ocr:
        return None
    exe = shutil.which("tesseract")
    if exe is None:
        return None
    languages = tuple(lang for lang in _languages(exe) if lang != "osd")
    return (exe, "+".join(languages)) if languages else None


def languages_for(script: str, languages: str) -> str:
    """The installed ``languages`` (``rus+eng``) to read a page of ``script`` in: the
    script's own (``_SCRIPT_LANGUAGES``) when installed, else all of them."""
    installed = languages.split("+")
    wanted = [lang for lang in _SCRIPT_LANGUAGES.get(script, ()) if lang in installed]
    return "+".join(wanted) if wanted else languages


def orientation(image: bytes, exe: str) -> Orientation:
    """The page's orientation and script by tesseract's OSD (``--psm 0``), or ``UPRIGHT``
    when OSD is not installed or finds too little text to tell."""
    if "osd" not in _languages(exe):
        return UPRIGHT
    try:
        done = subprocess.run(
            [exe, "stdin", "stdout", "--psm", "0", "-l", "osd"],
            input=image,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
            env=environment.for_child(OMP_THREAD_LIMIT="1"),
        )
    except (OSError, subprocess.SubprocessError):
        return UPRIGHT
    if done.returncode != 0:
        return UPRIGHT  # "Too few characters": an upright reading is the best guess
    return parse_osd(done.stdout.decode("utf-8", "replace"))


def parse_osd(text: str) -> Orientation:
    """``Rotate: 90`` and ``Script: Cyrillic`` from OSD's answer."""
    fields = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in text.splitlines())
    )
    try:
        rotate = int(fields.get("Rotate", "0")) % 360
    except ValueError:
        rotate = 0
    return Orientation(rotate if rotate in (0, 90, 180, 270) else 0, fields.get("Script", ""))


def available(options: ConvertOptions) -> str:
    """What reads scans here, for cache keys and messages: ``"tesseract rus+eng"`` or ``""``."""
    found = engine(options)
    return f"tesseract {found[1]}" if found else ""


def scale_for(width: float, height: float) -> float:
    """Pixels per point to render a page of ``width`` × ``height`` points at: ``DPI``, or
    less where that would pass ``MAX_PIXELS``."""
    scale = DPI / 72
    area = max(width, 1.0) * max(height, 1.0) * scale * scale
    if area > MAX_PIXELS:
        scale *= (MAX_PIXELS / area) ** 0.5
    return scale


def pgm(width: int, height: int, stride: int, buffer: bytes) -> bytes:
    """A binary greyscale PNM image of a one-byte-per-pixel bitmap (rows ``stride`` apart)."""
    rows = b"".join(buffer[y * stride : y * stride + width] for y in range(height))
    return b"P5\n%d %d\n255\n" % (width, height) + rows


def recognise(image: bytes, exe: str, languages: str) -> list[OcrLine]:
    """The lines tesseract reads in a PGM ``image``, in its reading order.

    Raises ``OSError`` or ``subprocess.SubprocessError`` when tesseract fails or times out.
    """
    env = environment.for_child(OMP_THREAD_LIMIT="1")  # one core a page: the run has workers
    done = subprocess.run(
        [exe, "stdin", "stdout", "-l", languages, "--psm", "3", "tsv"],
        input=image,
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OSError(f"tesseract failed: {message[-1] if message else done.returncode}")
    lines: dict[tuple[int, int, int], list[tuple[str, int, int, int, int, float]]] = {}
    for row in done.stdout.decode("utf-8", "replace").splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) != 12 or cells[0] != "5" or not cells[11].strip():
            continue
        try:
            block, par, line = int(cells[2]), int(cells[3]), int(cells[4])
            left, top, width, height = (int(c) for c in cells[6:10])
            confidence = max(0.0, float(cells[10]))
        except ValueError:
            continue
        word = (cells[11].strip(), left, top, left + width, top + height, confidence)
        lines.setdefault((block, par, line), []).append(word)
    return [
        OcrLine(
            " ".join(w[0] for w in words),
            min(w[1] for w in words),
            min(w[2] for w in words),
            max(w[3] for w in words),
            max(w[4] for w in words),
            key[:2],
            statistics.fmean(w[5] for w in words),
        )
        for key, words in lines.items()
    ]


_DOUBTFUL = 60.0
"""A reading in one script's languages whose mean word confidence is below this is read
again in all of them: OSD names a page's script wrongly now and then (a squashed Cyrillic
scan called Latin reads as ``MpaBpuina`` at 32, and at 70 in Russian)."""
_BETTER = 10.0
"""Points of confidence the second reading must gain to replace the first: a blurred
English page reads about as badly in both, and Russian would add Cyrillic letters to it."""


def _confidence(lines: list[OcrLine]) -> float:
    return statistics.fmean(line.confidence for line in lines) if lines else 0.0


def read_upright(
    image: bytes,
    exe: str,
    languages: str,
    turned: Callable[[int], bytes],
    notes: list[str] | None = None,
) -> list[OcrLine]:
    """The lines of a page ``image`` (PGM) read upright in its script's languages: OSD
    tells the turn and the script, ``turned(degrees)`` gives the page turned that far
    clockwise. A Latin page is read in English alone (Russian as well puts Cyrillic letters
    inside its words), a Cyrillic one in Russian and English; a doubtful reading is read
    again in every installed language, and the surer one kept. A page in a script no
    installed language reads (Han, Hangul, Arabic…) is read all the same and said so in
    ``notes``: its text is likely noise.

    Raises ``OSError`` or ``subprocess.SubprocessError`` when tesseract fails."""
    turn = orientation(image, exe)
    script = turn.script
    if turn.rotate:
        image = turned(turn.rotate)
        # OSD tells a turned page's script worse than an upright one's: a page upside down
        # of Russian over English was "Latin", and read so lost its Russian.
        script = orientation(image, exe).script or script
    wanted = languages_for(script, languages)
    unread = bool(script) and script not in _SCRIPT_LANGUAGES
    if unread and notes is not None:
        notes.append(f"its script is {script}, which no installed OCR language reads")
    read = recognise(image, exe, wanted)
    if wanted != languages and _confidence(read) < _DOUBTFUL:
        again = recognise(image, exe, languages)
        if _confidence(again) >= _confidence(read) + _BETTER:
            read, wanted = again, languages
    latin = languages_for("Latin", languages)
    if latin != wanted and script_of(" ".join(line.text for line in read)) == "Latin":
        # OSD took a Latin page for Cyrillic (capitals look alike): read it in English,
        # or its words come back with Cyrillic letters inside.
        read = recognise(image, exe, latin)
    if not unread and notes is not None:
        other = _unread_block_script(image, exe, read)
        if other:
            notes.append(f"part of it is in {other} script, which no installed OCR language reads")
    return read


_BLOCKS_ASKED = 3
"""Blocks read as noise of a page whose script OSD is asked (the largest first): each is one
more run of tesseract."""
_BLOCK_MIN_LINES = 2
"""Lines a block needs before OSD can tell its script."""
_NOISE = 45.0
"""A block read at a mean word confidence below this is noise rather than a doubtful
reading: Korean read in English came back at 30, while a Latin block of e-mail addresses
and superscripts reads at 56 (and OSD, asked of its crop, calls it Greek)."""


def _unread_block_script(image: bytes, exe: str, lines: list[OcrLine]) -> str:
    """The script of a block of the page that no installed language reads, or ``""``. OSD
    tells a page's script by its bulk: a paragraph of Korean amid English is "Latin", and
    read in English it comes back as noise (``StS ofAl2``) at a low confidence. Each
    block read as noise (below ``_NOISE``) is cut out and its script asked."""
    blocks: dict[int, list[OcrLine]] = {}
    for line in lines:
        blocks.setdefault(line.paragraph[0], []).append(line)
    noisy = [
        found
        for found in blocks.values()
        if len(found) >= _BLOCK_MIN_LINES and _confidence(found) < _NOISE
    ]
    noisy.sort(key=lambda found: -sum(len(line.text) for line in found))
    for found in noisy[:_BLOCKS_ASKED]:
        box = (
            min(line.left for line in found),
            min(line.top for line in found),
            max(line.right for line in found),
            max(line.bottom for line in found),
        )
        script = orientation(crop_pgm(image, box), exe).script
        if script and script not in _SCRIPT_LANGUAGES:
            return script
    return ""


def crop_pgm(image: bytes, box: tuple[int, int, int, int]) -> bytes:
    """The part ``box`` (left, top, right, bottom; pixels) of a PGM image from ``pgm``."""
    magic, size, depth, pixels = image.split(b"\n", 3)
    width, height = (int(n) for n in size.split())
    left, top = max(0, box[0]), max(0, box[1])
    right, bottom = min(width, box[2]), min(height, box[3])
    if magic != b"P5" or depth != b"255" or right <= left or bottom <= top:
        return image
    rows = b"".join(pixels[y * width + left : y * width + right] for y in range(top, bottom))
    return pgm(right - left, bottom - top, right - left, rows)
