#!/usr/bin/env python3
"""Would a compiled core earn its place? This tree's hot modules built with Cython (pure-Python
mode: the same source, no annotations added) against the same tree interpreted.

    python benchmarks/bench_compiled.py                 # md_corpus, headings, 800 chars
    python benchmarks/bench_compiled.py --unit tokens   # 256 cl100k tokens
    python benchmarks/bench_compiled.py --out benchmarks/results/bench_compiled.md

Needs ``cython`` and ``setuptools`` (benchmarks/requirements.txt) and a C compiler. The tree's
``src`` is copied to a temporary folder and the modules in ``COMPILED`` are built in place
there, so Python imports the extension beside each ``.py``. Each tree then runs in its own
subprocess, the two alternating round by round; a round keeps the best CPU time of two passes
of ``chunk_raw`` (parse, secret scan, split, chunk records: everything per file after the
read) over every file. Both trees must give the same chunks (a digest of every chunk's spans
and ``embed_text``), or the run fails. Issue #15 asks a compiled core for 2x or more.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared/data/md_corpus"
COMPILED = [
    "parse/scanner.py",
    "parse/leaf_blocks.py",
    "parse/markdown.py",
    "parse/sanitize.py",
    "enrich/redaction.py",
    "split/packer.py",
    "split/sizes.py",
    "split/context.py",
    "split/headings.py",
    "split/sections.py",
    "split/cuts.py",
    "split/base.py",
]
"""The modules the profile of the chars path spends its time in (scanner to chunk records)."""


def worker(src: str, corpus: Path, unit: str) -> dict[str, Any]:
    """One tree's timing: the best CPU seconds of two passes, and the chunks' digest."""
    sys.path.insert(0, src)
    import narezka.parse.scanner as scanner
    from narezka.discover import iter_files, read_document
    from narezka.runs.chunking import chunk_raw
    from narezka.split import SplitParams, get_strategy
    from narezka.tokens import get_counter

    assert scanner.__file__ is not None and scanner.__file__.startswith(src), scanner.__file__
    docs = [read_document(top, file)[0] for top, file in iter_files([corpus])]
    counter = get_counter(unit, "cl100k_base")
    params = SplitParams(size=800 if unit == "chars" else 256, unit=unit)
    strategy = get_strategy("headings")
    best, chunks = float("inf"), []
    for _ in range(2):
        start = time.process_time()
        chunks = [c for d in docs for c in chunk_raw(d, strategy, params, counter).chunks]
        best = min(best, time.process_time() - start)
    digest = hashlib.sha256()
    for c in chunks:
        digest.update(f"{c.source}\0{c.start}\0{c.end}\0{c.embed_text}\0".encode())
    compiled = scanner.__file__.endswith(".so")
    return {"cpu": best, "chunks": len(chunks), "digest": digest.hexdigest(), "compiled": compiled}


def build(target: Path) -> float:
    """Copy ``src`` to ``target`` and build ``COMPILED`` in place; the build's seconds."""
    shutil.copytree(REPO_ROOT / "src", target / "src", ignore=shutil.ignore_patterns("*.so"))
    modules = ", ".join(repr(f"src/narezka/{m}") for m in COMPILED)
    (target / "setup.py").write_text(
        "from setuptools import setup\nfrom Cython.Build import cythonize\n"
        f"setup(ext_modules=cythonize([{modules}], language_level=3, quiet=True),"
        " package_dir={'': 'src'})\n",
        encoding="utf-8",
    )
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace", "-q"],
        cwd=target,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def run(src: Path, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", str(src), "--corpus", str(args.corpus)]
    out = subprocess.run([*cmd, "--unit", args.unit], check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--unit", choices=["chars", "tokens"], default="chars")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per tree")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.corpus, args.unit)))
        return 0
    from importlib.metadata import version
    from importlib.util import find_spec

    if find_spec("Cython") is None or find_spec("setuptools") is None:
        raise SystemExit("needs cython and setuptools: pip install -r benchmarks/requirements.txt")
    with tempfile.TemporaryDirectory(prefix="narezka-cython-") as tmp:
        build_seconds = build(Path(tmp))
        trees = {"interpreted": REPO_ROOT / "src", "Cython": Path(tmp) / "src"}
        rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, src in trees.items():
                rounds[name].append(run(src, args))
    first = {name: rs[0] for name, rs in rounds.items()}
    if len({r["digest"] for rs in rounds.values() for r in rs}) != 1:
        raise SystemExit("the compiled tree made other chunks than the interpreted one")
    if first["interpreted"]["compiled"] or not first["Cython"]["compiled"]:
        raise SystemExit("a tree did not import what it was meant to")
    best = {name: min(r["cpu"] for r in rs) for name, rs in rounds.items()}
    size = "800 chars" if args.unit == "chars" else "256 cl100k tokens"
    lines = [
        "# narezka compiled-core benchmark",
        "",
        f"- `chunk_raw` over {args.corpus}, headings at {size}: {first['Cython']['chunks']} chunks,"
        " the same digest from both trees",
        f"- Cython {version('cython')}, pure-Python mode, {len(COMPILED)} modules built in"
        f" {build_seconds:.0f} s; Python {platform.python_version()}, {platform.machine()}",
        f"- best CPU seconds of {args.rounds} alternating rounds (2 passes each)",
        "",
        "| tree | CPU s | speed-up |",
        "|---|---:|---:|",
    ]
    for name in trees:
        lines.append(f"| {name} | {best[name]:.3f} | {best['interpreted'] / best[name]:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
