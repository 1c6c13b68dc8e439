"""Documents narezka does not read are counted and named (issue 23, item 12): a folder of
notes with PDFs, Word files and HTML beside them once reported "0 skipped"; those are
converted now (OpenDocument text and EPUB too), and OpenDocument slides and sheets, old Office
files and RTF are what is left unread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.cli import cli
from narezka.discover import iter_files
from narezka.discover.kinds import READABLE_SUFFIXES, describe_unread, unread_type
from narezka.runs import chunk_documents


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Заметка\n\nТекст заметки.\n", encoding="utf-8")
    (root / "report.xls").write_bytes(b"%PDF-1.7\n")
    (root / "sub" / "scan.XLS").write_bytes(b"%PDF-1.7\n")
    (root / "sub" / "contract.ppt").write_bytes(b"PK\x03\x04")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")  # an image: nobody searches it
    return root


def test_unread_type_is_decided_in_one_place() -> None:
    assert unread_type("a/Report.XLS") == ".xls"
    assert unread_type("x.ppt") == ".ppt"
    assert unread_type("page.rtf") == ".rtf"
    assert unread_type("a.md") is None and ".md" in READABLE_SUFFIXES
    # What a converter reads is readable: PDF, Word, web pages, slides, sheets.
    for name in (
        "r.pdf",
        "w.DOCX",
        "o.odt",
        "b.EPUB",
        "p.html",
        "s.pptx",
        "t.xlsx",
        "u.ods",
        "v.odp",
    ):
        assert unread_type(name) is None
    assert unread_type("logo.png") is None and unread_type("Makefile") is None


def test_the_walk_lists_them_unless_included_or_excluded(notes: Path) -> None:
    unread: list[str] = []
    assert len(list(iter_files([notes], unread=unread))) == 1
    assert unread == ["report.xls", "sub/contract.ppt", "sub/scan.XLS"]
    unread.clear()
    list(iter_files([notes], exclude=["*.xls", "*.XLS"], unread=unread))
    assert unread == ["sub/contract.ppt"]


def test_describe_unread_counts_by_type_and_names_the_first() -> None:
    paths = ["a.xls", "b.xls", "c.ppt"]
    assert describe_unread(paths) == "3 not read (unsupported type: 2 .xls, 1 .ppt): " + (
        "a.xls, b.xls, c.ppt"
    )
    assert describe_unread(paths, shown=1).endswith(": a.xls and 2 more")
    assert describe_unread(paths, shown=0) == "3 not read (unsupported type: 2 .xls, 1 .ppt)"


def test_chunk_reports_them(notes: Path) -> None:
    report = chunk_documents([notes], size=200, unit="chars")
    assert report.files == 1 and report.skipped == []
    assert report.not_read == ["report.xls", "sub/contract.ppt", "sub/scan.XLS"]


def test_chunk_cli_names_them_and_strict_fails(notes: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["chunk", str(notes), "--format", "json", "--strict"])
    assert result.exit_code == 1
    stats = json.loads(result.stdout)["stats"]
    assert stats["not_read_files"] == 3
    assert stats["not_read"] == ["report.xls", "sub/contract.ppt", "sub/scan.XLS"]
    assert "3 not read (unsupported type: 2 .xls, 1 .ppt)" in result.stderr
    # Excluding them says "I know": --strict passes.
    accepted = runner.invoke(
        cli, ["chunk", str(notes), "--strict", "--exclude", "*.xls", "--exclude", "*.[Xx][Ll][Ss]",
              "--exclude", "*.ppt"],
    )  # fmt: skip
    assert accepted.exit_code == 0, accepted.stderr


def test_index_cli_counts_them_in_the_summary_and_json(notes: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    store = tmp_path / "store"
    args = ["index", str(notes), "--embedder", "hash:64", "--store", str(store)]
    result = runner.invoke(cli, [*args, "--json", "--strict"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["not_read"] == ["report.xls", "sub/contract.ppt", "sub/scan.XLS"]
    assert data["skipped"] == []
    synced = runner.invoke(cli, ["sync", str(store)])
    assert synced.exit_code == 0
    assert "0 skipped, 3 not read (unsupported type: 2 .xls, 1 .ppt)" in synced.stdout
