"""Hypothesis strategies that generate Markdown with the structures chunkers break."""

from __future__ import annotations

from hypothesis import strategies as st

WORDS = st.sampled_from(
    "доставка курьер тариф зона возврат чай кофе гарантия лампа «Свет» т. е. г. 2,5 кг "
    "the order is shipped within days code table README.md v1.2 e.g. Mr. Smith".split()
)


@st.composite
def sentence(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=1, max_size=14))
    end = draw(st.sampled_from([".", "!", "?", "…", "", "."]))
    first = words[0]
    return " ".join([first[:1].upper() + first[1:], *words[1:]]) + end


@st.composite
def paragraph(draw: st.DrawFn) -> str:
    return " ".join(draw(st.lists(sentence(), min_size=1, max_size=6)))


@st.composite
def heading(draw: st.DrawFn) -> str:
    level = draw(st.integers(1, 4))
    title = " ".join(draw(st.lists(WORDS, min_size=1, max_size=4)))
    anchor = draw(st.sampled_from(["", " {#sec-a}", " {#b}"]))
    return "#" * level + " " + title + anchor


@st.composite
def fence(draw: st.DrawFn) -> str:
    marker = draw(st.sampled_from(["```", "~~~", "````"]))
    lines = draw(
        st.lists(
            st.sampled_from(["# not a heading", "x = 1", "", "## comment", "print('привет')"]),
            max_size=8,
        )
    )
    return "\n".join([marker + draw(st.sampled_from(["", "bash", "python"])), *lines, marker])


@st.composite
def table(draw: st.DrawFn) -> str:
    rows = draw(st.lists(st.tuples(WORDS, WORDS), min_size=1, max_size=12))
    lines = ["| Вес | Зона 1 |", "|---|---:|"] + [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines)


@st.composite
def bullet_list(draw: st.DrawFn) -> str:
    items = draw(st.lists(sentence(), min_size=1, max_size=5))
    return "\n".join(f"- {item}" for item in items)


BLOCK = st.one_of(heading(), paragraph(), paragraph(), fence(), table(), bullet_list())


@st.composite
def markdown(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(BLOCK, max_size=14))
    text = "\n\n".join(blocks)
    if draw(st.booleans()):
        text = "---\ntitle: Тест\n---\n" + text
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text
