"""Regenerate the example KB's non-Markdown documents from the Markdown kept here.

The help centre in ``examples/kb`` is mixed, as real ones are: the returns policy is a printed
PDF, the warranty terms a Word file and the delivery-zones page was saved from the shop's site
with its menu, cookie notice and footer. Their text lives here as Markdown; this script
renders them (the same bytes on every run, so the committed files can be checked):

    python examples/kb_sources/build.py            # writes the three files into examples/kb
    python examples/kb_sources/build.py --check    # exit 1 if a committed file differs

Needs ``pandoc`` (Word and the page's HTML), ``reportlab`` and the DejaVu fonts (PDF).
"""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt

HERE = Path(__file__).resolve().parent
KB = HERE.parent / "kb"
FONTS = Path("/usr/share/fonts/truetype/dejavu")
SHOP = "ООО «Тёплый угол»"
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)
_ANCHOR = re.compile(r"\s*\{#[^}]*\}\s*$")


def _split(path: Path) -> tuple[dict[str, Any], str]:
    """Front matter and body of a source page."""
    text = path.read_text(encoding="utf-8")
    match = _FRONT.match(text)
    if not match:
        return {}, text
    return yaml.safe_load(match.group(1)) or {}, text[match.end() :]


def _epoch(meta: dict[str, Any]) -> str:
    """The page's ``updated`` date as SOURCE_DATE_EPOCH: pandoc stamps files with it."""
    import datetime as dt

    day = meta.get("updated") or dt.date(2025, 1, 1)
    return str(int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()))


# --- Word: pandoc -------------------------------------------------------------------------


def build_docx(source: Path, out: Path) -> None:
    """A policy as Word saves it: the title in the Title style (the page's own H1 is dropped,
    as it would repeat it), heading styles, lists, tables."""
    meta, body = _split(source)
    body = re.sub(r"\A\s*# [^\n]*\n", "", body, count=1)
    front = {
        "title": meta["title"],
        "subject": f"Правила магазина {SHOP}",
        "keywords": list(meta.get("tags", [])),
        "lang": "ru-RU",
    }
    page = "---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n\n" + body
    with tempfile.TemporaryDirectory() as tmp:
        md = Path(tmp) / "page.md"
        md.write_text(page, encoding="utf-8")
        env = {**os.environ, "SOURCE_DATE_EPOCH": _epoch(meta)}
        subprocess.run(
            ["pandoc", str(md), "-f", "markdown", "-t", "docx", "-o", str(out)], check=True, env=env
        )


# --- PDF: reportlab -----------------------------------------------------------------------


def _inline(token: Any) -> str:
    """reportlab paragraph markup of an inline token (bold, italics, code; links as text)."""
    parts = []
    for child in token.children or ():
        kind = child.type
        if kind in ("text", "html_inline"):
            parts.append(html.escape(child.content, quote=False))
        elif kind == "code_inline":
            parts.append(f'<font face="Mono">{html.escape(child.content, quote=False)}</font>')
        elif kind in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif kind in ("strong_open", "strong_close"):
            parts.append("<b>" if kind.endswith("open") else "</b>")
        elif kind in ("em_open", "em_close"):
            parts.append("<i>" if kind.endswith("open") else "</i>")
    return "".join(parts)


