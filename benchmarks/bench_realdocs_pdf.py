"""PDF conversion against written expectations: narezka (this tree and a base commit) and its
peers, in one run.

Documents: the PDFs named in ``benchmarks/realdocs/pdf_expectations.json`` (from the realdocs
dev set, ``$NAREZKA_SHARED/data/realdocs/unstructured``) and, when ``pdflatex`` is installed,
Russian LaTeX PDFs built here (article, report, two columns, beamer; see
``tests/convert/latex_samples.py``), whose expectations come from their source.

Per reader it prints medians over the documents of: word recall (against ``pdftotext``'s
words), heading recall (expected titles found as Markdown headings, numbers ignored), table
cells as cells (expected cells found as cells of a Markdown table row), running header and
footer lines left in the text (a count, summed), pages per second (all pages over all
conversion time) and peak RSS (MB, the child process that converts one document).

    python benchmarks/bench_realdocs_pdf.py [--base main] [--peers DIR] [--out FILE]

``--peers``: a ``pip install --target`` directory holding the peers, on the children's path
after the tree under test.

Each conversion runs in a child process of its own (``--one``), so peak RSS is one reader's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPECTATIONS = ROOT / "benchmarks" / "realdocs" / "pdf_expectations.json"
READERS = ("narezka", "narezka@base", "pypdf", "pdfplumber", "pymupdf4llm", "markitdown")
_WORD = re.compile(r"\w{2,}")
_LETTERS = re.compile(r"[^\w]+")
_NUMBERING = re.compile(r"^(?:[0-9IVX]+(?:\.[0-9]+)*\.?|[А-ЯA-Z]\.)\s+")


def _convert(reader: str, path: Path) -> tuple[str, int]:
    """Markdown (or plain text) of ``path`` by ``reader``, and its page count."""
    data = path.read_bytes()
    if reader.startswith("narezka"):
        from narezka.convert import convert

        done = convert(data, ".pdf", path.name)
        return done.markdown, int(done.meta.get("pages", 0))  # type: ignore[call-overload]
    if reader == "pypdf":
        import pypdf

        pdf = pypdf.PdfReader(str(path))
        return "\n".join(page.extract_text() or "" for page in pdf.pages), len(pdf.pages)
    if reader == "pdfplumber":
        import pdfplumber

        with pdfplumber.open(str(path)) as pdf:
            return "\n".join(p.extract_text() or "" for p in pdf.pages), len(pdf.pages)
    if reader == "pymupdf4llm":
        import pymupdf
        import pymupdf4llm

        return str(pymupdf4llm.to_markdown(str(path))), len(pymupdf.open(str(path)))
    if reader == "markitdown":
        import pypdf
        from markitdown import MarkItDown

        pages = len(pypdf.PdfReader(str(path)).pages)
        return MarkItDown().convert(str(path)).text_content, pages
    raise SystemExit(f"unknown reader {reader}")


_IMPORTS = {
    "narezka": ("narezka.convert", "narezka.convert.pdf", "pypdfium2"),
    "pypdf": ("pypdf",),
    "pdfplumber": ("pdfplumber",),
    "pymupdf4llm": ("pymupdf", "pymupdf4llm"),
    "markitdown": ("pypdf", "markitdown"),
}


def _one(reader: str, path: str) -> None:
    import importlib

    # Imports are paid once per process, not per document: they stay out of the time.
    for module in _IMPORTS.get(reader.split("@")[0], ()):
        try:
            importlib.import_module(module)
        except ImportError:
            break
    start = time.perf_counter()
    try:
        text, pages = _convert(reader, Path(path))
        error = ""
    except ImportError as exc:
        text, pages, error = "", 0, f"not installed ({exc.name})"
    except Exception as exc:  # a peer's failure is one row's result, not the run's end
        text, pages, error = "", 0, f"{type(exc).__name__}: {str(exc)[:80]}"
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    found = {"text": text, "pages": pages, "seconds": seconds, "rss": rss, "error": error}
    print(json.dumps(found))


def _key(title: str) -> str:
    return _LETTERS.sub("", _NUMBERING.sub("", title.strip()).lower())


def _plain(line: str) -> str:
    line = re.sub(r"^\s*(?:#+|[-*]|\d+[.)])\s+", "", line)
    return line.replace("**", "").replace("`", "").replace("\\", "").strip()


def word_recall(reference: str, text: str) -> float:
    want = Counter(w.lower() for w in _WORD.findall(reference))
    have = Counter(w.lower() for w in _WORD.findall(text))
    total = sum(want.values())
    return sum(min(n, have[w]) for w, n in want.items()) / total if total else 1.0


def heading_recall(headings: list[str], text: str) -> float | None:
    if not headings:
        return None
    found = {_key(_plain(ln)) for ln in text.splitlines() if ln.lstrip().startswith("#")}
    return sum(_key(h) in found for h in headings) / len(headings)


def cell_recall(tables: list[list[list[str]]], text: str) -> float | None:
    want = [_key(c) for table in tables for row in table for c in row if _key(c)]
    if not want:
        return None
    cells = Counter(
        _key(_plain(c))
        for ln in text.splitlines()
        if ln.strip().startswith("|")
        for c in ln.strip().strip("|").split("|")
    )
    return sum(1 for c in want if cells[c] > 0) / len(want)


def running_left(patterns: list[str], text: str) -> int | None:
    if not patterns:
        return None
    compiled = [re.compile(p, re.IGNORECASE) for p in patterns]
    return sum(1 for ln in text.splitlines() if any(p.search(_plain(ln)) for p in compiled))


def _documents(tmp: Path) -> list[tuple[str, Path, dict[str, object]]]:
    shared = Path(os.environ.get("NAREZKA_SHARED", "/work/shared"))
    base = shared / "data" / "realdocs" / "unstructured"
    docs = []
    for name, expect in json.loads(EXPECTATIONS.read_text(encoding="utf-8"))["files"].items():
        if (base / name).exists():
            docs.append((name, base / name, expect))
    sys.path.insert(0, str(ROOT / "tests" / "convert"))
    import latex_samples

    if latex_samples.have_pdflatex():
        for kind in latex_samples.KINDS:
            try:
                sample = latex_samples.make_latex_pdf(kind)
            except RuntimeError as exc:
                print(f"latex {kind}: not built ({str(exc).strip().splitlines()[-1][:60]})")
                continue
            path = tmp / f"latex-{kind}.pdf"
            path.write_bytes(sample.pdf)
            expect = {
                "headings": sample.headings,
                "tables": [[list(r) for r in sample.table]] if sample.table else [],
                "running": sample.running,
            }
            docs.append((f"latex-{kind} (ru)", path, expect))
    return docs


def _base_tree(ref: str, tmp: Path) -> Path:
    """``src`` of commit ``ref`` unpacked into ``tmp``: the tree today's figures come from."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True
    )
    tmp.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
    return tmp / "src"


