"""HTML, EPUB, e-mail, images (OCR) and text encodings from the real-document dev set
(realdocs/unstructured), plus generated files the set lacks (a rowspan/colspan table, BOM,
Latin-1, cp1252 and cp1251 texts, a Russian and English picture turned 0/90/180/270°, a
four-page scanned form), converted by narezka and, in the same run on the same files, by
MarkItDown where it installs.

Scored against ``benchmarks/realdocs/more_expectations.json`` (written by reading each file
first) and the neutral readings of ``bench_realdocs_sweep.reference``: word recall, passages
found whole, heading recall, table cells found as cells, rows whose cells stand in one table
row under the right columns, a mail's headers as metadata (narezka: the chunk's metadata;
a peer: anywhere in its text) and its attachments as their own parts (narezka: a hit's
``where`` names ``mail › attachment``; a peer: the name in its text), the share of narezka's
chunks whose hit has a ``where``, seconds and the peak RSS of the child that ran one tool
over one format's files (a bare Python is about 15 MB).

    NAREZKA_SHARED=/work/shared nice python benchmarks/bench_realdocs_more.py \\
        [--peers /tmp/peers-s46-real] [--out benchmarks/results/bench_realdocs_more.md]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_realdocs_office as office  # noqa: E402
import bench_realdocs_sweep as sweep  # noqa: E402

FOLDER = sweep.FOLDER
EXPECTED = REPO / "benchmarks" / "realdocs" / "more_expectations.json"
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

CHILD = r"""
import json, sys, time
tool, files = sys.argv[1], sys.argv[2:]

def narezka(path):
    from narezka.convert import convert
    from narezka.errors import ConvertError
    from narezka.formats import CONVERTED_SUFFIXES, where
    from narezka.runs.chunking import chunk_documents
    data = open(path, "rb").read()
    suffix = "." + path.rsplit(".", 1)[1]
    start = time.perf_counter()
    try:
        text = convert(data, suffix, path).markdown
    except ConvertError:
        text = None
    seconds = time.perf_counter() - start
    report = chunk_documents([path], "headings", include=["*"], size=1000, unit="chars")
    if text is None:  # a text file: what the run read
        text = "\n\n".join(c.text for c in report.chunks) if report.chunks else None
    # Markdown and plain text have no ``where`` (a hit's heading path is its place).
    converted = suffix.lower() in CONVERTED_SUFFIXES
    wheres = [where(path, c.meta or {}, c.section) for c in report.chunks] if converted else None
    meta = dict(report.chunks[0].meta or {}) if report.chunks else {}
    meta = {k: v for k, v in meta.items() if isinstance(v, str)}
    note = "; ".join(str(e) for e in report.skipped)
    # A text file is not converted: its time is the run's reading and splitting.
    if not converted:
        seconds = time.perf_counter() - start
    return text, {"wheres": wheres, "meta": meta, "note": note, "convert_seconds": seconds,
                  "pages": [(c.meta["page_start"], c.meta.get("page_end", c.meta["page_start"]))
                            for c in report.chunks if c.meta and "page_start" in c.meta]}

def markitdown(path):
    global _md
    try:
        _md
    except NameError:
        from markitdown import MarkItDown
        _md = MarkItDown(enable_plugins=False)
    return _md.convert(path).text_content, {}

run = {"narezka": narezka, "markitdown": markitdown}[tool]
for path in files:
    start = time.perf_counter()
    try:
        text, extra = run(path)
        row = {"file": path, "text": text, **extra}
    except Exception as exc:
        row = {"file": path, "text": None, "crash": type(exc).__name__ + ": " + str(exc)[:200]}
    row["seconds"] = time.perf_counter() - start
    print(json.dumps(row), flush=True)
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"rss_mb": int(hwm.split()[1]) / 1024}))
"""

_RUSSIAN = "Вернуть товар можно в течение четырнадцати дней со дня получения заказа."
_ENGLISH = "Refunds reach the card within five working days of the return."
_SPAN_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Тарифы</title></head>
<body><h1>Тарифы доставки</h1>
<table><tr><th rowspan="2">Город</th><th colspan="2">Курьер</th><th rowspan="2">Самовывоз</th></tr>
<tr><th>Срок</th><th>Цена</th></tr>
<tr><td rowspan="2">Москва</td><td>1 день</td><td>300</td><td>бесплатно</td></tr>
<tr><td>2 дня</td><td>250</td><td>бесплатно</td></tr>
<tr><td>Казань</td><td colspan="2">по запросу</td><td>100</td></tr></table>
</body></html>"""


