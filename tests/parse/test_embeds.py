"""Obsidian's ``![[embeds]]`` of notes resolved into the embedding note's text: whole notes,
sections, blocks, nested embeds, cycles and the targets that stay links, over a vault held in
a dict (the vault on disk is ``tests/sources/test_obsidian_embeds.py``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.parse.embeds import MAX_DEPTH, Note, Resolve, embed_name, expand_embeds


def vault(notes: dict[str, str]) -> Resolve:
    """A resolver over ``notes`` (path → text): by name, case aside, as Obsidian does."""

    def resolve(target: str, embedding: str) -> Note:
        name = target.lower().removesuffix(".md")
        found = [p for p in notes if p.lower().removesuffix(".md").rsplit("/", 1)[-1] == name]
        if len(found) > 1:
            return Note(problem="several notes have that name")
        if not found:
            return Note() if "." in name else Note(problem="no note of that name")
        return Note(found[0], notes[found[0]])

    return resolve


DELIVERY = """---
tags: [логистика]
---
# Доставка

Курьером по Москве.

## Сроки

Три дня по России. ^srok

### Далеко

Неделя на Камчатку.

## Цены

- Бесплатно от 3000 ₽ ^free
- Иначе 300 ₽
"""


def test_a_whole_note_is_embedded_without_its_front_matter_and_with_bold_headings() -> None:
    text = "# Чай\n\nВступление.\n\n![[Доставка]]\n\nКонец.\n"
    done = expand_embeds("Чай.md", text, vault({"Доставка.md": DELIVERY}))
    assert "tags:" not in done.text
    assert "**Доставка**\n\nКурьером по Москве." in done.text
    assert "**Сроки**" in done.text and "## Сроки" not in done.text
    assert "^srok" not in done.text and "Три дня по России." in done.text
    assert done.text.startswith("# Чай\n\nВступление.\n\n") and done.text.endswith("\n\nКонец.\n")
    [(start, end, origin)] = done.origins
    assert origin == "Доставка.md"
    assert done.text[start:end].startswith("**Доставка**")
    assert done.text[start:end].endswith("Иначе 300 ₽")
    assert done.warnings == ()


def test_a_section_embed_runs_to_the_next_heading_of_its_level_or_higher() -> None:
    done = expand_embeds("a.md", "![[доставка#сроки]]\n", vault({"Доставка.md": DELIVERY}))
    assert done.text == "**Сроки**\n\nТри дня по России.\n\n**Далеко**\n\nНеделя на Камчатку.\n"
    assert done.origins == ((0, len(done.text) - 1, "Доставка.md#сроки"),)


def test_a_heading_path_names_a_subsection() -> None:
    done = expand_embeds("a.md", "![[Доставка#Сроки#Далеко]]", vault({"Доставка.md": DELIVERY}))
    assert done.text == "**Далеко**\n\nНеделя на Камчатку."


def test_a_block_embed_is_the_paragraph_or_list_item_its_id_marks() -> None:
    notes = {"Доставка.md": DELIVERY}
    assert expand_embeds("a.md", "![[Доставка#^srok]]", vault(notes)).text == "Три дня по России."
    item = expand_embeds("a.md", "![[Доставка#^FREE]]", vault(notes)).text
    assert item == "- Бесплатно от 3000 ₽"


def test_a_block_id_on_its_own_line_marks_the_block_before_it() -> None:
    notes = {"b.md": "| a | b |\n|---|---|\n| 1 | 2 |\n\n^tbl\n\nпосле\n"}
    assert expand_embeds("a.md", "![[b#^tbl]]", vault(notes)).text == (
        "| a | b |\n|---|---|\n| 1 | 2 |"
    )


def test_nested_embeds_are_resolved_and_name_the_innermost_note() -> None:
    notes = {"b.md": "Б начало.\n\n![[c]]\n\nБ конец.", "c.md": "Текст Ц."}
    done = expand_embeds("a.md", "А.\n\n![[b]]\n", vault(notes))
    assert done.text == "А.\n\nБ начало.\n\nТекст Ц.\n\nБ конец.\n"
    assert [(done.text[s:e], o) for s, e, o in done.origins] == [
        ("Б начало.\n\n", "b.md"),
        ("Текст Ц.", "c.md"),
        ("\n\nБ конец.", "b.md"),
    ]
    assert set(done.names) == {"b", "c"}


def test_a_cycle_leaves_the_second_embed_a_link_with_one_warning() -> None:
    notes = {"a.md": "А.\n\n![[b]]\n", "b.md": "Б.\n\n![[a]] и ещё ![[A]]"}
    done = expand_embeds("a.md", notes["a.md"], vault(notes))
    assert done.text == "А.\n\nБ.\n\n![[a]] и ещё ![[A]]\n"
    assert done.warnings == (
        "a.md: ![[a]] (in b.md): a.md embeds it back (a cycle); left as a link",
        "a.md: ![[A]] (in b.md): a.md embeds it back (a cycle); left as a link",
    )


def test_a_note_embedding_itself_is_a_cycle() -> None:
    done = expand_embeds("a.md", "А ![[a]]", vault({"a.md": "А ![[a]]"}))
    assert done.text == "А ![[a]]"
    assert len(done.warnings) == 1


def test_a_missing_or_ambiguous_target_stays_a_link_warned_once() -> None:
    notes = {"x/Дубль.md": "1", "y/дубль.md": "2"}
    done = expand_embeds("a.md", "![[Нет]] ![[Нет]] ![[Дубль]]", vault(notes))
    assert done.text == "![[Нет]] ![[Нет]] ![[Дубль]]"
    assert done.warnings == (
        "a.md: ![[Нет]]: no note of that name; left as a link",
        "a.md: ![[Дубль]]: several notes have that name; left as a link",
    )
    assert done.origins == ()


def test_a_missing_heading_or_block_is_warned() -> None:
    done = expand_embeds("a.md", "![[Доставка#Нет]] ![[Доставка#^nope]]",
                         vault({"Доставка.md": DELIVERY}))  # fmt: skip
    assert done.text == "![[Доставка#Нет]] ![[Доставка#^nope]]"
    assert [w.split(": ", 2)[2] for w in done.warnings] == [
        "Доставка.md has no heading 'Нет'; left as a link",
        "Доставка.md has no block '^nope'; left as a link",
    ]


def test_attachments_and_plain_links_are_left_as_written_without_a_warning() -> None:
    text = "![[схема.png]] ![[отчёт.pdf#page=3]] [[Доставка]] `![[Доставка]]`"
    done = expand_embeds("a.md", text, vault({"Доставка.md": DELIVERY}))
    assert done.text == text
    assert done.warnings == ()


def test_an_embed_in_a_callout_keeps_every_embedded_line_in_it() -> None:
    notes = {"b.md": "Строка один.\n\nСтрока два."}
    done = expand_embeds("a.md", "> [!note] Из другой\n> ![[b]]\n", vault(notes))
    assert done.text == "> [!note] Из другой\n> Строка один.\n> \n> Строка два.\n"


def test_an_embed_of_a_heading_in_the_same_note_needs_no_name() -> None:
    text = "# Сроки\n\nТри дня.\n\n# Итог\n\n![[#Сроки]]\n"
    done = expand_embeds("a.md", text, vault({"a.md": text}))
    assert done.text.endswith("# Итог\n\n**Сроки**\n\nТри дня.\n")


def test_embeds_deeper_than_the_bound_stay_links() -> None:
    notes = {f"n{i}.md": f"N{i} ![[n{i + 1}]]" for i in range(MAX_DEPTH + 5)}
    done = expand_embeds("n0.md", notes["n0.md"], vault(notes))
    assert done.text.count("![[") == 1
    assert "nested more than" in done.warnings[0]


def test_the_name_recorded_for_the_sync_is_the_file_name_lowercased() -> None:
    assert embed_name("Папка/Заметка.md") == "заметка"
    assert embed_name("Заметка") == "заметка"


NAMES = ["a", "b", "c", "d"]


@st.composite
def embed_graphs(draw: st.DrawFn) -> dict[str, str]:
    """Notes a–d, each its own sentence plus embeds of any notes (itself, cycles, sections,
    missing ones) in any order."""
    notes = {}
    for name in NAMES:
        targets = draw(st.lists(st.sampled_from([*NAMES, "zz", "a#Part", "b#^id"]), max_size=4))
        own = f"Own text of {name}."
        embeds = " ".join(f"![[{t}]]" for t in targets)
        notes[f"{name}.md"] = f"# {name}\n\n{own} ^id\n\n## Part\n\n{embeds}\n"
    return notes


@settings(max_examples=60, deadline=None)
@given(embed_graphs())
def test_any_embed_graph_terminates_and_keeps_each_notes_own_text(
    notes: dict[str, str],
) -> None:
    resolve = vault(notes)
    for source, text in notes.items():
        done = expand_embeds(source, text, resolve)
        own = f"Own text of {source[:-3]}."
        assert own in done.text
        # The note's own text is what lies outside the embedded spans, in its order.
        outside, at = [], 0
        for start, end, origin in done.origins:
            assert at <= start < end <= len(done.text)
            assert origin.split("#")[0] in notes
            outside.append(done.text[at:start])
            at = end
        outside.append(done.text[at:])
        assert own in "".join(outside)
        assert len(done.warnings) == len(set(done.warnings))


def test_an_embed_in_a_table_row_is_left_as_written() -> None:
    text = "| a | b |\n|---|---|\n| ![[b]] | 2 |\n"
    assert expand_embeds("a.md", text, vault({"b.md": "Б.\n\nещё"})).text == text
