"""Secrets planted in every place each converted format offers, and a way to find them in
bytes as ``grep -a`` would: the corpus of the trust audit's row 2 (#38), shared by
``tests/trust/test_trust_cache.py`` and ``benchmarks/audit_trust.py``.

Each file also carries a plain "canary" phrase, to find its text after it is deleted.
"""

from __future__ import annotations

import hashlib
import io
import sys
from collections.abc import Callable
from pathlib import Path

# The generic writers of tests/convert (an EPUB's package, an ODT's zip), from here too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "convert"))
import convert_samples as samples

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _body(label: str, n: int, alphabet: str = _ALNUM) -> str:
    digest = hashlib.sha256(label.encode()).digest() * 4
    return "".join(alphabet[b % len(alphabet)] for b in digest[:n])


# The shapes of benchmarks/audit_trust.py's SECRETS, one distinct value per position.
SHAPES: dict[str, Callable[[str], str]] = {
    "github": lambda label: "ghp_" + _body(label, 36),
    "aws": lambda label: "AKIA" + _body(label, 16, _ALNUM[:26] + _ALNUM[52:]),
    "slack": lambda label: "xoxb-123456789012-1234567890123-" + _body(label, 24),
    "stripe": lambda label: "sk_live_" + _body(label, 24),
    "gitlab": lambda label: "glpat-" + _body(label, 20),
    "google": lambda label: "AIza" + _body(label, 35),
    "npm": lambda label: "npm_" + _body(label, 36),
}
PLANTED: dict[str, str] = {}


def secret(where: str, shape: str) -> str:
    """A secret of ``shape`` planted at ``where`` (``format: position``), remembered."""
    PLANTED[where] = SHAPES[shape](where)
    return PLANTED[where]


def canary(name: str) -> str:
    """A phrase only this file holds: its text, to find after the file is gone."""
    return f"canary{_body(name, 12, _ALNUM[26:52])}phrase"


def _tail(value: str) -> str:
    """The secret's last run of letters and digits (16+), lowercased: a slug of the secret
    (an anchor, an id) keeps it, whatever its case and punctuation became."""
    runs = "".join(c if c.isalnum() else " " for c in value).split()
    return max(runs, key=len).lower()


def found(blob: bytes, values: dict[str, str]) -> list[str]:
    """Which of ``values`` (label: text) ``blob`` holds, as written or slugged."""
    lowered = blob.lower()
    return [label for label, v in values.items() if _tail(v).encode() in lowered]


def on_disk(home: Path, values: dict[str, str]) -> list[str]:
    """``file: label`` for each value some file under ``home`` holds (``grep -a -r``)."""
    hits = []
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        hits += [f"{path.relative_to(home)}: {label}" for label in found(path.read_bytes(), values)]
    return hits


# --- the corpus: one file per converted format, secrets wherever it keeps text ------------


def make_md() -> bytes:
    return (
        f"---\ntitle: Keys {secret('md: front matter', 'aws')}\n---\n\n"
        f"# Token {secret('md: heading', 'github')} rotation\n\n"
        f"| service | key |\n|---|---|\n| chat | {secret('md: table cell', 'slack')} |\n\n"
        f"{canary('md')} and the rest of the note.\n"
    ).encode()


