"""Word, PowerPoint and Excel files nobody on the project wrote (realdocs/unstructured),
converted by narezka and, in the same run on the same files, by the peers that install
offline: MarkItDown, unstructured (model-free ``partition``), and plain text as python-docx,
python-pptx and openpyxl give it.

Scored against ``benchmarks/realdocs/office_expectations.json`` and the neutral reading it was
written from (``benchmarks/realdocs/office_reference.py``: the XML unzipped and read with lxml):
word recall (``\\w+`` tokens, case folded, counted with their multiplicity), heading recall,
table cells found *as cells* of a Markdown or HTML table, passages kept, questions whose key
and answer land in one chunk (narezka's ``headings`` strategy, 1000 characters, on each tool's
output), files refused, empty or crashed, speed and the peak RSS of a child process that ran
one tool over one format's files (a bare Python is about 15 MB).

    NAREZKA_SHARED=/work/shared python benchmarks/bench_realdocs_office.py \\
        [--peers-python /path/to/python] [--baseline ../main/src] \\
        [--out benchmarks/results/bench_realdocs_office.md]

``--peers-python`` names a Python that has MarkItDown and unstructured (default: this one).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NAREZKA_SHARED", "/work/shared"))
FOLDER = SHARED / "data" / "realdocs" / "unstructured"
EXPECTED = REPO / "benchmarks" / "realdocs" / "office_expectations.json"
FORMATS = ("docx", "pptx", "xlsx")

# Each child converts one format's files with one tool and prints a JSON line per file.
CHILD = r"""
import json, sys, time, traceback
tool, files = sys.argv[1], sys.argv[2:]

def narezka(path):
    from narezka.convert import convert
    from narezka.errors import ConvertError
    data = open(path, "rb").read()
    try:
        result = convert(data, "." + path.rsplit(".", 1)[1], path)
    except ConvertError as exc:
        return None, str(exc)
    return result.markdown, "; ".join(result.meta.get("notes", ()))

def markitdown(path):
    global _md
    try:
        _md
    except NameError:
        from markitdown import MarkItDown
        _md = MarkItDown(enable_plugins=False)
    return _md.convert(path).text_content, ""

def unstructured(path):
    from unstructured.partition.auto import partition
    out = []
    for el in partition(filename=path):
        html = getattr(el.metadata, "text_as_html", None)
        if el.category == "Table" and html:
            out.append(html)
        elif el.category == "Title":
            out.append("# " + el.text)
        else:
            out.append(el.text)
    return "\n\n".join(out), ""

def plain(path):
    if path.endswith(".docx"):
        import docx
        d = docx.Document(path)
        parts = [p.text for p in d.paragraphs]
        for t in d.tables:
            parts += ["\t".join(c.text for c in row.cells) for row in t.rows]
        return "\n".join(parts), ""
    if path.endswith(".pptx"):
        import pptx
        parts = []
        for slide in pptx.Presentation(path).slides:
            for shape in slide.shapes:
                if shape.has_text_frame:
                    parts.append(shape.text_frame.text)
                elif getattr(shape, "has_table", False) and shape.has_table:
                    parts += ["\t".join(c.text for c in r.cells) for r in shape.table.rows]
        return "\n".join(parts), ""
    import openpyxl
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    parts = []
    for sheet in book.worksheets:
        parts.append(sheet.title)
        for row in sheet.iter_rows(values_only=True):
            parts.append("\t".join("" if v is None else str(v) for v in row))
    return "\n".join(parts), ""

run = {"narezka": narezka, "markitdown": markitdown, "unstructured": unstructured,
       "plain": plain}[tool]
start = time.perf_counter()
for path in files:
    try:
        text, note = run(path)
        print(json.dumps({"file": path, "text": text, "note": note}))
    except Exception as exc:
        print(json.dumps({"file": path, "text": None, "crash": type(exc).__name__,
                          "note": traceback.format_exc(limit=1)[-300:]}))
