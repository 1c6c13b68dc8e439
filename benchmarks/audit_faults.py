"""Fault probes against a small generated corpus: a full disk, and damage to each file under
``.narezka/``. Prints a Markdown table: probe, then per narezka tree the exit code and the
head of what it said for each command run after the fault.

    python benchmarks/audit_faults.py                       # this tree only
    python benchmarks/audit_faults.py --before /path/src    # also another tree, side by side

The disk-full probes mount small tmpfs folders (root only; skipped otherwise). Every probe
works on a fresh copy of an index built by the tree under test, with the ``hash`` embedder
(offline, deterministic). Nothing outside a temporary folder is touched.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORDS = (
    "чай доставка заказ возврат оплата карта скидка подарок склад курьер зона тариф неделя "
    "клиент договор счёт гарантия пакет чайник вкус аромат сорт урожай"
).split()

Fault = Callable[[Path], None]


def make_corpus(folder: Path, files: int = 30, seed: int = 7) -> None:
    """Markdown pages with headings and paragraphs of Russian words (deterministic)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    for n in range(files):
        parts = [f"# Страница {n}\n"]
        for s in range(4):
            parts.append(f"\n## Раздел {n}.{s}\n\n")
            parts.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120))) + ".\n")
        (folder / f"page-{n:02}.md").write_text("".join(parts), encoding="utf-8")


def run(src: Path, *args: str, cwd: Path) -> tuple[int, str]:
    """Run the CLI of the tree at ``src``; (exit code as a shell shows it, first line said)."""
    env = {**os.environ, "PYTHONPATH": str(src), "NAREZKA_CACHE_DIR": str(cwd / "no-cache")}
    done = subprocess.run(
        [sys.executable, "-m", "narezka", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    code = done.returncode if done.returncode >= 0 else 128 - done.returncode
    said = [line.strip() for line in (done.stderr + "\n" + done.stdout).splitlines()]
    said = [line for line in said if line and not set(line) <= set("│─┌┐└┘├┤┬┴┼ ")]
    traceback = any(line.startswith("Traceback") for line in said)
    head = said[-1] if traceback else (said[0] if said else "")
    if done.returncode < 0:
        head = f"killed by {signal.Signals(-done.returncode).name}" + (f"; {head}" if head else "")
    elif traceback:
        head = f"traceback: {head}"
    return code, head[:110]


def scribble(path: Path, size: int = 8192, at: int = 0) -> None:
    with path.open("r+b") as f:
        f.seek(at)
        f.write(os.urandom(size))


def data(corpus: Path) -> Path:
    return next((corpus / ".narezka").glob("data-*"))


def segment(corpus: Path) -> Path:
    return next((data(corpus) / "segments").iterdir())


def _truncate_tracker(corpus: Path) -> None:
    path = segment(corpus) / "mutable_id_tracker.mappings"
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size // 3)


FAULTS: dict[str, Fault] = {
    "index.json: random bytes": lambda c: scribble(c / ".narezka" / "index.json", 64),
    "embeddings.sqlite: 8 KiB random at head": lambda c: scribble(
        c / ".narezka" / "embeddings.sqlite"
    ),
    "manifest.sqlite: 8 KiB random at head": lambda c: scribble(data(c) / "manifest.sqlite"),
    "narezka_store.json: not JSON": lambda c: (data(c) / "narezka_store.json").write_text("{x"),
    "edge_config.json: not JSON": lambda c: (data(c) / "edge_config.json").write_text("{x"),
    "wal/open-1: 8 KiB random at head": lambda c: scribble(data(c) / "wal" / "open-1"),
    "segment id tracker truncated to 1/3": _truncate_tracker,
    "segment folder removed": lambda c: shutil.rmtree(segment(c)),
    "segment payload pages: 64 KiB random": lambda c: scribble(
        segment(c) / "payload_storage" / "page_0.dat", 65536, 4096
    ),
    "segment.json: not JSON": lambda c: (segment(c) / "segment.json").write_text("{x"),
}
COMMANDS: list[tuple[str, ...]] = [
    ("search", "чай", "--store", "kb", "-k", "3"),
    ("sync", "kb"),
    ("check", "kb", "--repair"),
    ("search", "чай", "--store", "kb", "-k", "3"),
]


def damage_probes(src: Path, work: Path) -> dict[str, list[tuple[int, str]]]:
    """Each fault on a fresh copy of one index: what each command then did."""
    base = work / "base"
    make_corpus(base / "kb")
    code, said = run(src, "index", "kb", "--embedder", "hash", cwd=base)
    if code != 0:
        raise SystemExit(f"building the probe index failed: {said}")
    results = {}
    for name, fault in FAULTS.items():
        trial = work / "trial"
        shutil.rmtree(trial, ignore_errors=True)
        shutil.copytree(base, trial, symlinks=True)
        fault(trial / "kb")
        results[name] = [run(src, *cmd, cwd=trial) for cmd in COMMANDS]
    return results


def mount_tmpfs(folder: Path, size: str) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True
    )
    return done.returncode == 0


def disk_probes(src: Path, work: Path) -> dict[str, list[tuple[int, str]]]:
    """``index`` on an 8 MB tmpfs; search and sync on a full one; search once space is freed."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return {}
    make_corpus(work / "kb")
    small, big = work / "small", work / "big"
    if not mount_tmpfs(small, "8m"):
        return {}
    results: dict[str, list[tuple[int, str]]] = {}
    try:
        results["disk: index on an 8 MB tmpfs"] = [
            run(src, "index", "kb", "--embedder", "hash", "--store", str(small / "i"), cwd=work)
        ]
    finally:
        subprocess.run(["umount", str(small)], check=False)
    if not mount_tmpfs(big, "300m"):
        return results
    try:
        run(src, "index", "kb", "--embedder", "hash", "--store", str(big / "i"), cwd=work)
        filler = big / "fill"
        with filler.open("wb") as f:
            block = b"\0" * 2**20
            try:
                while True:
                    f.write(block)
                    f.flush()
            except OSError:
                pass
        (work / "kb" / "new.md").write_text("# Новая\n\nПро чай.\n", encoding="utf-8")
        results["disk: full tmpfs, then space freed"] = [
            run(src, "search", "чай", "--store", str(big / "i"), cwd=work),
            run(src, "sync", str(big / "i"), cwd=work),
        ]
        filler.unlink()
        results["disk: full tmpfs, then space freed"] += [
            run(src, "sync", str(big / "i"), cwd=work),
            run(src, "search", "чай", "--store", str(big / "i"), cwd=work),
        ]
    finally:
        subprocess.run(["umount", str(big)], check=False)
    return results


def probe(src: Path) -> dict[str, list[tuple[int, str]]]:
    with tempfile.TemporaryDirectory(prefix="narezka-faults-") as tmp:
        work = Path(tmp)
        (work / "disk").mkdir()
        return {**disk_probes(src, work / "disk"), **damage_probes(src, work / "damage")}


def cell(outcomes: list[tuple[int, str]]) -> str:
    return "<br>".join(f"`{code}` {said}".replace("|", "\\|") for code, said in outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="src/ of another narezka tree to compare")
    args = parser.parse_args()
    now = probe(REPO / "src")
    before = probe(args.before) if args.before else None
    disk = "search, sync; space freed: sync, search"
    print("Commands after each damage: search, sync, check --repair, search.", end=" ")
    print(f"Disk probes: index; or {disk}. Cells: exit code, then the first line said.\n")
    head = ["probe", *(["before"] if before else []), "now"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, outcomes in now.items():
        cells = [name, *([cell(before.get(name, []))] if before else []), cell(outcomes)]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
