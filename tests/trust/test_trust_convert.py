"""Trust audit (#38), conversion: files that explode on conversion, huge files, PDF text
objects by the ten thousand, invoices taken for running headers.

Each probe builds its hostile file (``trust_bombs``), runs the real ``narezka index`` (or a
server) over it beside the example knowledge base, and asserts what a trustworthy tool does:
the run ends with its documented exit code (0: files it could not read are named and
skipped), the file is named with the limit it broke, every other file is indexed and
searchable, and the whole process tree stays under 1 GB and 60 s. A run that passes either
bound is killed by the probe and fails it (before the fix, each of these ran for minutes or
grew past 3 GB).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import trust_bombs as bombs

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "kb"
SRC = Path(__import__("narezka").__file__).resolve().parents[1]
GB = 1 << 30
MEMORY_BOUND = GB
SECONDS_BOUND = 60.0


@dataclass
class Run:
    code: int | None
    out: str
    peak: int
    """The largest sum of resident memory of the process and its descendants seen."""
    seconds: float
    killed: str = ""


def _tree_rss(root: int) -> int:
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    tree, total = [root], 0
    while tree:
        pid = tree.pop()
        total += rss.get(pid, 0)
        tree.extend(p for p, parent in parents.items() if parent == pid)
    return total


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "NO_COLOR": "1", **(extra or {})}


def run_bounded(args: list[str], env: dict[str, str] | None = None) -> Run:
    """``python -m narezka ARGS`` watched: killed (and the run failed) past 1 GB or 60 s."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "narezka", *args],
        env=_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    peak, killed = 0, ""
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc.pid))
        if peak > MEMORY_BOUND:
            killed = f"over {MEMORY_BOUND >> 20} MB"
        elif time.monotonic() - start > SECONDS_BOUND:
            killed = f"over {SECONDS_BOUND:.0f} s"
        if killed:
            os.killpg(proc.pid, 9)
            break
        time.sleep(0.05)
    proc.wait()
    reader.join()
    proc.stdout.close()  # type: ignore[union-attr]
    out = b"".join(chunks).decode("utf-8", "replace")
    return Run(proc.returncode, out, peak, time.monotonic() - start, killed)


def corpus(tmp_path: Path, files: dict[str, bytes]) -> Path:
    """The example knowledge base with ``files`` added."""
    kb = tmp_path / "kb"
    shutil.copytree(EXAMPLES, kb, ignore=shutil.ignore_patterns(".narezka", "golden.jsonl"))
    for name, data in files.items():
        (kb / name).write_bytes(data)
    return kb


def assert_bounded(run: Run) -> None:
    assert not run.killed, f"killed {run.killed} (peak {run.peak >> 20} MB): {run.out[-2000:]}"
    assert run.peak < MEMORY_BOUND and run.seconds < SECONDS_BOUND
    assert run.code == 0, run.out[-3000:]


def found(kb: Path, query: str) -> list[str]:
    """The files of the top hits for ``query`` in the index of ``kb`` (bm25: exact words)."""
    from narezka import Index

    with Index.open(kb) as index:
        return [hit.file_path for hit in index.search(query, k=5, mode="bm25")]


def assert_the_rest_indexed(kb: Path) -> None:
    assert "returns.pdf" in found(kb, "Вскрытые чай и кофе")
    assert "warranty.docx" in found(kb, "гарантия")
    assert "delivery-zones.html" in found(kb, "зоны доставки")
    assert "faq.md" in found(kb, "Частые вопросы")


def _named(out: str, name: str) -> str:
    """The run's line naming ``name`` (its problem)."""
    flat = " ".join(out.split())
    at = flat.find(name + ":")
    assert at >= 0, f"{name} not named: {out[-3000:]}"
    return flat[at : at + 300]


QUICK_BOMBS = {
    "bomb-spaces.odt": bombs.odt_spaces(),
    "bomb-span.docx": bombs.docx_grid_span(),
    "bomb-strings.xlsx": bombs.xlsx_dimension(),
    "bomb-slides.pptx": bombs.pptx_repeated_slide(),
    "bomb-form.pdf": bombs.pdf_form_bomb(),
}


