"""PDF conversion speed of this tree against other trees, in CPU seconds, and whether their
Markdown is the same (issue 35: "not slower than today").

The PDFs are bench_convert's (md_corpus documents through LibreOffice, Chromium's two-column
print and reportlab's rows across two columns; rendered once into ``--cache``) and, with
``--realdocs``, every PDF of the realdocs dev set. Each tree converts all of them in a child
process of its own (a fresh Python with that tree's ``src`` first on its path, imports paid
before the clock starts); trees take turns, ``--rounds`` times, and each keeps its least CPU
time (process time: what a loaded machine's wall clock does not say). OCR is off: scans
would measure tesseract.

    NAREZKA_SHARED=/work/shared python benchmarks/bench_pdf_speed.py \
        --tree base=../base/src --tree now=src [--rounds 3] [--realdocs] [--cache DIR]

Prints pages per CPU second per tree and set, peak RSS, and the documents whose Markdown
differs from the tree named before it.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NAREZKA_SHARED", "/work/shared"))


def child(listing: Path, out: Path) -> None:
    """Convert the PDFs listed; write each one's Markdown under ``out``; print the times."""
    import narezka.convert
    import narezka.convert.pdf

    out.mkdir(parents=True, exist_ok=True)
    docs = []
    for line in listing.read_text(encoding="utf-8").splitlines():
        path = Path(line)
        data = path.read_bytes()
        started = time.process_time()
        try:
            done = narezka.convert.convert(data, ".pdf", path.name)
            markdown, pages = done.markdown, int(done.meta.get("pages", 0))  # type: ignore[call-overload]
        except Exception as exc:  # a document's failure is part of its output
            markdown, pages = f"{type(exc).__name__}: {exc}", 0
        cpu = time.process_time() - started
        name = hashlib.sha1(line.encode()).hexdigest()[:10] + "-" + path.stem + ".md"
        (out / name).write_text(markdown, encoding="utf-8")
        docs.append({"path": line, "cpu": cpu, "pages": pages})
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"docs": docs, "rss": rss}))


def _sets(cache: Path, realdocs: bool) -> dict[str, list[Path]]:
    """bench_convert's renderings of its documents (made once into ``cache``) by kind, and
    the realdocs PDFs."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, str(ROOT / "src"))
    import bench_convert

    listing = cache / "rendered.json"
    if not listing.exists():
        cache.mkdir(parents=True, exist_ok=True)
        files = bench_convert._pick("ru", 12) + bench_convert._pick("en", 12)
        rendered = bench_convert.render(files, cache)
        listing.write_text(
            json.dumps({k: {s: str(p) for s, p in v.items()} for k, v in rendered.items()})
        )
    rendered = json.loads(listing.read_text())
    sets = {
        bench_convert.FORMATS[suffix]: [Path(v[suffix]) for v in rendered.values()]
        for suffix in (".pdf", ".pdf2", ".pdf2r")
    }
    if realdocs:
        sets["realdocs"] = sorted((SHARED / "data" / "realdocs").rglob("*.pdf"))
    return sets


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=SRC_DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--realdocs", action="store_true")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/narezka-bench-pdf"))
    args = parser.parse_args()
    trees = [tuple(t.split("=", 1)) for t in args.tree]
    sets = _sets(args.cache, args.realdocs)
    work = args.cache / "out"
    print(f"load {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores; best of {args.rounds}")
    print(f"{'set':32} {'tree':10} {'pages':>6} {'CPU s':>7} {'pages/s':>8} {'RSS MB':>7}")
    for kind, paths in sets.items():
        listing = args.cache / f"{abs(hash(kind))}.list"
        listing.write_text("\n".join(str(p) for p in paths), encoding="utf-8")
        best: dict[str, tuple[float, int, float]] = {}
        for name, _ in trees:  # this set's outputs only (not an interrupted run's)
            for f in (work / name).glob("*.md"):
                f.unlink()
        for _ in range(args.rounds):
            for name, src in trees:
                env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "NAREZKA_OCR": "off"}
                done = subprocess.run(
                    [sys.executable, __file__, "--child", str(listing), str(work / name)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                data = json.loads(done.stdout.strip().splitlines()[-1])
                cpu = sum(d["cpu"] for d in data["docs"])
                pages = sum(d["pages"] for d in data["docs"])
                if name not in best or cpu < best[name][0]:
                    best[name] = (cpu, pages, data["rss"])
        for name, (cpu, pages, rss) in best.items():
            print(f"{kind:32} {name:10} {pages:6} {cpu:7.2f} {pages / cpu:8.1f} {rss:7.0f}")
        for (before, _), (name, _) in itertools.pairwise(trees):
            differ = [
                f.name
                for f in sorted((work / before).glob("*.md"))
                if f.read_text(encoding="utf-8")
                != (work / name / f.name).read_text(encoding="utf-8")
            ]
            shown = ", ".join(differ[:6])
            print(f"{kind:32} {name:10} Markdown differs from {before}'s in {len(differ)} {shown}")


if __name__ == "__main__":
    main()
