"""The example KB is mixed, as real help centres are: its returns policy is a PDF, its
warranty terms a Word file and its delivery-zones page a page saved from the shop's site.
Those files are rendered from Markdown by ``examples/kb_sources/build.py``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from narezka.api.indexing import index
from narezka.api.searching import search
from narezka.discover.walk import read_document
from narezka.embed import HashEmbedder

from conftest import EXAMPLES, REPO, copy_examples

BUILD = REPO / "examples" / "kb_sources" / "build.py"
CONVERTED = ("returns.pdf", "warranty.docx", "delivery-zones.html")
SITE_CHROME = (
    "cookie",
    "Перейти к содержанию",
    "Корпоративным клиентам",
    "Поиск по магазину",
    "Помощь покупателю",
    "Была ли эта статья полезна",
    "Все права защищены",
    "Публичная оферта",
    "dataLayer",
)


def test_the_committed_documents_are_what_their_sources_render() -> None:
    if shutil.which("pandoc") is None:
        pytest.skip("pandoc is not installed: the Word file and the page cannot be rendered")
    if not Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").exists():
        pytest.skip("the DejaVu fonts are not installed: the PDF cannot be rendered")
    done = subprocess.run(
        [sys.executable, str(BUILD), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", CONVERTED)
def test_each_document_reads_as_its_source_without_the_sites_chrome(name: str) -> None:
    text = read_document(EXAMPLES, EXAMPLES / name)[0].text
    source = (REPO / "examples" / "kb_sources" / f"{Path(name).stem}.md").read_text("utf-8")
    # Every paragraph of the source's body is in the canonical text (headings without their
    # {#id}, list markers and inline marks aside).
    body = source.split("\n---\n", 1)[1]
    words = lambda s: " ".join(s.replace("*", "").split())  # noqa: E731
    flat = words(text)
    for block in body.split("\n\n"):
        line = block.strip()
        if line and line[0].isalpha() and "{#" not in line and "\n" not in line:
            assert words(line) in flat, line[:60]
    assert not [s for s in SITE_CHROME if s.lower() in text.lower()]


def test_the_quick_start_question_is_answered_from_the_pdf_with_its_page(tmp_path: Path) -> None:
    kb = copy_examples(tmp_path / "kb")
    report = index(kb, embedder=HashEmbedder(64))
    assert not report.skipped and report.files_new == len(
        [p for p in kb.rglob("*") if p.suffix in (".md", ".pdf", ".docx", ".html")]
    )
    hits = search("можно ли вернуть вскрытый чай?", kb, mode="bm25", k=5, embedder=HashEmbedder(64))
    pdf = [h for h in hits if h.file_path == "returns.pdf"]
    assert pdf and "к возврату не принимаются" in pdf[0].text
    assert pdf[0].where == "p. 1" and pdf[0].payload["page_start"] == 1
    assert pdf[0].section[-1] == "Возврат вскрытого чая и кофе"