def make_pdf() -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    footer = f"Confidential {secret('pdf: running footer', 'gitlab')}"
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    height = A4[1]
    for page in range(1, 4):
        pdf.setFont("Helvetica", 9)
        pdf.drawString(50, 25, footer)
        pdf.setFont("Helvetica-Bold", 20)
        if page == 1:
            pdf.drawString(50, height - 80, f"Access {secret('pdf: heading', 'github')}")
        pdf.setFont("Helvetica", 11)
        pdf.drawString(50, height - 130, f"Page {page} of the report, about delivery terms.")
        if page == 2:
            pdf.drawString(50, height - 150, f"The key is {secret('pdf: body', 'stripe')} now.")
            pdf.drawString(50, height - 170, f"Then {canary('pdf')} follows.")
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def make_docx() -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.title = f"Doc {secret('docx: core title', 'google')}"
    document.add_heading(f"Rotate {secret('docx: heading', 'github')}", level=1)
    document.add_paragraph(f"Publish with {secret('docx: body', 'npm')} and {canary('docx')}.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([["Service", "Key"], ["AWS", secret("docx: table cell", "aws")]]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_pptx() -> bytes:
    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    assert slide.shapes.title is not None
    slide.shapes.title.text = f"Deploy {secret('pptx: slide title', 'github')}"
    slide.placeholders[1].text_frame.text = f"Body with {canary('pptx')}"
    notes = f"Say {secret('pptx: notes', 'stripe')} aloud"
    slide.notes_slide.notes_text_frame.text = notes
    second = deck.slides.add_slide(deck.slide_layouts[1])
    assert second.shapes.title is not None
    second.shapes.title.text = "Prices"
    second.placeholders[1].text_frame.text = f"Key {secret('pptx: body', 'gitlab')}"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def make_xlsx() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = secret("xlsx: sheet name", "aws")  # 20 characters: a sheet name fits 31
    for row in [["Service", "Key"], ["chat", secret("xlsx: cell", "slack")], [canary("xlsx")]]:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def make_html() -> str:
    return (
        f"<html><head><title>Keys {secret('html: title', 'google')}</title></head><body>"
        f"<h1>Keys</h1><p>Intro, {canary('html')}.</p>"
        f"<h2>Token {secret('html: h2', 'gitlab')}</h2>"
        f'<p id="{secret("html: id attribute", "npm")}">Rotate it monthly.</p>'
        f"<p>The key: {secret('html: body', 'stripe')}</p></body></html>"
    )


def make_epub() -> bytes:
    opf = f"""<?xml version="1.0"?>
<package xmlns="http://www.idpf.org/2007/opf" xmlns:dc="http://purl.org/dc/elements/1.1/"
 version="3.0"><metadata><dc:title>Book {secret("epub: title", "aws")}</dc:title></metadata>
 <manifest><item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/></manifest>
 <spine><itemref idref="c1"/></spine></package>"""
    chapter = (
        f'<h1 id="{secret("epub: id attribute", "npm")}">'
        f"Chapter {secret('epub: heading', 'github')}</h1>"
        f"<p>Text with {secret('epub: body', 'slack')} and {canary('epub')}.</p>"
    )
    return samples.make_epub(opf, {"ch1.xhtml": chapter})


def make_odt() -> bytes:
    return samples.make_odt(f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3">
<office:body><office:text>
 <text:h text:outline-level="1">Keys {secret("odt: heading", "github")}</text:h>
 <text:p>Use {secret("odt: body", "aws")} with {canary("odt")}.</text:p>
</office:text></office:body></office:document-content>
""")


def make_csv() -> str:
    return (
        f"service,{secret('csv: header', 'stripe')}\n"
        f"chat,{secret('csv: cell', 'github')}\nnote,{canary('csv')}\n"
    )


FILES: dict[str, Callable[[], bytes | str]] = {
    "keys.md": make_md,
    "report.pdf": make_pdf,
    "memo.docx": make_docx,
    "deck.pptx": make_pptx,
    "book.xlsx": make_xlsx,
    "page.html": make_html,
    "novel.epub": make_epub,
    "letter.odt": make_odt,
    "table.csv": make_csv,
}
CANARIES = {name: canary(Path(name).suffix[1:]) for name in FILES}


def write_corpus(folder: Path) -> Path:
    folder.mkdir()
    for name, make in FILES.items():
        data = make()
        path = folder / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    (folder / "plain.md").write_text("# Tea\n\nA note about tea, nothing secret.\n", "utf-8")
    return folder