def _text_picture(lines: list[str], size: tuple[int, int] = (1700, 600)) -> Any:
    from PIL import Image, ImageDraw, ImageFont

    picture = Image.new("L", size, 255)
    draw = ImageDraw.Draw(picture)
    font = ImageFont.truetype(DEJAVU, 40)
    for n, line in enumerate(lines):
        draw.text((60, 60 + 70 * n), line, font=font, fill=0)
    return picture


def generated(folder: Path) -> dict[str, dict[Path, dict[str, Any]]]:
    """The files the dev set lacks, written into ``folder``, with what each must yield."""
    from PIL import Image

    made: dict[str, dict[Path, dict[str, Any]]] = {"HTML": {}, "Encodings": {}, "Image": {}}
    page = folder / "tarify.html"
    page.write_text(_SPAN_PAGE, encoding="utf-8")
    made["HTML"][page] = {
        "passages": [],
        "headings": ["Тарифы доставки"],
        "cells": ["Город", "Срок", "Цена", "Москва", "1 день", "300", "2 дня", "250", "Казань"],
        # Each value under its column: a spanned cell's neighbours keep their places.
        "rows": [
            ["Москва", "1 день", "300", "бесплатно"],
            [None, "2 дня", "250", "бесплатно"],
            ["Казань", None, None, "100"],
        ],
        "reference": "Тарифы доставки Город Курьер Самовывоз Срок Цена Москва 1 день 300 "
        "бесплатно 2 дня 250 бесплатно Казань по запросу 100",
    }
    russian = f"# Возврат товара\n\n{_RUSSIAN}\n\nЦена: 1 500 ₽ — «экспресс».\n"
    for name, encoding in (
        ("bom-utf8.md", "utf-8-sig"),
        ("bom-utf16le.md", "utf-16"),
        ("bom-utf16be.md", None),
        ("bom-utf32.md", "utf-32"),
        ("cp1251.md", "cp1251"),
    ):
        path = folder / name
        if encoding is None:
            path.write_bytes(b"\xfe\xff" + russian.encode("utf-16-be"))
        else:
            path.write_bytes(russian.replace("₽", "руб.").encode(encoding) if encoding ==
                             "cp1251" else russian.encode(encoding))  # fmt: skip
        made["Encodings"][path] = {
            "passages": [_RUSSIAN],
            "headings": ["Возврат товара"],
            "reference": russian,
        }
    western = "# Größe und Preis\n\nL'été était très chaud; le café coûte 3,50 €.\n"
    for name, encoding in (("latin1.md", "latin-1"), ("cp1252.md", "cp1252")):
        path = folder / name
        text = western.replace("€", "EUR") if encoding == "latin-1" else western
        path.write_bytes(text.encode(encoding))
        made["Encodings"][path] = {
            "passages": [text.splitlines()[2].split(";")[0]],
            "headings": ["Größe und Preis"],
            "reference": text,
        }
    lines = [_RUSSIAN[:40], _RUSSIAN[40:], "", _ENGLISH[:34], _ENGLISH[34:]]
    upright = _text_picture(lines)
    turns = {0: None, 90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180,
             270: Image.Transpose.ROTATE_270}  # fmt: skip
    for degrees, turn in turns.items():
        path = folder / f"turned-{degrees}.png"
        (upright if turn is None else upright.transpose(turn)).save(path)
        made["Image"][path] = {"passages": [], "reference": "\n".join(lines), "headings": []}
    # A form scanned four times: the same lines at the same places on every page.
    form = folder / "form-4p.tiff"
    frames = [_text_picture(["Заявление на возврат", _RUSSIAN[:40], _RUSSIAN[40:]])] * 4
    frames[0].save(form, save_all=True, append_images=frames[1:])
    made["Image"][form] = {
        "passages": [],
        "reference": "\n".join(["Заявление на возврат", _RUSSIAN] * 4),
        "headings": [],
        "pages": [1, 2, 3, 4],
    }
    return made


