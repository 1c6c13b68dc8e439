"""Junk bytes under a text suffix are named as binary (#38 row 16); real text in any encoding
is not."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.discover.decode import junk_kind
from narezka.discover.walk import read_document
from narezka.errors import BinaryFileError

RU = "Политика возврата: вскрытую пачку чая можно вернуть в течение 14 дней.\n" * 40


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (f"<html><body><p>{RU}</p></body></html>".encode("cp1251"), "cp1251 page"),
        (f"<html><body><p>{RU}</p></body></html>".encode("koi8-r"), "koi8-r page"),
        ("nom;prix\ncafé;crème brûlée\n".encode("latin-1") * 50, "Latin-1 CSV"),
        ("名前,値\n東京,一\n".encode("shift_jis") * 100, "Shift-JIS CSV"),
        (f"<p>{RU}</p>".encode("utf-16"), "UTF-16 page"),
        (b"\x1b[31merror\x1b[0m: disk full \xe2\x9c\x97\n" * 200, "coloured UTF-8 log"),
        ("Привет\x00 мир, старый файл.".encode("cp1251") * 3, "cp1251 with a stray NUL"),
    ],
)
def test_real_text_is_not_junk(data: bytes, name: str) -> None:
    assert junk_kind(data) is None, name


@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=200, max_value=20_000))
def test_random_bytes_are_junk(seed: int, size: int) -> None:
    data = random.Random(seed).randbytes(size)
    assert junk_kind(data) is not None


def test_a_csv_of_junk_is_named_before_conversion(tmp_path: Path) -> None:
    junk = tmp_path / "t.csv"
    junk.write_bytes(random.Random(1).randbytes(5000))
    with pytest.raises(BinaryFileError, match=r"t\.csv: binary file .*control codes"):
        read_document(tmp_path, junk)


def test_a_gzip_named_html_is_named_by_its_kind(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_bytes(b"\x1f\x8b\x08\x00" + bytes(100))
    with pytest.raises(BinaryFileError, match="gzip archive"):
        read_document(tmp_path, page)
