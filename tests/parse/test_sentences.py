"""Tests for narezka.parse.sentences: concrete splits, invariants and linear running time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.parse.sentences import sentence_ends, sentence_spans


def split(text: str) -> list[str]:
    """The sentences of ``text`` as strings."""
    return [text[a:b] for a, b in sentence_spans(text)]


SPLITS: list[tuple[str, list[str]]] = [
    # Plain ends.
    ("Привет. Как дела? Хорошо!", ["Привет.", "Как дела?", "Хорошо!"]),
    ("Hello there. How are you? Fine!", ["Hello there.", "How are you?", "Fine!"]),
    ("Что?! Да!!! Нет?.. Ну…", ["Что?!", "Да!!!", "Нет?..", "Ну…"]),
    ("Итак... Начнём.", ["Итак...", "Начнём."]),
    ("Их было 5. 10 человек ушли.", ["Их было 5.", "10 человек ушли."]),
    ("Конец. (Примечание.) [Ещё.]", ["Конец.", "(Примечание.)", "[Ещё.]"]),
    ("Он ушёл. «Куда?» — никто не знал.", ["Он ушёл.", "«Куда?» — никто не знал."]),
    ("Без точки в конце", ["Без точки в конце"]),
    ("Это **важно.** Далее.", ["Это **важно.**", "Далее."]),
    # Russian abbreviations.
    ("Это т. е. пример. Дальше.", ["Это т. е. пример.", "Дальше."]),
    ("Это т.е. Пример.", ["Это т.е. Пример."]),
    ("Яблоки, груши и т. д. Потом.", ["Яблоки, груши и т. д. Потом."]),
    ("Книги и т. п. Всё.", ["Книги и т. п. Всё."]),
    ("Так как т. к. Надо.", ["Так как т. к. Надо."]),
    ("Кошки, собаки и др. Звери.", ["Кошки, собаки и др. Звери."]),
    ("В 2023 г. Потом был 2024-й.", ["В 2023 г. Потом был 2024-й."]),
    ("В 2023 г. потом было лучше.", ["В 2023 г. потом было лучше."]),
    ("Живу в г. Москва. Рядом.", ["Живу в г. Москва.", "Рядом."]),
    ("В 1990-х гг. Было трудно. В XIX в. Тоже.", ["В 1990-х гг. Было трудно.", "В XIX в. Тоже."]),
    ("Цена 5 руб. 50 коп. Итого.", ["Цена 5 руб. 50 коп. Итого."]),
    ("Было 5 тыс. Людей и 2 млн. Рублей.", ["Было 5 тыс. Людей и 2 млн. Рублей."]),
    ("Адрес: ул. Ленина, д. 5, кв. 7. Звоните.", ["Адрес: ул. Ленина, д. 5, кв. 7.", "Звоните."]),
    ("См. рис. 3 на с. 12. Там всё.", ["См. рис. 3 на с. 12.", "Там всё."]),
    (
        "Доклад проф. Иванова и акад. Петрова. Конец.",
        ["Доклад проф. Иванова и акад. Петрова.", "Конец."],
    ),
    ("Музей им. Пушкина. Открыт.", ["Музей им. Пушкина.", "Открыт."]),
    ("Весит ок. 5 кг. Много.", ["Весит ок. 5 кг. Много."]),
    ("Пришёл Макс. Он сел.", ["Пришёл Макс.", "Он сел."]),
    ("Это был я. Потом ты.", ["Это был я.", "Потом ты."]),
    # Initials.
    ("Поэт А.С. Пушкин родился в Москве.", ["Поэт А.С. Пушкин родился в Москве."]),
    ("Пришёл И. И. Петров. Сел.", ["Пришёл И. И. Петров.", "Сел."]),
    ("J. R. R. Tolkien wrote it. Then.", ["J. R. R. Tolkien wrote it.", "Then."]),
    # English abbreviations.
    ("Mr. Smith met Dr. Jones. They left.", ["Mr. Smith met Dr. Jones.", "They left."]),
    ("Apples vs. Oranges. Next.", ["Apples vs. Oranges.", "Next."]),
    ("Use tools, e.g. Ruff, i.e. A linter.", ["Use tools, e.g. Ruff, i.e. A linter."]),
    ("See Fig. 2 and No. 5. Done.", ["See Fig. 2 and No. 5.", "Done."]),
    ("Acme Inc. Announced it. Ok.", ["Acme Inc. Announced it.", "Ok."]),
    # Numbers, versions, URLs, file names.
    (
        "Число 2.5 и 3,14 здесь. Версия v1.2.3 вышла.",
        ["Число 2.5 и 3,14 здесь.", "Версия v1.2.3 вышла."],
    ),
    (
        "Open example.com now. Edit README.md and narezka.toml.",
        ["Open example.com now.", "Edit README.md and narezka.toml."],
    ),
    # Ellipsis and quotes.
    ("Ну… ладно. Ну... ладно.", ["Ну… ладно.", "Ну... ладно."]),
    ("Ну… Ладно.", ["Ну…", "Ладно."]),
    ("Он сказал: «Хватит!» и ушёл. Всё.", ["Он сказал: «Хватит!» и ушёл.", "Всё."]),
    ("«Это конец.» Новое начало.", ["«Это конец.»", "Новое начало."]),
    ('He said "Stop." Then left.', ['He said "Stop."', "Then left."]),
    ("Он спросил: «Кто?» — и замолчал.", ["Он спросил: «Кто?» — и замолчал."]),
    # Dialogue.
    ("— Привет! — сказал он. — Как дела?", ["— Привет! — сказал он.", "— Как дела?"]),
    ("Он молчал.\n— Ну что?\n— ничего.", ["Он молчал.", "— Ну что?", "— ничего."]),
    # Lines, paragraphs and lists.
    ("Строка\nпродолжение строки.", ["Строка\nпродолжение строки."]),
    ("Заголовок\n\nабзац без точки\n \nещё", ["Заголовок", "абзац без точки", "ещё"]),
    ("Конец г.\n\nдалее", ["Конец г.", "далее"]),
    ("Шаги:\n1. Открыть файл.\n2. Закрыть.", ["Шаги:", "1. Открыть файл.", "2. Закрыть."]),
    ("1. Первое\n2. Второе", ["1. Первое", "2. Второе"]),
    ("Список:\n- один\n* два\n  10) десять", ["Список:", "- один", "* два", "10) десять"]),
    ("Раздел\n1.2. Подраздел", ["Раздел", "1.2. Подраздел"]),
    ("", []),
    ("  \n\n ", []),
]


@pytest.mark.parametrize(("text", "expected"), SPLITS)
def test_split(text: str, expected: list[str]) -> None:
    assert split(text) == expected


@pytest.mark.parametrize(
    ("text", "start", "end", "expected"),
    [
        ("Раз. Два. Три.", 0, None, [4, 9, 14]),
        ("Раз. Два. Три.", 0, 9, [4, 9]),
        ("Раз. Два. Три.", 4, 14, [9, 14]),  # an end at `start` has no text before it
        ("Раз. Два. Три.", 5, 8, []),  # `end` is inside a sentence
        ("Раз. два. Три.", 0, 4, []),  # judged with the text after `end`
        ("Раз... Два.", 5, 11, [6, 11]),  # the run begins before `start`
        ("«Стоп!» Да.", 6, 11, [7, 11]),  # the run «!»» begins before `start`
        ("Раз\n\n\nДва", 4, 9, [9]),  # `start` inside a paragraph break
        ("Раз.  \n", 0, None, [4]),
        ("Раз. Два", 0, 6, [4]),
        ("Раз. Два", 0, 100, [4, 8]),
    ],
)
def test_ends_in_range(text: str, start: int, end: int | None, expected: list[int]) -> None:
    assert sentence_ends(text, start, end) == expected


def test_spans_in_range() -> None:
    text = "Раз. Два три. Четыре."
    assert sentence_spans(text, 6, 18) == [(6, 13), (14, 18)]


# Building blocks that produce the tricky cases far more often than random characters.
# fmt: off
PIECES = [
    "т.", " е.", "г.", " Москва", "Mr.", " Smith", "А.", "С.", " ", "  ", "\n", "\n\n", "\n \n",
    "1. ", "- ", "* ", "…", "...", "?!", "!", "?", ".", "»", "«", '"', "(", ")", "— ", "слово",
    "Слово", "word", "Word", "2.5", "42", "\t", "**", "руб.", "кв.", "Макс.", "я.", "2.1. ",
]
# fmt: on
ALPHABET = "абвгдеяАБВГДЯabcXYZ019 .,;:!?…»«\"”’'()[]—–-*_`\n\t\r"
texts = st.one_of(
    st.text(),
    st.text(alphabet=ALPHABET),
    st.lists(st.sampled_from(PIECES)).map("".join),
)


@st.composite
def text_and_range(draw: st.DrawFn) -> tuple[str, int, int]:
    text = draw(texts)
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, len(text)))
    return text, start, end


@settings(max_examples=400)
@given(text_and_range())
def test_spans_cover_non_space_once(case: tuple[str, int, int]) -> None:
    text, start, end = case
    spans = sentence_spans(text, start, end)
    covered: list[int] = []
    previous_end = start
    for begin, stop in spans:
        assert previous_end <= begin < stop <= end
        assert not text[begin].isspace()
        assert not text[stop - 1].isspace()
        covered.extend(range(begin, stop))
        previous_end = stop
    non_space = {i for i in range(start, end) if not text[i].isspace()}
    assert non_space <= set(covered)


@settings(max_examples=400)
@given(text_and_range())
def test_ends_are_sorted_span_ends(case: tuple[str, int, int]) -> None:
    text, start, end = case
    ends = sentence_ends(text, start, end)
    assert ends == sorted(set(ends))
    assert all(start < b <= end and not text[b - 1].isspace() for b in ends)
    assert set(ends) <= {stop for _, stop in sentence_spans(text, start, end)}


@settings(max_examples=400)
@given(text_and_range())
def test_range_only_filters_whole_text_ends(case: tuple[str, int, int]) -> None:
    text, start, end = case
    whole = sentence_ends(text)
    assert sentence_ends(text, start, end) == [b for b in whole if start < b <= end]


@given(texts)
def test_whole_text_ends_at_last_non_space(text: str) -> None:
    stripped = text.rstrip()
    ends = sentence_ends(text)
    if stripped:
        assert ends[-1] == len(stripped)
    else:
        assert ends == []


@given(st.lists(st.sampled_from(["Раз.", "Два!", "Три?", "Four…"]), min_size=1))
def test_each_sentence_found(sentences: list[str]) -> None:
    text = " ".join(sentences)
    assert split(text) == sentences


def test_linear_time_on_long_inputs() -> None:
    # Quadratic behaviour would make this test hang rather than fail an assertion.
    n = 300_000
    assert sentence_ends("." * n) == [n]
    assert sentence_ends("." * n + "x") == [n + 1]
    assert sentence_ends("!?" * (n // 2)) == [n]
    assert sentence_ends("Мир.Мир." * (n // 8)) == [n]
    assert sentence_ends("ы" * n + ". Да") == [n + 1, n + 4]
    assert sentence_ends("»" * n) == [n]
    assert sentence_ends("a" + " " * n + "b") == [n + 2]
    assert sentence_ends("a" + "\n" * n) == [1]
    assert sentence_ends("1." * n, 1000, 2000) == []
    sentence = "Привет, мир: т. е. г. Москва, ул. Ленина, д. 5… ну, «ладно», 2.5 руб. — ок! "
    count = 1_000_000 // len(sentence) + 1
    text = sentence * count
    assert len(text) >= 1_000_000
    assert len(sentence_ends(text)) == count
    assert len(sentence_spans(text)) == count
