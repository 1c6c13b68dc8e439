"""Russian LaTeX PDFs made by pdflatex in the test (no binaries committed), with what each
must yield: its headings, its table's cells, its running lines and a passage per section.

The documents carry no outline (hyperref is not loaded), so headings must come from the
page: font size, weight and the printed section numbers. A running header holds the title
and a footer the page number, as ``fancyhdr`` prints them.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KINDS", "LatexSample", "have_pdflatex", "latex_pdf", "make_latex_pdf", "prose"]

KINDS = ("article", "report", "twocolumn", "beamer")

_WORDS = (
    "доставка заказ курьер склад тариф возврат товар оплата карта срок неделя клиент "
    "адрес город посылка упаковка вес зона договор счёт накладная партия маршрут водитель "
    "приёмка проверка документ отчёт сервис поддержка звонок письмо менеджер компания"
).split()
_TITLE = "Правила доставки и возврата"
_SECTIONS = (
    ("Введение", ("Назначение документа", "Термины")),
    ("Тарифы на доставку", ("Курьером по России", "Самовывоз")),
    ("Возврат товара", ("Сроки возврата", "Порядок возврата денег")),
    ("Заключение", ()),
)
_TABLE = (
    ("Зона", "Вес, кг", "Цена, ₽", "Срок, дней"),
    ("Москва", "до 1", "300", "1"),
    ("Центр", "до 5", "450", "2"),
    ("Урал", "до 10", "700", "4"),
    ("Сибирь", "до 20", "1200", "7"),
)
_TABLE_TEX = (
    ("Зона", "Вес, кг", "Цена, руб.", "Срок, дней"),
    *_TABLE[1:],
)


@dataclass(slots=True)
class LatexSample:
    """A generated PDF and what a reader must find in it."""

    pdf: bytes
    headings: list[str] = field(default_factory=list)
    table: list[tuple[str, ...]] = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    """Regular expressions a running header or footer line matches."""
    passages: list[str] = field(default_factory=list)
    footnote: str = ""
    formula: str = ""


def have_pdflatex() -> bool:
    return shutil.which("pdflatex") is not None


def _paragraph(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 16))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def _body(kind: str, sample: LatexSample) -> str:
    rng = random.Random(35)
    parts: list[str] = []
    top, sub = ("chapter", "section") if kind == "report" else ("section", "subsection")
    for number, (title, subs) in enumerate(_SECTIONS, 1):
        parts.append(f"\\{top}{{{title}}}")
        sample.headings.append(title)
        passage = f"Раздел {number} говорит о теме «{title.lower()}» подробно"
        sample.passages.append(passage)
        parts.append(passage + ". " + _paragraph(rng, 6))
        if number == 1:
            parts.append(
                "Сумма считается по формуле $S = p \\cdot w + 15$ для каждой посылки"
                "\\footnote{Налог на добавленную стоимость включён в цену.} " + _paragraph(rng, 3)
            )
        if number == 2:
            rows = " \\\\\n".join(" & ".join(row) for row in _TABLE_TEX[1:])
            head = " & ".join(_TABLE_TEX[0])
            parts.append(
                "\\begin{table}[h]\\centering\\begin{tabular}{llrr}\\toprule\n"
                f"{head} \\\\\n\\midrule\n{rows} \\\\\n\\bottomrule\\end{{tabular}}"
                "\\caption{Тарифы по зонам}\\end{table}"
            )
        for subtitle in subs:
            parts.append(f"\\{sub}{{{subtitle}}}")
            sample.headings.append(subtitle)
            for _ in range(3):
                parts.append(_paragraph(rng, 7))
    sample.table = [tuple(r) for r in _TABLE_TEX]
    sample.footnote = "Налог на добавленную стоимость включён в цену."
    sample.formula = "S = p"
    return "\n\n".join(parts)


_DECK = (
    ("Введение", ("Назначение документа", "Термины")),
    ("Тарифы на доставку", ("Курьером по России", "Самовывоз", "Тарифы по зонам")),
    ("Возврат товара", ("Сроки возврата", "Порядок возврата денег")),
    ("Заключение", ("Итоги",)),
)
"""A deck's sections and their frames' titles. Beamer's default themes print no section
title on a frame: a section's title is in the PDF's outline (and the contents frame) only."""
_DECK_AUTHOR = "Отдел логистики"


def _beamer(sample: LatexSample) -> str:
    """A Madrid-theme deck as people make them: a title frame, a contents frame, sections
    of frames with titles and subtitles, bullet lists, a table and a TikZ drawing; the
    footline (author, title, date, frame number) runs on every frame."""
    rng = random.Random(35)
    frames = [
        "\\begin{frame}\\titlepage\\end{frame}",
        "\\begin{frame}{План}\\tableofcontents\\end{frame}",
    ]
    for number, (section, titles) in enumerate(_DECK, 1):
        frames.append(f"\\section{{{section}}}")
        sample.headings.append(section)
        for title in titles:
            sample.headings.append(title)
            if title == "Тарифы по зонам":
                rows = " \\\\\n".join(" & ".join(row) for row in _TABLE_TEX[1:])
                body = (
                    "\\begin{tabular}{llrr}\\toprule\n"
                    f"{' & '.join(_TABLE_TEX[0])} \\\\\n\\midrule\n{rows} \\\\\n"
                    "\\bottomrule\\end{tabular}"
                )
                sample.table = [tuple(r) for r in _TABLE_TEX]
            elif title == "Порядок возврата денег":
                body = (
                    "\\begin{tikzpicture}\\node[draw] (a) {Заявка};"
                    "\\node[draw,right=of a] (b) {Проверка};\\draw[->] (a) -- (b);"
                    "\\end{tikzpicture}\n\n"
                    + " ".join(rng.choice(_WORDS) for _ in range(10)).capitalize()
                    + "."
                )
            else:
                items = "\n".join(
                    f"\\item {' '.join(rng.choice(_WORDS) for _ in range(6)).capitalize()}"
                    for _ in range(3)
                )
                body = f"\\begin{{itemize}}\n{items}\n\\end{{itemize}}"
            passage = f"Слайд раздела {number} о теме «{title.lower()}»"
            sample.passages.append(passage)
            frames.append(f"\\begin{{frame}}{{{title}}}{{{passage}}}\n{body}\n\\end{{frame}}")
    # The footline: author, title, date and "frame / frames" in one line (the title
    # frame's own author line is its text).
    sample.running = [rf"^{_DECK_AUTHOR}\b.*\d+\s*/\s*\d+$", r"^\d+\s*/\s*\d+$"]
    return "\n".join(frames)


_PREAMBLE = r"""\usepackage[T2A]{fontenc}
\usepackage[utf8]{inputenc}
\usepackage[russian]{babel}
\usepackage{cmap}
"""


def _source(kind: str, sample: LatexSample) -> str:
    if kind == "beamer":
        return (
            "\\documentclass{beamer}\n" + _PREAMBLE + "\\usetheme{Madrid}\n"
            "\\usepackage{booktabs}\n\\usepackage{tikz}\n\\usetikzlibrary{positioning}\n"
            f"\\title{{{_TITLE}}}\n\\author{{{_DECK_AUTHOR}}}\n\\date{{Январь 2026}}\n"
            f"\\begin{{document}}\n{_beamer(sample)}\n\\end{{document}}\n"
        )
    options = "a4paper,twocolumn" if kind == "twocolumn" else "a4paper"
    cls = "report" if kind == "report" else "article"
    sample.running = [f"^{_TITLE}$", r"^Стр\. \d+$"]
    return (
        f"\\documentclass[{options},11pt]{{{cls}}}\n" + _PREAMBLE + "\\usepackage{booktabs}\n"
        "\\usepackage{fancyhdr}\n\\pagestyle{fancy}\\fancyhf{}\n"
        f"\\fancyhead[C]{{{_TITLE}}}\n\\fancyfoot[C]{{Стр. \\thepage}}\n"
        # Chapter openings use the plain style: give them the same running lines.
        "\\fancypagestyle{plain}{\\fancyhf{}"
        f"\\fancyhead[C]{{{_TITLE}}}\\fancyfoot[C]{{Стр. \\thepage}}}}\n"
        f"\\begin{{document}}\n{_body(kind, sample)}\n\\end{{document}}\n"
    )


def prose(paragraphs: int, seed: int = 35) -> list[str]:
    """Russian paragraphs of six to nine sentences of the sample's words."""
    rng = random.Random(seed)
    return [_paragraph(rng, rng.randint(6, 9)) for _ in range(paragraphs)]


