"""Output is inert (#38 row 7): file names, headings, URLs and texts of a corpus carry escape
sequences (window title, OSC 52 clipboard writes), carriage returns, newlines forging
``warning:`` lines and Rich markup; the real command line prints them escaped, visible, and
without crashing, while ``--json`` keeps them as JSON has them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.cli.terminal import shown

TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
FORGED = "\nwarning: forged"
MARKUP = "[link=http://evil]x[/link] [bold red]R [/]"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]")  # a tab and a newline may stay
HEADING = f"Тарифы {TITLE} {MARKUP}"
TEXT = f"Тариф доставки {CLIPBOARD} дальше\rпотом{FORGED}\n"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    names = [f"title{TITLE}.md", f"clip{CLIPBOARD}.md", "cr\rover.md", f"nl{FORGED}.md"]
    names += ["[bold red]red[reset].md", "[link=https:evil]x.md"]
    for name in names:
        (corpus / name).write_text(f"# {HEADING}\n\n{TEXT}", encoding="utf-8")
    # Skipped, so index and sync name it on stderr; cp1251, so a warning names it.
    (corpus / f"bin{TITLE}{FORGED}.md").write_bytes(b"\x00\x01\x02\x03" * 64)
    (corpus / f"ru{CLIPBOARD}.md").write_bytes("# Тарифы\n\nдоставка тариф\n".encode("cp1251"))
    return corpus


def narezka(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "400"}  # wide tables: the escaped names stay whole
    return subprocess.run(
        [sys.executable, "-m", "narezka", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        timeout=300,
    )


def assert_inert(done: subprocess.CompletedProcess[str], *, lines_of_text: bool = False) -> None:
    both = done.stdout + done.stderr
    assert "Traceback" not in both and "MarkupError" not in both, both[-2000:]
    assert not RAW.search(both), repr(RAW.search(both))
    if not lines_of_text:  # a chunk's preview shows the text's own lines
        forged = [line for line in both.splitlines() if line.strip("│ ").startswith("warning: f")]
        assert not forged, forged


def test_index_and_sync_name_hostile_files_escaped(hostile: Path) -> None:
    first = narezka("index", "kb", "--embedder", "hash", cwd=hostile.parent)
    assert first.returncode == 0, first.stderr
    assert_inert(first)
    changed = "# Тарифы\n\nдоставка тариф, новый\n".encode("cp1251")
    (hostile / f"ru{CLIPBOARD}.md").write_bytes(changed)  # read again: warned again
    again = narezka("sync", "kb", cwd=hostile.parent)
    assert again.returncode == 0, again.stderr
    assert_inert(again)
    for run in (first, again):
        assert shown(f"skipped: bin{TITLE}{FORGED}.md: binary file") in run.stderr
        assert shown(f"ru{CLIPBOARD}.md: decoded as") in run.stderr


def test_search_shows_markup_and_escapes_as_text(hostile: Path) -> None:
    assert narezka("index", "kb", "--embedder", "hash", cwd=hostile.parent).returncode == 0
    for query in ("тариф", "тариф [/]", f"тариф {TITLE}"):
        found = narezka("search", query, "--store", "kb", "-k", "8", cwd=hostile.parent)
        assert found.returncode == 0, found.stderr
        assert_inert(found)
        assert "[link=http://evil]x[/link]" in found.stdout  # shown, not made a link
        assert shown(TITLE) in found.stdout and shown(CLIPBOARD) in found.stdout
        assert shown(query) in found.stdout


def test_search_json_keeps_the_text_as_it_is(hostile: Path) -> None:
    from narezka import Index

    assert narezka("index", "kb", "--embedder", "hash", cwd=hostile.parent).returncode == 0
    found = narezka("search", "тариф", "--store", "kb", "--format", "json", cwd=hostile.parent)
    assert found.returncode == 0
    assert "\x1b" not in found.stdout  # JSON escapes it itself
    with Index.open(hostile) as index:
        expected = [h.to_json() for h in index.search("тариф", k=5)]
    assert json.loads(found.stdout) == expected
    assert any(TITLE in hit["text"] and CLIPBOARD in hit["text"] for hit in expected)


def test_chunk_and_inspect_print_escaped(hostile: Path, tmp_path: Path) -> None:
    chunked = narezka("chunk", "kb", cwd=hostile.parent)
    assert chunked.returncode == 0
    assert_inert(chunked, lines_of_text=True)
    assert f"--- {shown('nl' + FORGED + '.md')} | " in chunked.stdout
    assert shown(TITLE) in chunked.stdout
    page = tmp_path / "page.html"
    inspected = narezka("inspect", "kb", "--out", str(page), cwd=hostile.parent)
    assert inspected.returncode == 0, inspected.stderr
    assert_inert(inspected)
    assert shown(f"skipped: bin{TITLE}{FORGED}.md: binary") in inspected.stderr


def test_an_error_quoting_a_name_is_escaped(tmp_path: Path) -> None:
    missing = f"gone{TITLE}{FORGED}"
    for args in (("index", missing), ("chunk", missing), ("search", "x", "--store", missing)):
        failed = narezka(*args, cwd=tmp_path)
        assert failed.returncode == 2
        assert_inert(failed)
        assert shown(missing) in failed.stderr


@given(st.text())
def test_shown_leaves_no_control_character_and_keeps_plain_text(text: str) -> None:
    out = shown(text)
    assert not re.search("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out)
    if not re.search(
        "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]",
        text,
    ):
        assert out == text


def test_the_servers_log_lines_are_escaped() -> None:
    import logging

    from narezka.cli.serve import InertFormatter

    try:
        raise ValueError(f"cannot read {TITLE}{FORGED}")
    except ValueError:
        record = logging.makeLogRecord(
            {"msg": "request failed: %s", "args": (f"/sources/{CLIPBOARD}",), "levelname": "ERROR"}
        )
        record.exc_info = sys.exc_info()
    line = InertFormatter(logging.BASIC_FORMAT).format(record)
    assert not RAW.search(line)
    assert line.startswith("ERROR:") and shown(f"/sources/{CLIPBOARD}") in line
    assert line.splitlines()[-1] == shown(f"ValueError: cannot read {TITLE}{FORGED}")
    assert "Traceback (most recent call last):" in line.splitlines()  # still a traceback


def test_warnings_of_narezka_and_of_libraries_are_escaped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import warnings

    import narezka.cli
    from narezka.cli import _show_warning
    from narezka.errors import NarezkaWarning

    def python_shows(message: Warning | str, category: type[Warning], *where: Any) -> None:
        # What Python's own showwarning writes (pytest has put its recorder in its place).
        sys.stderr.write(warnings.formatwarning(message, category, *where[:2]))

    monkeypatch.setattr(narezka.cli, "_default_show", python_shows)

    _show_warning(NarezkaWarning(f"a{TITLE}.md: odd{FORGED}"), NarezkaWarning, "x.py", 1)
    _show_warning(UserWarning(f"page {CLIPBOARD}{FORGED}"), UserWarning, "lib.py", 7)
    err = capsys.readouterr().err
    assert not RAW.search(err)
    assert shown(f"Warning: a{TITLE}.md: odd{FORGED}") in err
    assert shown(f"page {CLIPBOARD}{FORGED}") in err
    assert not [line for line in err.splitlines() if line.startswith("warning: f")]


def test_a_progress_bar_shows_a_hostile_name_as_text() -> None:
    import io

    from rich.console import Console

    from narezka.cli.progress import byte_progress
    from narezka.cli.reports import stage_text

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=300)
    with byte_progress("indexing", console) as progress:
        name = f"[bold red]x[/]{TITLE}{FORGED}.md"
        progress.add_task(stage_text("embedding", name), total=10)
        progress.refresh()
    drawn = screen.getvalue()
    assert "\x1b]" not in drawn and "\x07" not in drawn  # Rich's own colours (CSI) only
    assert shown(f"red]x[/]{TITLE}{FORGED}.md") in drawn  # the tail of the name, as text
