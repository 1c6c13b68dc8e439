"""Exit codes and edges of the command line, as scripts and cron see them (the table is in
narezka.cli.common and the README)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import traceback
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from narezka.api.indexing import read_index_meta
from narezka.cli import cli
from narezka.cli.common import EXIT_INTERRUPTED, EXIT_NOTHING, EXIT_OK, EXIT_USAGE

from conftest import EXAMPLES, copy_examples


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    err = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # CliRunner turns an escaped exception into exit code 1 and says nothing of it.
        err += "".join(traceback.format_exception(result.exception))
    return result.exit_code, result.stdout, err


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = copy_examples(tmp_path_factory.mktemp("cli") / "kb")
    code, _, err = run("index", str(corpus), "--embedder", "hash")
    assert code == EXIT_OK, err
    return corpus


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_an_empty_query_is_a_usage_error(indexed: Path, query: str) -> None:
    code, out, err = run("search", query, "--store", str(indexed))
    assert code == EXIT_USAGE and "empty" in err and not out


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl"])
def test_nothing_found_exits_1_in_every_format(indexed: Path, fmt: str) -> None:
    code, out, _ = run(
        "search", "доставка", "--store", str(indexed), "--mode", "bm25",
        "--zone", "no-such-zone", "--format", fmt,
    )  # fmt: skip
    assert code == EXIT_NOTHING
    if fmt == "json":
        assert json.loads(out) == []
    if fmt == "jsonl":
        assert out == ""


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl"])
def test_something_found_exits_0_in_every_format(indexed: Path, fmt: str) -> None:
    code, _, _ = run(
        "search", "доставка", "--store", str(indexed), "--mode", "bm25", "--format", fmt
    )
    assert code == EXIT_OK


def test_search_without_an_index_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run("search", "доставка", "--store", str(tmp_path))
    assert code == EXIT_USAGE and "narezka index" in err


def test_strict_index_and_sync_exit_1_when_a_file_is_skipped(tmp_path: Path) -> None:
    corpus = copy_examples(tmp_path / "kb")
    (corpus / "broken.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    code, _, err = run("index", str(corpus), "--embedder", "hash")
    assert code == EXIT_OK and "broken.md" in err
    code, _, err = run("index", str(corpus), "--embedder", "hash", "--strict")
    assert code == EXIT_NOTHING and "broken.md" in err
    assert run("sync", str(corpus))[0] == EXIT_OK
    code, _, err = run("sync", str(corpus), "--strict")
    assert code == EXIT_NOTHING and "broken.md" in err


def test_index_takes_the_splitting_options_chunk_takes(tmp_path: Path) -> None:
    corpus = copy_examples(tmp_path / "kb")
    code, _, err = run(
        "index", str(corpus), "--embedder", "hash", "--levels", "2-3", "--min-chars", "90",
        "--no-breadcrumbs", "--tokenizer", "cl100k_base", "--unit", "tokens", "--size", "200",
    )  # fmt: skip
    assert code == EXIT_OK, err
    meta = read_index_meta(corpus / ".narezka")
    assert meta["params"]["levels"] == [2, 3] and meta["params"]["min_chars"] == 90
    assert '"breadcrumbs": false' in meta["fingerprint"]


def _split_option_names(command: click.Command) -> set[str]:
    names = {opt for p in command.params if isinstance(p, click.Option) for opt in p.opts}
    return {n for n in names if n not in ("--help", "-h")}


def test_chunk_index_and_eval_share_the_splitting_options() -> None:
    from narezka.cli.common import split_options

    @split_options()
    def probe(**_: object) -> None: ...

    shared = _split_option_names(click.command()(probe))
    assert {"--levels", "--min-chars", "--separator", "--tokenizer", "--breadcrumbs"} <= shared
    ctx = click.Context(cli)
    commands = {name: cli.get_command(ctx, name) for name in ("chunk", "index", "eval")}
    for name, command in commands.items():
        assert command is not None, name
        missing = shared - _split_option_names(command)
        if name == "eval":
            missing -= {"--strategy", "-s"}  # eval names strategies in its --strategies specs
        assert not missing, f"{name} lacks {sorted(missing)}"


def test_cache_stats_creates_nothing(tmp_path: Path) -> None:
    code, out, _ = run("cache", "stats", "--store", str(tmp_path))
    assert code == EXIT_OK and json.loads(out)["entries"] == 0
    assert json.loads(out)["contexts"]["entries"] == 0
    assert list(tmp_path.iterdir()) == []
    code, out, _ = run("cache", "clear", "--store", str(tmp_path), "--contexts", "all")
    assert (code, out.strip()) == (EXIT_OK, "removed 0 contexts")
    assert list(tmp_path.iterdir()) == []


def test_cache_stats_and_clear_cover_llm_contexts(tmp_path: Path) -> None:
    from narezka.enrich.context_cache import ContextCache, context_cache_file, context_key
    from narezka.index.layout import cache_file

    with ContextCache(context_cache_file(cache_file(tmp_path))) as cache:
        for i, model in enumerate(["ollama:a", "ollama:a", "openai:b@http://x/v1"]):
            cache.put(context_key(model, "doc", f"chunk {i}"), model, f"context {i}", 10)
    code, out, _ = run("cache", "stats", "--store", str(tmp_path))
    assert code == EXIT_OK
    assert json.loads(out)["contexts"]["by_model"] == {"ollama:a": 2, "openai:b@http://x/v1": 1}
    code, out, _ = run("cache", "clear", "--store", str(tmp_path), "--contexts", "ollama:a")
    assert out.strip() == "removed 2 contexts"
    code, out, _ = run("cache", "clear", "--store", str(tmp_path), "--contexts", "all")
    assert out.strip() == "removed 1 contexts"
    _, out, _ = run("cache", "stats", "--store", str(tmp_path))
    assert json.loads(out)["contexts"]["entries"] == 0


def test_a_bad_index_option_leaves_nothing_behind(tmp_path: Path) -> None:
    corpus = copy_examples(tmp_path / "kb")
    for args in (["--embedder", "nope"], ["--overlap", "5000"], ["--levels", "x"]):
        code, _, err = run("index", str(corpus), *args)
        assert code == EXIT_USAGE, (args, err)
    assert not (corpus / ".narezka").exists()


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "narezka", *args]


def test_a_closed_pipe_ends_quietly_with_0() -> None:
    proc = subprocess.Popen(
        _cli("chunk", str(EXAMPLES), "--format", "jsonl", "--size", "100"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == EXIT_OK
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_ctrl_c_exits_130_and_what_was_stored_stays_searchable(tmp_path: Path) -> None:
    corpus = copy_examples(tmp_path / "kb")
    # Enough work (many sections per file, many files) that the run is still going when
    # the signal arrives, on a fast machine too.
    page = "".join(
        f"## Раздел {j}\n\nДоставка и возврат товаров, пункт {j}.\n\n" for j in range(60)
    )
    for i in range(1500):
        (corpus / f"extra-{i:04}.md").write_text(f"# Страница {i}\n\n{page}", encoding="utf-8")
    stderr = tmp_path / "stderr.txt"
    with stderr.open("wb") as err_file:
        proc = subprocess.Popen(
            _cli("index", str(corpus), "--embedder", "hash"),
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            # A job started in the background of a non-interactive shell (as CI may start
            # the suite) inherits SIGINT ignored; Ctrl-C reaches a terminal's foreground.
            preexec_fn=_default_sigint,
        )
        deadline = time.monotonic() + 60
        while _committed_files(corpus) < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before the signal: give it more work"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == EXIT_INTERRUPTED
    assert "Traceback" not in stderr.read_text(encoding="utf-8", errors="replace")
    code, out, err = run("search", "доставка", "--store", str(corpus), "--mode", "bm25")
    assert code == EXIT_OK, (out, err)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _committed_files(corpus: Path) -> int:
    """Files the running index has committed so far (0 before its manifest exists)."""
    manifest = corpus / ".narezka" / "data-1" / "manifest.sqlite"
    if not manifest.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{manifest}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT COUNT(*) FROM files").fetchone()[0])
    except sqlite3.Error:  # created but not yet set up
        return 0


def _hold(corpus: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process holding the index open for ``seconds`` (prints once it holds it)."""
    code = (
        "import time; from narezka import Index\n"
        f"index = Index.open({str(corpus)!r}); index.search('доставка', mode='bm25')\n"
        f"print('holding', flush=True); time.sleep({seconds}); index.close()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
    return proc


def test_search_waits_for_a_process_that_holds_the_index(indexed: Path) -> None:
    holder = _hold(indexed, 1.5)
    try:
        code, _, err = run("search", "доставка", "--store", str(indexed), "--mode", "bm25")
        assert code == EXIT_OK, err
    finally:
        holder.wait(timeout=30)
        assert holder.stdout is not None
        holder.stdout.close()


def test_search_says_who_holds_the_index_when_it_cannot_wait(indexed: Path) -> None:
    holder = _hold(indexed, 5)
    try:
        code, _, err = run(
            "search", "доставка", "--store", str(indexed), "--mode", "bm25", "--wait", "0"
        )
        assert code == EXIT_USAGE and f"PID {holder.pid}" in err
    finally:
        holder.kill()
        holder.wait(timeout=30)
        assert holder.stdout is not None
        holder.stdout.close()


def test_commands_read_narezka_toml_then_the_environment_then_flags(tmp_path: Path) -> None:
    corpus = copy_examples(tmp_path / "kb")
    (corpus / "narezka.toml").write_text(
        '[settings]\nstrategy = "sentences"\nunit = "chars"\nsize = 300\nembedder = "hash"\n',
        encoding="utf-8",
    )
    runner = CliRunner()
    result = runner.invoke(cli, ["index", str(corpus)], env={"NAREZKA_SIZE": "250"})
    assert result.exit_code == EXIT_OK, result.stderr
    meta = read_index_meta(corpus / ".narezka")
    assert (meta["strategy"], meta["params"]["size"], meta["params"]["unit"]) == (
        "sentences",
        250,
        "chars",
    )
    result = runner.invoke(
        cli, ["index", str(corpus), "--size", "200"], env={"NAREZKA_SIZE": "250"}
    )
    assert (
        result.exit_code == EXIT_OK
        and read_index_meta(corpus / ".narezka")["params"]["size"] == 200
    )
    chunked = runner.invoke(cli, ["chunk", str(corpus), "--format", "jsonl"], env={})
    assert chunked.exit_code == EXIT_OK
    rows = [json.loads(line) for line in chunked.stdout.splitlines()]
    assert rows and {r["strategy"] for r in rows} == {"sentences"}
    assert max(r["chars"] for r in rows) <= 300
    bad = runner.invoke(cli, ["index", str(corpus)], env={"NAREZKA_SIZE": "lots"})
    assert bad.exit_code == EXIT_USAGE and "environment: size" in bad.stderr


def test_a_file_name_that_is_not_utf8_is_skipped_by_index_and_chunk(tmp_path: Path) -> None:
    """Such a name once crashed ``index`` (a point id is a UUID of the UTF-8 source id) and
    ``chunk --format jsonl`` with a traceback; now it is one skipped file, named."""
    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "good.md").write_text("# Хорошо\n\nВсё в порядке.\n", encoding="utf-8")
    with open(os.fsencode(corpus) + b"/caf\xe9.md", "wb") as f:
        f.write(b"# Cafe\n\ntext\n")
    code, out, err = run("index", str(corpus), "--embedder", "hash", "--json")
    assert code == EXIT_OK, err
    report = json.loads(out)
    assert report["files_new"] == 1
    assert [s["path"] for s in report["skipped"]] == ["caf\\xe9.md"]
    assert "not valid UTF-8" in report["skipped"][0]["problem"]
    code, out, err = run("search", "порядке", "--store", str(corpus), "--format", "jsonl")
    assert code == EXIT_OK
    assert {json.loads(line)["file_path"] for line in out.splitlines()} == {"good.md"}
    code, out, err = run("chunk", str(corpus), "--format", "jsonl", "--strict")
    assert code == 1 and "caf\\xe9.md" in err
    assert [json.loads(line)["source"] for line in out.splitlines()] == ["good.md"]


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("NAREZKA_JOBS", "0", "NAREZKA_JOBS must be above 0, not '0'"),
        ("NAREZKA_JOBS", "-1", "NAREZKA_JOBS must be above 0, not '-1'"),
        ("NAREZKA_JOBS", "abc", "NAREZKA_JOBS must be an integer, not 'abc'"),
        ("NAREZKA_MAX_FILE_MB", "lots", "NAREZKA_MAX_FILE_MB must be a number, not 'lots'"),
    ],
)
def test_a_bad_variable_is_a_usage_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, problem: str
) -> None:
    (tmp_path / "a.md").write_text("# Заголовок\n\nТекст.\n", encoding="utf-8")
    monkeypatch.setenv(name, value)
    code, out, err = run("chunk", str(tmp_path))
    assert code == EXIT_USAGE and not out
    assert err == f"Error: {problem}\n"  # one line, no traceback


def test_a_bad_variable_is_named_before_a_command_module_loads() -> None:
    # A fresh interpreter: importing a command's module reads the environment (the native
    # core's NAREZKA_PURE), which in a test process has long happened.
    done = subprocess.run(
        [sys.executable, "-m", "narezka", "chunk", "."],
        capture_output=True,
        text=True,
        env={**os.environ, "NAREZKA_JOBS": "0"},
        check=False,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr == "Error: NAREZKA_JOBS must be above 0, not '0'\n"
