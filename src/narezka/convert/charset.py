"""A web page's bytes as text: the page's BOM, else the charset it declares if that names a
real text encoding, else the charset its bytes look like.

A declared label counts only if the WHATWG Encoding Standard (the table browsers use) knows
it, mapped as browsers map it: ``latin1``, ``iso-8859-1`` and ``ascii`` mean windows-1252,
``utf-16`` in a ``<meta>`` means UTF-8, ``x-user-defined`` windows-1252. Anything else
Python's codecs would take (``undefined``, ``idna``, ``rot13``, ``zlib``, ``utf-7``,
``punycode``…) is ignored with a note, as a browser ignores it: decoding never raises, and a
note names the file's charset whenever bytes were replaced or a label was not followed.

Detection, for a page that declares nothing usable: UTF-8 if the bytes are valid UTF-8, else
charset-normalizer choosing among windows-1251, windows-1252, KOI8-R, CP866 and the common
Chinese, Japanese and Korean encodings (a wider choice mistakes French for Lithuanian), else
windows-1252.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Decoded", "bom_codec", "decode_page", "decode_table_text", "western", "whatwg_codec"]

_LABELS = (
    ("utf_8", "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"),
    ("cp866", "866 cp866 csibm866 ibm866"),
    (
        "iso8859_2",
        "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    ),
    (
        "iso8859_3",
        "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3",
    ),
    (
        "iso8859_4",
        "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4",
    ),
    (
        "iso8859_5",
        "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 "
        "iso_8859-5 iso_8859-5:1988",
    ),
    (
        "iso8859_6",
        "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 "
        "iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987",
    ),
    (
        "iso8859_7",
        "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 "
        "iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    ),
    (
        "iso8859_8",
        "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 "
        "iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual csiso88598i iso-8859-8-i logical",
    ),
    ("iso8859_10", "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"),
    ("iso8859_13", "iso-8859-13 iso8859-13 iso885913"),
    ("iso8859_14", "iso-8859-14 iso8859-14 iso885914"),
    ("iso8859_15", "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"),
    ("iso8859_16", "iso-8859-16"),
    ("koi8_r", "cskoi8r koi koi8 koi8-r koi8_r"),
    ("koi8_u", "koi8-ru koi8-u"),
    ("mac_roman", "csmacintosh mac macintosh x-mac-roman"),
    ("cp874", "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"),
    ("cp1250", "cp1250 windows-1250 x-cp1250"),
    ("cp1251", "cp1251 windows-1251 x-cp1251"),
    (
        "cp1252",
        "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 "
        "iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252 "
        "x-user-defined",
    ),
    ("cp1253", "cp1253 windows-1253 x-cp1253"),
    (
        "cp1254",
        "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
        "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254",
    ),
    ("cp1255", "cp1255 windows-1255 x-cp1255"),
    ("cp1256", "cp1256 windows-1256 x-cp1256"),
    ("cp1257", "cp1257 windows-1257 x-cp1257"),
    ("cp1258", "cp1258 windows-1258 x-cp1258"),
    ("mac_cyrillic", "x-mac-cyrillic x-mac-ukrainian"),
    (
        "gb18030",
        "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk gb18030",
    ),
    ("big5hkscs", "big5 big5-hkscs cn-big5 csbig5 x-x-big5"),
    ("euc_jp", "cseucpkdfmtjapanese euc-jp x-euc-jp"),
    ("iso2022_jp", "csiso2022jp iso-2022-jp"),
    ("cp932", "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"),
    (
        "cp949",
        "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 "
        "ksc5601 ksc_5601 windows-949",
    ),
    # A page cannot declare UTF-16 in its own ASCII-readable text: browsers read UTF-8.
    (
        "utf_8",
        "unicodefffe utf-16be csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
    ),
)
_CODEC = {label: codec for codec, labels in _LABELS for label in labels.split()}
_NAMES = {"utf_8": "utf-8", "cp1251": "windows-1251", "cp1252": "windows-1252", "koi8_r": "koi8-r"}
_DETECTABLE = [
    *("cp1251", "cp1252", "koi8_r", "cp866"),
    *("cp932", "euc_jp", "gb18030", "big5hkscs", "cp949"),
]
_FALLBACK = "cp1252"

_HEAD = 4096
_COMMENT = re.compile(rb"<!--.*?(?:-->|$)", re.DOTALL)
_META = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([^\s"'>;/]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']+)["']""")
# UTF-32 first: its little-endian mark begins with UTF-16's.
_BOMS = (
    (b"\xef\xbb\xbf", "utf_8"),
    (b"\xff\xfe\x00\x00", "utf_32_le"),
    (b"\x00\x00\xfe\xff", "utf_32_be"),
    (b"\xff\xfe", "utf_16_le"),
    (b"\xfe\xff", "utf_16_be"),
)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A page's text, the charset it was read in, and what a run should say about that."""

    text: str
    charset: str
    notes: tuple[str, ...] = ()


