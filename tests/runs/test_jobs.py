"""``--jobs``: files chunked by worker processes give what one process gives, byte for byte;
a file that fails or kills its worker is named and the others go on; Ctrl-C and kill -9
leave no worker behind."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

from narezka import Index
from narezka.api.indexing import index
from narezka.cli import cli
from narezka.errors import BinaryFileError
from narezka.index.syncing import Progress
from narezka.runs import workers
from narezka.runs.chunking import (
    ChunkReport,
    ChunkTask,
    FileOutcome,
    _files,
    chunk_pool,
    make_params,
)
from narezka.runs.workers import PARALLEL_MIN_BYTES, auto_jobs, default_jobs
from narezka.settings import Settings
from narezka.split import get_strategy
from narezka.split.headings import HeadingsStrategy
from narezka.tokens import TokenCounter, get_counter
from narezka.types import Chunk, Document

from conftest import SHARED, TEST_DATA
from corpus_gen import write_corpus

MD_CORPUS = SHARED / "data" / "md_corpus"
# Set at collection, before any fork server starts, so workers inherit it: who is the parent.
os.environ.setdefault("NAREZKA_TEST_MAIN_PID", str(os.getpid()))
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


class FailingHeadings(HeadingsStrategy):
    """``headings``, except that it raises on ``boom.md`` and kills its worker process on
    ``crash.md`` (the way a crash in a C extension would)."""

    name: ClassVar[str] = "headings"

    def split(self, doc: Document, params: object, counter: TokenCounter) -> list[Chunk]:
        if doc.source.endswith("boom.md"):
            raise RuntimeError("a bug in a strategy")
        in_worker = os.environ["NAREZKA_TEST_MAIN_PID"] != str(os.getpid())
        if doc.source.endswith("crash.md") and in_worker:
            os._exit(3)
        return super().split(doc, params, counter)  # type: ignore[arg-type]


def real_corpus(dest: Path, per_language: int = 25) -> Path:
    """A slice of md_corpus (Russian and English, nested folders) plus the awkward files:
    a binary one, an empty one, whitespace only, CRLF with a BOM, a cp1251 legacy file.
    Without the shared corpus (a user's clone) the same shape is generated."""
    dest.mkdir(parents=True, exist_ok=True)
    if not MD_CORPUS.is_dir():
        write_corpus(dest, per_language)
    for language in ("ru", "en") if MD_CORPUS.is_dir() else ():
        files = sorted((MD_CORPUS / language).rglob("*.md"))
        step = max(1, len(files) // per_language)
        for file in files[::step][:per_language]:
            target = dest / file.relative_to(MD_CORPUS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target)
    for name in ("crlf_bom.md", "legacy_cp1251.md", "empty.md", "whitespace_only.md"):
        shutil.copyfile(TEST_DATA / name, dest / name)
    (dest / "ru" / "picture.md").write_bytes(PNG)
    return dest


def outcomes(files: list[tuple[Path, Path]], jobs: int) -> list[FileOutcome]:
    strategy, counter = FailingHeadings(), get_counter("chars", "cl100k_base")
    tasks = [ChunkTask(root, file, make_params(size=300)) for root, file in files]
    with chunk_pool(strategy, counter, jobs) as pool:
        assert pool.jobs == jobs
        # What it cost differs from run to run; everything else must not.
        return [dataclasses.replace(o, seconds=0.0) for o in pool.map(tasks)]


def same(outcome: FileOutcome) -> tuple[FileOutcome, type | None, str]:
    """An outcome in a form that compares (exceptions compare by identity)."""
    error = outcome.error
    return dataclasses.replace(outcome, error=None), type(error) if error else None, str(error)


def listed(corpus: Path) -> list[tuple[Path, Path]]:
    return list(_files([corpus], HeadingsStrategy.include, (), ChunkReport()))


def test_chunk_with_jobs_prints_byte_for_byte_what_one_process_prints(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb")
    runs = []
    for jobs in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-m", "narezka", "chunk", str(corpus), "--format", "jsonl",
             "--size", "300", "--stats", "--strict", "--jobs", jobs],
            capture_output=True,
            check=False,
        )  # fmt: skip
        runs.append(proc)
    one, two = runs
    assert one.stdout.count(b"\n") > 100
    assert two.stdout == one.stdout
    assert two.stderr == one.stderr
    # The binary file is named, the run went on, and --strict turns the skip into exit 1.
    assert b"ru/picture.md: binary file" in one.stderr
    assert one.returncode == two.returncode == 1


def test_a_file_that_raises_in_a_worker_is_named_and_the_others_are_chunked(
    tmp_path: Path,
) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=4)
    (corpus / "boom.md").write_text("# Boom\n\nText.\n", encoding="utf-8")
    files = listed(corpus)
    serial, parallel = outcomes(files, 1), outcomes(files, 2)
    assert [same(o) for o in parallel] == [same(o) for o in serial]
    failed = {Path(o.source).name: o.problem for o in parallel if o.problem}
    assert failed.keys() == {"boom.md", "picture.md"}
    assert failed["boom.md"] == "chunking failed: RuntimeError: a bug in a strategy"
    assert "binary file" in str(failed["picture.md"])
    chunked = [o for o in parallel if o.result is not None and o.result.chunks]
    assert len(chunked) == len(files) - 4  # boom, the picture, empty and whitespace-only