def build_pdf(source: Path, out: Path) -> None:
    """A policy as a printed document: A4, a running header with the shop and the title,
    page numbers in the footer, headings in the outline (bookmarks), code in a monospace
    font, quotes indented."""
    from reportlab import rl_config
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import cm
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    rl_config.invariant = 1  # no dates or random ids: the same bytes on every run
    for name, file in (
        ("Sans", "DejaVuSans.ttf"),
        ("Sans-Bold", "DejaVuSans-Bold.ttf"),
        ("Sans-Oblique", "DejaVuSans-Oblique.ttf"),
        ("Mono", "DejaVuSansMono.ttf"),
    ):
        pdfmetrics.registerFont(TTFont(name, str(FONTS / file)))
    pdfmetrics.registerFontFamily(
        "Sans", normal="Sans", bold="Sans-Bold", italic="Sans-Oblique", boldItalic="Sans-Bold"
    )
    meta, body = _split(source)
    title = str(meta["title"])
    updated = meta.get("updated")
    body_style = ParagraphStyle("body", fontName="Sans", fontSize=10.5, leading=14.5, spaceAfter=6)
    item_style = ParagraphStyle("item", parent=body_style, leftIndent=18, bulletIndent=4)
    cell_style = ParagraphStyle("cell", parent=body_style, spaceAfter=0)
    code_style = ParagraphStyle("code", fontName="Mono", fontSize=9, leading=12, leftIndent=12)
    quote_style = ParagraphStyle("quote", parent=body_style, leftIndent=18, textColor="#444444")
    quotes = 0
    heads = {
        1: ParagraphStyle("h1", fontName="Sans-Bold", fontSize=18, leading=23, spaceAfter=10),
        2: ParagraphStyle(
            "h2", fontName="Sans-Bold", fontSize=14, leading=18, spaceBefore=10, spaceAfter=6
        ),
        3: ParagraphStyle(
            "h3", fontName="Sans-Bold", fontSize=12, leading=16, spaceBefore=8, spaceAfter=4
        ),
    }
    story: list[Any] = []
    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    lists: list[list[int]] = []  # [number or 0 for bullets] per open list
    row: list[str] = []
    rows: list[list[str]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            level = int(tok.tag[1])
            text = _ANCHOR.sub("", tokens[i + 1].content)
            para = Paragraph(html.escape(text, quote=False), heads[min(level, 3)])
            para.outline = (text, level - 1)  # type: ignore[attr-defined]
            story.append(para)
            i += 3
            continue
        if tok.type == "bullet_list_open":
            lists.append([0])
        elif tok.type == "ordered_list_open":
            lists.append([int(tok.attrs.get("start", 1) or 1) - 1])
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif tok.type in ("blockquote_open", "blockquote_close"):
            quotes += 1 if tok.type == "blockquote_open" else -1
        elif tok.type == "inline" and not rows and not row:
            text = _inline(tok)
            if tokens[i - 1].type == "paragraph_open" and lists:
                mark = "•"
                if _opener(tokens, i).type == "ordered_list_open":
                    lists[-1][0] += 1
                    mark = f"{lists[-1][0]}."
                indent = 18 * len(lists)
                style = ParagraphStyle("li", parent=item_style, leftIndent=indent)
                style.bulletIndent = indent - 14
                story.append(Paragraph(text, style, bulletText=mark))
            elif tokens[i - 1].type == "paragraph_open":
                story.append(Paragraph(text, quote_style if quotes else body_style))
        elif tok.type in ("th_open", "td_open"):
            row.append(_inline(tokens[i + 1]))
            i += 3
            continue
        elif tok.type == "tr_close":
            rows.append(row)
            row = []
        elif tok.type == "table_close":
            # Cells on one line each: a cell wrapped over lines breaks its row for a reader
            # that goes by lines (narezka's too: see benchmarks/results/bench_convert.md).
            cells = [[Paragraph(c, cell_style) for c in r] for r in rows]
            cols = zip(*rows, strict=True)
            widths = [max(pdfmetrics.stringWidth(c, "Sans", 10.5) for c in cs) + 14 for cs in cols]
            table = Table(cells, colWidths=widths, hAlign="LEFT", repeatRows=1)
            table.setStyle(
                TableStyle(
                    [
                        ("GRID", (0, 0), (-1, -1), 0.4, colors.grey),
                        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
                        ("VALIGN", (0, 0), (-1, -1), "TOP"),
                    ]
                )
            )
            story.append(table)
            story.append(Spacer(1, 8))
            rows = []
        elif tok.type in ("fence", "code_block"):
            for line in tok.content.rstrip("\n").split("\n"):
                story.append(Paragraph(html.escape(line) or "&nbsp;", code_style))
            story.append(Spacer(1, 6))
        i += 1

    def page_marks(canvas: Any, doc: Any) -> None:
        canvas.saveState()
        canvas.setFont("Sans", 8)
        canvas.setFillColor(colors.grey)
        width, height = A4
        canvas.drawString(2 * cm, height - 1.3 * cm, f"{SHOP} · {title}")
        if updated:
            canvas.drawRightString(
                width - 2 * cm, height - 1.3 * cm, f"Редакция от {updated:%d.%m.%Y}"
            )
        canvas.drawCentredString(width / 2, 1.2 * cm, f"Страница {doc.page}")
        canvas.restoreState()

    class Doc(SimpleDocTemplate):  # type: ignore[misc]
        def afterFlowable(self, flowable: Any) -> None:
            outline = getattr(flowable, "outline", None)
            if outline:
                key = f"h{id(flowable)}"
                self.canv.bookmarkPage(key)
                self.canv.addOutlineEntry(outline[0], key, level=outline[1])

    doc = Doc(
        str(out),
        pagesize=A4,
        leftMargin=2.2 * cm,
        rightMargin=2 * cm,
        topMargin=2.2 * cm,
        bottomMargin=2 * cm,
        title=title,
        author=SHOP,
        subject=title,
        keywords=", ".join(meta.get("tags", [])),
        creator="examples/kb_sources/build.py",
        invariant=1,
    )
    doc.build(story, onFirstPage=page_marks, onLaterPages=page_marks)


def _opener(tokens: list[Any], i: int) -> Any:
    """The list token that opens the list holding the inline token ``i``."""
    depth = 0
    for tok in reversed(tokens[:i]):
        if tok.type in ("bullet_list_close", "ordered_list_close"):
            depth += 1
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            if depth == 0:
                return tok
            depth -= 1
    return tokens[0]


# --- HTML: a page saved from the shop's site -----------------------------------------------

_MENU = [
    ("Чай", "/catalog/tea/"),
    ("Кофе", "/catalog/coffee/"),
    ("Чайники", "/catalog/kettles/"),
    ("Кофемолки", "/catalog/grinders/"),
    ("Лампы и светильники", "/catalog/lamps/"),
    ("Термосы", "/catalog/thermos/"),
    ("Посуда", "/catalog/dishes/"),
    ("Текстиль", "/catalog/textile/"),
    ("Подарочные карты", "/gift-cards/"),
    ("Акции", "/promo/"),
    ("Новинки", "/new/"),
    ("Корпоративным клиентам", "/b2b/"),
]
_HELP = [
    ("Доставка по России", "/help/delivery/"),
    ("Зоны доставки", "/help/delivery-zones/"),
    ("Оплата", "/help/payment/"),
    ("Заказы", "/help/orders/"),
    ("Возврат товара", "/help/returns/"),
    ("Гарантия", "/help/warranty/"),
    ("Бонусная программа", "/help/loyalty/"),
    ("Частые вопросы", "/help/faq/"),
]


def _links(items: list[tuple[str, str]]) -> str:
    return "\n".join(f'      <li><a href="{href}">{name}</a></li>' for name, href in items)


_PAGE = """<!DOCTYPE html>
<html lang="ru">
<head>
  <meta charset="utf-8">
  <title>{title} — помощь — Тёплый угол</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/static/site.css">
  <script>window.dataLayer = window.dataLayer || []; dataLayer.push({{"page": "help"}});</script>
</head>
<body>
  <a class="skip-link" href="#content">Перейти к содержанию</a>
  <div class="cookie-notice" id="cookie-consent">
    <p>Мы используем файлы cookie, чтобы сайт работал удобнее. Продолжая пользоваться сайтом,
    вы соглашаетесь с <a href="/legal/cookies/">политикой обработки cookie</a>.</p>
    <button type="button">Понятно</button>
  </div>
  <header class="site-header">
    <a class="logo" href="/">Тёплый угол — чай, кофе и уют для дома</a>
    <form class="search" action="/search/"><input name="q" placeholder="Поиск по магазину"></form>
    <p class="phone">8 800 555-27-14 · ежедневно 8:00–22:00</p>
    <a href="/cart/">Корзина</a> <a href="/account/">Войти</a>
  </header>
  <nav class="main-menu">
    <ul>
{menu}
    </ul>
  </nav>
  <div class="page">
    <aside class="sidebar">
      <h3>Помощь покупателю</h3>
      <ul>
{help}
      </ul>
    </aside>
    <main id="content">
      <nav class="breadcrumbs"><a href="/">Главная</a> › <a href="/help/">Помощь</a> ›
        {title}</nav>
      <article class="help-article">
{body}
        <p class="updated">Страница обновлена {updated:%d.%m.%Y}.</p>
      </article>
    </main>
    <section class="feedback">
      <p>Была ли эта статья полезна?</p>
      <button type="button">Да</button> <button type="button">Нет</button>
    </section>
  </div>
  <footer class="site-footer">
    <ul>
{help}
    </ul>
    <p>© 2016–2025 {shop}. Все права защищены. <a href="/legal/privacy/">Политика
    конфиденциальности</a> · <a href="/legal/offer/">Публичная оферта</a></p>
  </footer>
  <script src="/static/app.js" defer></script>
</body>
</html>
"""


def build_html(source: Path, out: Path) -> None:
    """The delivery-zones page as the site serves it: the article (pandoc's HTML of the
    Markdown) inside the site's header, menu, sidebar, cookie notice and footer."""
    meta, _ = _split(source)
    fragment = subprocess.run(
        ["pandoc", str(source), "-f", "markdown", "-t", "html5", "--wrap=none"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    body = "\n".join("        " + line if line else "" for line in fragment.splitlines())
    page = _PAGE.format(
        title=meta["title"],
        menu=_links(_MENU),
        help=_links(_HELP),
        body=body,
        updated=meta["updated"],
        shop=SHOP,
    )
    out.write_bytes(page.encode("utf-8"))


BUILDS = {
    "returns.pdf": (build_pdf, "returns.md"),
    "warranty.docx": (build_docx, "warranty.md"),
    "delivery-zones.html": (build_html, "delivery-zones.md"),
}


def build(dest: Path) -> list[Path]:
    """Render every document into ``dest``; the paths written."""
    written = []
    for name, (render, source) in BUILDS.items():
        render(HERE / source, dest / name)
        written.append(dest / name)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with examples/kb only")
    args = parser.parse_args()
    if not args.check:
        for path in build(KB):
            print(f"wrote {path.relative_to(HERE.parent.parent)} ({path.stat().st_size} bytes)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        stale = [p.name for p in build(Path(tmp)) if p.read_bytes() != (KB / p.name).read_bytes()]
    for name in stale:
        print(f"examples/kb/{name} differs from its source: run examples/kb_sources/build.py")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
