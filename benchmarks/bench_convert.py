"""Round-trip fidelity of narezka.convert against peers (issue 25).

md_corpus documents (RU and EN) are rendered as HTML site pages (one header, a 40-link menu, a
cookie notice and a footer on every page), as Word files (pandoc), as PDFs (LibreOffice from
that Word file, with a running header and page numbers), as two-column PDFs (Chromium's print
of pandoc's page under CSS ``columns: 2``, and the same text laid out by reportlab with each
baseline written across both columns, as some generators write them), OpenDocument and EPUB,
then converted back by narezka and, in the same run, by the peers that install offline
(MarkItDown; pypdf's ``extract_text``, what LangChain's PyPDFLoader returns). Scored against
the Markdown original: word-token recall and precision, word-bigram recall (reading order:
two columns read line across line lose it), heading P/R (title and level), table-cell and
code-block recovery, the share of chunks holding boilerplate, speed and peak memory.

Each tool converts each format's files in a child process of its own (a fresh Python that
imports that tool only), which reports its peak RSS: imports, the conversions and what they
keep, as a user's process would hold them.

    NAREZKA_SHARED=/work/shared python benchmarks/bench_convert.py [--docs 12] [--out FILE] \
        [--markitdown PYTHON]

Needs ``pandoc``, ``soffice`` and ``chromium`` (Debian: pandoc, libreoffice-writer-nogui,
chromium). ``--markitdown`` names a Python that has MarkItDown (default: this one).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# narezka is imported where it is used: a peer's child process runs in the peer's Python.

SHARED = Path(os.environ.get("NAREZKA_SHARED", "/work/shared"))
CORPUS = SHARED / "data" / "md_corpus"
MENU = [f"Раздел меню {i} Menu item {i}" for i in range(40)]
COOKIE = "Мы используем cookies. We use cookies to improve this site: accept all"
FOOTER = "© 2026 Example Docs Ltd. All rights reserved. Политика конфиденциальности"
HEADER = "Example Docs — knowledge base"
BOILERPLATE = [*MENU, COOKIE, FOOTER, HEADER]
PAGE = """<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8"><title>{title}</title>
<script>window.analytics = true;</script></head><body>
<header><div class="logo">{header}</div></header>
<div class="menu"><ul>{menu}</ul></div>
<div class="cookie-banner">{cookie}</div>
<div class="page">{body}</div>
<div class="site-footer">{footer}</div></body></html>"""


_GFM_TABLE = re.compile(r"^\|.*\|[ \t]*\n\|[-:| \t]+\|[ \t]*$", re.MULTILINE)


def _pick(lang: str, count: int) -> list[Path]:
    """``count`` documents of 4-30 KB spread over the language's folder, three of them
    holding GFM tables (few documents do: a spread alone would measure tables on one)."""
    files = sorted((CORPUS / lang).rglob("*.md"))
    sized = [f for f in files if 4_000 <= f.stat().st_size <= 30_000]
    tables = [f for f in sized if _GFM_TABLE.search(f.read_text(encoding="utf-8"))][::7][:3]
    rest = [f for f in sized if f not in tables]
    step = max(1, len(rest) // max(count - len(tables), 1))
    return rest[::step][: count - len(tables)] + tables


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, timeout=600)


def _reference_docx(work: Path) -> Path:
    """pandoc's reference.docx with a running header and a page-number footer."""
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    ref = work / "reference.docx"
    _run(["pandoc", "-o", str(ref), "--print-default-data-file", "reference.docx"])
    document = docx.Document(str(ref))
    section = document.sections[0]
    section.header.paragraphs[0].text = HEADER
    footer = section.footer.paragraphs[0]
    field_ = OxmlElement("w:fldSimple")
    field_.set(qn("w:instr"), "PAGE")
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "1"
    run.append(text)
    field_.append(run)
    footer._p.append(field_)
    document.save(str(ref))
    return ref


TWO_COLUMN_CSS = (
    "<style>body{columns:2;column-gap:2em;max-width:none;font-size:11pt}"
    "pre{white-space:pre-wrap}h1{column-span:all}</style>"
)
ROW_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
ROW_WIDTH = 235.0
"""Points a line of the row-written two-column layout holds (10 pt DejaVu; the right column
starts 260 points after the left)."""