def test_a_worker_that_dies_is_named_and_the_others_are_chunked(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=6)
    (corpus / "ru" / "crash.md").write_text("# Crash\n\nText.\n", encoding="utf-8")
    files = listed(corpus)
    parallel = outcomes(files, 2)
    assert [o.source for o in parallel] == [f.relative_to(r).as_posix() for r, f in files]
    died = [o for o in parallel if o.problem and "worker died" in o.problem]
    assert [o.source for o in died] == ["ru/crash.md"]
    # Every other file came through as it does in one process (which never crashes).
    serial = {o.source: same(o) for o in outcomes(files, 1)}
    assert all(same(o) == serial[o.source] for o in parallel if o.source != "ru/crash.md")


def test_index_with_jobs_stores_what_one_process_stores(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=10)
    reports, stored = [], []
    for jobs in (1, 2):
        store = tmp_path / f"store-{jobs}"
        reports.append(index(corpus, store_dir=store, embedder="hash", jobs=jobs))
        with Index.open(store) as held:
            stored.append(sorted((h.file_path, h.start, h.end, h.text) for h in held.chunks()))
    one, two = reports
    assert stored[0] == stored[1] and len(stored[0]) > 50
    assert [(type(e), str(e)) for e in two.skipped] == [(type(e), str(e)) for e in one.skipped]
    assert [Path(e.path).name for e in one.skipped] == ["picture.md"]
    assert two.warnings == one.warnings
    assert (two.files_new, two.chunks_embedded) == (one.files_new, one.chunks_embedded)


def test_sync_reports_each_file_s_stages_in_order_and_every_byte_once(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=5)
    stages: list[tuple[str, str]] = []
    total: list[int] = []
    done: list[int] = []
    progress = Progress(
        on_total=total.append, on_bytes=done.append, on_stage=lambda *s: stages.append(s)
    )
    settings = Settings().replace(embedder="hash")
    with Index.create(corpus, settings, store=tmp_path / "store") as ix:
        report = ix.sync(progress=progress, jobs=2)
    assert sum(done) == total[0] == sum(f.stat().st_size for f in corpus.rglob("*.md"))
    per_file: dict[str, list[str]] = {}
    for stage, source in stages:
        per_file.setdefault(source, []).append(stage)
    assert per_file["ru/picture.md"] == ["chunking"]  # skipped: never embedded
    assert [Path(e.path).name for e in report.skipped] == ["picture.md"]
    written = [s for s, kinds in per_file.items() if kinds == ["chunking", "embedding", "writing"]]
    assert len(written) == report.files_new
    # Files are taken in corpus order: the stages of one file end before the next begins.
    sources = [source for _, source in stages]
    assert sources == sorted(sources, key=sources.index)