def test_small_files_that_explode_are_named_and_the_run_goes_on(tmp_path: Path) -> None:
    kb = corpus(tmp_path, QUICK_BOMBS)
    run = run_bounded(["index", str(kb), "--embedder", "hash"])
    assert_bounded(run)
    # Bombs defused at their source convert to what they hold; the others are stopped
    # by a limit, and named with it.
    assert "conversion" in _named(run.out, "bomb-form.pdf")
    assert "memory limit" in _named(run.out, "bomb-form.pdf")
    assert "4,000,000 characters" in _named(run.out, "bomb-strings.xlsx")
    assert "bomb-spaces.odt" in found(kb, "a b") or "bomb-spaces.odt:" not in run.out
    assert_the_rest_indexed(kb)

    # The file that broke a limit is remembered by its bytes: named again, not converted.
    again = run_bounded(["sync", str(kb)])
    assert_bounded(again)
    assert "remembered" in _named(again.out, "bomb-form.pdf")
    assert again.seconds < run.seconds + 5


def test_a_bomb_changed_is_converted_again(tmp_path: Path) -> None:
    from narezka.convert.failures import FailedConversions, failure_key
    from narezka.convert.options import DEFAULT

    kb = corpus(tmp_path, {"bomb-form.pdf": bombs.pdf_form_bomb()})
    assert_bounded(run_bounded(["index", str(kb), "--embedder", "hash"]))
    record = kb / ".narezka" / "converted.sqlite"
    with FailedConversions(record) as failed:
        assert failed.reason(failure_key(bombs.pdf_form_bomb(), ".pdf", DEFAULT)) is not None
        # The record holds hashes and reasons only.
        rows = failed._db.execute("SELECT key, reason FROM failed").fetchall()
    assert all("bomb" not in key for key, _ in rows)
    changed = bombs.pdf_form_bomb(depth=11)
    (kb / "bomb-form.pdf").write_bytes(changed)
    run = run_bounded(["sync", str(kb)])
    assert_bounded(run)
    assert "remembered" not in _named(run.out, "bomb-form.pdf")


def test_a_huge_text_file_and_a_sparse_one_are_named_not_read(tmp_path: Path) -> None:
    kb = corpus(tmp_path, {})
    for name, size in (("huge.txt", 6 * GB), ("sparse.md", 20 * GB)):
        with (kb / name).open("wb") as handle:
            handle.truncate(size)  # sparse: no disk used
    run = run_bounded(["index", str(kb), "--embedder", "hash"])
    assert_bounded(run)
    assert "6 GB, over the limit of 64 MB" in _named(run.out, "huge.txt")
    assert "20 GB, over the limit of 64 MB" in _named(run.out, "sparse.md")
    assert "free" not in run.out.lower()  # the free-space check did not refuse the run
    assert_the_rest_indexed(kb)


def test_the_size_limit_is_the_users_to_set(tmp_path: Path) -> None:
    kb = corpus(tmp_path, {"table.csv": b"a,b\n" + b"1,2\n" * 400_000})
    run = run_bounded(["index", str(kb), "--embedder", "hash"], {"NAREZKA_MAX_FILE_MB": "1"})
    assert_bounded(run)
    assert "over the limit of 1 MB for .csv files" in _named(run.out, "table.csv")


def test_invoices_one_a_page_are_indexed_not_taken_for_running_headers(tmp_path: Path) -> None:
    from narezka import Index, Settings

    pages = [
        bombs.text_lines([f"Invoice {1000 + i}", "Widgets, boxes of ten", f"Total {i * 17}.40"])
        for i in range(1, 13)
    ]
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "invoices.pdf").write_bytes(bombs.pdf_pages(pages))
    with Index.create(kb, Settings(embedder="hash")) as index:
        report = index.sync(jobs=1)
        assert report.chunks_embedded > 0, report.warnings
        hits = index.search("Invoice 1007", k=3, mode="bm25")
        assert hits and "Invoice 1007" in hits[0].text and "Total 119.40" in hits[0].text