def _chromium(html: Path, pdf: Path) -> None:
    _run(
        [
            *("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"),
            *(f"--print-to-pdf={pdf}", html.as_uri()),
        ]
    )
    if not pdf.exists():
        raise RuntimeError(f"chromium printed nothing for {html.name}")


def _rows_pdf(plain: str, pdf: Path) -> None:
    """``plain`` text in two columns, each baseline written across both (left then right):
    the text layer some generators write, which reads line across line unless columns are
    found. A running header and a page number on every page."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("DejaVu", str(ROW_FONT)))
    lines: list[str] = []
    for paragraph in re.split(r"\n\s*\n", plain):
        line = ""
        for word in paragraph.split():
            joined = f"{line} {word}" if line else word
            if line and pdfmetrics.stringWidth(joined, "DejaVu", 10) > ROW_WIDTH:
                lines.append(line)
                joined = word
            line = joined
        lines += [line, ""] if line else [""]
    rows = 56
    width, height = A4
    doc = canvas.Canvas(str(pdf), pagesize=A4)
    for number, at in enumerate(range(0, len(lines), 2 * rows), 1):
        left, right = lines[at : at + rows], lines[at + rows : at + 2 * rows]
        doc.setFont("DejaVu", 8)
        doc.drawString(50, height - 30, HEADER)
        doc.drawString(width / 2, 25, str(number))
        doc.setFont("DejaVu", 10)
        for row in range(rows):
            y = height - 70 - 13 * row
            for x, column in ((50, left), (310, right)):
                if row < len(column) and column[row]:
                    doc.drawString(x, y, column[row])
        doc.showPage()
    doc.save()


def render(files: list[Path], work: Path) -> dict[str, dict[str, Path]]:
    """Each document as ``.html``, ``.docx``, ``.pdf``, ``.odt``, ``.epub`` and the two
    two-column PDFs (``.pdf2``: Chromium, CSS columns; ``.pdf2r``: baselines across both
    columns) under ``work``."""
    ref = _reference_docx(work)
    menu = "".join(f'<li><a href="/m{i}">{label}</a></li>' for i, label in enumerate(MENU))
    out: dict[str, dict[str, Path]] = {}
    (work / "2col").mkdir()
    (work / "rows").mkdir()
    for n, md in enumerate(files):
        stem = f"d{n:02d}"
        html_body = subprocess.run(
            ["pandoc", "-f", "gfm", "-t", "html", str(md)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        page = work / f"{stem}.html"
        page.write_text(
            PAGE.format(
                title=md.stem,
                header=HEADER,
                menu=menu,
                cookie=COOKIE,
                body=html_body,
                footer=FOOTER,
            ),
            encoding="utf-8",
        )
        _run(
            [
                "pandoc",
                "-f",
                "gfm",
                "--reference-doc",
                str(ref),
                "-o",
                f"{stem}.docx",
                str(md),
            ],
            work,
        )
        for writer, suffix in (("odt", ".odt"), ("epub3", ".epub")):
            _run(["pandoc", "-f", "gfm", "-t", writer, "-o", f"{stem}{suffix}", str(md)], work)
        standalone = work / f"{stem}-2col.html"
        _run(
            [
                *("pandoc", "-s", "-f", "gfm", "-t", "html", "--metadata", f"pagetitle={md.stem}"),
                *("-o", str(standalone), str(md)),
            ]
        )
        text = standalone.read_text(encoding="utf-8")
        standalone.write_text(text.replace("</head>", TWO_COLUMN_CSS + "</head>", 1), "utf-8")
        _chromium(standalone, work / "2col" / f"{stem}.pdf")
        plain = subprocess.run(
            ["pandoc", "-f", "gfm", "-t", "plain", "--wrap=none", str(md)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        _rows_pdf(plain, work / "rows" / f"{stem}.pdf")
        (work / "rows" / f"{stem}.txt").write_text(plain, encoding="utf-8")
        out[str(md)] = {
            ".html": page,
            ".docx": work / f"{stem}.docx",
            ".pdf": work / f"{stem}.pdf",
            ".odt": work / f"{stem}.odt",
            ".epub": work / f"{stem}.epub",
            ".pdf2": work / "2col" / f"{stem}.pdf",
            ".pdf2r": work / "rows" / f"{stem}.pdf",
        }
    docx_files = [str(work / f"d{n:02d}.docx") for n in range(len(files))]
    _run(["soffice", "--headless", "--convert-to", "pdf", "--outdir", str(work), *docx_files], work)
    return out


FORMATS = {
    ".html": "html",
    ".docx": "docx",
    ".pdf": "pdf",
    ".odt": "odt",
    ".epub": "epub",
    ".pdf2": "pdf, 2 columns (Chromium)",
    ".pdf2r": "pdf, 2 columns (rows across)",
}
"""What each rendering's key stands for; ``.pdf2`` and ``.pdf2r`` are ``.pdf`` files in
folders of their own, so that every tool sees a PDF."""


# --- scoring ------------------------------------------------------------------------------

_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")
_ATTRS = re.compile(r"\{[^{}\n]*[#.][^{}\n]*\}")
_FENCE_INFO = re.compile(r"^(\s*(?:```+|~~~+))[^\n]*$", re.MULTILINE)
_WORD = re.compile(r"\w+")


def _visible(md: str) -> str:
    return _ATTRS.sub(" ", _TAG.sub(" ", _LINK_TARGET.sub("]", _FENCE_INFO.sub(r"\1", md))))


def _tokens(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


def _bigrams(text: str) -> Counter[tuple[str, str]]:
    """Adjacent word pairs: a text read line across two columns keeps its words and loses
    most of these."""
    words = _WORD.findall(text.lower())
    return Counter(itertools.pairwise(words))


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(_visible(text).lower()))


def _structure(md: str) -> tuple[set[tuple[int, str]], list[str], list[str]]:
    """Headings (level, title), table cells, code-block token strings of a Markdown text."""
    from narezka.parse.markdown import parse_blocks
    from narezka.types import BlockKind

    headings: set[tuple[int, str]] = set()
    cells: list[str] = []
    code: list[str] = []
    for block in parse_blocks(md):
        text = md[block.start : block.end]
        if block.kind is BlockKind.HEADING and _norm(block.title):
            headings.add((block.level, _norm(block.title)))
        elif block.kind is BlockKind.TABLE:
            for line in text.splitlines():
                if set(line.strip()) <= set("|-: "):
                    continue
                cells.extend(c for c in (_norm(x) for x in line.split("|")) if c)
        elif block.kind is BlockKind.CODE:
            body = "\n".join(text.splitlines()[1:-1]) if block.fence else text
            if _norm(body):
                code.append(_norm(body))
    return headings, cells, code


@dataclass
class Score:
    """Sums over the documents one tool converted in one format."""

    docs: int = 0
    failed: int = 0
    matched: int = 0
    original: int = 0
    produced: int = 0
    pairs: int = 0
    pairs_found: int = 0
    h_match: int = 0
    h_orig: int = 0
    h_out: int = 0
    cells: int = 0
    cells_found: int = 0
    code: int = 0
    code_found: int = 0
    chunks: int = 0
    dirty_chunks: int = 0
    seconds: float = 0.0
    pages: int = 0
    megabytes: float = 0.0
    peak_mb: float = 0.0
    errors: list[str] = field(default_factory=list)

    def add(self, original: str, output: str, boiler: list[str]) -> None:
        from narezka import chunk_text

        self.docs += 1
        want, got = _tokens(_visible(original)), _tokens(_visible(output))
        self.matched += sum((want & got).values())
        self.original += sum(want.values())
        self.produced += sum(got.values())
        pairs = _bigrams(_visible(original))
        self.pairs += sum(pairs.values())
        self.pairs_found += sum((pairs & _bigrams(_visible(output))).values())
        h1, c1, k1 = _structure(original)
        h2, c2, k2 = _structure(output)
        self.h_match += len(h1 & h2)
        self.h_orig += len(h1)
        self.h_out += len(h2)
        got_cells = set(c2)
        self.cells += len(c1)
        self.cells_found += sum(c in got_cells for c in c1)
        joined = "\n".join(k2)
        self.code += len(k1)
        self.code_found += sum(k in joined for k in k1)
        if output.strip():
            for chunk in chunk_text(output, "headings", size=1000):
                self.chunks += 1
                self.dirty_chunks += any(b in chunk.text for b in boiler)


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}" if b else "—"


# --- the tools, each run in a child process -----------------------------------------------

Tool = Callable[[Path], str]


def _narezka(suffix: str, files: list[Path]) -> Tool:
    sys.path.insert(0, str(REPO / "src"))
    from narezka.convert import convert

    boilerplate: frozenset[str] = frozenset()
    if suffix == ".html":  # the crawl's repeated blocks: part of reading a crawl
        from narezka.convert.html import page_block_keys, repeated_blocks

        boilerplate = repeated_blocks(page_block_keys(p.read_bytes(), p.name) for p in files)
    return lambda path: (
        convert(path.read_bytes(), path.suffix, path.name, boilerplate=boilerplate).markdown
    )


def _markitdown() -> Tool:
    from markitdown import MarkItDown

    engine = MarkItDown(enable_plugins=False)
    return lambda path: str(engine.convert(str(path)).markdown)


def _pypdf(path: Path) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() for page in PdfReader(str(path)).pages)


def child(tool: str, suffix: str, listing: Path, result: Path) -> None:
    """Convert the files listed (one path a line) with one tool, in this fresh process;
    write each output (or error) and its seconds, and this process's peak RSS, as JSON."""
    files = [Path(line) for line in listing.read_text(encoding="utf-8").splitlines()]
    run: Tool
    if tool == "narezka":
        run = _narezka(suffix, files)
    elif tool == "markitdown":
        run = _markitdown()
    elif tool == "text":  # what a rendering's pages hold: the ceiling of reading them
        run = lambda path: path.with_suffix(".txt").read_text(encoding="utf-8")  # noqa: E731
    else:
        run = _pypdf
    outputs = []
    for path in files:
        started = time.perf_counter()
        try:
            outputs.append({"text": run(path), "seconds": time.perf_counter() - started})
        except Exception as exc:
            outputs.append({"error": f"{path.name}: {type(exc).__name__}: {exc}"[:160]})
    result.write_text(json.dumps({"outputs": outputs, "peak_mb": _peak_mb()}), "utf-8")