def test_ctrl_c_with_workers_exits_130_and_leaves_no_process(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=60)
    proc = subprocess.Popen(
        [sys.executable, "-m", "narezka", "index", str(corpus), "--embedder", "hash",
         "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert _wait_for_workers(proc.pid), "the workers never started"
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends: the whole group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert b"Traceback" not in err
    assert _gone(proc.pid)


def test_kill_9_leaves_no_worker_behind(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=60)
    proc = subprocess.Popen(
        [sys.executable, "-m", "narezka", "index", str(corpus), "--embedder", "hash",
         "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    assert _wait_for_workers(proc.pid), "the workers never started"
    proc.kill()
    proc.wait()
    assert _gone(proc.pid)


def _session(sid: int) -> list[int]:
    """Processes of the session ``sid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry))
    return found


def _wait_for_workers(sid: int, timeout: float = 60) -> bool:
    # The main process, the fork server, the resource tracker and at least one worker.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(_session(sid)) >= 4:
            return True
        time.sleep(0.05)
    return False


def _gone(sid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _session(sid):
            return True
        time.sleep(0.1)
    return False


def test_semantic_and_small_inputs_stay_in_one_process() -> None:
    counter = get_counter("chars", "cl100k_base")
    semantic = get_strategy("semantic", embed=lambda texts: texts)  # type: ignore[arg-type, return-value]
    with chunk_pool(semantic, counter, 2) as pool:
        assert pool.jobs == 1
    small = workers.PARALLEL_MIN_BYTES - 1
    with chunk_pool(get_strategy("headings"), counter, None, work_bytes=small) as pool:
        assert pool.jobs == 1
    with chunk_pool(get_strategy("headings"), counter, 2, work_bytes=small) as pool:
        assert pool.jobs == 2  # asked for explicitly


def test_narezka_jobs_is_read_at_the_top_not_by_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = get_counter("chars", "cl100k_base")
    small = workers.PARALLEL_MIN_BYTES - 1
    monkeypatch.setenv("NAREZKA_JOBS", "2")
    with chunk_pool(get_strategy("headings"), counter, None, work_bytes=small) as pool:
        assert pool.jobs == 1  # the stage reads no variable: the top hands it down as jobs
    with chunk_pool(get_strategy("headings"), counter, 2, work_bytes=small) as pool:
        assert pool.jobs == 2


def test_narezka_jobs_reaches_the_chunk_run_as_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import narezka.runs as runs

    asked: list[int | None] = []
    real = runs.chunk_documents

    def counted(*args: object, jobs: int | None = None, **kwargs: object) -> ChunkReport:
        asked.append(jobs)
        return real(*args, jobs=jobs, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runs, "chunk_documents", counted)
    page = str(TEST_DATA / "empty.md")
    monkeypatch.setenv("NAREZKA_JOBS", "2")
    assert CliRunner().invoke(cli, ["chunk", page]).exit_code in (0, 1)
    assert CliRunner().invoke(cli, ["chunk", page, "--jobs", "1"]).exit_code in (0, 1)
    monkeypatch.delenv("NAREZKA_JOBS")
    assert CliRunner().invoke(cli, ["chunk", page]).exit_code in (0, 1)
    assert asked == [2, 1, None]  # the variable as --jobs 2; the flag wins


def test_narezka_jobs_reaches_an_index_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import narezka.index.sync_steps as sync_steps

    asked: list[int | None] = []
    real = sync_steps.sync

    def counted(*args: object, jobs: int | None = None, **kwargs: object) -> object:
        asked.append(jobs)
        return real(*args, jobs=jobs, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sync_steps, "sync", counted)
    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Доставка\n\nКурьер приезжает утром.\n", encoding="utf-8")
    monkeypatch.setenv("NAREZKA_JOBS", "3")
    with Index.create(corpus, Settings(embedder="hash")) as ix:
        ix.sync()
        ix.sync(jobs=1)
    assert asked == [3, 1]


def test_default_jobs_is_the_cores_this_process_may_use() -> None:
    assert default_jobs() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("command", ["chunk", "index", "sync", "eval"])
def test_jobs_is_an_option_of_every_command_that_chunks(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert "--jobs" in result.stdout


def test_jobs_below_one_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["chunk", str(TEST_DATA / "empty.md"), "--jobs", "0"])
    assert result.exit_code == 2
    assert "--jobs" in result.stderr


def test_index_json_with_workers_prints_only_the_report_on_stdout(tmp_path: Path) -> None:
    corpus = real_corpus(tmp_path / "kb", per_language=5)
    result = CliRunner().invoke(
        cli, ["index", str(corpus), "--embedder", "hash", "--jobs", "2", "--json"]
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["files_new"] == len(list(corpus.rglob("*.md"))) - 1  # the picture skipped
    assert "picture.md" in result.stderr


def test_a_file_error_crosses_a_process_boundary_with_its_kind() -> None:
    error = BinaryFileError("/kb/logo.md", "binary file (PNG image), skipped")
    back = pickle.loads(pickle.dumps(error))
    assert (type(back), back.path, back.problem, str(back)) == (
        BinaryFileError, error.path, error.problem, str(error)
    )  # fmt: skip


def test_auto_jobs_is_one_process_below_the_break_even_then_one_more_per_step() -> None:
    step = PARALLEL_MIN_BYTES
    assert [auto_jobs(b, 8) for b in (0, 1, step - 1)] == [1, 1, 1]
    assert [auto_jobs(b, 8) for b in (step, 2 * step - 1, 2 * step, 7 * step)] == [2, 2, 3, 8]
    assert auto_jobs(100 * step, 8) == 8  # never more than the cores
    assert auto_jobs(100 * step, 1) == auto_jobs(step, 1) == 1
    assert auto_jobs(None, 4) == 4  # size unknown: the cores
    assert auto_jobs(None, 0) == auto_jobs(0, 0) == 1


def test_the_default_pool_follows_auto_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NAREZKA_JOBS", raising=False)
    counter = get_counter("chars", "cl100k_base")
    for size in (PARALLEL_MIN_BYTES - 1, 3 * PARALLEL_MIN_BYTES):
        with chunk_pool(get_strategy("headings"), counter, None, work_bytes=size) as pool:
            assert pool.jobs == auto_jobs(size, default_jobs())