def test_a_file_converted_to_no_text_is_named(tmp_path: Path) -> None:
    from narezka.discover.walk import read_document

    page = bombs.text_lines(["7"])  # a page number and nothing else, on every page
    (tmp_path / "numbers.pdf").write_bytes(bombs.pdf_pages([page, page]))
    _, notes = read_document(tmp_path, tmp_path / "numbers.pdf")
    assert any("numbers.pdf: converted to no text" in note for note in notes)


def test_pdf_text_extraction_is_linear_in_text_objects() -> None:
    from narezka.convert import convert

    seconds = {}
    for count in (5000, 20000):
        data = bombs.many_text_objects(count)
        start = time.process_time()
        result = convert(data, ".pdf", "many.pdf")
        seconds[count] = time.process_time() - start
        assert f"w{count - 1}" in result.markdown
    # Four times the objects: four times the time, not sixteen (before: 6.6 s for 10k,
    # 30 s for 20k).
    assert seconds[20000] < 10, seconds
    assert seconds[20000] < 8 * max(seconds[5000], 0.05), seconds


def test_the_server_answers_while_a_bomb_is_synced(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from serve.helpers import start_http, stop

    kb = corpus(tmp_path, {})
    assert_bounded(run_bounded(["index", str(kb), "--embedder", "hash"]))
    proc, base = start_http(kb, "--no-watch", env={"PYTHONPATH": _env()["PYTHONPATH"]})
    try:
        for name, data in QUICK_BOMBS.items():
            (kb / name).write_bytes(data)
        answer: dict[str, object] = {}

        def sync() -> None:
            answer["sync"] = httpx.post(f"{base}/sync", timeout=120).json()

        syncing = threading.Thread(target=sync)
        syncing.start()
        answered = 0
        while syncing.is_alive():
            response = httpx.get(f"{base}/search", params={"q": "чай", "k": 2}, timeout=30)
            assert response.status_code == 200
            answered += 1
            time.sleep(0.1)
        syncing.join()
        assert answered > 0 and proc.poll() is None
        text = str(answer["sync"])
        assert "bomb-form.pdf" in text
        after = httpx.get(f"{base}/search", params={"q": "Вскрытые чай", "k": 3}, timeout=30)
        assert after.status_code == 200
        assert any(h["file_path"] == "returns.pdf" for h in after.json()["hits"])
    finally:
        stop(proc)


@pytest.mark.bomb
@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("repeated-page.pdf", bombs.pdf_repeated_page),
        ("huge-page.pdf", bombs.pdf_huge_page),
        ("many-objects.pdf", lambda: bombs.many_text_objects(40000)),
    ],
)
def test_slow_bombs_stay_in_bounds(tmp_path: Path, name: str, make: object) -> None:
    kb = corpus(tmp_path, {name: make()})  # type: ignore[operator]
    run = run_bounded(["index", str(kb), "--embedder", "hash"])
    assert_bounded(run)
    assert_the_rest_indexed(kb)


@pytest.mark.bomb
def test_a_10_mb_csv_is_streamed(tmp_path: Path) -> None:
    rows = b"".join(b"%d,Name %d,City %d,%d.40\n" % (i, i * 7, i % 999, i) for i in range(270_000))
    kb = corpus(tmp_path, {"big.csv": b"id,name,city,amount\n" + rows})
    assert len((kb / "big.csv").read_bytes()) < 10 << 20
    run = run_bounded(["index", str(kb), "--embedder", "hash"])
    assert_bounded(run)
    assert "big.csv" in found(kb, "Name 700007")


def test_conversions_in_chunk_workers_are_bounded_too(tmp_path: Path) -> None:
    kb = corpus(tmp_path, {"bomb-form.pdf": bombs.pdf_form_bomb()})
    run = run_bounded(["index", str(kb), "--embedder", "hash", "--jobs", "2"])
    assert_bounded(run)
    assert "memory limit" in _named(run.out, "bomb-form.pdf")
    assert_the_rest_indexed(kb)