def _rows(markdown: str) -> list[list[str]]:
    rows = []
    for line in markdown.splitlines():
        row = office._ROW.match(line)
        if row and not office._RULE.match(line):
            rows.append([office._norm(p) for p in re.split(r"(?<!\\)\|", row.group(1))])
    for table_row in re.findall(r"<tr[^>]*>(.*?)</tr>", markdown, re.S | re.I):
        rows.append([office._norm(c) for c in office._CELL_HTML.findall(table_row)])
    return rows


def _row_found(expected: list[str | None], rows: list[list[str]]) -> bool:
    want = [None if c is None else office._norm(c) for c in expected]
    for row in rows:
        for start in range(len(row) - len(want) + 1):
            window = row[start : start + len(want)]
            if all(w is None or w == got for w, got in zip(want, window, strict=True)):
                return True
    return False


def _flat(text: str) -> str:
    return " ".join(text.replace("\\", "").replace("**", "").split())


def _score(
    fmt: str, tool: str, row: dict[str, Any], spec: dict[str, Any], ref: str | None
) -> dict[str, Any]:
    text = row.get("text")
    out: dict[str, Any] = {"read": text is not None and bool(text.strip())}
    text = text or ""
    flat = _flat(text)
    if ref:
        out["words"] = sweep._recall(sweep._words(ref), sweep._words(text))
    if spec.get("passages"):
        out["passages"] = sum(_flat(p) in flat for p in spec["passages"]) / len(spec["passages"])
    if spec.get("headings"):
        found = set(office._headings(text))
        out["headings"] = sum(office._norm(h) in found for h in spec["headings"]) / len(
            spec["headings"]
        )
    if spec.get("cells"):
        cells = office._cells(text)
        out["cells"] = sum(cells[office._norm(c)] > 0 for c in spec["cells"]) / len(spec["cells"])
    if spec.get("rows"):
        rows = _rows(text)
        out["rows"] = sum(_row_found(r, rows) for r in spec["rows"]) / len(spec["rows"])
    if spec.get("meta"):
        meta = row.get("meta") or {}
        hits = [
            v in str(meta.get(k, "")) if tool == "narezka" else v in text
            for k, v in spec["meta"].items()
        ]
        out["meta"] = sum(hits) / len(hits)
    if spec.get("attachments"):
        wheres = row.get("wheres")
        hits = [
            any(f"› {a}" in w or w.startswith(a) for w in wheres) if tool == "narezka"
            else a in text
            for a in spec["attachments"]
        ]  # fmt: skip
        out["attachments"] = sum(hits) / len(hits)
    if row.get("wheres"):
        out["where"] = sum(bool(w) for w in row["wheres"]) / len(row["wheres"])
    if fmt == "Encodings":
        out["no_bom"] = float("\ufeff" not in text)
    if spec.get("pages") and tool == "narezka":
        covered = {n for first, last in row.get("pages", []) for n in range(first, last + 1)}
        out["pages"] = float(set(spec["pages"]) <= covered)
    return out


