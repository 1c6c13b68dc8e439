"""Turn a file's bytes into normalized text: UTF-8 first, then Russian legacy encodings, then
Western European ones."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from narezka.convert import charset
from narezka.errors import BinaryFileError, DecodeError

__all__ = ["decode_bytes", "junk_kind", "normalize_newlines", "replace_surrogates"]

_SNIFF = 8192
"""Binary sniffing looks at this many leading bytes only: enough to judge, cheap on big files."""
MAX_CONTROL_RATIO = 0.10
"""Above this share of control codes (C0 but tab, newlines, form feed; DEL) data is binary.
Text with stray garbage (a NUL, a BEL, ANSI escapes in a log) stays well below it; the
sanitizer drops those characters from ``embed_text`` and the stats count them."""
JUNK_CONTROL_RATIO = 0.01
JUNK_INVALID_RATIO = 0.10
"""Bytes named as text are binary junk when more than 1 % of them are control codes and more
than 10 % are not UTF-8: random bytes have some 11 % and 45 %; text in any legacy encoding
(cp1251, Latin-1, Shift-JIS…) has almost no control codes, and a coloured log, many
escapes but valid UTF-8."""
_TEXT_CONTROLS = frozenset(b"\t\n\r\f")
_LEGACY = ("cp1251", "koi8-r")

# Leading bytes of formats that are never text, with a name for the message. Each prefix is
# long or odd enough that no plausible text file starts with it.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"II*\x00", "TIFF image"),
    (b"MM\x00*", "TIFF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive (or an Office/OpenDocument/EPUB/JAR file)"),
    (b"PK\x05\x06", "ZIP archive"),
    (b"PK\x07\x08", "ZIP archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "legacy Office document (OLE2)"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\xfd7zXZ\x00", "xz archive"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"\x28\xb5\x2f\xfd", "zstd archive"),
    (b"Rar!\x1a\x07", "RAR archive"),
    (b"\x7fELF", "ELF executable"),
    (b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (b"\xfe\xed\xfa\xcf", "Mach-O executable"),
    (b"\xca\xfe\xba\xbe", "Java class or Mach-O universal binary"),
    (b"\x00asm", "WebAssembly module"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"OggS\x00", "Ogg media"),
    (b"fLaC", "FLAC audio"),
    (b"wOFF", "WOFF font"),
    (b"wOF2", "WOFF2 font"),
)
_BZIP2 = re.compile(rb"BZh[1-9]1AY&SY")
_ID3 = re.compile(rb"ID3[\x02-\x04]\x00")
_FTYP_IMAGES = {
    brand: "HEIF/AVIF image" for brand in (b"heic", b"heix", b"mif1", b"msf1", b"avif", b"heim")
}
"""ISO media brands of still pictures (an iPhone's photo), not films."""
_BMP_HEADS = frozenset(bytes([n]) for n in (12, 40, 52, 56, 64, 108, 124))
"""First byte of a BMP's info header size: with ``BM`` and four reserved zero bytes, no
text starts so."""
_RIFF_KINDS = {b"WAVE": "WAV audio", b"WEBP": "WebP image", b"AVI ": "AVI video"}

# Letter frequencies of Russian prose, per mille. Unlike case, they still tell the tables apart
# in text written all in capitals (which the other table turns into plausible lowercase).
_FREQ = {
    "о": 110, "е": 85, "а": 80, "и": 74, "н": 67, "т": 63, "с": 55, "р": 47, "в": 45, "л": 44,
    "к": 35, "м": 32, "д": 30, "п": 28, "у": 26, "я": 20, "ы": 19, "ь": 17, "г": 17, "з": 17,
    "б": 16, "ч": 14, "й": 12, "х": 10, "ж": 9, "ш": 7, "ю": 6, "ц": 5, "щ": 4, "э": 3, "ф": 3,
    "ъ": 1, "ё": 1,
}  # fmt: skip
_LOGP = {ch: math.log(n / 1000) for ch, n in _FREQ.items()}
_LOWER_BONUS = 0.2
"""Per lowercase letter: prose is mostly lowercase, and decoding with the other table flips case."""
_MIDWORD_UPPER = -2.0
"""Per capital right after a lowercase letter ("пРИВЕТ"): the signature of the wrong table."""
_ODD_CHAR = -6.0
"""Per non-ASCII character that is neither a Russian letter nor common typography."""
_TYPOGRAPHY = frozenset("«»—–…№“”„‘’•\u00a0°±§©®™€·‚‹›¶")
_MAX_ODD_RATIO = 0.10
"""Share of odd non-ASCII characters above which the text is not believed to be Russian: random
bytes and Latin-1 text read in either table give a third or more odd characters."""


def normalize_newlines(text: str) -> str:
    """Remove one leading BOM and turn CRLF and lone CR into LF; change nothing else."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_surrogates(text: str) -> tuple[str, int]:
    """``text`` with every surrogate code point (U+D800–U+DFFF) as U+FFFD, and how many.

    A Python string can hold them (a converter's library, a caller's ``"\\ud83d"`` escape)
    but UTF-8 cannot: hashing, token counting and the store would fail on the first one.
    One character for one keeps every offset (chunk spans, page provenance) as it was."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text, 0
    return _SURROGATE.subn("\ufffd", text)


def binary_signature(raw: bytes) -> str | None:
    """The name of the binary format ``raw`` starts with, or None."""
    for magic, name in _SIGNATURES:
        if raw.startswith(magic):
            return name
    if _BZIP2.match(raw):
        return "bzip2 archive"
    if _ID3.match(raw):
        return "MP3 audio"
    if raw.startswith(b"RIFF") and raw[8:12] in _RIFF_KINDS:
        return _RIFF_KINDS[raw[8:12]]
    if raw[4:8] == b"ftyp":
        return _FTYP_IMAGES.get(raw[8:12], "MP4/QuickTime media")
    if raw.startswith(b"BM") and raw[6:10] == b"\x00\x00\x00\x00" and raw[14:15] in _BMP_HEADS:
        return "BMP image"
    return None


_CONTROL_BYTES = bytes(
    b for b in range(0x80) if (b < 0x20 or b == 0x7F) and b not in _TEXT_CONTROLS
)


def control_share(sample: Sequence[int]) -> float:
    """Share of control codes among leading bytes (or code points): see MAX_CONTROL_RATIO."""
    if not sample:
        return 0.0
    if isinstance(sample, bytes):
        # Every file's first 8 KB: deleting the controls at C speed, not a Python loop
        # (0.3 s of a chunk run over md_corpus went to this line).
        controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    else:
        controls = sum(1 for b in sample if (b < 0x20 or b == 0x7F) and b not in _TEXT_CONTROLS)
    return controls / len(sample)


def _is_russian_letter(ch: str) -> bool:
    return "А" <= ch <= "я" or ch in "Ёё"


def _is_latin_letter(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _score(text: str) -> tuple[float, float]:
    """How much ``text`` reads like Russian prose: ``(mean score, share of odd characters)``.

    Both are per non-ASCII character; a higher score and a lower odd share mean more Russian.
    """
    total = 0.0
    count = odd = 0
    padded = f" {text} "
    for prev, ch, nxt in zip(padded, padded[1:], padded[2:], strict=False):
        if ch < "\x80":
            continue
        count += 1
        if not _is_russian_letter(ch):
            odd += ch not in _TYPOGRAPHY
            continue
        # A Russian letter glued to a Latin one is how Latin-1 accents read in cp1251.
        if _is_latin_letter(prev) or _is_latin_letter(nxt):
            odd += 1
            continue
        low = ch.lower()
        total += _LOGP[low]
        if ch == low:
            total += _LOWER_BONUS
        elif _is_russian_letter(prev) and prev == prev.lower():
            total += _MIDWORD_UPPER
    if not count:
        return 0.0, 0.0
    return (total + odd * _ODD_CHAR) / count, odd / count


_UTF_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_UTF16_NUL_SIDE = 0.30
_UTF16_NUL_OTHER = 0.02
"""BOM-less UTF-16 is believed only on a strong pattern: NULs on one byte side of at least
30% of the pairs (the high bytes of ASCII characters) and on at most 2% of the other side.
UTF-8 text with stray NULs has them on both sides alike, and far fewer."""


def _wide_codec(raw: bytes) -> str | None:
    """The UTF-16/32 codec a BOM names, or that BOM-less UTF-16 text shows by its NULs."""
    for bom, name in _UTF_BOMS:
        if raw.startswith(bom):
            return name
    sample = raw[: _SNIFF & ~1]
    pairs = len(sample) // 2
    if pairs < 2:
        return None
    even = sample[0::2].count(0) / pairs
    odd = sample[1::2].count(0) / pairs
    if odd >= _UTF16_NUL_SIDE and even <= _UTF16_NUL_OTHER:
        return "utf-16-le"
    if even >= _UTF16_NUL_SIDE and odd <= _UTF16_NUL_OTHER:
        return "utf-16-be"
    return None


def _try_wide(raw: bytes) -> tuple[str, str] | None:
    """Decode UTF-16/32 text (see :func:`_wide_codec`); None when it does not decode to text."""
    name = _wide_codec(raw)
    if name is None:
        return None
    try:
        text = raw.decode(name)  # keeps the BOM as U+FEFF, which normalize_newlines drops
    except UnicodeDecodeError:
        return None
    if control_share([ord(ch) for ch in text[:_SNIFF]]) > MAX_CONTROL_RATIO:
        return None
    return text, name


def _legacy_text(sample: bytes) -> bool:
    """Whether bytes read as Russian text in cp1251 or koi8-r (a stray NUL in an old file)."""
    for name in _LEGACY:
        try:
            text = sample.decode(name, "ignore")
        except LookupError:  # pragma: no cover - both codecs ship with Python
            continue
        if _score(text)[1] <= _MAX_ODD_RATIO:
            return True
    return False


def junk_kind(raw: bytes, *, wide_checked: bool = False) -> str | None:
    """Why bytes a file names as text (``.md``, ``.txt``, ``.html``, ``.csv``) are binary,
    or None: a known binary signature, a large share of control codes, or some control codes
    among many bytes that are neither UTF-8 nor Russian legacy text (see
    ``JUNK_CONTROL_RATIO``). UTF-16/32 text is text (``wide_checked``: the caller has found it
    is not)."""
    kind = binary_signature(raw)
    if kind is not None:
        return f"binary file ({kind})"
    if not wide_checked and _try_wide(raw) is not None:
        return None
    sample = raw[:_SNIFF]
    share = control_share(sample)
    if share > MAX_CONTROL_RATIO:
        return f"binary file ({share:.0%} of the first bytes are control codes)"
    if share > JUNK_CONTROL_RATIO:
        invalid = sample.decode("utf-8", "replace").count("\ufffd") / len(sample)
        if invalid > JUNK_INVALID_RATIO and not _legacy_text(sample):
            return (
                f"binary file ({share:.0%} of the first bytes are control codes and "
                f"{invalid:.0%} are not UTF-8)"
            )
    return None


def decode_bytes(raw: bytes, path: str) -> tuple[str, str, list[str]]:
    """Decode a file's bytes into ``(text, encoding, warnings)``.

    The text has the BOM removed and CRLF/CR turned into LF. A known binary signature (PNG,
    PDF, ZIP…) or a large share of control bytes raises ``BinaryFileError``; a few control
    characters do not (the sanitizer drops them from ``embed_text``). UTF-16/32 (with a BOM,
    or UTF-16 without one, by its NUL pattern) goes first, then UTF-8, then cp1251 and koi8-r,
    whichever reads more like Russian prose. Raises ``DecodeError`` when no supported
    encoding fits.
    """
    # Wide encodings go first because their ASCII characters carry NUL bytes.
    wide = _try_wide(raw) if binary_signature(raw) is None else None
    if wide is not None:
        text, name = wide
        return normalize_newlines(text), name, [f"{path}: decoded as {name} (not UTF-8)"]
    junk = junk_kind(raw, wide_checked=True)
    if junk is not None:
        raise BinaryFileError(path, f"{junk}, skipped")
    try:
        return normalize_newlines(raw.decode("utf-8")), "utf-8", []
    except UnicodeDecodeError as exc:
        bad_at = exc.start
    candidates: list[tuple[float, str, str]] = []
    for name in _LEGACY:
        try:
            text = raw.decode(name)
        except UnicodeDecodeError:
            continue
        score, odd_ratio = _score(text)
        if odd_ratio <= _MAX_ODD_RATIO:
            candidates.append((score, name, text))
    if not candidates:
        western = charset.western(raw)
        if western is None:
            raise DecodeError(
                path, f"invalid UTF-8 at byte {bad_at} and not cp1251/koi8-r/windows-1252 text"
            )
        text, name = western
        return normalize_newlines(text), name, [f"{path}: decoded as {name} (not UTF-8)"]
    _, name, text = max(candidates)
    return normalize_newlines(text), name, [f"{path}: decoded as {name} (not UTF-8)"]
