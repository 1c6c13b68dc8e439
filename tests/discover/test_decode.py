"""Tests for narezka.discover.decode: UTF-8 normalization, legacy Russian encodings, refusals."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.discover import decode_bytes, normalize_newlines
from narezka.discover.decode import control_share
from narezka.errors import BinaryFileError, DecodeError, SourceError

# Lines without CR/LF and without control characters (those would make the bytes look binary).
_line = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1)


@given(
    lines=st.lists(_line, min_size=1, max_size=8),
    breaks=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=7, max_size=7),
    bom=st.booleans(),
)
def test_utf8_decodes_to_text_with_lf_newlines(
    lines: list[str], breaks: list[str], bom: bool
) -> None:
    body = lines[0] + "".join(b + line for b, line in zip(breaks, lines[1:], strict=False))
    raw = (b"\xef\xbb\xbf" if bom else b"") + body.encode("utf-8")
    # The lines are non-empty, so every break is exactly one LF in the result. Only one BOM
    # goes: a text that itself starts with U+FEFF loses it only when no BOM was written.
    expected = "\n".join(lines)
    if not bom:
        expected = expected.removeprefix("\ufeff")

    text, encoding, warnings = decode_bytes(raw, "doc.md")

    assert text == expected
    assert encoding == "utf-8"
    assert warnings == []


def test_mixed_newline_runs_each_become_one_lf() -> None:
    text, _, _ = decode_bytes(b"a\r\r\nb\n\rc\r", "x.md")
    assert text == "a\n\nb\n\nc\n"


def test_other_line_breaks_and_inner_boms_are_kept() -> None:
    original = "a\u2028b\u0085c\x0bd\ufeffe\tf"
    text, _, _ = decode_bytes(original.encode("utf-8"), "x.md")
    assert text == original


def test_normalize_newlines_strips_one_bom_only() -> None:
    assert normalize_newlines("\ufeff\ufeffa\r\nb") == "\ufeffa\nb"


RUSSIAN = [
    "Привет, мир! Это короткий тест кодировки.",
    "Москва является столицей России и крупнейшим по численности населения городом страны.\r\n"
    "Город стоит на реке Москве в центре Восточно-Европейской равнины.",
    "## Установка\n\nЗапустите `pip install narezka`, затем выполните SQL-запрос к базе.",
    "ГЛАВА ПЕРВАЯ. ОБЩИЕ ПОЛОЖЕНИЯ\n\nНастоящий документ описывает порядок работы.",
    "В чащах юга жил бы цитрус? Да, но фальшивый экземпляр! Съешь ещё этих булок.",
]


@pytest.mark.parametrize("encoding", ["cp1251", "koi8-r"])
@pytest.mark.parametrize("sample", RUSSIAN)
def test_russian_legacy_encodings_are_detected(sample: str, encoding: str) -> None:
    text, detected, warnings = decode_bytes(sample.encode(encoding), "ru.md")
    assert detected == encoding
    assert text == sample.replace("\r\n", "\n")
    assert warnings == [f"ru.md: decoded as {encoding} (not UTF-8)"]


@pytest.mark.parametrize("encoding", ["cp1251", "koi8-r"])
@pytest.mark.parametrize("sample", ["ВВЕДЕНИЕ В ТЕОРИЮ ЧИСЕЛ", "ГЛАВА ПЕРВАЯ. ОБЩИЕ ПОЛОЖЕНИЯ"])
def test_all_capitals_are_told_apart_by_letter_frequencies(sample: str, encoding: str) -> None:
    # The other table turns capitals into lowercase, so the case signal points the wrong way.
    text, detected, _ = decode_bytes(sample.encode(encoding), "caps.md")
    assert (text, detected) == (sample, encoding)


@pytest.mark.parametrize(
    ("sample", "encoding"), [("Щедрый Вечер", "cp1251"), ("Эхо Юга", "koi8-r")]
)
def test_short_title_case_is_told_apart_by_capitals_inside_words(
    sample: str, encoding: str
) -> None:
    # Rare capitals (Щ, Э, Ю) leave the letter frequencies undecided on so few letters.
    text, detected, _ = decode_bytes(sample.encode(encoding), "title.md")
    assert (text, detected) == (sample, encoding)


@pytest.mark.parametrize(("sample", "encoding"), [("фьорд", "cp1251"), ("цапля", "koi8-r")])
def test_short_lowercase_is_told_apart_by_case(sample: str, encoding: str) -> None:
    # Letter frequencies alone favour the other table's capitals here; prose is mostly lowercase.
    text, detected, _ = decode_bytes(sample.encode(encoding), "word.md")
    assert (text, detected) == (sample, encoding)


def test_cp1251_typography_is_read() -> None:
    sample = "ООО «Рога и копыта» — лучшая компания № 1… Ёлки!"
    text, detected, _ = decode_bytes(sample.encode("cp1251"), "t.md")
    assert (text, detected) == (sample, "cp1251")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom(codec: str) -> None:
    bom = b"\xff\xfe" if codec == "utf-16-le" else b"\xfe\xff"
    raw = bom + "Заголовок\r\nтекст".encode(codec)
    text, detected, warnings = decode_bytes(raw, "w.txt")
    assert (text, detected) == ("Заголовок\nтекст", codec)
    assert warnings == [f"w.txt: decoded as {codec} (not UTF-8)"]


SIGNATURES = {
    "png": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "PNG image"),
    "jpeg": (b"\xff\xd8\xff\xe0\x00\x10JFIF", "JPEG image"),
    "pdf": (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj", "PDF document"),
    "docx": (b"PK\x03\x04\x14\x00\x06\x00[Content_Types].xml", "ZIP archive"),
    "doc": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 8, "legacy Office"),
    "gzip": (b"\x1f\x8b\x08\x00notes.md", "gzip archive"),
    "bzip2": (b"BZh91AY&SY", "bzip2 archive"),
    "elf": (b"\x7fELF\x02\x01\x01", "ELF executable"),
    "sqlite": (b"SQLite format 3\x00\x10\x00", "SQLite database"),
    "mp3": (b"ID3\x03\x00\x00\x00", "MP3 audio"),
    "webp": (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "WebP image"),
    "mp4": (b"\x00\x00\x00\x18ftypmp42", "MP4/QuickTime media"),
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_known_binary_signatures_are_refused_by_name(name: str) -> None:
    # Padded with text: the signature alone decides, whatever follows.
    magic, kind = SIGNATURES[name]
    with pytest.raises(BinaryFileError) as info:
        decode_bytes(magic + b" plain readable words follow" * 20, f"files/x.{name}")
    message = str(info.value)
    assert message.startswith(f"files/x.{name}: binary file (")
    assert kind in message
    assert message.endswith("), skipped")


@pytest.mark.parametrize(
    "raw",
    [
        bytes(range(1, 8)) * 50 + b"some text",
        b"\x00\x01\x02binary",
        b"\x00" * 300 + b"tar-like header padded with NULs" + b"\x00" * 200,
    ],
    ids=["control-bytes", "short-controls", "nul-padding"],
)
def test_mostly_control_bytes_are_refused(raw: bytes) -> None:
    with pytest.raises(BinaryFileError, match=r"^img/logo\.png: binary file \(\d+% of the first "):
        decode_bytes(raw, "img/logo.png")


def test_text_that_merely_mentions_a_signature_is_text() -> None:
    raw = b"ID3 tags and PK files: %PDF is not at the start here.\n"
    assert decode_bytes(raw, "notes.md")[0] == raw.decode("ascii")


GARBAGE_PARAGRAPH = (
    "\ufeff# Заметки\r\n\r\n"
    "Первый абзац, обычный текст про настройку сервера и его журналы.\r\n\r\n"
    "Второй абзац\u200b со сбоем: \ufffd байты \x00\x07 посреди строки, дальше текст.\r\n\r\n"
    "## Итог\r\n\r\nТретий абзац: всё остальное читается как обычно.\r\n"
)


def test_utf8_with_bom_crlf_and_stray_controls_is_text() -> None:
    # Issue 10 item 4: this file was skipped whole as "binary" for its one NUL.
    raw = GARBAGE_PARAGRAPH.encode("utf-8")
    text, encoding, warnings = decode_bytes(raw, "garbage.md")
    assert encoding == "utf-8"
    assert warnings == []
    assert text == GARBAGE_PARAGRAPH.removeprefix("\ufeff").replace("\r\n", "\n")
    assert "\x00\x07" in text and "\u200b" in text and "\ufffd" in text


def test_cp1251_with_a_stray_nul_is_text() -> None:
    sample = "Привет, мир! Это текст в старой кодировке.\x00 И ещё одно предложение."
    text, encoding, _ = decode_bytes(sample.encode("cp1251"), "old.md")
    assert (text, encoding) == (sample, "cp1251")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_is_recognised_by_its_nuls(codec: str) -> None:
    sample = "# Notes\r\n\r\nPlain ASCII text saved by an old editor, Привет.\r\n"
    text, detected, warnings = decode_bytes(sample.encode(codec), "w.md")
    assert (text, detected) == (sample.replace("\r\n", "\n"), codec)
    assert warnings == [f"w.md: decoded as {codec} (not UTF-8)"]


@pytest.mark.parametrize("codec", ["utf-32-le", "utf-32-be"])
def test_utf32_with_bom(codec: str) -> None:
    bom = b"\xff\xfe\x00\x00" if codec == "utf-32-le" else b"\x00\x00\xfe\xff"
    text, detected, _ = decode_bytes(bom + "Заголовок\nтекст".encode(codec), "w.txt")
    assert (text, detected) == ("Заголовок\nтекст", codec)


def test_stray_nuls_in_utf8_are_not_mistaken_for_utf16() -> None:
    # NULs on every other byte of a short run only: both byte sides carry some.
    raw = b"abc\x00d\x00ef " * 3 + b"ordinary text goes on and on " * 20
    text, detected, _ = decode_bytes(raw, "n.md")
    assert (text, detected) == (raw.decode("ascii"), "utf-8")


def test_utf16_bom_on_undecodable_bytes_falls_back_to_the_byte_checks() -> None:
    # An odd byte count cannot be UTF-16; its NULs then make it binary.
    raw = b"\xff\xfe" + "text".encode("utf-16-le") + b"\x00"
    with pytest.raises(BinaryFileError, match=r"^u\.md: binary file \("):
        decode_bytes(raw, "u.md")


def test_a_few_control_bytes_are_still_text() -> None:
    raw = b"\x1b[1m" * 10 + b"bold text, mostly readable " * 3
    text, _, _ = decode_bytes(raw, "ansi.txt")
    assert text == raw.decode("ascii")


def test_only_the_first_8_kib_are_sniffed_for_controls() -> None:
    raw = b"a" * 9000 + b"\x00" * 2000
    text, _, _ = decode_bytes(raw, "late.txt")
    assert text == raw.decode("ascii")


def test_random_high_bytes_are_undecodable() -> None:
    rng = random.Random(20240601)
    raw = b"ok " + bytes(rng.randrange(0x80, 0x100) for _ in range(400))
    with pytest.raises(DecodeError) as info:
        decode_bytes(raw, "noise.md")
    assert str(info.value).startswith("noise.md: invalid UTF-8 at byte 3 ")
    assert "not cp1251/koi8-r/windows-1252" in str(info.value)
    assert isinstance(info.value, SourceError)


@pytest.mark.parametrize(
    "raw",
    [
        b"Prices \x80\x81\x82 \x8a\x8c\x8d\x8e \x9a\x9c\x9d\x9e \x83\x84\x85 end",
        b"Symbols \xa4\xa6\xa8 \xac\xaf \xb4\xb8 \xbe\xbd\xbc and more \xa4\xa6",
    ],
    ids=["c1-bytes", "lone-marks"],
)
def test_bytes_that_are_no_western_text_stay_undecodable(raw: bytes) -> None:
    """windows-1252 decodes almost any byte: only text whose non-ASCII characters are
    letters and typography is believed to be in it."""
    with pytest.raises(DecodeError, match=r"^latin\.md: invalid UTF-8 at byte \d+"):
        decode_bytes(raw, "latin.md")


@given(st.binary(max_size=300))
def test_the_control_share_of_bytes_is_that_of_their_values(raw: bytes) -> None:
    # Bytes are counted at C speed, code points (a wide file's text) one by one: one rule.
    assert control_share(raw) == control_share(list(raw))
    expected = sum(1 for b in raw if (b < 0x20 or b == 0x7F) and b not in b"\t\n\r\f")
    assert control_share(raw) == (expected / len(raw) if raw else 0.0)


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("## können\n\nDie schöne Straße, äöüß.\n", "cp1252"),
        ("# Été\n\nL'été était très chaud ; un café coûte 3,50 €.\n", "cp1252"),
        ("# Niño\n\nLa señora dijo: «¡Qué rico!»\n", "latin-1"),
    ],
)
def test_western_legacy_markdown_is_decoded_with_a_warning(text: str, codec: str) -> None:
    decoded, name, warnings = decode_bytes(text.encode(codec), "notes/umlauts.md")
    assert decoded == text
    assert name == "windows-1252"
    assert warnings == ["notes/umlauts.md: decoded as windows-1252 (not UTF-8)"]


_ACCENTED = "äöüßéèêëàâçñíóúåæøÄÖÜÉ"


@given(
    st.lists(
        st.tuples(
            st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6),
            st.text(alphabet=_ACCENTED, min_size=1, max_size=2),
            st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_western_words_in_windows_1252_come_back_unchanged(words: list[tuple[str, ...]]) -> None:
    text = " ".join("".join(parts) for parts in words) + "\n"
    decoded, name, _ = decode_bytes(text.encode("cp1252"), "w.md")
    assert (decoded, name) == (text, "windows-1252")


def test_russian_windows_1251_is_still_read_as_russian() -> None:
    text = "# Оплата\n\nОплатить заказ можно картой или наличными при получении.\n"
    decoded, name, _ = decode_bytes(text.encode("cp1251"), "pay.md")
    assert (decoded, name) == (text, "cp1251")
