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


# ---- adversarial Markdown: the shapes that broke chunkers under fuzzing -------------------

LINE_SEPARATORS = ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c"]
"""Characters some readers take for line breaks; CommonMark and narezka do not."""


@st.composite
def long_token(draw: st.DrawFn) -> str:
    """One unbroken run of 150 to 1,500 characters: base64, a hash, a URL, a Cyrillic blob."""
    n = draw(st.integers(150, 1500))
    unit = draw(st.sampled_from(["x", "я", "aB3+/", "0f", "=-", "https://ex.com/a/"]))
    return (unit * (n // len(unit) + 1))[:n]


@st.composite
def words_or_long(draw: st.DrawFn) -> str:
    """A few ordinary words, sometimes with a long unbroken token among them."""
    words = draw(st.lists(WORDS, min_size=1, max_size=5))
    if draw(st.integers(0, 2)) == 0:
        words.insert(draw(st.integers(0, len(words))), draw(long_token()))
    return " ".join(words)


@st.composite
def adversarial_heading(draw: st.DrawFn) -> str:
    title = draw(words_or_long())
    anchor = draw(st.sampled_from(["", " {#new-q}", " {#x}"]))
    if draw(st.booleans()):
        return "#" * draw(st.integers(1, 6)) + " " + title + anchor
    return title + "\n" + draw(st.sampled_from(["===", "---", "-"]))


@st.composite
def adversarial_table(draw: st.DrawFn) -> str:
    columns = draw(st.integers(1, 4))
    piped = draw(st.booleans())

    def row(cells: list[str]) -> str:
        inner = " | ".join(cells)
        return f"| {inner} |" if piped else inner

    header = row([draw(words_or_long()) for _ in range(columns)])
    delimiter = row([draw(st.sampled_from(["---", ":--", "--:", ":-:"])) for _ in range(columns)])
    if columns == 1 and not piped:
        delimiter = "| --- |"  # a pipe-less one-column delimiter is a setext underline
    body = [
        row([draw(words_or_long()) for _ in range(columns)])
        for _ in range(draw(st.integers(0, 10)))
    ]
    return "\n".join([header, delimiter, *body])


@st.composite
def adversarial_fence(draw: st.DrawFn) -> str:
    """Fences of both kinds: nested, mismatched, unclosed, with long lines or info strings."""
    char = draw(st.sampled_from("`~"))
    outer = char * draw(st.integers(3, 5))
    inner_char = draw(st.sampled_from("`~"))
    inner = inner_char * 3
    info = draw(st.sampled_from(["", "python", "bash", "text {.x}"]))
    if draw(st.integers(0, 5)) == 0:
        info += " " + draw(long_token())
    if char == "`":
        info = info.replace("`", "")  # a backtick in the info string is no fence in CommonMark
    body = draw(
        st.lists(
            st.one_of(
                st.sampled_from(["# not a heading", "x = 1", "", "print('привет')", "| a | b |"]),
                st.just(inner + "\ninside the inner fence\n" + inner),
                long_token(),
            ),
            max_size=8,
        )
    )
    closing = draw(st.sampled_from([outer, outer + char, "", inner]))
    return "\n".join([outer + info, *body, *([closing] if closing else [])])


@st.composite
def html_block(draw: st.DrawFn) -> str:
    """HTML blocks, which swallow the lines after them up to a blank line (or their end tag)."""
    swallowed = draw(
        st.lists(
            st.sampled_from(["# not a heading", "| a | b |", "|---|---|", "```", "текст"]),
            max_size=4,
        )
    )
    kind = draw(st.sampled_from(["div", "comment", "pre", "details"]))
    if kind == "comment":
        return "\n".join(["<!-- заметка", *swallowed, "", "still the comment -->"])
    if kind == "pre":
        return "\n".join(["<pre>", *swallowed, "", "</pre>"])
    return "\n".join([f"<{kind}>", *swallowed, f"</{kind}>"])


@st.composite
def adversarial_list(draw: st.DrawFn) -> str:
    """List items, some with a fence or table indented under them (a word gap then ends
    inside the atom's first line, past its indentation)."""
    items = draw(st.lists(words_or_long(), min_size=1, max_size=5))
    marker = draw(st.sampled_from(["- ", "* ", "1. ", "2) "]))
    lines = []
    for item in items:
        lines.append(marker + item)
        if draw(st.integers(0, 2)) == 0:
            nested = draw(st.one_of(adversarial_fence(), adversarial_table(), fence(), table()))
            gap = draw(st.sampled_from(["", "\n"]))
            pad = " " * len(marker)
            lines.append(
                gap + "\n".join(pad + line if line else line for line in nested.split("\n"))
            )
    return "\n".join(lines)


@st.composite
def separated_paragraph(draw: st.DrawFn) -> str:
    """Sentences joined by line-separator characters instead of spaces or newlines."""
    parts = draw(st.lists(sentence(), min_size=2, max_size=5))
    seps = [draw(st.sampled_from(LINE_SEPARATORS)) for _ in parts[1:]]
    return parts[0] + "".join(s + p for s, p in zip(seps, parts[1:], strict=True))


ADVERSARIAL_BLOCK = st.one_of(
    adversarial_heading(),
    adversarial_table(),
    adversarial_fence(),
    html_block(),
    adversarial_list(),
    separated_paragraph(),
    words_or_long(),
    BLOCK,
)


@st.composite
def adversarial_markdown(draw: st.DrawFn) -> str:
    """Documents built from the adversarial blocks, sometimes without blank lines between."""
    blocks = draw(st.lists(ADVERSARIAL_BLOCK, max_size=8))
    text = ""
    for k, block in enumerate(blocks):
        if k:
            text += draw(st.sampled_from(["\n\n", "\n\n", "\n", "\n\n\n"]))
        text += block
    if draw(st.booleans()):
        text += "\n"
    return text