def _in_child(
    python: str, tool: str, suffix: str, files: list[Path], work: Path
) -> tuple[list[dict[str, object]], float]:
    listing, result = work / f"{tool}{suffix}.list", work / f"{tool}{suffix}.json"
    listing.write_text("\n".join(str(f) for f in files), encoding="utf-8")
    args = ["--child", tool, suffix, str(listing), str(result)]
    subprocess.run([python, __file__, *args], check=True, timeout=3600)
    data = json.loads(result.read_text(encoding="utf-8"))
    return data["outputs"], float(data["peak_mb"])


def _pages(path: Path) -> int:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(path.read_bytes())
    try:
        return len(pdf)
    finally:
        pdf.close()


def _peak_mb() -> float:
    """This process's peak RSS (Linux's VmHWM: the peak of this program's own memory; the
    ``ru_maxrss`` of a child started by a big parent keeps the parent's figure)."""
    import resource

    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _bare_python(python: str) -> float:
    """Peak RSS of a Python that imports nothing: what every child's figure starts from."""
    done = subprocess.run(
        [python, "-c", "import bench_convert as b; print(b._peak_mb())"],
        cwd=Path(__file__).parent,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(done.stdout)


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5]))
        return
    sys.path.insert(0, str(REPO / "src"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=12, help="documents per language")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--markitdown", default=sys.executable, help="a Python with MarkItDown installed"
    )
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"no corpus at {CORPUS} (set NAREZKA_SHARED)")
    for tool in ("pandoc", "soffice", "chromium"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is needed (apt-get install pandoc libreoffice-writer-nogui chromium)")
    files = _pick("ru", args.docs) + _pick("en", args.docs)
    peers = subprocess.run(
        [args.markitdown, "-c", "import markitdown, pypdf; print(markitdown.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    markitdown = peers.stdout.strip() if peers.returncode == 0 else ""
    if not markitdown:
        print(f"MarkItDown not measured: {peers.stderr.strip()[-200:]}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        rendered = render(files, work)
        render_s = time.perf_counter() - started
        tools: list[tuple[str, str, str, str]] = [  # suffix, row name, tool, its Python
            *((s, "narezka", "narezka", sys.executable) for s in FORMATS),
        ]
        pdfs = [s for s in FORMATS if s.startswith(".pdf")]
        python = args.markitdown if markitdown else sys.executable
        tools += [(s, "pypdf (LangChain PyPDFLoader)", "pypdf", python) for s in pdfs]
        tools.append((".pdf2r", "(its laid-out text: the ceiling)", "text", sys.executable))
        if markitdown:
            shown = (".html", ".docx", ".epub", *pdfs)
            tools += [(s, "MarkItDown", "markitdown", args.markitdown) for s in shown]
        scores: dict[tuple[str, str], Score] = {}
        for suffix, name, tool, python in tools:
            score = scores.setdefault((suffix, name), Score())
            boiler = BOILERPLATE if suffix == ".html" else [HEADER]
            originals = list(rendered)
            paths = [rendered[md][suffix] for md in originals]
            print(f"{FORMATS[suffix]}: {name}", file=sys.stderr, flush=True)
            outputs, score.peak_mb = _in_child(python, tool, suffix, paths, work)
            for md, path, out in zip(originals, paths, outputs, strict=True):
                if "error" in out:
                    score.failed += 1
                    score.errors.append(str(out["error"]))
                    continue
                score.seconds += float(out["seconds"])  # type: ignore[arg-type]
                score.megabytes += path.stat().st_size / 2**20
                if suffix.startswith(".pdf"):
                    score.pages += _pages(path)
                score.add(Path(md).read_text(encoding="utf-8"), str(out["text"]), boiler)
        bare = _bare_python(sys.executable)
    lines = [
        "# bench_convert: round-trip fidelity (issue 25)",
        "",
        f"{len(files)} md_corpus documents ({args.docs} RU + {args.docs} EN, 4-30 KB), rendered "
        f"in {render_s:.0f} s: HTML site pages (header, 40-link menu, cookie notice, footer), "
        "Word (pandoc, running header and page-number footer), PDF (LibreOffice from that Word "
        "file), OpenDocument and EPUB (pandoc), and two-column PDFs: Chromium's print of "
        "pandoc's page under CSS `columns: 2` (its date/title header, address/page footer), "
        "and pandoc's plain text laid out in two columns by reportlab with each baseline "
        "written across both columns (a running header, page numbers). Scores against the "
        "Markdown original; tokens are `\\w+` words, link targets, tags and fence info strings "
        "left out of both sides; bigram recall counts adjacent word pairs (reading order). "
        "Boilerplate: share of chunks (narezka headings, 1000 chars) holding a menu, cookie, "
        "header or footer string (PDF: the running header). Speed is conversion only; peak "
        "RSS is the whole child process that ran one tool over one format's files (a bare "
        f"Python: {bare:.0f} MB). MarkItDown {markitdown or 'not measured'}.",
        "",
        "| format | tool | docs ok | token recall % | token precision % | bigram recall % | "
        "heading P % | heading R % | table cells % | code blocks % | boilerplate chunks % | "
        "pages/s | MB/s | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (suffix, name), s in scores.items():
        speed = f"{s.pages / s.seconds:.1f}" if s.pages and s.seconds else "—"
        mbps = f"{s.megabytes / s.seconds:.2f}" if s.seconds else "—"
        if name.startswith("("):  # a ceiling reads a text file: no speed to speak of
            speed = mbps = "—"
        lines.append(
            f"| {FORMATS[suffix]} | {name} | {s.docs}/{s.docs + s.failed} | "
            f"{_pct(s.matched, s.original)} | {_pct(s.matched, s.produced)} | "
            f"{_pct(s.pairs_found, s.pairs)} | "
            f"{_pct(s.h_match, s.h_out)} | {_pct(s.h_match, s.h_orig)} | "
            f"{_pct(s.cells_found, s.cells)} | {_pct(s.code_found, s.code)} | "
            f"{_pct(s.dirty_chunks, s.chunks)} | {speed} | {mbps} | {s.peak_mb:.0f} |"
        )
    errors = [e for s in scores.values() for e in s.errors]
    if errors:
        lines += ["", "Failures:", "", *[f"- {e}" for e in errors[:20]]]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