def whatwg_codec(label: str) -> str | None:
    """The Python codec a browser would decode ``label`` with, or None for a label no browser
    knows (the WHATWG Encoding Standard's table; ``replacement`` labels are unknown here)."""
    return _CODEC.get(label.strip().lower())


def _name(codec: str) -> str:
    return _NAMES.get(codec, codec.replace("_", "-"))


def _declared(head: bytes) -> str | None:
    xml = _XML_ENCODING.match(head)
    if xml:
        return xml.group(1).decode("ascii", "replace")
    meta = _META.search(_COMMENT.sub(b"", head))
    return meta.group(1).decode("ascii", "replace") if meta else None


def _detect(data: bytes) -> str:
    """The codec the bytes look like (a page that declares nothing usable)."""
    # Byte order without a BOM: a page starts with "<", and UTF-16 puts a zero beside it.
    if data[:2] == b"<\x00" and data[3:4] == b"\x00":
        return "utf_16_le"
    if data[:2] == b"\x00<" and data[2:3] == b"\x00":
        return "utf_16_be"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf_8"
    import charset_normalizer

    best = charset_normalizer.from_bytes(
        data, cp_isolation=_DETECTABLE, enable_fallback=False
    ).best()
    return best.encoding if best is not None and best.encoding in _DETECTABLE else _FALLBACK


def _strict(data: bytes, codec: str) -> str | None:
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        return None


def bom_codec(data: bytes) -> tuple[str, int] | None:
    """The codec the byte order mark at the start of ``data`` names, and the mark's length."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec, len(bom)
    return None


# Text written in a Western European code page (German, French, Spanish…): its non-ASCII
# characters are accented letters inside words and typography. Bytes of another kind read in
# windows-1252 give C1 controls, box symbols and lone marks, and fall below the share.
_WESTERN = ("cp1252", "latin_1")
_WESTERN_MARKS = frozenset("«»—–…“”„‘’•\u00a0°±§©®™€·‚‹›¶£¥¢¿¡ªº×÷µ")
WESTERN_SHARE = 0.9


def western(data: bytes) -> tuple[str, str] | None:
    """``(text, charset)`` when ``data`` reads as Western European text in windows-1252 (or
    ISO-8859-1, which decodes every byte), else None. Callers try Russian code pages first:
    Russian text in windows-1251 is made of Latin-1 letters too."""
    for codec in _WESTERN:
        text = _strict(data, codec)
        if text is None:
            continue
        high = [ch for ch in text if ch >= "\x80"]
        fitting = sum(1 for ch in high if ch.isalpha() or ch in _WESTERN_MARKS)
        if high and fitting / len(high) >= WESTERN_SHARE:
            return text, _name(codec)
    return None


def decode_table_text(data: bytes) -> tuple[str, str]:
    """A delimited text file's bytes as ``(text, charset)``: its BOM (UTF-8/16/32), else UTF-8,
    else the code page the bytes look like (Excel saves CSV in the Windows code page)."""
    found = bom_codec(data)
    if found is not None:
        codec, skip = found
        return data[skip:].decode(codec, errors="replace"), _name(codec)
    codec = _detect(data)
    return data.decode(codec, errors="replace"), _name(codec)


def decode_page(data: bytes) -> Decoded:
    """``data`` as text (see the module's docstring for the order); never raises."""
    found = bom_codec(data)
    if found is not None:
        codec, skip = found
        body = data[skip:]
        text = _strict(body, codec)
        if text is not None:
            return Decoded(text, _name(codec))
        note = f"bytes not valid {_name(codec)} (its byte order mark) were replaced"
        return Decoded(body.decode(codec, errors="replace"), _name(codec), (note,))
    label = _declared(data[:_HEAD])
    known = whatwg_codec(label) if label is not None else None
    notes: list[str] = []
    codec = known or _detect(data)
    if label is not None and known is None:
        notes.append(
            f"declares charset {label[:40]!r}, which is not a text encoding a browser knows: "
            f"read as {_name(codec)} (detected)"
        )
    text = _strict(data, codec)
    if text is not None:
        return Decoded(text, _name(codec), tuple(notes))
    detected = _detect(data)
    text = _strict(data, detected) if detected != codec else None
    if text is not None:  # a page saved in one charset and labelled with another
        notes.append(f"declares charset {_name(codec)} but is not: read as {_name(detected)}")
        return Decoded(text, _name(detected), tuple(notes))
    notes.append(f"bytes not valid {_name(codec)} were replaced")
    return Decoded(data.decode(codec, errors="replace"), _name(codec), tuple(notes))
