"""Round-trip fidelity of narezka.convert against peers (issue 25).

md_corpus documents (RU and EN) are rendered as HTML site pages (one header, a 40-link menu, a
cookie notice and a footer on every page), as Word files (pandoc) and as PDFs (LibreOffice from
that Word file, with a running header and page numbers), then converted back by narezka and, in
the same run, by the peers that install offline (MarkItDown; pypdf's ``extract_text``, what
LangChain's PyPDFLoader returns). Scored against the Markdown original: word-token recall and
precision, heading P/R (title and level), table-cell and code-block recovery, the share of
chunks holding boilerplate, and speed.

    NAREZKA_SHARED=/work/shared python benchmarks/bench_convert.py [--docs 12] [--out FILE]

Needs ``pandoc`` and ``soffice`` (Debian: pandoc, libreoffice-writer-nogui).
"""

from __future__ import annotations

import argparse
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

from narezka import chunk_text
from narezka.convert import convert
from narezka.convert.html import page_block_keys, repeated_blocks
from narezka.parse.markdown import parse_blocks
from narezka.types import BlockKind

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


def render(files: list[Path], work: Path) -> dict[str, dict[str, Path]]:
    """Each document as ``.html``, ``.docx`` and ``.pdf`` under ``work``."""
    ref = _reference_docx(work)
    menu = "".join(f'<li><a href="/m{i}">{label}</a></li>' for i, label in enumerate(MENU))
    out: dict[str, dict[str, Path]] = {}
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
        out[str(md)] = {
            ".html": page,
            ".docx": work / f"{stem}.docx",
            ".pdf": work / f"{stem}.pdf",
            ".odt": work / f"{stem}.odt",
            ".epub": work / f"{stem}.epub",
        }
    docx_files = [str(work / f"d{n:02d}.docx") for n in range(len(files))]
    _run(["soffice", "--headless", "--convert-to", "pdf", "--outdir", str(work), *docx_files], work)
    return out


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


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(_visible(text).lower()))


def _structure(md: str) -> tuple[set[tuple[int, str]], list[str], list[str]]:
    """Headings (level, title), table cells, code-block token strings of a Markdown text."""
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
    errors: list[str] = field(default_factory=list)

    def add(self, original: str, output: str, boiler: list[str]) -> None:
        self.docs += 1
        want, got = _tokens(_visible(original)), _tokens(_visible(output))
        self.matched += sum((want & got).values())
        self.original += sum(want.values())
        self.produced += sum(got.values())
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


Tool = Callable[[Path], str]


def _narezka(suffix: str, boilerplate: frozenset[str]) -> Tool:
    def run(path: Path) -> str:
        return convert(path.read_bytes(), suffix, path.name, boilerplate=boilerplate).markdown

    return run


def _markitdown() -> Tool:
    from markitdown import MarkItDown

    engine = MarkItDown(enable_plugins=False)
    return lambda path: str(engine.convert(str(path)).markdown)


def _pypdf(path: Path) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() for page in PdfReader(str(path)).pages)


def _pages(path: Path) -> int:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(path.read_bytes())
    try:
        return len(pdf)
    finally:
        pdf.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=12, help="documents per language")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"no corpus at {CORPUS} (set NAREZKA_SHARED)")
    for tool in ("pandoc", "soffice"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is needed (apt-get install pandoc libreoffice-writer-nogui)")
    files = _pick("ru", args.docs) + _pick("en", args.docs)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        rendered = render(files, work)
        render_s = time.perf_counter() - started
        pages = [p[".html"] for p in rendered.values()]
        crawl = repeated_blocks(page_block_keys(p.read_bytes(), p.name) for p in pages)
        tools: list[tuple[str, str, Tool]] = [
            (".html", "narezka", _narezka(".html", crawl)),
            (".docx", "narezka", _narezka(".docx", frozenset())),
            (".pdf", "narezka", _narezka(".pdf", frozenset())),
            (".odt", "narezka", _narezka(".odt", frozenset())),
            (".epub", "narezka", _narezka(".epub", frozenset())),
            (".pdf", "pypdf (LangChain PyPDFLoader)", _pypdf),
        ]
        try:
            peer = _markitdown()
            tools += [(s, "MarkItDown", peer) for s in (".html", ".docx", ".pdf", ".epub")]
        except ImportError as exc:
            print(f"MarkItDown not measured: {exc}", file=sys.stderr)
        scores: dict[tuple[str, str], Score] = {}
        for suffix, name, tool in tools:
            score = scores.setdefault((suffix, name), Score())
            boiler = BOILERPLATE if suffix == ".html" else [HEADER]
            for md, forms in rendered.items():
                path = forms[suffix]
                original = Path(md).read_text(encoding="utf-8")
                t0 = time.perf_counter()
                try:
                    output = tool(path)
                except Exception as exc:
                    score.failed += 1
                    score.errors.append(f"{path.name}: {type(exc).__name__}: {exc}"[:160])
                    continue
                score.seconds += time.perf_counter() - t0
                score.megabytes += path.stat().st_size / 2**20
                if suffix == ".pdf":
                    score.pages += _pages(path)
                score.add(original, output, boiler)
    lines = [
        "# bench_convert: round-trip fidelity (issue 25)",
        "",
        f"{len(files)} md_corpus documents ({args.docs} RU + {args.docs} EN, 4-30 KB), rendered "
        f"in {render_s:.0f} s: HTML site pages (header, 40-link menu, cookie notice, footer), "
        "Word (pandoc, running header and page-number footer), PDF (LibreOffice from that Word "
        "file), OpenDocument and EPUB (pandoc). Scores against the Markdown original; "
        "tokens are `\\w+` words, link targets, "
        "tags and fence info strings left out of both sides. Boilerplate: share of chunks "
        "(narezka headings, 1000 chars) holding a menu, cookie, header or footer string (PDF: "
        "the running header). Speed is conversion only, one process.",
        "",
        "| format | tool | docs ok | token recall % | token precision % | heading P % | "
        "heading R % | table cells % | code blocks % | boilerplate chunks % | pages/s | MB/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (suffix, name), s in scores.items():
        speed = f"{s.pages / s.seconds:.1f}" if s.pages and s.seconds else "—"
        mbps = f"{s.megabytes / s.seconds:.2f}" if s.seconds else "—"
        lines.append(
            f"| {suffix[1:]} | {name} | {s.docs}/{s.docs + s.failed} | "
            f"{_pct(s.matched, s.original)} | {_pct(s.matched, s.produced)} | "
            f"{_pct(s.h_match, s.h_out)} | {_pct(s.h_match, s.h_orig)} | "
            f"{_pct(s.cells_found, s.cells)} | {_pct(s.code_found, s.code)} | "
            f"{_pct(s.dirty_chunks, s.chunks)} | {speed} | {mbps} |"
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
