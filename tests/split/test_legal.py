"""``legal``: units found at line starts, breadcrumbs of enclosing units, the contract."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import narezka
from narezka.parse.markdown import parse_document
from narezka.split.legal import LEGAL_THRESHOLD, find_units, legal_score
from narezka.tokens import get_counter
from narezka.types import RawDocument

from conftest import EXAMPLES, TEST_DATA
from contract import assert_contract
from markdown_gen import markdown

LEGAL = TEST_DATA / "legal"
CONTRACT = (LEGAL / "dogovor_postavki.md").read_text(encoding="utf-8")
LAW = (LEGAL / "zakon.txt").read_text(encoding="utf-8")


def units_of(text: str, source: str = "doc.md") -> list[tuple[str, tuple[str, ...]]]:
    doc, _ = parse_document(RawDocument(source=source, text=text))
    return [(text[u.start : u.line_end], u.path) for u in find_units(doc)]


def chunk_with(chunks: list[narezka.Chunk], needle: str) -> narezka.Chunk:
    found = [c for c in chunks if needle in c.text]
    assert len(found) == 1, f"{needle!r} in {len(found)} chunks"
    return found[0]


# ---- generated contracts ------------------------------------------------------------------

WORDS = st.sampled_from(
    "поставщик покупатель товар партия оплата неустойка договор сторона срок 15 дней "
    "«Хлебный двор» г. т. е. 2,5 кг 0,1 % руб. ООО счёт приёмка".split()
)


@st.composite
def sentence(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=1, max_size=12))
    return " ".join([words[0][:1].upper() + words[0][1:], *words[1:]]) + "."


@st.composite
def prose(draw: st.DrawFn) -> str:
    return " ".join(draw(st.lists(sentence(), min_size=1, max_size=4)))


@dataclass
class Contract:
    """Generated text plus where its points are and the path each must carry."""

    lines: list[str] = field(default_factory=list)
    points: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    """(line index, expected section tail) of each numbered point opening a chunk."""
    minor: list[int] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def offset(self, line: int) -> int:
        return sum(len(x) + 1 for x in self.lines[:line])


@st.composite
def contracts(draw: st.DrawFn) -> Contract:
    doc = Contract()
    markdown_titles = draw(st.booleans())
    if draw(st.booleans()):
        doc.lines += ["# Договор поставки", "", draw(prose()), ""]
    article = 0
    for chapter in range(1, draw(st.integers(0, 3)) + 1):
        title = f"Глава {chapter}. {draw(WORDS).capitalize()}"
        doc.lines += [("## " if markdown_titles else "") + title, ""]
        for _ in range(draw(st.integers(1, 3))):
            article += 1
            atitle = f"Статья {article}. {draw(WORDS).capitalize()} {draw(WORDS)}"
            doc.lines += [("### " if markdown_titles else "") + atitle, ""]
            if draw(st.booleans()):
                doc.lines += ["Текст " + draw(prose()), ""]  # not «15. …»: that is a point
            for point in range(1, draw(st.integers(0, 4)) + 1):
                label = f"{article}.{point}"
                doc.points.append((len(doc.lines), (atitle, label)))
                subs = draw(st.integers(0, 3))
                # A point's text opens with a capital letter (see the module's rules).
                body = f"Стороны {draw(prose())}"
                doc.lines.append(f"{label}. {body}" + (":" if subs else ""))
                marks = draw(st.sampled_from(["абвг", "1234"]))
                for k in range(subs):
                    doc.minor.append(len(doc.lines))
                    end = ";" if k + 1 < subs else "."
                    doc.lines.append(f"{marks[k]}) {draw(WORDS)} {draw(WORDS)}{end}")
                doc.lines.append("")
            if draw(st.integers(0, 4)) == 0:
                doc.lines += ["| Товар | Цена |", "|---|---:|", "| мука | 2 150 |", ""]
    if draw(st.booleans()):
        # Traps: numbers at line starts that open no point.
        doc.lines += ["Поставка начинается", "2.5 кг муки в пробной партии.", ""]
        doc.lines += ["01.02.2024 г. стороны подписали акт.", ""]
    return doc


@given(doc=contracts(), size=st.sampled_from([40, 120, 400, 2000]))
def test_contract_holds_on_generated_contracts_in_chars(doc: Contract, size: int) -> None:
    chunks = narezka.chunk_text(doc.text, "legal", source="d.md", size=size)
    assert_contract(doc.text, chunks, size, get_counter("chars"))


@given(doc=contracts(), size=st.sampled_from([24, 64, 300]))
def test_contract_holds_on_generated_contracts_in_tokens(doc: Contract, size: int) -> None:
    chunks = narezka.chunk_text(doc.text, "legal", source="d.md", size=size, unit="tokens")
    assert_contract(doc.text, chunks, size, get_counter("tokens", "cl100k_base"))


@given(doc=contracts())
def test_each_point_is_a_chunk_with_its_path(doc: Contract) -> None:
    # Large enough for any unit, no merging of short ones: the structure alone decides.
    chunks = narezka.chunk_text(doc.text, "legal", source="d.md", size=6000, min_chars=0)
    by_start = {c.start: c for c in chunks}
    for line, tail in doc.points:
        offset = doc.offset(line)
        holder = next(c for c in chunks if c.start <= offset < c.end)
        assert holder.section[-2:] == tail, doc.lines[line]
        previous = doc.lines[line - 2] if line >= 2 else ""
        if not previous.lstrip("#").lstrip().startswith("Статья"):
            # Not glued to its article's bare title: the point opens its own chunk.
            assert holder.start == offset, f"point line {doc.lines[line]!r} opens no chunk"
    minor_starts = {doc.offset(line) for line in doc.minor}
    assert not minor_starts & set(by_start), "a sub-point was cut from its point"


@given(text=st.text(max_size=600), size=st.sampled_from([16, 50, 300]))
def test_contract_holds_on_arbitrary_text(text: str, size: int) -> None:
    chunks = narezka.chunk_text(text, "legal", source="a.txt", size=size)
    assert_contract(text, chunks, size, get_counter("chars"))


@given(text=markdown(), size=st.sampled_from([40, 250, 1000]))
def test_contract_holds_on_generated_markdown(text: str, size: int) -> None:
    chunks = narezka.chunk_text(text, "legal", source="a.md", size=size)
    assert_contract(text, chunks, size, get_counter("chars"))


# ---- the test documents -------------------------------------------------------------------


def test_contract_breadcrumbs_follow_chapters_articles_and_points() -> None:
    chunks = narezka.chunk_text(CONTRACT, "legal", source="dogovor.md", size=800)
    assert_contract(CONTRACT, chunks, 800, get_counter("chars"))
    point = chunk_with(chunks, "5.2. За нарушение сроков оплаты")
    assert point.section == (
        "Договор поставки № 47/П-2024",
        "Глава 2. Права и обязанности сторон",
        "Статья 5. Ответственность сторон",
        "5.2",
    )
    assert point.anchor == "статья-5-ответственность-сторон-5-2"
    assert point.url == f"dogovor.md#{point.anchor}"
    # The front matter title leads the breadcrumb; then the path of units.
    assert point.embed_text.startswith(
        "Договор поставки > Договор поставки № 47/П-2024 > Глава 2. Права и обязанности "
        "сторон > Статья 5. Ответственность сторон > 5.2\n\n5.2. За нарушение"
    )
    assert point.meta["category"] == "contracts"


def test_contract_points_that_fit_stay_whole_with_their_sub_points() -> None:
    chunks = narezka.chunk_text(CONTRACT, "legal", source="dogovor.md", size=800)
    marking = chunk_with(chunks, "2.3. Маркировка мешков")
    assert "а) наименование Товара" in marking.text and "г) срок годности" in marking.text
    assert marking.section[-1] == "2.3"
    claims = chunk_with(chunks, "4.3. При обнаружении недостачи")
    assert claims.text.rstrip().endswith("незаинтересованной организации.")
    # Every chunk opens at a unit (or a sentence of a split one), never mid-sentence.
    for c in chunks:
        before = CONTRACT[CONTRACT.index("# Договор") : c.start].rstrip()
        assert not before or before[-1] in ".:;»|" or c.text.startswith("#"), c.text[:40]


def test_contract_price_table_is_one_piece_under_its_article() -> None:
    for size in (400, 800):
        chunks = narezka.chunk_text(CONTRACT, "legal", source="dogovor.md", size=size)
        table = chunk_with(chunks, "| Мука ржаная хлебопекарная | обойная | 25 кг | 960 |")
        assert "| Товар | Сорт | Фасовка | Цена за мешок, руб. |" in table.text
        assert "Статья 3. Цена и порядок расчётов" in table.section


def test_long_point_is_split_at_sentences_under_the_same_path() -> None:
    chunks = narezka.chunk_text(CONTRACT, "legal", source="dogovor.md", size=800)
    pieces = [c for c in chunks if c.section[-1:] == ("5.4",)]
    assert len(pieces) >= 2
    assert pieces[0].text.startswith("5.4. Поставщик отвечает за скрытые недостатки")
    assert all(p.text.rstrip()[-1] == "." for p in pieces)
    start = CONTRACT.index("5.4. Поставщик")
    end = CONTRACT.index("обязательным для Сторон до вступления в силу решения суда")
    assert pieces[0].start == start and pieces[-1].end > end


def test_short_units_merge_only_within_their_parent() -> None:
    apart = narezka.chunk_text(CONTRACT, "legal", source="d.md", size=800, min_chars=0)
    merged = narezka.chunk_text(CONTRACT, "legal", source="d.md", size=800, min_chars=400)
    assert len(merged) < len(apart)
    for c in merged:
        # A merged chunk never spans two articles' points unless it holds whole articles.
        articles = {m.group(1) for m in re.finditer(r"^(\d+)\.\d+\. ", c.text, re.M)}
        assert len(articles) <= 1 + c.text.count("Статья "), c.text[:80]
    # A bare chapter title never stands alone.
    assert not any(c.text.startswith("## Глава") and "\n" not in c.text for c in merged)


def test_law_in_plain_text_parts_points_and_sub_points() -> None:
    chunks = narezka.chunk_text(LAW, "legal", source="zakon.txt", size=800)
    assert_contract(LAW, chunks, 800, get_counter("chars"))
    part = chunk_with(chunks, "2. Посетителям запрещается:")
    assert part.section == (
        "Раздел I. ОБЩИЕ ПОЛОЖЕНИЯ",
        "Глава 2. Содержание садов и скверов",
        "Статья 4. Правила посещения",
        "2.",
    )
    assert "3) выгуливать собак" in part.text
    # «Статья 5 настоящего Закона применяется…» is a reference, not a new article.
    reference = chunk_with(chunks, "Статья 5 настоящего Закона применяется")
    assert "Статья 5. Виды ответственности" in reference.section


def test_law_units_nest_by_kind() -> None:
    units = dict(units_of(LAW, "zakon.txt"))
    assert units["Раздел II. ОТВЕТСТВЕННОСТЬ"] == ("Раздел II. ОТВЕТСТВЕННОСТЬ",)
    assert units[
        "в) замену погибших деревьев и кустарников не позднее следующего вегетационного сезона;"
    ][-4:] == (
        "Статья 3. Обязанности владельца сада",
        "1.",
        "1)",
        "в)",
    )
    # «2)» after «в)» closes the letters and is the sibling of «1)».
    second = units["2) содержать в исправном состоянии дорожки, скамьи, урны и освещение;"]
    assert second[-3:] == ("Статья 3. Обязанности владельца сада", "1.", "2)")
    assert units[
        "2. Владелец сада вправе временно ограничить доступ посетителей на отде"
        "льные участки сада на время проведения работ, предупредив об этом не м"
        "енее чем за трое суток, за исключением случаев, не терпящих отлагатель"
        "ства."
    ][-2:] == ("Статья 3. Обязанности владельца сада", "2.")


# ---- what is (not) a unit -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Оплата.\n2.5 кг муки входит в пробную партию.\n", []),  # a quantity
        ("Оплата.\n01.02.2024 г. стороны подписали акт.\n", []),  # a date
        ("Подписано.\n2024 год стал первым годом поставок.\n", []),
        ("Поставщик передаёт товар согласно пункту\n5. Договора в срок.\n", []),  # wrapped
        ("В пункте 1.1. сказано иное.\n", []),  # not at a line start
        ("Статья 5 настоящего Договора действует.\n", []),  # a reference
        ("Цены:\n2.5 Кг — условная единица.\n", ["2.5 Кг — условная единица."]),
        ("Статья 7\nТекст статьи.\n", ["Статья 7"]),
        (
            "**Статья 3. Цена**\n\n3.1. Цена указана.\n",
            ["**Статья 3. Цена**", "3.1. Цена указана."],
        ),
        ("Глава IV. Прочее\n", ["Глава IV. Прочее"]),
        ("§ 2. Порядок\n", ["§ 2. Порядок"]),
        ("Стороны обязуются:\nа) платить;\nб) принимать.\n", ["а) платить;", "б) принимать."]),
    ],
)
def test_what_opens_a_unit(text: str, expected: list[str]) -> None:
    assert [line for line, _ in units_of(text)] == expected


def test_markdown_headings_that_are_units_and_that_are_not() -> None:
    text = (
        "# Договор аренды\n\n## Статья 5. Ответственность сторон\n\n5.1. Арендатор платит.\n\n"
        "### Примечание\n\nТекст примечания.\n\n## Статья 6. Срок\n\n6.1. Год.\n\n"
        "```\n1.1. Не пункт: это код.\n```\n"
    )
    units = dict(units_of(text))
    assert units["5.1. Арендатор платит."] == (
        "Договор аренды",
        "Статья 5. Ответственность сторон",
        "5.1",
    )
    assert units["### Примечание"] == (
        "Договор аренды",
        "Статья 5. Ответственность сторон",
        "Примечание",
    )
    assert units["## Статья 6. Срок"] == ("Договор аренды", "Статья 6. Срок")
    assert "1.1. Не пункт: это код." not in units


def test_articles_nest_under_chapters_written_at_the_same_heading_level() -> None:
    text = "## Глава 1. Общие\n\n## Статья 1. Предмет\n\n1.1. Текст.\n\n## Глава 2. Иное\n"
    units = dict(units_of(text))
    assert units["1.1. Текст."] == ("Глава 1. Общие", "Статья 1. Предмет", "1.1")
    assert units["## Глава 2. Иное"] == ("Глава 2. Иное",)


# ---- legal_score for the auto strategy ----------------------------------------------------


def test_legal_score_tells_contracts_from_ordinary_pages() -> None:
    assert legal_score(CONTRACT) >= LEGAL_THRESHOLD
    assert legal_score(LAW) >= LEGAL_THRESHOLD
    pages = sorted(EXAMPLES.rglob("*.md"))
    assert pages
    for page in pages:
        assert legal_score(page.read_text(encoding="utf-8")) < LEGAL_THRESHOLD, page.name
    how_to = "# Как заказать\n\n" + "\n".join(f"{k}. Шаг номер {k}." for k in range(1, 9))
    assert legal_score(how_to) < LEGAL_THRESHOLD
    assert legal_score("") == 0.0
    fenced = "```\n" + "\n".join(f"Статья {k}. Код" for k in range(9)) + "\n```\nТекст.\n"
    assert legal_score(fenced) < LEGAL_THRESHOLD


# ---- the command line and the shared checker ----------------------------------------------


@pytest.mark.parametrize(("unit", "size"), [("chars", "400"), ("tokens", "128")])
def test_cli_output_passes_the_shared_checker(
    unit: str, size: str, tmp_path: Path, check_chunks_tool: Path
) -> None:
    out = tmp_path / "chunks.jsonl"
    args = ["--size", size, "--unit", unit]
    if unit == "tokens":
        args += ["--tokenizer", "cl100k_base"]
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "narezka",
            "chunk",
            str(LEGAL),
            "--strategy",
            "legal",
            "--format",
            "jsonl",
            *args,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    out.write_text(made.stdout, encoding="utf-8")
    rows = made.stdout.splitlines()
    assert len(rows) > 20 and all('"strategy": "legal"' in row for row in rows)
    check = subprocess.run(
        [sys.executable, str(check_chunks_tool), str(LEGAL), str(out), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout
    assert check.stdout.strip().splitlines()[-1].startswith("ok: 2 files")
