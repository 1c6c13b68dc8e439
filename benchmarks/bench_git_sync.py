#!/usr/bin/env python3
"""Re-sync cost of a git source: one upstream change in a repository of 1,000 documents.

    python benchmarks/bench_git_sync.py                       # 1,000 files, hash embedder
    python benchmarks/bench_git_sync.py --embedder use        # the default model
    python benchmarks/bench_git_sync.py --out benchmarks/results/bench_git_sync.md

A repository is made in a temporary folder from the first ``--files`` Markdown files of the
shared corpus (``md_corpus``, in sorted order), one commit. Steps, each through
``Index.create`` / ``Index.open`` and ``sync`` as ``narezka index git+PATH`` runs them:

1. first index: every file fetched (``git cat-file --batch``), chunked, embedded;
2. no upstream change: nothing fetched, nothing embedded;
3. one file edited upstream (a paragraph appended) and committed: what was fetched and
   embedded, and the seconds of the refresh (git) and of the whole sync;
4. one file renamed upstream: moved in the staging folder, nothing fetched, its vectors from
   the embedding cache.

The goal (issue #36): step 3 fetches and embeds only that document.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("NAREZKA_SHARED", REPO_ROOT.parent / "shared")) / "data/md_corpus"

from narezka.index import Index  # noqa: E402
from narezka.settings import Settings  # noqa: E402
from narezka.sources import GitSource  # noqa: E402

_ENV = {
    **os.environ,
    **dict.fromkeys(("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"), "bench"),
    **dict.fromkeys(("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"), "bench@example.org"),
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], env=_ENV, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


def make_repo(repo: Path, n: int) -> list[str]:
    files = sorted(CORPUS.rglob("*.md"))[:n]
    if len(files) < n:
        sys.exit(f"{CORPUS} holds {len(files)} Markdown files, fewer than {n}")
    names = []
    for f in files:
        rel = f.relative_to(CORPUS)
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, repo / rel)
        names.append(rel.as_posix())
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "corpus")
    return names


def timed_sync(index: Index) -> dict[str, Any]:
    source = index.source
    assert source is not None
    refresh = source.refresh
    spent: list[float] = []

    def timed() -> Any:
        started = time.perf_counter()
        try:
            return refresh()
        finally:
            spent.append(time.perf_counter() - started)

    source.refresh = timed  # type: ignore[method-assign]
    started = time.perf_counter()
    report = index.sync()
    total = time.perf_counter() - started
    done = report.source
    return {
        "fetched": len(done["fetched"]),
        "fetched_kb": done["fetched_bytes"] / 1024,
        "moved": len(done["moved"]),
        "files_changed": report.files_new + report.files_changed,
        "chunks_embedded": report.chunks_embedded,
        "cache_misses": report.cache_misses,
        "refresh_s": spent[0],
        "sync_s": total,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--embedder", default="hash")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NAREZKA_CACHE_DIR"] = str(Path(tmp, "cache"))
        repo = Path(tmp, "repo")
        repo.mkdir()
        names = make_repo(repo, args.files)
        settings = Settings().replace(embedder=args.embedder)
        rows: list[tuple[str, dict[str, Any]]] = []
        with Index.create(GitSource(f"git+{repo}"), settings) as index:
            rows.append(("1. first index", timed_sync(index)))
            rows.append(("2. no upstream change", timed_sync(index)))
            edited = names[len(names) // 2]
            with (repo / edited).open("a", encoding="utf-8") as f:
                f.write("\n\nДобавленный абзац: доставка курьером теперь и по субботам.\n")
            git(repo, "commit", "--quiet", "-am", "one edit")
            rows.append((f"3. one file edited ({edited})", timed_sync(index)))
            moved = names[len(names) // 3]
            git(repo, "mv", moved, moved + ".renamed.md")
            git(repo, "commit", "--quiet", "-m", "one rename")
            rows.append(("4. one file renamed", timed_sync(index)))
    lines = [
        f"# Git source re-sync: {args.files} files, embedder {args.embedder}",
        "",
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} cores (shared: load average {os.getloadavg()[0]:.1f}), "
        f"git {git(REPO_ROOT, 'version').split()[-1]}",
        "",
        "| step | fetched files | fetched KiB | moved | files re-read | chunks embedded "
        "| embed misses | refresh s | sync s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in rows:
        lines.append(
            f"| {name} | {r['fetched']} | {r['fetched_kb']:.1f} | {r['moved']} "
            f"| {r['files_changed']} | {r['chunks_embedded']} | {r['cache_misses']} "
            f"| {r['refresh_s']:.3f} | {r['sync_s']:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
