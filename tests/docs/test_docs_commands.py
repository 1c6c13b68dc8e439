"""The guides' shell commands marked ``<!-- narezka:run -->`` run as written (in a temporary
copy of the example KB), and the README keeps the two commands CI and a fresh clone run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from docs.site import DOCS

from conftest import REPO, copy_examples

MARK = "<!-- narezka:run -->"
BLOCK = re.compile("^" + re.escape(MARK) + r"\n```(?:bash|sh)\n(.*?)\n```", re.S | re.M)

QUICK_START = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install . && narezka index "
    'examples/kb && narezka search "можно ли вернуть вскрытый чай?" --store examples/kb'
)
TESTS = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && python -m pytest"
)


def marked_blocks() -> list[tuple[str, str]]:
    """(page, block) for every marked shell block of the docs, in page order."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        blocks = BLOCK.findall(text)
        marks = len(re.findall("^" + re.escape(MARK) + "$", text, re.M))
        assert len(blocks) == marks, f"{page}: a {MARK} line not right before a bash block"
        found += [(page.relative_to(DOCS).as_posix(), b) for b in blocks]
    return found


BLOCKS = marked_blocks()


def test_the_guides_mark_commands_to_run() -> None:
    pages = {page for page, _ in BLOCKS}
    assert {"getting-started.md", "guides/markdown-kb.md"} <= pages


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a fresh copy of examples/kb, as a clone's root would; the commands
    run one after another in it (the search needs the index the quick start built)."""
    root = tmp_path_factory.mktemp("clone")
    copy_examples(root / "examples" / "kb")
    return root


@pytest.mark.parametrize(
    ("page", "block"), BLOCKS, ids=[f"{page}:{n}" for n, (page, _) in enumerate(BLOCKS)]
)
def test_a_marked_block_runs(workdir: Path, page: str, block: str) -> None:
    narezka = shutil.which("narezka")
    if narezka is None:
        pytest.skip("no narezka on PATH (pip install -e .)")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        "XDG_CACHE_HOME": str(workdir / ".cache"),
        "COLUMNS": "120",
        # The commands, not the model, are under test here (the fresh-clone check runs the
        # quick start with `use`): the hash embedder keeps `index` to seconds.
        "NAREZKA_EMBEDDER": "hash",
    }
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, f"{page}:\n{block}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert run.stdout.strip(), f"{page}: {block} printed nothing"


def test_the_readme_keeps_the_two_commands_and_stays_short() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"```bash\n{QUICK_START}\n```" in readme
    assert f"```bash\n{TESTS}\n```" in readme
    assert f"```bash\n{QUICK_START}\n```" in (DOCS / "getting-started.md").read_text("utf-8")
    assert len(readme.splitlines()) <= 250


def _slug(heading: str) -> str:
    # Python-Markdown's toc slugify, which mkdocs uses for the pages' anchors.
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_the_readme_links_reach_files_and_headings_that_exist() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert len(links) > 20
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = REPO / target
        assert path.exists(), link
        if anchor:
            headings = re.findall(r"^#+ (.+?)(?: \{#([\w-]+)\})?$", path.read_text("utf-8"), re.M)
            ids = {i or _slug(h) for h, i in headings}
            assert anchor in ids, link
