"""auto: each file gets the strategy its type and content call for, and says which."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import narezka
from narezka.cli import cli
from narezka.split.auto import choose_strategy
from narezka.tokens import get_counter

from conftest import EXAMPLES
from contract import assert_contract

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("code/inventory.py", "code"),
        ("code/cart.ts", "code"),
        ("code/store.go", "code"),
        ("chat/support.jsonl", "chat"),
        ("chat/team.json", "chat"),
        ("chat/call.txt", "chat"),
        ("legal/dogovor_postavki.md", "legal"),
        ("legal/zakon.txt", "legal"),
        ("code_heavy.md", "headings"),
        ("big_table.md", "headings"),
        ("semantic/topics_ru.md", "headings"),
    ],
)
def test_test_data_files_get_the_strategy_they_call_for(path: str, expected: str) -> None:
    text = (DATA / path).read_text(encoding="utf-8")
    assert choose_strategy(path, text) == expected


def test_every_example_kb_page_is_markdown_for_headings_but_the_faq() -> None:
    for page in EXAMPLES.rglob("*.md"):
        expected = "faq" if page.name == "faq.md" else "headings"
        assert choose_strategy(page.name, page.read_text(encoding="utf-8")) == expected


@pytest.mark.parametrize(
    ("source", "text", "expected"),
    [
        ("notes.txt", "Просто заметка без структуры. Вторая фраза.", "recursive"),
        ("data.json", json.dumps({"items": [1, 2, 3], "total": 3}), "recursive"),
        ("build.log", "compiling module a\ncompiling module b\n", "recursive"),
        ("script.sh", "#!/bin/sh\necho hi\n", "code"),
        # A chat-like line in a Markdown page does not make the page a chat.
        ("faq.md", "# FAQ\n\nКлиент: где заказ?\nОператор: в пути.\n", "headings"),
    ],
)
def test_choice_by_name_and_content(source: str, text: str, expected: str) -> None:
    assert choose_strategy(source, text) == expected


def test_a_mixed_folder_reports_each_files_strategy(tmp_path: Path) -> None:
    corpus = tmp_path / "mixed"
    for rel in ("code/inventory.py", "chat/support.jsonl", "legal/zakon.txt", "code_heavy.md"):
        (corpus / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / rel, corpus / rel)
    report = narezka.chunk_documents([corpus], "auto", size=600)
    assert report.strategies == {
        "chat/support.jsonl": "chat",
        "code/inventory.py": "code",
        "code_heavy.md": "headings",
        "legal/zakon.txt": "legal",
    }
    assert {c.source: c.strategy for c in report.chunks} == report.strategies

    result = CliRunner().invoke(cli, ["chunk", str(corpus), "-s", "auto", "--stats"])
    assert result.exit_code == 0, result.output
    assert "legal      legal/zakon.txt" in result.output
    assert "code       code/inventory.py" in result.output
    as_json = CliRunner().invoke(
        cli, ["chunk", str(corpus), "-s", "auto", "--stats", "--format", "json"]
    )
    stats = json.loads(as_json.stdout)["stats"]
    assert stats["strategies"]["chat/support.jsonl"] == "chat"
    assert stats["strategy_counts"] == {"chat": 1, "code": 1, "headings": 1, "legal": 1}


@given(
    text=st.text(max_size=500),
    source=st.sampled_from(["a.md", "a.py", "a.txt", "a.json", "a.go", "a.jsonl", "a.log"]),
    size=st.sampled_from([40, 200]),
)
def test_auto_keeps_the_contract_whatever_it_chooses(text: str, source: str, size: int) -> None:
    try:
        chunks = narezka.chunk_text(text, "auto", source=source, size=size)
    except narezka.NarezkaError:
        # A file that claims to be JSON chat but is broken is reported, not chunked.
        assume_broken_chat = choose_strategy(source, text) == "chat"
        assert assume_broken_chat
        return
    assert_contract(text, chunks, size, get_counter("chars"), atoms=False)
