"""Turn a file's bytes into normalized text: UTF-8 first, then Russian legacy encodings."""

from __future__ import annotations

import math
from collections.abc import Sequence

from narezka.errors import BinaryFileError, DecodeError

__all__ = ["decode_bytes", "normalize_newlines"]

_SNIFF = 8192
"""Binary sniffing looks at this many leading bytes only: enough to judge, cheap on big files."""
_MAX_CONTROL_RATIO = 0.30
_TEXT_CONTROLS = frozenset(b"\t\n\r\f")
_LEGACY = ("cp1251", "koi8-r")

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


def _is_binary(sample: Sequence[int]) -> bool:
    """Whether leading bytes (or code points) look binary: a NUL, or over 30% control codes."""
    if 0 in sample:
        return True
    controls = sum(1 for b in sample if (b < 0x20 or b == 0x7F) and b not in _TEXT_CONTROLS)
    return len(sample) > 0 and controls / len(sample) > _MAX_CONTROL_RATIO


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


def _try_utf16(raw: bytes) -> tuple[str, str] | None:
    """Decode text that starts with a UTF-16 BOM; None when it does not decode to text."""
    if raw[:2] not in (b"\xff\xfe", b"\xfe\xff"):
        return None
    name = "utf-16-le" if raw[:2] == b"\xff\xfe" else "utf-16-be"
    try:
        text = raw.decode(name)  # keeps the BOM as U+FEFF, which normalize_newlines drops
    except UnicodeDecodeError:
        return None
    if _is_binary([ord(ch) for ch in text[:_SNIFF]]):
        return None
    return text, name


def decode_bytes(raw: bytes, path: str) -> tuple[str, str, list[str]]:
    """Decode a file's bytes into ``(text, encoding, warnings)``.

    The text has the BOM removed and CRLF/CR turned into LF. UTF-8 is tried first; then UTF-16
    with a BOM, then cp1251 and koi8-r, whichever reads more like Russian prose. Raises
    ``BinaryFileError`` for binary data and ``DecodeError`` when no supported encoding fits.
    """
    # UTF-16 goes first because its ASCII characters carry NUL bytes that look binary.
    utf16 = _try_utf16(raw)
    if utf16 is not None:
        text, name = utf16
        return normalize_newlines(text), name, [f"{path}: decoded as {name} (not UTF-8)"]
    if _is_binary(raw[:_SNIFF]):
        raise BinaryFileError(path, "binary file, skipped")
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
        raise DecodeError(path, f"invalid UTF-8 at byte {bad_at} and not cp1251/koi8-r text")
    _, name, text = max(candidates)
    return normalize_newlines(text), name, [f"{path}: decoded as {name} (not UTF-8)"]