def _run(
    python: str, tool: str, files: list[Path], peers: str
) -> tuple[list[dict[str, Any]], float]:
    path = [str(REPO / "src")] + ([peers] if peers and tool != "narezka" else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    done = subprocess.run(
        [python, "-c", CHILD, tool, *map(str, files)],
        capture_output=True, text=True, timeout=3600, env=env, check=False,
    )  # fmt: skip
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    if not lines or "rss_mb" not in lines[-1]:
        print(f"{tool}: {done.stderr[-2000:]}", file=sys.stderr)
        return [
            {"file": str(f), "text": None, "crash": "child failed", "seconds": 0} for f in files
        ], 0.0
    return lines[:-1], lines[-1]["rss_mb"]


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "—"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", default="", help="a folder holding MarkItDown (pip --target)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    expected = json.loads(EXPECTED.read_text())
    tools = ["narezka"]
    probe = subprocess.run(
        [args.python, "-c", "import markitdown"],
        env={**os.environ, "PYTHONPATH": args.peers}, capture_output=True, check=False,
    )  # fmt: skip
    if probe.returncode == 0:
        tools.append("markitdown")
    columns = ["words", "passages", "headings", "cells", "rows", "meta", "attachments", "where",
               "no_bom", "pages"]  # fmt: skip
    out = [
        "# HTML, EPUB, e-mail, images and encodings: real and generated files, with a peer",
        "",
        "Medians per format of per-file scores (0–1; `—`: no file of the format asks it).",
        "`read`: files giving text of those offered. `s`: seconds converting the format's files",
        "(images: 12 pages, OCR by tesseract rus+eng and osd on 2 shared cores);",
        "`RSS`: peak MB of the child that converted them (narezka also chunks each file).",
        "",
        "| format | tool | read | " + " | ".join(columns) + " | s | RSS MB |",
        "|---" * (len(columns) + 6) + "|",
    ]
    detail = ["", "Per file (narezka / MarkItDown):", ""]
    with tempfile.TemporaryDirectory(prefix="more-") as tmp:
        made = generated(Path(tmp))
        for fmt, specs in expected.items():
            if fmt.startswith("_"):
                continue
            files: dict[Path, dict[str, Any]] = {}
            for name, spec in specs.items():
                spec = specs[spec["same_as"]] if "same_as" in spec else spec
                files[FOLDER / name] = spec
            files.update(made.get(fmt, {}))
            rows: dict[str, dict[str, dict[str, Any]]] = {}
            for tool in tools:
                results, rss = _run(args.python, tool, list(files), args.peers)
                scores = {}
                for row in results:
                    path = Path(row["file"])
                    spec = files[path]
                    ref = spec.get("reference")
                    if ref is None:
                        found = sweep.reference(path)
                        ref = found[1] if found else None
                    scores[row["file"]] = _score(fmt, tool, row, spec, ref)
                rows[tool] = scores
                # narezka's child also chunks each file: only its conversion is timed.
                seconds = sum(r.get("convert_seconds", r["seconds"]) for r in results)
                read = sum(s["read"] for s in scores.values())
                cells = [
                    _cell([s[c] for s in scores.values() if s.get(c) is not None]) for c in columns
                ]
                out.append(
                    f"| {fmt} | {tool} | {read}/{len(scores)} | " + " | ".join(cells)
                    + f" | {seconds:.1f} | {rss:.0f} |"
                )  # fmt: skip
            for file in files:
                shown = (
                    Path(file).relative_to(FOLDER).as_posix()
                    if Path(file).is_relative_to(FOLDER) else f"(generated) {Path(file).name}"
                )  # fmt: skip
                parts = []
                for tool in tools:
                    s = rows[tool].get(str(file), {})
                    parts.append(", ".join(
                        f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in s.items()
                    ))  # fmt: skip
                detail.append(f"- {fmt} {shown}: " + " / ".join(parts))
    out += detail
    out += [
        "",
        "Command: `NAREZKA_SHARED=/work/shared nice python benchmarks/bench_realdocs_more.py "
        "--peers /tmp/peers-s46-real --out benchmarks/results/bench_realdocs_more.md` "
        "(MarkItDown 0.1.9 installed by `pip install --target /tmp/peers-s46-real "
        "'markitdown[docx,pptx,xlsx,pdf,outlook]'`).",
    ]
    text = "\n".join(out) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
