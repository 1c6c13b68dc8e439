"""The chunk contract on the real Markdown corpus (EN and RU), through the shared checker.

Every strategy's JSONL for the whole ``md_corpus`` goes through ``check_chunks.py``: exact
spans, order, coverage, size limits, and no cut inside a code block or table that fits.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.cli import cli

from conftest import SHARED
from markdown_gen import adversarial_markdown

CORPUS = SHARED / "data" / "md_corpus"
CASES = {
    "headings-800": (["--strategy", "headings", "--size", "800"], ["--size", "800"]),
    "headings-h2h3": (
        ["--strategy", "headings", "--size", "800", "--levels", "2-3"],
        ["--size", "800"],
    ),
    "recursive-800": (["--strategy", "recursive", "--size", "800"], ["--size", "800"]),
    "overlap-800-150": (
        ["--strategy", "overlap", "--size", "800", "--overlap", "150"],
        ["--size", "800"],
    ),
    "sentences-500": (["--strategy", "sentences", "--size", "500"], ["--size", "500"]),
    "fixed-1500": (["--strategy", "fixed", "--size", "1500"], ["--size", "1500", "--no-atoms"]),
    "parent-child-300": (["--strategy", "parent-child", "--size", "300"], ["--size", "300"]),
    # legal on ordinary docs: numbered lists read as points must still keep the contract.
    "legal-800": (["--strategy", "legal", "--size", "800"], ["--size", "800"]),
    "headings-256-tokens": (
        [
            "--strategy",
            "headings",
            "--size",
            "256",
            "--unit",
            "tokens",
            "--tokenizer",
            "cl100k_base",
        ],
        ["--size", "256", "--unit", "tokens", "--tokenizer", "cl100k_base"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_corpus_passes_the_shared_checker(
    case: str, tmp_path: Path, check_chunks_tool: Path
) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} not found; set NAREZKA_SHARED to the shared/ folder")
    chunk_args, check_args = CASES[case]
    result = CliRunner().invoke(cli, ["chunk", str(CORPUS), "--format", "jsonl", *chunk_args])
    assert result.exit_code == 0, result.stderr
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(result.stdout, encoding="utf-8")
    if "--unit" not in check_args:
        check_args = [*check_args, "--unit", "chars"]
    check = subprocess.run(
        [sys.executable, str(check_chunks_tool), str(CORPUS), str(chunks), *check_args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout[-3000:]
    assert (
        check.stdout.strip().splitlines()[-1].startswith("ok: 2170 files") or "ok:" in check.stdout
    )


GENERATED_CASES = {
    "headings-200": ["--strategy", "headings", "--size", "200"],
    "recursive-90": ["--strategy", "recursive", "--size", "90"],
    "sentences-250": ["--strategy", "sentences", "--size", "250"],
    "overlap-200-60": ["--strategy", "overlap", "--size", "200", "--overlap", "60"],
    "parent-child-120": ["--strategy", "parent-child", "--size", "120"],
    "legal-250": ["--strategy", "legal", "--size", "250"],
}


@pytest.mark.parametrize("case", list(GENERATED_CASES))
@settings(max_examples=4)
@given(docs=st.lists(adversarial_markdown(), min_size=6, max_size=6))
def test_generated_markdown_passes_the_shared_checker_in_commonmark_mode(
    case: str, docs: list[str], check_chunks_tool: Path
) -> None:
    # The checker's own block finder is a CommonMark subset without HTML blocks: on
    # adversarial input only --commonmark (markdown-it-py) says where the atoms really are.
    args = GENERATED_CASES[case]
    size = args[args.index("--size") + 1]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        for k, doc in enumerate(docs):
            (corpus / f"doc{k}.md").write_text(doc, encoding="utf-8", newline="")
        result = CliRunner().invoke(cli, ["chunk", str(corpus), "--format", "jsonl", *args])
        assert result.exit_code == 0, result.stderr
        chunks = Path(tmp) / "chunks.jsonl"
        chunks.write_text(result.stdout, encoding="utf-8")
        command = [sys.executable, str(check_chunks_tool), str(corpus), str(chunks)]
        check = subprocess.run(
            [*command, "--size", size, "--unit", "chars", "--commonmark"],
            capture_output=True,
            text=True,
            check=False,
        )
    assert check.returncode == 0, check.stdout[-3000:]
