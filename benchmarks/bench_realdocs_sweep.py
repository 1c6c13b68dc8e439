"""Every file of the real-document dev set (realdocs/unstructured, 117 files nobody on the
project made) and the project's generated Russian samples, read as a user's run reads them:
``narezka.runs.chunk_documents`` on each file alone, with ``--include '*'`` (so images, RTF,
legacy Office files and stray binaries are offered too), the ``headings`` strategy, 1000
characters, no conversion cache.

Per file: the format narezka gives it, the outcome (``read``; ``named`` — not read, with the
message the user sees; ``empty`` — read, 0 chunks; ``crash`` — a traceback), chunks, seconds,
the words recall of the chunks' text against a neutral reading where one exists (a PDF's text
layer by PDFium; Word/PowerPoint/Excel XML by lxml, ``realdocs/office_reference.py``; HTML and
EPUB pages as a browser shows them, by lxml (``_rendered_text``: no head, comments, scripts,
hidden elements, nor the furniture HTML's own semantics mark); ODT text by lxml; a mail's
plain or HTML body by the standard library; CSV/TSV/text files' own decoded text; an
image's twin PDF; ``language-docs/eng_spa_mult.txt`` for every ``eng_spa_mult.*``; a
generated sample's own passages) and every warning. The summary checks the issue's first
number: 0 tracebacks, no file of a read format refused or silently empty,
every file not read named with why, no raw library exception text in a message.

    NAREZKA_SHARED=/work/shared nice python benchmarks/bench_realdocs_sweep.py \\
        [--out benchmarks/results/bench_realdocs_sweep.md]
"""

from __future__ import annotations

import argparse
import codecs
import csv
import email
import email.policy
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NAREZKA_SHARED", "/work/shared"))
FOLDER = SHARED / "data" / "realdocs" / "unstructured"
sys.path.insert(0, str(REPO / "benchmarks" / "realdocs"))
sys.path.insert(0, str(REPO / "tests" / "convert"))

CHILD = r"""
import json, sys, time, traceback
from pathlib import Path
from narezka.runs.chunking import chunk_documents
from narezka.formats import format_for
for path in sys.argv[1:]:
    suffix = Path(path).suffix.lower()
    found = format_for(suffix)
    row = {"file": path, "format": found.name if found else (suffix or "(none)")}
    start = time.perf_counter()
    try:
        report = chunk_documents([path], "headings", include=["*"], size=1000, unit="chars")
        row["chunks"] = [c.text for c in report.chunks]
        row["skipped"] = [str(e) for e in report.skipped]
        row["not_read"] = list(report.not_read)
        row["empty"] = list(report.empty_files)
        row["warnings"] = list(report.warnings)
    except BaseException:
        row["crash"] = traceback.format_exc()[-1500:]
    row["seconds"] = time.perf_counter() - start
    print(json.dumps(row), flush=True)
"""

# Text a reader shows when a library's own exception leaks: a class name or its idioms.
_RAW = re.compile(
    r"Traceback|\b\w*(?:Error|Exception|Warning)\b|object has no attribute|NoneType|"
    r"\[Errno|not subscriptable|unexpected keyword|<[\w.]+ object at"
)
_NO_TEXT = re.compile(r"password|found no text|file is empty|encrypted")
"""Why a file of a read format may be named instead of read: it holds no text to read."""
_READ_TEXT = {".md", ".markdown", ".mdx", ".txt"}
"""Plain-text suffixes narezka reads by default (``formats.MARKDOWN_GLOBS``)."""


_EPUB_TEXT = re.compile(r"^(?!.*(?:nav|toc)\.x?html?$).*\.x?html?$")
"""An e-book's chapters: its navigation page repeats their titles."""


def _words(text: str) -> Counter[str]:
    return Counter(w.casefold() for w in re.findall(r"\w+", text))


def _recall(expected: Counter[str], found: Counter[str]) -> float | None:
    total = sum(expected.values())
    return sum(min(n, found[w]) for w, n in expected.items()) / total if total else None


