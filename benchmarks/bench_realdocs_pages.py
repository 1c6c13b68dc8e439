"""Page provenance of PDF hits, checked against the PDF itself: for hits sampled over the
real multi-page PDFs of the dev set (``$NAREZKA_SHARED/data/realdocs/unstructured``), as a
search returns them plain, folded with their neighbours and expanded to their section, do
the pages the hit states (``p. 11–12``: ``Hit.place``) cover the pages its text is really
on?

The truth is PDFium's text layer page by page (pypdfium2's text page, words hyphenated at
a line end joined). A hit's text is cut into runs of six words (casefolded, ``\\w+`` only,
so Markdown marks, escapes and table pipes do not count); a run found on exactly one page,
and once in narezka's reading of the whole file, is *located*, and it is *covered* when that
page lies inside the stated range. A run found on no page (a table cell read in another
order, a run across a page break or a page number narezka took out) or on several (a phrase
the booklet repeats) has no say. A hit is right when every located run is covered;
*overstated* counts the stated pages no located run is on (a range wider than its text, not
wrong but looser). A control row states each plain hit's pages one page off: the check must
catch it.

Sampling: each file's stored chunks, up to ``--per-file`` spread evenly; the query is eight
words from the middle of the chunk; the first hit of that file is checked (BM25, the
``hash`` embedder: no model download, and page provenance does not depend on the embedder).

    NAREZKA_SHARED=/work/shared nice python benchmarks/bench_realdocs_pages.py \\
        [--per-file 12] [--out benchmarks/results/bench_realdocs_pages.md]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_realdocs_sweep as sweep  # noqa: E402

FILES = (
    "language-docs/fr_olap.pdf",
    "pdf/copy-protected.pdf",
    "pdf/failure-after-repair.pdf",
    "pdf/fake-memo-with-duplicate-page.pdf",
    "pdf/invalid-pdf-structure-pdfminer-one-page.pdf",
    "pdf/layout-parser-paper-fast.pdf",
    "pdf/layout-parser-paper-with-empty-pages.pdf",
    "pdf/list-item-example.pdf",
    "pdf/multi-column-2p.pdf",
    "pdf/multi-column.pdf",
    "pdf/reliance.pdf",
)
"""Every text-layer PDF of the dev set with 2 to 100 pages (one page states nothing to check;
the 400- and 619-page ones would take the run's whole time to index on two shared cores)."""
RUN = 6
CONTROL = "control: stated pages one off"
_SOFT_BREAK = re.compile(r"[\ufffe\u00ad\u0002]\s*")
"""PDFium's marks of a word hyphenated at a line end (and the line break after it)."""
_LINE_HYPHEN = re.compile(r"-\r?\n")
MODES: dict[str, dict[str, Any]] = {
    "plain": {"fold": None},
    "folded": {},
    "expanded": {"expand": "section", "fold": None},
}


def _words(text: str) -> list[str]:
    return [w.casefold() for w in re.findall(r"\w+", text)]


def _page_texts(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        texts = [
            _SOFT_BREAK.sub("", doc[n].get_textpage().get_text_range()) for n in range(len(doc))
        ]
    finally:
        doc.close()
    # A word broken by a hyphen at a line end is read both ways: joined, as a reader and
    # narezka read a word broken across lines, and kept apart, as a compound's own hyphen.
    return [
        f" {' '.join(_words(text))} | {' '.join(_words(_LINE_HYPHEN.sub('', text)))} "
        for text in texts
    ]


def _stated(place: Any) -> set[int]:
    first, last = place.get("page_start"), place.get("page_end")
    if not isinstance(first, int):
        return set()
    return set(range(first, (last if isinstance(last, int) else first) + 1))


def check(text: str, stated: set[int], pages: list[str], whole: str) -> dict[str, Any]:
    """One hit's text against its stated pages (module docstring); ``whole`` is narezka's
    reading of the file, as ``_words`` joined."""
    words = _words(text)
    located = covered = 0
    real: set[int] = set()
    for at in range(0, max(len(words) - RUN + 1, 0), 2):
        run = " " + " ".join(words[at : at + RUN]) + " "
        on = {n + 1 for n, page in enumerate(pages) if run in page}
        if len(on) != 1 or whole.count(run) != 1:
            continue  # found nowhere, or ambiguous: no say
        located += 1
        covered += bool(on & stated)
        real |= on
    return {
        "located": located,
        "right": located > 0 and covered == located,
        "overstated": len(stated - real) if real else 0,
        "stated": stated,
        "real": real,
    }


def run(per_file: int) -> tuple[list[dict[str, Any]], list[str]]:
    from narezka import Index, Settings
    from narezka.convert import convert

    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "kb"
        root.mkdir()
        names = {}
        for name in FILES:
            source = sweep.FOLDER / name
            if not source.exists():
                notes.append(f"{name}: not in the dev set here, skipped")
                continue
            flat = name.replace("/", "__")
            (root / flat).write_bytes(source.read_bytes())  # a walk skips symlinks
            whole = convert(source.read_bytes(), ".pdf", flat).markdown
            names[flat] = (_page_texts(source), f" {' '.join(_words(whole))} ")
        with Index.create(root, Settings(embedder="hash")) as index:
            index.sync()
            for flat, (pages, whole) in names.items():
                chunks = list(index.chunks(flat))
                step = max(len(chunks) / per_file, 1.0)
                picked = [chunks[int(i * step)] for i in range(min(per_file, len(chunks)))]
                for chunk in picked:
                    words = re.findall(r"\w+", chunk.text)
                    if len(words) < 8:
                        continue
                    middle = len(words) // 2
                    query = " ".join(words[max(middle - 4, 0) : middle + 4])
                    for mode, options in MODES.items():
                        found = index.search(query, k=5, mode="bm25", min_relevance=0.0, **options)
                        hit = next((h for h in found if h.file_path == flat), None)
                        if hit is None:
                            continue
                        stated = _stated(hit.place)
                        row = check(hit.text, stated, pages, whole)
                        row.update(file=flat.replace("__", "/"), mode=mode, where=hit.where,
                                   merged=bool(hit.merged), query=query)  # fmt: skip
                        rows.append(row)
                        if mode == "plain":  # the control: one page off must be caught
                            shifted = {n % len(pages) + 1 for n in stated}
                            off = check(hit.text, shifted, pages, whole)
                            rows.append({**row, **off, "mode": CONTROL})
    return rows, notes


def report(rows: list[dict[str, Any]], notes: list[str], per_file: int) -> str:
    lines = [
        "# Page provenance of PDF hits, checked against each page's text",
        "",
        f"{len(FILES)} multi-page PDFs of the dev set, up to {per_file} chunks a file sampled;",
        "each sampled chunk's middle eight words searched (BM25) plain, folded and expanded to",
        "its section; the first hit of the file checked. `right`: hits whose every located",
        f"{RUN}-word run lies on a stated page; `located`: runs found on some page (of all",
        "runs checked, the rest have no say); `overstated`: hits stating a page none of their",
        "located runs is on.",
        "",
        "| mode | hits | right | share right | folded/expanded hits | overstated | runs located |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode in (*MODES, CONTROL):
        own = [r for r in rows if r["mode"] == mode and r["located"]]
        right = sum(r["right"] for r in own)
        grown = sum(r["merged"] for r in own) if mode == "folded" else len(own)
        grown_text = str(grown) if mode in ("folded", "expanded") else "—"
        share = f"{right / len(own):.3f}" if own else "—"
        over = sum(r["overstated"] > 0 for r in own)
        runs = sum(r["located"] for r in own)
        lines.append(
            f"| {mode} | {len(own)} | {right} | {share} | {grown_text} | {over} | {runs} |"
        )
    wrong = [r for r in rows if r["located"] and not r["right"] and r["mode"] != CONTROL]
    lines += ["", f"Hits whose stated pages miss some of their text: {len(wrong)}."]
    for r in wrong[:20]:
        lines.append(
            f"- {r['file']} ({r['mode']}): states {r['where'] or '(nothing)'}, text on pages "
            f"{sorted(r['real'])} (query `{r['query']}`)"
        )
    over = [r for r in rows if r["located"] and r["overstated"] and r["mode"] != CONTROL]
    lines += ["", f"Hits stating more pages than their located text is on: {len(over)}."]
    for r in over[:20]:
        lines.append(
            f"- {r['file']} ({r['mode']}): states {r['where']}, located text on pages "
            f"{sorted(r['real'])}"
        )
    unlocated = Counter(r["file"] for r in rows if not r["located"] and r["mode"] != CONTROL)
    lines += [
        "",
        f"Hits with no located run (not counted): {sum(unlocated.values())}"
        + (": " + ", ".join(f"{f} {n}" for f, n in sorted(unlocated.items())) if unlocated else "")
        + ".",
        *(f"- {n}" for n in notes),
        "",
        "Command: `NAREZKA_SHARED=/work/shared nice python benchmarks/bench_realdocs_pages.py "
        f"--per-file {per_file} --out benchmarks/results/bench_realdocs_pages.md`",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-file", type=int, default=12)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if not sweep.FOLDER.exists():
        sys.exit(f"{sweep.FOLDER}: the dev set is not here (set NAREZKA_SHARED)")
    os.environ.setdefault("NAREZKA_PROGRESS", "0")
    rows, notes = run(args.per_file)
    text = report(rows, notes, args.per_file)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