seconds = time.perf_counter() - start
# VmHWM is this process's own peak: ru_maxrss keeps the parent's peak across fork and exec.
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"seconds": seconds, "rss_mb": int(hwm.split()[1]) / 1024}))
"""

TOOLS = {
    "narezka": "narezka",
    "markitdown": "MarkItDown",
    "unstructured": "unstructured (partition, no models)",
    "plain": "python-docx / python-pptx / openpyxl plain text",
}
_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
_CELL_HTML = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>", re.S | re.I)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _norm(text: str) -> str:
    text = _LINK.sub(r"\1", text).replace("**", "").replace("\\", "")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split()).casefold()
    try:
        return repr(round(float(text.replace(",", "")), 6))
    except ValueError:
        return text


def _cells(markdown: str) -> Counter[str]:
    """Cells of the Markdown (GFM) and HTML tables in ``markdown``, normalized."""
    found: Counter[str] = Counter()
    for line in markdown.splitlines():
        row = _ROW.match(line)
        if row and not _RULE.match(line):
            parts = re.split(r"(?<!\\)\|", row.group(1))
            found.update(_norm(p) for p in parts if p.strip())
    found.update(_norm(c) for c in _CELL_HTML.findall(markdown) if c.strip())
    return found


def _titled_tables(markdown: str) -> int:
    """GFM tables two columns wide or more whose header row holds one cell: a title or
    caption standing where the column names should (what a split table repeats)."""
    count = 0
    lines = markdown.splitlines()
    for i, line in enumerate(lines[:-1]):
        if (
            _ROW.match(line)
            and _RULE.match(lines[i + 1])
            and (i == 0 or not _ROW.match(lines[i - 1]))
        ):
            parts = re.split(r"(?<!\\)\|", _ROW.match(line).group(1))
            count += len(parts) > 1 and sum(1 for p in parts if p.strip()) == 1
    return count


def _headings(markdown: str) -> list[str]:
    return [_norm(m) for m in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", markdown, re.M)]


def _words(text: str) -> Counter[str]:
    return Counter(w.casefold() for w in re.findall(r"\w+", _LINK.sub(r"\1", text)))


def _recall(expected: Counter[str], found: Counter[str]) -> float | None:
    total = sum(expected.values())
    return sum(min(n, found[w]) for w, n in expected.items()) / total if total else None


def _chunks(text: str) -> list[str]:
    from narezka import chunk_text

    return [c.text for c in chunk_text(text, "headings", size=1000, unit="chars")]


def _run(
    python: str, tool: str, files: list[Path], src: Path = REPO / "src"
) -> tuple[dict[str, Any], dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [python, "-c", CHILD, tool, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
        check=False,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines or "seconds" not in lines[-1]:
        raise RuntimeError(f"{tool} failed: {done.stderr[-2000:]}")
    return {Path(x["file"]).relative_to(FOLDER).as_posix(): x for x in lines[:-1]}, lines[-1]


def _score(fmt: str, tool: str, out: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(REPO / "benchmarks" / "realdocs"))
    import office_reference

    words, heads, cells, kept, silent = [], [], [], [], []
    refused = crashed = titled = 0
    for name, expect in spec["files"].items():
        if expect["format"] != fmt or name not in out:
            continue
        got = out[name]
        text = got.get("text")
        if got.get("crash"):
            crashed += 1
        if text is None:
            # An encrypted file must be refused, and named for what it is.
            said = (got.get("note") or "").replace(got["file"], "").lower()
            named = "password" in said or "encrypted" in said
            refused += 1 if expect.get("refused") is None or not named else 0
            continue
        titled += _titled_tables(text)
        if not re.sub(r"^# Slide \d+$", "", text, flags=re.M).strip() and not got.get("note"):
            silent.append(name)
        reading = office_reference.read(FOLDER / name)
        if reading is None:
            continue
        recall = _recall(_words(" ".join(reading.text)), _words(text))
        if recall is not None:
            words.append(recall)
        if expect["headings"]:
            found = _headings(text)
            heads.append(
                sum(_norm(h) in found for h in expect["headings"]) / len(expect["headings"])
            )
        if expect["cells"]:
            pool = _cells(text)
            hit = 0
            for cell in expect["cells"]:
                key = _norm(cell)
                if pool[key] > 0:
                    pool[key] -= 1
                    hit += 1
            cells.append(hit / len(expect["cells"]))
        flat = " ".join(text.split())
        kept += [" ".join(p.split()) in flat for p in expect.get("passages", ())]
    asked = [q for q in spec["questions"] if q["file"].endswith(fmt) and q["file"] in out]
    answered = 0
    for q in asked:
        text = out[q["file"]].get("text") or ""
        answered += any(q["key"] in c and q["answer"] in c for c in _chunks(text))
    return {
        "words_median": statistics.median(words) if words else None,
        "words_min": min(words) if words else None,
        "headings": statistics.mean(heads) if heads else None,
        "cells_median": statistics.median(cells) if cells else None,
        "cells_mean": statistics.mean(cells) if cells else None,
        "passages": f"{sum(kept)}/{len(kept)}",
        "questions": f"{answered}/{len(asked)}",
        "refused": refused,
        "crashed": crashed,
        "silent": silent,
        "titled": titled,
    }


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers-python", default=sys.executable)
    parser.add_argument("--tools", default="narezka,markitdown,unstructured,plain")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--baseline", type=Path, help="another narezka's src folder, run as a row of its own"
    )
    args = parser.parse_args()
    if not FOLDER.is_dir():
        sys.exit(f"no dev set at {FOLDER} (set NAREZKA_SHARED)")
    spec = json.loads(EXPECTED.read_text(encoding="utf-8"))
    lines = [
        "# bench_realdocs_office: Word, PowerPoint, Excel on realdocs/unstructured (issue 35)",
        "",
    ]
    for fmt in FORMATS:
        files = sorted(FOLDER / n for n, e in spec["files"].items() if e["format"] == fmt)
        lines += [
            f"## {fmt} ({len(files)} files)",
            "",
            "| tool | words % (median / min) | headings % | table cells as cells % (median"
            " / mean) | tables headed by a title | passages | questions | refused or misnamed |"
            " crashed | silently empty | files/s | peak RSS MB |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        rows = [(t, TOOLS[t], REPO / "src") for t in args.tools.split(",")]
        if args.baseline:
            rows.insert(1, ("narezka", f"narezka before ({args.baseline})", args.baseline))
        for tool, label, src in rows:
            python = sys.executable if tool in ("narezka", "plain") else args.peers_python
            try:
                out, run = _run(python, tool, files, src)
            except (RuntimeError, subprocess.SubprocessError) as exc:
                lines.append(f"| {label} | did not run: {str(exc)[:120]} |")
                continue
            s = _score(fmt, tool, out, spec)
            lines.append(
                f"| {label} | {_pct(s['words_median'])} / {_pct(s['words_min'])} | "
                f"{_pct(s['headings'])} | {_pct(s['cells_median'])} / {_pct(s['cells_mean'])} | "
                f"{s['titled']} | "
                f"{s['passages']} | {s['questions']} | {s['refused']} | {s['crashed']} | "
                f"{len(s['silent'])} | {len(files) / run['seconds']:.1f} | {run['rss_mb']:.0f} |"
            )
            print(lines[-1], file=sys.stderr)
        lines.append("")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
