"""``faq``: question–answer pairs as chunks, the question in every piece's embed_text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import narezka
from narezka.parse.markdown import parse_document
from narezka.split.auto import choose_strategy
from narezka.split.faq import find_questions, is_question, looks_like_faq, question_line
from narezka.tokens import get_counter
from narezka.types import RawDocument

from conftest import EXAMPLES
from contract import assert_contract
from markdown_gen import WORDS, fence, paragraph, table

FAQ_PAGE = (EXAMPLES / "faq.md").read_text(encoding="utf-8")
MARKDOWN_ONLY = ("--include", "**/*.md")  # the checker would read golden.jsonl as a page


def questions_of(text: str) -> list[tuple[str, int]]:
    doc, _ = parse_document(RawDocument(source="faq.md", text=text))
    return [(q.text, q.level) for q in find_questions(doc)]


def chunks(text: str, size: int = 800, unit: str = "chars") -> list[narezka.Chunk]:
    return narezka.chunk_text(text, "faq", source="faq.md", size=size, unit=unit)


# ---- what a question is ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "question"),
    [
        ("**Где мой трек-номер?**", "Где мой трек-номер?"),
        ("**Где мой трек-номер**? Он в SMS.", "Где мой трек-номер?"),
        ("__Можно ли оплатить картой?__ Да.", "Можно ли оплатить картой?"),
        ("- **Сколько ждать?** Три дня.", "Сколько ждать?"),
        ("3. Сколько хранится заказ?", "Сколько хранится заказ?"),
        ("12) **Кто платит за доставку?**", "Кто платит за доставку?"),
        ("**Важно:** заказ хранится 7 дней.", ""),
        ("3. Оформите заказ.", ""),
        ("Где мой трек-номер? Он приходит в SMS.", ""),  # a question mid-paragraph is prose
    ],
)
def test_question_lines(line: str, question: str) -> None:
    assert question_line(line) == question


def test_question_headings_bold_and_numbered_questions_are_found() -> None:
    text = (
        "# Вопросы {#faq}\n\nВступление.\n\n## Оплата\n\n### Можно ли картой? {#card}\n\nДа.\n\n"
        "**Есть ли рассрочка?**\nНет.\n\n1. Когда списываются деньги?\n\n   При отправке.\n\n"
        "```\n**Не вопрос в коде?**\n### И это?\n```\n\n## Нет времени? { #in-a-hurry }\n\nТекст."
    )
    assert questions_of(text) == [
        ("Можно ли картой?", 3),
        ("Есть ли рассрочка?", 0),
        ("Когда списываются деньги?", 0),
        ("Нет времени?", 2),
    ]
    assert is_question("Что дальше? {#next}") and not is_question("Что такое CORS")


# ---- pairs ---------------------------------------------------------------------------------


def test_every_question_of_the_example_faq_is_one_chunk_with_its_answer() -> None:
    got = chunks(FAQ_PAGE)
    asked = [q for q, _ in questions_of(FAQ_PAGE)]
    pairs = [c for c in got if c.section and is_question(c.section[-1])]
    assert [c.section[-1] for c in pairs] == asked and len(asked) >= 10
    for c in pairs:
        assert c.embed_text.startswith("Частые вопросы > ") and c.section[-1] in c.embed_text
        assert c.text.count("?") >= 1
    tea = next(c for c in pairs if "вскрытый чай" in c.section[-1])
    assert "Вскрытые чай и кофе надлежащего качества не принимаются" in tea.text
    assert "Через сколько вернутся деньги?" not in tea.text
    # A category heading with nothing of its own opens its first pair, not a chunk alone.
    assert not any(c.text.strip().startswith("## ") and c.text.count("\n") == 0 for c in got)
    first = next(c for c in got if "Сколько стоит доставка" in c.text)
    assert first.text.startswith("## Доставка") and first.anchor == "faq-delivery-cost"
    assert_contract(FAQ_PAGE, got, 800, get_counter("chars"))


def test_headings_merges_short_pairs_where_faq_keeps_them_apart() -> None:
    # The reason faq exists: 7-day storage is a 60-character answer that headings glues on.
    headings = narezka.chunk_text(FAQ_PAGE, "headings", size=800, unit="chars")
    storage = "Сколько заказ хранится в пункте выдачи?"
    assert any(storage in c.text and c.text.count("### ") > 1 for c in headings)
    assert all(c.text.count("### ") <= 1 for c in chunks(FAQ_PAGE))


def test_bold_and_numbered_pairs_live_under_their_headings() -> None:
    text = (
        "# Помощь\n\n## Оплата\n\n**Можно ли картой?**\n\nДа, любой.\n\nКроме American Express.\n\n"
        "**Есть ли рассрочка?** Нет.\n\n## Доставка\n\n1. Сколько ждать?\n\n2. Куда привезут?\n\n"
        "До двери.\n"
    )
    got = chunks(text, size=200)
    by_question = {c.section[-1]: c for c in got if is_question(c.section[-1])}
    assert list(by_question) == [
        "Можно ли картой?",
        "Есть ли рассрочка?",
        "Сколько ждать?",
        "Куда привезут?",
    ]
    card = by_question["Можно ли картой?"]
    assert card.section == ("Помощь", "Оплата", "Можно ли картой?")
    assert "Кроме American Express." in card.text and "рассрочка" not in card.text
    assert card.anchor == "можно-ли-картой"
    assert by_question["Куда привезут?"].text.endswith("До двери.")
    assert_contract(text, got, 200, get_counter("chars"))


def test_a_sub_heading_under_a_question_stays_in_its_pair() -> None:
    text = (
        "## Как вернуть товар?\n\nЗаявка в кабинете.\n\n### Сроки\n\n14 дней.\n\n## Оплата\n\nОк."
    )
    got = chunks(text)
    assert [c.text.splitlines()[0] for c in got] == ["## Как вернуть товар?", "## Оплата"]
    assert "14 дней." in got[0].text


@pytest.mark.parametrize(("size", "unit"), [(240, "chars"), (96, "tokens")])
def test_a_long_answer_is_split_and_every_piece_keeps_the_question(size: int, unit: str) -> None:
    answer = " ".join(
        f"Пункт {k}: посылку можно вернуть курьером или в пункте выдачи." for k in range(30)
    )
    fenced = "```bash\n" + "\n".join(f"curl /returns/{k}" for k in range(40)) + "\n```"
    text = f"# FAQ\n\n**Как оформить возврат?**\n\n{answer}\n\n{fenced}\n\n**Что дальше?** Ждите.\n"
    got = chunks(text, size=size, unit=unit)
    pieces = [c for c in got if c.section[-1:] == ("Как оформить возврат?",)]
    assert len(pieces) > 3
    assert all("Как оформить возврат?" in c.embed_text.split("\n\n")[0] for c in pieces)
    assert got[-1].section[-1] == "Что дальше?" and got[-1].text.startswith("**Что дальше?**")
    assert_contract(text, got, size, get_counter(unit, "cl100k_base"))


# ---- generated FAQ pages -------------------------------------------------------------------


@st.composite
def question(draw: st.DrawFn) -> str:
    words = " ".join(draw(st.lists(WORDS, min_size=1, max_size=6)))
    form = draw(st.sampled_from(["### {}?", "## {}? {{#q}}", "**{}?**", "1. {}?", "- **{}?** Да."]))
    return form.format(words[:1].upper() + words[1:])


@st.composite
def faq_page(draw: st.DrawFn) -> str:
    blocks = draw(
        st.lists(
            st.one_of(question(), question(), paragraph(), fence(), table(), st.just("## Раздел")),
            max_size=16,
        )
    )
    text = "\n\n".join(blocks)
    return ("---\ntitle: FAQ\n---\n" + text) if draw(st.booleans()) else text


@given(faq_page(), st.sampled_from([160, 400, 1200]), st.sampled_from(["chars", "tokens"]))
def test_generated_faq_pages_keep_the_contract_and_the_pairs(
    text: str, size: int, unit: str
) -> None:
    got = chunks(text, size=size, unit=unit)
    assert_contract(text, got, size, get_counter(unit, "cl100k_base"))
    doc, _ = parse_document(RawDocument(source="faq.md", text=text))
    starts = [q.start for q in find_questions(doc)]
    for c in got:
        # Never two questions in one chunk: each pair starts a chunk of its own.
        assert sum(c.start <= s < c.end for s in starts) <= 1, c.text
        if c.section and is_question(c.section[-1]) and size >= 400:
            assert c.section[-1] in c.embed_text.split("\n\n")[0]


# ---- auto and the shared checker -----------------------------------------------------------


def test_auto_gives_faq_pages_to_faq_and_other_pages_to_headings() -> None:
    assert choose_strategy("faq.md", FAQ_PAGE) == "faq" and looks_like_faq(FAQ_PAGE)
    for page in EXAMPLES.rglob("*.md"):
        if page.name != "faq.md":
            assert choose_strategy(page.name, page.read_text(encoding="utf-8")) == "headings"
    two = "# Док\n\n## Что это?\n\nТекст.\n\n## Зачем?\n\nТекст.\n"
    assert not looks_like_faq(two)  # two questions are not a page of them
    docs = "# Гайд\n\n## Установка\n\n## Запуск\n\n## Нет времени?\n\n## Итоги\n\n**Важно?** Да.\n"
    assert not looks_like_faq(docs)  # 2 questions among 4 other headings
    fenced = "# Q\n\n```\n" + "\n".join(f"### Вопрос {k}?" for k in range(9)) + "\n```\n"
    assert not looks_like_faq(fenced)
    numbered = "# FAQ\n\n" + "\n".join(f"{k}. Вопрос номер {k}?\n\nОтвет." for k in range(1, 5))
    assert looks_like_faq(numbered) and choose_strategy("help.txt", numbered) == "recursive"
    chosen = narezka.chunk_text(FAQ_PAGE, "auto", source="faq.md", size=800, unit="chars")
    assert {c.strategy for c in chosen} == {"faq"}


@pytest.mark.parametrize(("unit", "size"), [("chars", "300"), ("tokens", "96")])
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
            str(EXAMPLES),
            "-s",
            "faq",
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
    assert all('"strategy": "faq"' in row for row in made.stdout.splitlines())
    check = subprocess.run(
        [sys.executable, str(check_chunks_tool), str(EXAMPLES), str(out), *args, *MARKDOWN_ONLY],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout
    assert check.stdout.strip().splitlines()[-1].startswith("ok: ")