def _decoded(data: bytes) -> str:
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(codec, "replace")
    sample = data[:4000]
    if sample.count(0) > len(sample) // 4:  # UTF-16 without a BOM: ASCII with NULs beside
        odd = sample[1::2].count(0) > sample[0::2].count(0)
        return data.decode("utf-16-le" if odd else "utf-16-be", "replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


_BLOCK_TAGS = frozenset(
    "address article aside blockquote body br caption center dd details div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section "
    "table tbody td tfoot th thead title tr ul".split()
)
_UNSHOWN_TAGS = frozenset("head script style noscript template".split())
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_FURNITURE_ROLES = frozenset("navigation banner contentinfo complementary search".split())
_SECTIONING = frozenset("article aside main nav section".split())
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?[\w-]+""", re.IGNORECASE)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].lower()


def _furniture(el: Any, tag: str) -> bool:
    """Page furniture as HTML's own semantics mark it: ``nav`` and ``aside``, ARIA landmark
    roles of furniture, and a ``header`` or ``footer`` of the page (not of an article or a
    section, where HTML makes it no banner or contentinfo). Class and id names are not read:
    they are narezka's guess, which this reference must not share."""
    if tag in ("nav", "aside") or (el.get("role") or "").lower() in _FURNITURE_ROLES:
        return True
    if tag in ("header", "footer"):
        return not any(
            isinstance(a.tag, str) and _local(a.tag) in _SECTIONING for a in el.iterancestors()
        )
    return False


def _rendered_text(root: Any) -> str:
    """The text a browser shows of a page's body, as it shows it: no ``head`` (its title is
    the tab's), comments, scripts or styles; nothing the ``hidden`` attribute or an inline
    ``display: none`` / ``visibility: hidden`` hides (an inline-XBRL filing's hidden facts);
    no furniture (``_furniture``); inline elements run together (``annu<span>al</span>`` is one
    word), block elements apart."""
    parts: list[str] = []
    todo: list[Any] = [root]
    while todo:  # iterative: real pages nest deeper than Python's recursion limit
        item = todo.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        tail = item.tail or ""
        if not isinstance(item.tag, str):  # a comment or a processing instruction
            parts.append(tail)
            continue
        tag = _local(item.tag)
        shown = not (
            tag in _UNSHOWN_TAGS
            or item.get("hidden") is not None
            or _HIDDEN_STYLE.search(item.get("style") or "")
            or _furniture(item, tag)
        )
        apart = " " if tag in _BLOCK_TAGS else ""
        todo.append(tail)
        if shown:
            todo.append(apart)
            todo.extend(reversed([*item]))
            todo.append(apart + (item.text or ""))
        else:
            todo.append(" ")
    return "".join(parts)


def _html_text(data: bytes | str) -> str:
    from lxml import html as lhtml

    if isinstance(data, bytes) and (
        data[:3] == codecs.BOM_UTF8
        or data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
        or not _CHARSET.search(data[:4096])
    ):
        # No charset declared: a browser reads UTF-8 when the bytes are, else cp1252 (lxml
        # alone would read Latin-1, making "Geschäftsjahr" two words).
        data = _decoded(data)
    if isinstance(data, str):  # lxml refuses a decoded page that declares an encoding
        data = re.sub(r"^\s*<\?xml[^>]*\?>", "", data, count=1)
    root = lhtml.fromstring(data or "<p></p>")
    return _rendered_text(root)


def _pdf_text(path: Path, pages: int | None = None) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        count = len(doc) if pages is None else min(pages, len(doc))
        return "\n".join(doc[n].get_textpage().get_text_range() for n in range(count))
    finally:
        doc.close()


def _mail_text(data: bytes) -> str:
    message = email.message_from_string(_decoded(data), policy=email.policy.default)
    parts = [str(message.get("subject") or "")]
    body = message.get_body(preferencelist=("plain", "html"))
    if body is not None:
        content = body.get_content()
        parts.append(_html_text(content) if body.get_content_subtype() == "html" else content)
    return "\n".join(parts)


def _zip_xml_text(path: Path, members: re.Pattern[str]) -> str:
    from lxml import etree

    out = []
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if members.search(name):
                root = etree.fromstring(archive.read(name), etree.XMLParser(recover=True))
                if root is not None:
                    # An e-book's pages as a reader shows them (``_rendered_text``); other
                    # XML (an ODT's content) as all its text.
                    xhtml = _local(str(root.tag)) == "html"
                    out.append(_rendered_text(root) if xhtml else " ".join(root.itertext()))
    return "\n".join(out)


def reference(path: Path) -> tuple[str, str] | None:
    """``(what, text)``: a neutral reading of ``path``'s words, or None where there is none."""
    import office_reference

    suffix = path.suffix.lower()
    if path.stem == "eng_spa_mult" and suffix != ".txt":
        return "eng_spa_mult.txt", (path.parent / "eng_spa_mult.txt").read_text()
    try:
        if suffix == ".pdf":
            text = _pdf_text(path)
            return ("PDFium text layer", text) if text.strip() else None
        if suffix in (".png", ".jpg", ".jpeg", ".tiff", ".tif"):
            from PIL import Image

            twin = FOLDER / "pdf" / (path.stem + ".pdf")
            with Image.open(path) as picture:  # the twin's pages the image's frames show
                frames = int(getattr(picture, "n_frames", 1) or 1)
            text = _pdf_text(twin, frames) if twin.exists() else ""
            return (f"pdf/{twin.name} text layer", text) if text.strip() else None
        if suffix in (".docx", ".pptx", ".xlsx"):
            reading = office_reference.read(path)
            return ("OOXML by lxml", "\n".join(reading.text)) if reading else None
        if suffix in (".html", ".htm"):
            return "lxml text", _html_text(path.read_bytes())
        if suffix == ".eml":
            return "email body", _mail_text(path.read_bytes())
        if suffix == ".epub":
            return "XHTML by lxml", _zip_xml_text(path, _EPUB_TEXT)
        if suffix == ".odt":
            return "content.xml by lxml", _zip_xml_text(path, re.compile(r"^content\.xml$"))
        if suffix in (".csv", ".tsv"):
            text = _decoded(path.read_bytes())
            dialect = "excel-tab" if suffix == ".tsv" else "excel"
            rows = csv.reader(io.StringIO(text), dialect=dialect)
            return "csv module", "\n".join(" ".join(r) for r in rows)
        if suffix in _READ_TEXT:
            return "decoded text", _decoded(path.read_bytes())
    except Exception as exc:  # a reference that cannot read the file has no say
        return f"(reference failed: {type(exc).__name__})", ""
    return None


def generated(folder: Path) -> dict[Path, str]:
    """The project's Russian samples written into ``folder``: pdflatex PDFs (article, report,
    two-column, beamer), a scan turned 0/90/180°, an ODT, an EPUB; each with the text a
    reader must find (its passages, headings and cells)."""
    import latex_samples

    import convert_samples

    made: dict[Path, str] = {}
    if latex_samples.have_pdflatex():
        for kind in latex_samples.KINDS:
            sample = latex_samples.make_latex_pdf(kind)
            path = folder / f"latex-{kind}.pdf"
            path.write_bytes(sample.pdf)
            cells = [c for row in sample.table for c in row]
            made[path] = "\n".join([*sample.passages, *sample.headings, *cells])
    lines = [
        "Правила возврата товара",
        "",
        "Вернуть товар можно в течение четырнадцати дней",
        "со дня получения заказа курьером или в пункте выдачи.",
        "",
        "Деньги возвращаются на карту за пять рабочих дней.",
    ]
    scan = folder / "scan-ru-0-90-180.pdf"
    scan.write_bytes(convert_samples.make_scan_pdf([lines, lines, lines], turns=[0, 90, 180]))
    made[scan] = "\n".join(lines * 3)
    odt = folder / "vozvrat.odt"
    odt.write_bytes(convert_samples.make_odt())
    made[odt] = _zip_xml_text(odt, re.compile(r"^content\.xml$"))
    epub = folder / "kniga.epub"
    epub.write_bytes(convert_samples.make_epub())
    made[epub] = _zip_xml_text(epub, _EPUB_TEXT)
    return made


def _outcome(row: dict[str, Any], readable: bool) -> tuple[str, str]:
    if "crash" in row:
        return "crash", row["crash"].strip().splitlines()[-1]
    if row["skipped"]:
        return "named", "; ".join(row["skipped"])
    if row["not_read"]:
        return "named", "; ".join(row["not_read"])
    if not row["chunks"]:
        told = "; ".join(row["warnings"] + row["empty"])
        return ("empty", told) if told or not readable else ("SILENT", "0 chunks, no message")
    return "read", ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    files = sorted(p for p in FOLDER.rglob("*") if p.is_file())
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmp:
        made = generated(Path(tmp))
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        done = subprocess.run(
            [args.python, "-c", CHILD, *map(str, [*files, *made])],
            capture_output=True, text=True, env=env, check=False, cwd=tmp, timeout=3600,
        )  # fmt: skip
        rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode:
            print(done.stderr[-3000:], file=sys.stderr)
        from narezka.formats import CONVERTED_SUFFIXES

        lines, counts, recalls = [], Counter[str](), {}
        for row in rows:
            path = Path(row["file"])
            name = (
                path.relative_to(FOLDER).as_posix()
                if path.is_relative_to(FOLDER)
                else f"(generated) {path.name}"
            )
            readable = path.suffix.lower() in CONVERTED_SUFFIXES | _READ_TEXT
            outcome, message = _outcome(row, readable)
            ref = (
                ("sample's own text", made[path])
                if path in made
                else reference(path)
                if outcome == "read" or readable
                else None
            )
            recall = None
            if ref and ref[1].strip():
                recall = _recall(_words(ref[1]), _words("\n".join(row.get("chunks") or [])))
                if recall is not None:
                    recalls.setdefault(row["format"], []).append(recall)
            raw = [m for m in [message, *row.get("warnings", [])] if _RAW.search(m)]
            flags = []
            if outcome in ("crash", "SILENT"):
                flags.append("DEFECT")
            if readable and outcome == "named" and not _NO_TEXT.search(message):
                flags.append("refused")
            if raw:
                flags.append("RAW")
            counts[outcome] += 1
            counts["raw"] += bool(raw)
            told = " | ".join(x for x in [message, *row.get("warnings", [])] if x)
            lines.append(
                f"| {name} | {row['format']} | {outcome} | {len(row.get('chunks') or [])} "
                f"| {'' if recall is None else f'{recall:.3f}'} | {row['seconds']:.2f} "
                f"| {' '.join(flags)} | {told.replace('|', '/')[:300]} |"
            )
    out = [
        "# Whole dev-set sweep: every file read as a user's run reads it",
        "",
        f"{len(rows)} files ({len(files)} of realdocs/unstructured, {len(made)} generated).",
        f"Outcomes: {dict(counts)}.",
        "",
        "Words recall median per format (files with a neutral reference):",
        "",
        "| format | files | median | min |",
        "|---|---|---|---|",
        *(
            f"| {fmt} | {len(v)} | {statistics.median(v):.3f} | {min(v):.3f} |"
            for fmt, v in sorted(recalls.items())
        ),
        "",
        "| file | format | outcome | chunks | words recall | s | flags | what the user is told |",
        "|---|---|---|---|---|---|---|---|",
        *lines,
        "",
        "Notes: `named` = not read, with the message shown (the issue allows it for formats",
        "narezka does not read, password-protected files and files without text); `refused`",
        "flags a named file of a read format; `RAW` flags a message holding a library's",
        "exception text; `SILENT` a read format giving 0 chunks without a word.",
        "Command: `NAREZKA_SHARED=/work/shared nice python benchmarks/bench_realdocs_sweep.py"
        " --out benchmarks/results/bench_realdocs_sweep.md`",
    ]
    text = "\n".join(out) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
