"""The LLM context step inside ``index``/``sync``/``chunk``/``eval``, against a local fake of
the Ollama chat API (no live LLM was available): nothing indexed is lost when the LLM fails,
an unchanged file asks nothing, another model re-embeds, the contract holds."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from fake_llm import LLMState, fake_llm
from narezka import Index, Settings
from narezka.cli import cli
from narezka.embed.remote import RetryPolicy
from narezka.enrich import llm_client
from narezka.index import layout

from conftest import copy_examples

FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02, timeout=2.0)
FILES = ("delivery.md", "faq.md", "orders.md")


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_client, "DEFAULT_RETRY", FAST)


@pytest.fixture
def state() -> LLMState:
    return LLMState()


@pytest.fixture
def url(state: LLMState) -> Iterator[str]:
    with fake_llm(state) as base:
        yield base


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    full = copy_examples(tmp_path / "full")
    small = tmp_path / "kb"
    small.mkdir()
    for name in FILES:
        (small / name).write_text((full / name).read_text(encoding="utf-8"), encoding="utf-8")
    return small


def settings(spec: str | None, size: int = 300) -> Settings:
    return Settings(embedder="hash", context_llm=spec, size=size, unit="chars")


def stored(kb: Path) -> list[str]:
    """The LLM context of every stored chunk ('' for none), read back from the index."""
    return [str(r.get("llm_context") or "") for r in payloads(kb)]


def payloads(kb: Path) -> list[dict[str, object]]:
    with Index.open(kb) as index:
        return [hit.record.to_dict() for hit in index.chunks()]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_index_prepends_context_records_the_model_and_a_resync_asks_nothing(
    kb: Path, url: str, state: LLMState
) -> None:
    spec = f"ollama:ctx-model@{url}"
    with Index.create(kb, settings(spec)) as index:
        report = index.sync()
    chunks = report.context["chunks"]
    assert chunks > len(FILES)
    assert report.context["generated"] == len(state.chat_requests()) == chunks
    assert report.context["with_context"] + report.context["dropped"] == chunks
    meta = layout.read_meta(kb / ".narezka")
    assert meta["settings"]["context_llm"] == spec
    assert (kb / ".narezka" / layout.CONTEXT_CACHE_NAME).is_file()
    records = payloads(kb)
    with_context = [r for r in records if str(r.get("llm_context", "")).startswith("Part of")]
    assert len(with_context) == report.context["with_context"]
    for record in records:  # the stored text stays the exact span
        source = (kb / str(record["file_path"])).read_text(encoding="utf-8")
        assert source[int(record["start"]) : int(record["end"])] == record["text"]
        assert int(record["embed_chars"]) <= 300

    calls = len(state.chat_requests())
    with Index.open(kb) as index:
        again = index.sync()
    assert len(state.chat_requests()) == calls
    assert again.files_unchanged == len(FILES) and again.chunks_embedded == 0

    # A touched but unchanged file is re-read: its contexts come from the cache.
    (kb / "faq.md").write_text((kb / "faq.md").read_text(encoding="utf-8"), encoding="utf-8")
    with Index.open(kb) as index:
        touched = index.sync()
    assert len(state.chat_requests()) == calls
    assert touched.context["cached"] == touched.context["chunks"] > 0
    assert touched.chunks_embedded == 0


def test_server_down_indexes_everything_without_context_and_the_next_sync_fills_it_in(
    kb: Path, url: str, state: LLMState
) -> None:
    down = f"ollama:ctx-model@http://127.0.0.1:{closed_port()}"
    with Index.create(kb, settings(down)) as index:
        report = index.sync()
    assert report.files_new == len(FILES) and not report.skipped
    assert report.context["with_context"] == 0
    assert report.context["failed"] == 1
    assert report.context["not_asked"] == report.context["chunks"] - 1
    assert any("delivery.md: 1 chunk(s) indexed without context" in w for w in report.warnings)
    plain = stored(kb)
    assert len(plain) == report.context["chunks"]
    assert not any(plain)

    # The server is up now (same model name, another address): the same spec is what the
    # index records, so point it at the fake the way a user would restart Ollama there.
    up = f"ollama:ctx-model@{url}"
    with Index.create(kb, settings(up)) as index:
        filled = index.sync()
    assert filled.context["with_context"] == filled.context["chunks"] - filled.context["dropped"]
    assert filled.context["generated"] > 0
    after = stored(kb)
    assert len(after) == len(plain)
    assert sum(text.startswith("Part of") for text in after) == filled.context["with_context"]


def test_a_failed_chunk_is_asked_again_on_the_next_sync(
    kb: Path, url: str, state: LLMState
) -> None:
    spec = f"ollama:ctx-model@{url}"
    state.faults = [500, 500]  # the first chunk's two attempts
    with Index.create(kb, settings(spec)) as index:
        first = index.sync()
    assert first.context["failed"] == 1
    assert any("HTTP 500" in w for w in first.warnings)
    calls = len(state.chat_requests())
    with Index.open(kb) as index:
        second = index.sync()
    # Only the file with the failure was re-read; one request, one chunk re-embedded.
    assert second.files_unchanged == len(FILES) - 1 and second.files_changed == 1
    assert len(state.chat_requests()) == calls + 1
    assert second.chunks_embedded == 1
    assert second.context["failed"] == 0
    with Index.open(kb) as index:
        third = index.sync()
    assert third.files_unchanged == len(FILES)


def test_another_context_model_re_embeds_and_off_goes_back(
    kb: Path, url: str, state: LLMState
) -> None:
    state.models.add("other")
    with Index.create(kb, settings(None)) as index:
        plain = index.sync()
    with Index.create(kb, settings(f"ollama:ctx-model@{url}")) as index:
        first = index.sync()
    assert first.files_changed == len(FILES) and first.chunks_embedded > 0
    state.answer = lambda doc, passage: "Другой контекст."
    with Index.create(kb, settings(f"ollama:other@{url}")) as index:
        second = index.sync()
    assert second.chunks_embedded == second.context["with_context"] > 0
    texts = stored(kb)
    assert not any(t.startswith("Part of") for t in texts)  # nothing of the old model left
    assert sum(t.startswith("Другой контекст.") for t in texts) == second.context["with_context"]
    with Index.create(kb, settings("off")) as index:
        back = index.sync()
    assert back.files_changed == len(FILES) and not back.context
    assert len(stored(kb)) == plain.chunks_embedded
    assert not any(stored(kb))


def test_index_cli_prints_the_estimate_and_the_context_row(kb: Path, url: str) -> None:
    runner = CliRunner()
    args = ["index", str(kb), "--embedder", "hash", "--size", "300", "--unit", "chars"]
    result = runner.invoke(cli, [*args, "--context-llm", f"ollama:ctx-model@{url}"])
    assert result.exit_code == 0, result.output
    assert "context (ollama:ctx-model): " in result.output
    assert " 0 cached, " in result.output and "to generate" in result.output
    assert "LLM context" in result.output
    again = runner.invoke(cli, ["sync", str(kb), "--json"])
    assert again.exit_code == 0, again.output
    assert "to generate" not in again.output  # nothing changed: no estimate line
    data = json.loads(again.output[again.output.index("{") :])
    assert data["context"]["chunks"] == 0  # nothing changed: nothing chunked, nothing asked


def test_chunk_output_with_context_passes_the_shared_checker(
    kb: Path, url: str, tmp_path: Path, check_chunks_tool: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAREZKA_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(
        cli,
        [
            "chunk", str(kb), "--size", "300", "--format", "jsonl",
            "--context-llm", f"ollama:ctx-model@{url}",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert sum("llm_context" in c["meta"] for c in lines) > len(lines) // 2
    assert (tmp_path / "cache" / layout.CONTEXT_CACHE_NAME).is_file()
    out = tmp_path / "chunks.jsonl"
    out.write_text(result.stdout, encoding="utf-8")
    check = [sys.executable, str(check_chunks_tool), str(kb), str(out), "--size", "300"]
    checked = subprocess.run([*check, "--unit", "chars"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.strip().splitlines()[-1].startswith("ok:")


def test_eval_with_context_asks_once_and_a_rerun_reads_the_cache(
    kb: Path, url: str, state: LLMState, tmp_path: Path
) -> None:
    from narezka.api.evaluating import evaluate

    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        json.dumps({"q": "сколько стоит курьер до 1 кг", "must_contain": ["290 ₽"]}) + "\n",
        encoding="utf-8",
    )
    spec = f"ollama:ctx-model@{url}"
    cache = tmp_path / "cache" / "embeddings.sqlite"

    def run() -> object:
        return evaluate(
            kb, golden, strategies="headings", embedder="hash", ks=(1, 3), cache_path=cache,
            params={"size": 300, "unit": "chars"}, context_llm=spec,
        )  # fmt: skip

    first = run()
    calls = len(state.chat_requests())
    assert calls > len(FILES)
    assert (cache.parent / layout.CONTEXT_CACHE_NAME).is_file()  # beside eval's embeddings
    second = run()
    assert len(state.chat_requests()) == calls
    assert second.strategies[0].hits == first.strategies[0].hits  # type: ignore[attr-defined]


def test_sync_context_llm_changes_the_recorded_model_or_switches_it_off(
    kb: Path, url: str, state: LLMState
) -> None:
    state.models.add("other")
    runner = CliRunner()
    args = ["index", str(kb), "--embedder", "hash", "--size", "300", "--unit", "chars"]
    assert runner.invoke(cli, [*args, "--context-llm", f"ollama:ctx-model@{url}"]).exit_code == 0
    state.answer = lambda doc, passage: "Другой контекст, другая модель."
    other = runner.invoke(cli, ["sync", str(kb), "--context-llm", f"ollama:other@{url}"])
    assert other.exit_code == 0, other.output
    assert "; LLM context on " in other.output and "(0 failed, 0 not asked)" in other.output
    home = kb / ".narezka"
    assert layout.read_meta(home)["settings"]["context_llm"] == f"ollama:other@{url}"
    assert {c.split(",")[0] for c in stored(kb) if c} == {"Другой контекст"}
    off = runner.invoke(cli, ["sync", str(kb), "--context-llm", "off", "--json"])
    assert off.exit_code == 0, off.output
    assert layout.read_meta(home)["settings"]["context_llm"] is None
    assert not any(stored(kb))


def test_a_missing_ollama_package_fails_before_anything_is_written(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "ollama", None)  # import ollama raises ImportError
    with pytest.raises(MissingDependencyError, match="ollama"):
        Index.create(kb, settings("ollama:qwen2.5:3b"))
    assert not (kb / ".narezka").exists()
