"""What a conversion lacked, carried in the fingerprint an index records a file with.

A sync skips a file by its ``stat`` before any conversion cache is asked: a scanned PDF
converted while tesseract was absent (its pages reported "no text layer") would never be read
again once tesseract is installed, until the file is touched or the index rebuilt. The index
therefore records such a file with ``LACKS_OCR`` appended to its fingerprint, and a sync counts
the file unchanged only while OCR is still absent: the first sync after tesseract appears
reads it again (the conversion cache then converts it again too, ``ConvertCache.convert``),
and every other unchanged file stays skipped by its stat alone.

The other way round nothing happens: pages already read by OCR stay read when tesseract goes
(their text is right, and the cache holds it), so such a file is recorded without a mark.
"""

from __future__ import annotations

from collections.abc import Mapping

from narezka.convert import ocr
from narezka.convert.options import ConvertOptions

__all__ = ["LACKS_OCR", "lacking", "still_lacking"]

LACKS_OCR = "!lacks-ocr"
"""The fingerprint mark of a file with scanned pages left unread because OCR was absent."""


def lacking(meta: Mapping[str, object]) -> str:
    """The fingerprint mark of a conversion (its ``meta``) that missed a capability absent
    here, or ``""``: scanned pages left unread, or a mail's attachments (``lacks_ocr``). Pages
    OCR tried and failed on are not marked: tesseract was there, and retrying them on every
    sync would cost an OCR run each time."""
    if meta.get("lacks_ocr") or (meta.get("no_text_pages") and not meta.get("ocr_failed")):
        return LACKS_OCR
    return ""


def still_lacking(
    recorded: tuple[int, float, str, str] | None,
    current: tuple[int, float, str, str],
    options: ConvertOptions,
) -> bool:
    """Whether a file the manifest ``recorded`` as ``(size, mtime, fingerprint, embedder)``
    is up to date under the ``current`` state although its fingerprint carries a mark: the
    same file, chunked the same way, and the capability it lacked is still absent (under the
    run's ``options``: ``NAREZKA_OCR=off`` keeps it absent)."""
    if recorded is None or recorded[:2] != current[:2] or recorded[3] != current[3]:
        return False
    fingerprint, now = recorded[2], current[2]
    return fingerprint == now + LACKS_OCR and ocr.engine(options) is None
