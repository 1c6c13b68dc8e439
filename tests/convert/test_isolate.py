"""Conversions in a child process: each limit named when broken, the child replaced, and a
child that died idle never blamed on the next file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from narezka.convert import convert, isolate
from narezka.convert.limits import Limits, check_size, human_bytes
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.errors import ConfigError, ConversionLimitError, ConvertError, RefusedFileError
from narezka.settings import convert_options

import convert_samples as samples

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "trust"))
import trust_bombs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kb" / "returns.pdf"


def _limits(monkeypatch: pytest.MonkeyPatch, **changed: float) -> None:
    real = Limits.for_size

    def for_size(size: int, options: ConvertOptions) -> Limits:
        base = real(size, options)
        values = {"memory": base.memory, "cpu": base.cpu, "wall": base.wall, "output": base.output}
        values.update(changed)
        return Limits(int(values["memory"]), values["cpu"], values["wall"], int(values["output"]))

    monkeypatch.setattr(Limits, "for_size", staticmethod(for_size))


def test_a_bounded_conversion_is_the_conversion() -> None:
    data = EXAMPLE.read_bytes()
    assert isolate.convert_bounded(data, ".pdf", "returns.pdf") == convert(
        data, ".pdf", "returns.pdf"
    )


def test_errors_come_back_as_they_were_raised() -> None:
    with pytest.raises(ConvertError, match=r"broken\.docx: not a valid Office file"):
        isolate.convert_bounded(b"not a zip", ".docx", "broken.docx")


def test_the_output_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    _limits(monkeypatch, output=10)
    with pytest.raises(ConversionLimitError, match=r"a\.docx: conversion gave .* \(limit: 10\)"):
        isolate.convert_bounded(samples.make_docx(), ".docx", "a.docx")


def test_the_memory_limit() -> None:
    with pytest.raises(ConversionLimitError, match=r"form\.pdf: conversion .*512 MB"):
        isolate.convert_bounded(trust_bombs.pdf_form_bomb(), ".pdf", "form.pdf")
    # The next file gets a fresh child.
    assert "Возврат" in isolate.convert_bounded(EXAMPLE.read_bytes(), ".pdf", "r.pdf").markdown


def test_the_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    _limits(monkeypatch, wall=0.3)
    data = trust_bombs.pdf_repeated_page(5000)
    with pytest.raises(ConversionLimitError, match=r"r\.pdf: conversion ran over 0 s of time"):
        isolate.convert_bounded(data, ".pdf", "r.pdf")


def test_the_cpu_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    _limits(monkeypatch, cpu=1, wall=60)
    data = trust_bombs.many_text_objects(40000)
    with pytest.raises(ConversionLimitError, match=r"m\.pdf: conversion exceeded 1 s of CPU"):
        isolate.convert_bounded(data, ".pdf", "m.pdf")


def test_a_child_that_died_idle_is_not_blamed_on_the_next_file() -> None:
    data = EXAMPLE.read_bytes()
    isolate.convert_bounded(data, ".pdf", "a.pdf")
    for child in isolate._IDLE:
        child.process.kill()
        child.process.wait()
    assert isolate.convert_bounded(data, ".pdf", "b.pdf").markdown


def test_settings_and_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAREZKA_CONVERT_MEMORY_MB", "1024")
    monkeypatch.setenv("NAREZKA_CONVERT_SECONDS", "5")
    options = convert_options()  # read at the top, as the CLI and an Index do
    limits = Limits.for_size(1000, options)
    assert limits.memory == 1024 << 20 and limits.cpu < 6 and limits.wall == 2 * limits.cpu
    assert Limits.for_size(100 << 20, options).memory == 2048 << 20  # 40 × 100 MB, capped
    monkeypatch.setenv("NAREZKA_CONVERT_SECONDS", "soon")
    with pytest.raises(ConfigError, match="NAREZKA_CONVERT_SECONDS must be a number"):
        convert_options()
    # The stage reads nothing: the options handed to it are what counts.
    assert Limits.for_size(1000, options) == limits
    assert Limits.for_size(1000, DEFAULT).memory == 512 << 20
    monkeypatch.setenv("NAREZKA_CONVERT_SECONDS", "5")
    monkeypatch.setenv("NAREZKA_MAX_FILE_MB", "0")
    with pytest.raises(ConfigError, match="above 0"):
        convert_options()
    monkeypatch.setenv("NAREZKA_MAX_FILE_MB", "2")
    options = convert_options()
    check_size("a.txt", ".txt", 2 << 20, options)
    with pytest.raises(RefusedFileError, match=r"a\.pdf: 3 MB, over the limit of 2 MB"):
        check_size("a.pdf", ".pdf", 3 << 20, options)
    check_size("a.pdf", ".pdf", 3 << 20, DEFAULT)
    assert human_bytes(800) == "800 bytes" and human_bytes(6 << 30) == "6 GB"