def latex_pdf(body: str, options: str = "a4paper", preamble: str = "") -> bytes:
    """A Russian 11-point article of ``body`` (LaTeX) under ``options``, made by pdflatex;
    ``preamble`` is added to the sample's."""
    return _pdflatex(
        f"\\documentclass[{options},11pt]{{article}}\n{_PREAMBLE}{preamble}"
        f"\\begin{{document}}\n{body}\n\\end{{document}}\n"
    )


def make_latex_pdf(kind: str) -> LatexSample:
    """Build one ``KINDS`` document with pdflatex (raises ``RuntimeError`` when it fails)."""
    sample = LatexSample(b"")
    # A deck's contents frame, outline and frame count need the second run latexmk makes.
    sample.pdf = _pdflatex(_source(kind, sample), runs=2 if kind == "beamer" else 1)
    return sample


def _pdflatex(source: str, runs: int = 1) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "doc.tex").write_text(source, encoding="utf-8")
        for _ in range(runs):
            done = subprocess.run(
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                cwd=tmp,
                capture_output=True,
                timeout=120,
                check=False,
            )
            if done.returncode != 0:
                break
        pdf = Path(tmp) / "doc.pdf"
        if done.returncode != 0 or not pdf.exists():
            raise RuntimeError(done.stdout.decode("utf-8", "replace")[-800:])
        return pdf.read_bytes()