def _run(reader: str, path: Path, src: Path, peers: str = "") -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(src), peers)))}
    done = subprocess.run(
        [sys.executable, __file__, "--one", reader, str(path)],
        capture_output=True,
        env=env,
        timeout=900,
        check=False,
    )
    try:
        return dict(json.loads(done.stdout.decode().strip().splitlines()[-1]))
    except (IndexError, ValueError):
        return {"text": "", "pages": 0, "seconds": 0.0, "rss": 0.0, "error": "crashed"}


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "—"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--one", nargs=2)
    parser.add_argument("--base", default="main")
    parser.add_argument("--readers", default=",".join(READERS))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--peers", default="")
    args = parser.parse_args()
    if args.one:
        _one(*args.one)
        return
    out: list[str] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        docs = _documents(tmp)
        base = _base_tree(args.base, tmp / "base")
        here = ROOT / "src"
        reference = {
            doc: subprocess.run(["pdftotext", str(path), "-"], capture_output=True).stdout.decode(
                "utf-8", "replace"
            )
            for doc, path, _ in docs
        }
        header = (
            f"{'reader':14} {'words':>6} {'heads':>6} {'cells':>6} {'running':>8} "
            f"{'pages/s':>8} {'RSS MB':>7}  errors"
        )
        rows = [header]
        detail: list[str] = []
        for reader in args.readers.split(","):
            src = base if reader == "narezka@base" else here
            words, heads, cells, rss = [], [], [], []
            running, pages, seconds, errors = 0, 0, 0.0, []
            for doc, path, expect in docs:
                got = _run(reader, path, src, args.peers)
                if got["error"]:
                    errors.append(f"{doc}: {got['error']}")
                    continue
                text = str(got["text"])
                w = word_recall(reference[doc], text)
                h = heading_recall(list(expect.get("headings", [])), text)  # type: ignore[call-overload]
                c = cell_recall(list(expect.get("tables", [])), text)  # type: ignore[call-overload]
                r = running_left(list(expect.get("running", [])), text)  # type: ignore[call-overload]
                words.append(w)
                heads += [h] if h is not None else []
                cells += [c] if c is not None else []
                running += r or 0
                pages += int(got["pages"])  # type: ignore[call-overload]
                seconds += float(got["seconds"])  # type: ignore[arg-type]
                rss.append(float(got["rss"]))  # type: ignore[arg-type]
                detail.append(
                    f"  {reader:14} {doc:42} words {w:.2f} heads "
                    f"{'—' if h is None else f'{h:.2f}'} cells {'—' if c is None else f'{c:.2f}'}"
                    f" running {'—' if r is None else r} {got['pages']} p {got['seconds']:.2f} s"
                )
            speed = f"{pages / seconds:.1f}" if seconds else "—"
            peak = f"{max(rss):.0f}" if rss else "—"
            rows.append(
                f"{reader:14} {_median(words):>6} {_median(heads):>6} {_median(cells):>6} "
                f"{running:>8} {speed:>8} {peak:>7}  {'; '.join(errors)[:200]}"
            )
            print(rows[-1], flush=True)
        out = [f"documents: {len(docs)} ({', '.join(d for d, _, _ in docs)})", *rows, "", *detail]
    text = "\n".join(out)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
