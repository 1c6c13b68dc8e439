"""``chat``: whole messages grouped, exact spans over raw JSON, readable embed_text."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import narezka
from narezka.errors import SourceError
from narezka.parse.chat import decode_offsets, looks_like_chat, parse_chat
from narezka.parse.sanitize import sanitize
from narezka.split.chat import render_turn
from narezka.tokens import TokenCounter, get_counter

from conftest import EXAMPLES, TEST_DATA
from contract import assert_contract

CHAT = TEST_DATA / "chat"
SUPPORT = (CHAT / "support.jsonl").read_text(encoding="utf-8")
TEAM = (CHAT / "team.json").read_text(encoding="utf-8")
CALL = (CHAT / "call.txt").read_text(encoding="utf-8")
CHARS = get_counter("chars")
ATOMS = False
"""A chat's units are messages, kept whole; a fence inside one message is not an atom of the
chat, so the contract's Markdown atom rule does not bind it."""


# ---- generated chats ----------------------------------------------------------------------

ROLES = st.sampled_from(["user", "assistant", "Оператор", "Клиент", "Анна Петрова"])
PIECES = st.sampled_from(
    ["Привет", "заказ", "2024-118734", "доставка", "«чайник»", '"кавычки"', "C:\\path\\x",
     "\\n не перевод", "😀", "🚀🎉", "ё", "!", ".", "?", " ", "  ", "\n", "\n\n", "\t", "/"]
)  # fmt: skip


@st.composite
def contents(draw: st.DrawFn) -> str:
    text = "".join(draw(st.lists(PIECES, max_size=30)))
    if draw(st.integers(0, 5)) == 0:
        # A message long enough to need splitting at the smaller sizes.
        text += " ".join(draw(st.lists(st.sampled_from(["Длинное", "сообщение."]), max_size=120)))
    if draw(st.integers(0, 6)) == 0:
        text += draw(st.text(max_size=40))  # anything at all, controls and surrogates included
    return text


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    start: int = 0
    end: int = 0
    """Where the message's JSON object (or transcript turn) is in the serialized text."""


@st.composite
def chats(draw: st.DrawFn) -> list[Message]:
    n = draw(st.integers(1, 12))
    return [Message(draw(ROLES), draw(contents())) for _ in range(n)]


def serialize_json(
    messages: list[Message], *, ascii_only: bool, title: str | None
) -> tuple[str, list[Message]]:
    placed = []
    text = '{"title": ' + json.dumps(title) + ', "messages": [\n' if title is not None else "[\n"
    for k, m in enumerate(messages):
        obj = json.dumps(
            {"role": m.role, "content": m.content, "time": k * k * 300}, ensure_ascii=ascii_only
        )
        start = len(text) + 2
        text += "  " + obj + (",\n" if k + 1 < len(messages) else "\n")
        placed.append(Message(m.role, m.content, start, start + len(obj)))
    return text + ("]}" if title is not None else "]"), placed


def serialize_jsonl(messages: list[Message]) -> tuple[str, list[Message]]:
    placed, text = [], ""
    for m in messages:
        obj = json.dumps({"author": m.role, "text": m.content})
        placed.append(Message(m.role, m.content, len(text), len(text) + len(obj)))
        text += obj + "\n"
    return text, placed


def too_long_alone(m: Message, size: int, counter: TokenCounter) -> bool:
    return counter.count(sanitize(render_turn(m.role, _no_surrogates(m.content)))) > size


def _no_surrogates(text: str) -> str:
    return "".join(ch for ch in text if not "\ud800" <= ch <= "\udfff")


def check_messages(text: str, chunks: list[narezka.Chunk], placed: list[Message], size: int,
                   counter: TokenCounter) -> None:  # fmt: skip
    """Whole messages per chunk, each rendered; a message is split only when it must be."""
    split: dict[int, list[narezka.Chunk]] = {}
    for c in chunks:
        inside = [m for m in placed if c.start <= m.start and m.end <= c.end]
        partial = [k for k, m in enumerate(placed) if m.start < c.end and c.start < m.end
                   and not (c.start <= m.start and m.end <= c.end)]  # fmt: skip
        if inside:
            assert not partial, f"chunk {c.index} holds whole and partial messages"
            rendered = sanitize(
                "\n".join(render_turn(m.role, _no_surrogates(m.content)) for m in inside)
            )
            assert c.embed_text == rendered
        else:
            assert len(partial) == 1, f"chunk {c.index} holds {len(partial)} partial messages"
            split.setdefault(partial[0], []).append(c)
    event("a message was split" if split else "no message was split")
    for k, pieces in split.items():
        m = placed[k]
        assert too_long_alone(m, size, counter), f"message {k} was split but fits alone"
        assert len(pieces) >= 2
        for piece in pieces:
            assert piece.meta["parts"] == len(pieces)
            assert piece.embed_text.startswith(f"{m.role}: ") or not piece.embed_text


@given(messages=chats(), size=st.sampled_from([60, 200, 1000]), ascii_only=st.booleans(),
       title=st.sampled_from([None, "Поддержка"]))  # fmt: skip
def test_json_chats_keep_the_contract_and_whole_messages(
    messages: list[Message], size: int, ascii_only: bool, title: str | None
) -> None:
    text, placed = serialize_json(messages, ascii_only=ascii_only, title=title)
    chunks = narezka.chunk_text(text, "chat", source="c.json", size=size)
    assert_contract(text, chunks, size, CHARS, atoms=ATOMS)
    check_messages(text, chunks, placed, size, CHARS)
    assert all(c.section == ((title,) if title else ()) for c in chunks)
    for c in chunks:
        assert c.meta["speakers"] and set(c.meta["speakers"]) <= {m.role for m in messages}
        json.dumps(dict(c.meta))  # serializable


@given(messages=chats(), size=st.sampled_from([40, 80, 300]))
def test_jsonl_chats_in_tokens(messages: list[Message], size: int) -> None:
    counter = get_counter("tokens", "cl100k_base")
    text, placed = serialize_jsonl(messages)
    chunks = narezka.chunk_text(text, "chat", source="c.jsonl", size=size, unit="tokens")
    assert_contract(text, chunks, size, counter, atoms=ATOMS)
    check_messages(text, chunks, placed, size, counter)


@given(messages=chats(), size=st.sampled_from([60, 200]))
def test_split_pieces_are_exact_sub_ranges_of_the_string_literal(
    messages: list[Message], size: int
) -> None:
    text, placed = serialize_json(messages, ascii_only=True, title=None)
    chunks = narezka.chunk_text(text, "chat", source="c.json", size=size)
    event("pieces" if any("part" in c.meta for c in chunks) else "no pieces")
    for c in chunks:
        if "part" not in c.meta:
            continue
        m = next(m for m in placed if m.start < c.end and c.start < m.end)
        literal = text.index('"content": "', m.start) + len('"content": "')
        closing = text.index('", "time"', literal)
        lo, hi = max(c.start, literal), min(c.end, closing)
        if c.meta["part"] > 1:
            assert c.start == lo, "a later piece starts inside the literal"
        if c.meta["part"] < c.meta["parts"]:
            assert c.end == hi, "an earlier piece ends inside the literal"
        # The raw piece never cuts an escape, and its decoding is what was embedded.
        piece = json.loads('"' + text[lo:hi] + '"')
        assert c.embed_text == sanitize(render_turn(m.role, _no_surrogates(piece).strip()))


@st.composite
def transcripts(draw: st.DrawFn) -> tuple[str, list[Message]]:
    words = st.sampled_from(["Здравствуйте", "заказ", "чайник", "вернуть", "деньги", "да", "нет."])
    placed, text = [], ""
    speakers = draw(st.permutations(["Оператор", "Клиент"]))
    # A transcript takes two to talk (one speaker's lines could be prose with labels).
    for k in range(draw(st.integers(3, 12))):
        role = speakers[k % 2] if k < 3 else draw(st.sampled_from(speakers))
        lines = [" ".join(draw(st.lists(words, min_size=1, max_size=60)))
                 for _ in range(draw(st.integers(1, 3)))]  # fmt: skip
        stamp = draw(st.sampled_from(["", f"[10:{k:02d}] ", f"10:{k:02d} "]))
        turn = f"{stamp}{role}: " + "\n".join(lines)
        placed.append(Message(role, "\n".join(lines), len(text), len(text) + len(turn)))
        text += turn + "\n"
    return text, placed


@given(case=transcripts(), size=st.sampled_from([60, 300, 2000]))
def test_transcripts_group_whole_turns(case: tuple[str, list[Message]], size: int) -> None:
    text, placed = case
    chunks = narezka.chunk_text(text, "chat", source="call.txt", size=size)
    assert_contract(text, chunks, size, CHARS, atoms=ATOMS)
    check_messages(text, chunks, placed, size, CHARS)


@given(text=st.text(max_size=600), size=st.sampled_from([16, 50, 300]),
       source=st.sampled_from(["a.txt", "<text>", "a.log"]))  # fmt: skip
def test_contract_holds_on_arbitrary_text(text: str, size: int, source: str) -> None:
    chunks = narezka.chunk_text(text, "chat", source=source, size=size)
    assert_contract(text, chunks, size, CHARS, atoms=ATOMS)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["role", "author", "content", "text", "messages", "title", "time"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(values=st.lists(JSON_VALUES, min_size=1, max_size=3),
       source=st.sampled_from(["c.json", "c.jsonl", "c.txt"]))  # fmt: skip
def test_any_json_is_chunked_or_refused_cleanly(values: list[object], source: str) -> None:
    text = "\n".join(json.dumps(v, ensure_ascii=False) for v in values)
    try:
        chunks = narezka.chunk_text(text, "chat", source=source, size=80)
    except SourceError as exc:
        assert source != "c.txt", "only .json and .jsonl files must be chats"
        assert exc.path == source
        return
    if not chunks:
        # A chat without messages has nothing to embed: the run reports the file as empty.
        chat = parse_chat(source, text)
        assert chat is not None and not chat.turns
        return
    assert_contract(text, chunks, 80, CHARS, atoms=ATOMS)


@given(value=st.text(), ascii_only=st.booleans(), data=st.data())
def test_decoded_offsets_map_back_to_raw_escapes(
    value: str, ascii_only: bool, data: st.DataObject
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only)
    decoded, offsets = decode_offsets(raw, 1, len(raw) - 1)
    assert decoded == value and len(offsets) == len(value) + 1
    i = data.draw(st.integers(0, len(value)))
    j = data.draw(st.integers(i, len(value)))
    assert json.loads('"' + raw[offsets[i] : offsets[j]] + '"') == value[i:j]


def test_lone_and_paired_surrogate_escapes() -> None:
    raw = r'"a\ud83d\ude00b\ud83dc\udc00"'
    decoded, offsets = decode_offsets(raw, 1, len(raw) - 1)
    assert decoded == json.loads(raw) == "a\U0001f600b\ud83dc\udc00"
    assert offsets == [1, 2, 14, 15, 21, 22, 28]
    # A lone surrogate cannot be embedded or written as UTF-8: it is left out of embed_text.
    text = '[{"role": "user\\ud800", "content": "x\\ud800y"}]'
    (chunk,) = narezka.chunk_text(text, "chat", source="s.json", size=100)
    assert chunk.embed_text == "user: xy" and chunk.meta["speakers"] == ["user"]


# ---- the test files -----------------------------------------------------------------------


def test_support_chat_groups_turns_with_speakers_and_times() -> None:
    chunks = narezka.chunk_text(SUPPORT, "chat", source="support.jsonl", size=800)
    assert_contract(SUPPORT, chunks, 800, CHARS, atoms=ATOMS)
    lines = SUPPORT.splitlines(keepends=True)
    starts = [sum(map(len, lines[:k])) for k in range(len(lines))]
    whole = [c for c in chunks if "part" not in c.meta]
    for c in whole:
        # Groups of whole lines, i.e. whole messages, rendered one line each.
        assert c.start in starts and (c.end + 1 in starts or c.end == len(SUPPORT.rstrip()))
        assert c.meta["turns"] == c.text.count("\n") + 1 == len(c.embed_text.splitlines())
        assert c.embed_text.startswith(("client: ", "operator: "))
    first = chunks[0]
    assert first.meta["speakers"] == ["client", "operator"]
    assert first.meta["time_from"] == "2024-03-15T09:58:00+03:00"
    assert first.embed_text.startswith("client: Здравствуйте! Заказ 2024-118734")
    # Pauses of hours end a group: no chunk spans 10:16 → 14:40 or 15:10 → 18:31.
    for c in chunks:
        assert not ("T10:16" in c.text and "T14:40" in c.text)
        assert not ("T15:10" in c.text and "T18:31" in c.text)
    assert chunks[-1].meta["time_to"] == "2024-03-15T18:34:00+03:00"


def test_support_chat_long_message_is_split_alone() -> None:
    chunks = narezka.chunk_text(SUPPORT, "chat", source="support.jsonl", size=800)
    parts = [c for c in chunks if "part" in c.meta]
    assert len(parts) >= 2 and [c.meta["part"] for c in parts] == list(range(1, len(parts) + 1))
    assert all(c.meta["speakers"] == ["client"] and c.meta["turns"] == 1 for c in parts)
    assert parts[0].text.startswith('{"time": "2024-03-15T14:58:00+03:00", "role": "client"')
    assert parts[-1].text.endswith('Спасибо."}')
    assert all(c.embed_text.startswith("client: ") for c in parts)
    joined = " ".join(c.embed_text.removeprefix("client: ") for c in parts)
    message = json.loads(SUPPORT.splitlines()[24])["content"]
    assert joined == message
    # Short messages around it stay whole in their own groups.
    before = chunks[chunks.index(parts[0]) - 1]
    assert before.text.endswith('опишу подробно."}')


def test_team_json_decodes_escapes_and_keeps_emoji() -> None:
    chunks = narezka.chunk_text(TEAM, "chat", source="team.json", size=600)
    assert_contract(TEAM, chunks, 600, CHARS, atoms=ATOMS)
    embed = "\n".join(c.embed_text for c in chunks)
    assert "Лена: Всем привет! Сегодня выкатываем релиз 2.4 🚀\nПлан:\n1. заморозка" in embed
    assert 'сценарий "оплата частями"' in embed and "🙈" in embed
    assert "C:\\deploy\\config\\prod.yaml" in embed and "\\n" not in embed
    assert "iOS — на своём" in embed and "пожалуйста 🙏" in embed
    assert chunks[0].text.startswith("[") and chunks[-1].text.endswith("]")
    assert {s for c in chunks for s in c.meta["speakers"]} == {"Лена", "Игорь", "Саша"}


def test_call_transcript_keeps_continuation_lines_in_their_turn() -> None:
    chunks = narezka.chunk_text(CALL, "chat", source="call.txt", size=600)
    assert_contract(CALL, chunks, 600, CHARS, atoms=ATOMS)
    turn = "Клиент: Он протекает у основания. Сначала я думал, что пролил воду сам,\nно лужа"
    holder = [c for c in chunks if turn in c.embed_text]
    assert len(holder) == 1 and "Пользовался строго по инструкции." in holder[0].embed_text
    assert "[10:05]" not in holder[0].embed_text and "[10:05]" in holder[0].text
    assert chunks[0].embed_text.startswith("Запись разговора с горячей линией")
    assert chunks[0].meta["speakers"] == ["Оператор", "Клиент"]
    assert chunks[0].meta["time_from"] == "10:02"


def test_breadcrumbs_show_the_chat_title_when_asked() -> None:
    text = '{"title": "Поддержка", "messages": [{"role": "user", "content": "Привет"}]}'
    (plain,) = narezka.chunk_text(text, "chat", source="t.json", size=100)
    (crumbed,) = narezka.chunk_text(text, "chat", source="t.json", size=100, breadcrumbs=True)
    assert plain.embed_text == "user: Привет" and plain.section == ("Поддержка",)
    assert crumbed.embed_text == "Поддержка\n\nuser: Привет"
    assert plain.url == "t.json#поддержка"


def test_long_speaker_names_are_shortened_to_leave_room_for_text() -> None:
    text = json.dumps([{"name": "Очень-очень длинное имя участника беседы", "text": "Привет"}])
    (chunk,) = narezka.chunk_text(text, "chat", source="n.json", size=24)
    assert chunk.embed_text.endswith("…: Привет") and len(chunk.embed_text) <= 24
    assert chunk.meta["speakers"] == ["Очень-очень длинное имя участника беседы"]


def test_plain_text_that_is_not_a_chat_falls_back_to_sentences() -> None:
    text = "Это обычный текст. В нём нет реплик.\n\nВторой абзац: тоже без реплик. " * 10
    chunks = narezka.chunk_text(text, "chat", source="notes.txt", size=200)
    assert_contract(text, chunks, 200, CHARS, atoms=ATOMS)
    assert all(c.strategy == "chat" and "speakers" not in c.meta for c in chunks)
    assert all(c.text.rstrip()[-1] in ".:" for c in chunks)
    assert parse_chat("notes.txt", text) is None


# ---- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "text", "problem"),
    [
        ("bad.json", '[{"role": "user", "content": "a"},\n {"role": "user" "content": "b"}]',
         "invalid JSON at line 2, column 18: Expecting ','"),
        ("bad.json", '{"role": "user", "content": "a"}\n{"role": "user", "content": "b"}\n',
         "invalid JSON at line 2, column 1: Extra data (one message a line is JSON Lines"),
        ("bad.json", '[{"role": "user", "content": "a"}, {"role": "bot"}]',
         'message 2 at line 1, column 36 has no "content" or "text"'),
        ("bad.json", '[{"role": "user", "content": ["a", "b"]}]', '"content" is a JSON list'),
        ("bad.json", '{"name": "narezka", "version": "1.0"}', 'an object with a "messages" array'),
        ("bad.json", "[1, 2]", "message 1 at line 1, column 2 is not an object"),
        ("bad.json", "[" * 100_000, "unreadable JSON: RecursionError"),
        ("bad.jsonl", '{"role": "user", "content": "a"}\n{"role": "user", "content": "b"\n',
         "invalid JSON at line 2, column 32: Expecting ',' delimiter"),
        ("bad.jsonl", '{"role": "user", "content": "a"}\n\nnot json\n',
         "line 3: expected a JSON object"),
        ("bad.jsonl", '{"role": "user", "text": "a"} {"role": "user", "text": "b"}\n',
         "line 1: one JSON object a line expected"),
        ("bad.jsonl", '{"role": "user"}\n', 'message 1 at line 1, column 1 has no "content"'),
    ],
)  # fmt: skip
def test_bad_chats_name_the_file_place_and_problem(source: str, text: str, problem: str) -> None:
    with pytest.raises(SourceError) as caught:
        narezka.chunk_text(text, "chat", source=source, size=200)
    assert caught.value.path == source
    assert problem in str(caught.value)


def test_empty_inputs_give_no_chunks() -> None:
    for source, text in [("e.json", ""), ("e.jsonl", "\n\n"), ("e.json", "[]"), ("e.txt", "")]:
        assert narezka.chunk_text(text, "chat", source=source, size=200) == []
    assert narezka.chunk_text('{"messages": []}', "chat", source="e.json", size=200) == []


def test_a_run_reports_bad_files_and_keeps_the_good_ones(tmp_path: Path) -> None:
    (tmp_path / "good.jsonl").write_text(SUPPORT, encoding="utf-8")
    (tmp_path / "bad.json").write_text('[{"role": "user"}]', encoding="utf-8")
    (tmp_path / "empty.json").write_text("", encoding="utf-8")
    report = narezka.chunk_documents([tmp_path], "chat", size=800)
    assert {c.source for c in report.chunks} == {"good.jsonl"}
    assert [e.path for e in report.skipped] == ["bad.json"]
    assert 'has no "content" or "text"' in str(report.skipped[0])
    assert report.empty_files == ["empty.json"]


# ---- looks_like_chat for the auto strategy ------------------------------------------------


def test_looks_like_chat() -> None:
    assert looks_like_chat("support.jsonl", SUPPORT)
    assert looks_like_chat("team.json", TEAM)
    assert looks_like_chat("call.txt", CALL)
    assert looks_like_chat("<text>", TEAM)  # by content, whatever the name
    assert not looks_like_chat("package.json", '{"name": "x", "version": "1.0"}')
    assert not looks_like_chat("broken.json", '[{"role": "user", "content": ')
    assert not looks_like_chat("config.txt", "Host: example.com\nPort: 8080\nUser: admin\n")
    assert not looks_like_chat("law.txt", (TEST_DATA / "legal" / "zakon.txt").read_text())
    for page in sorted(EXAMPLES.rglob("*.md")):
        assert not looks_like_chat(page.name.replace(".md", ".txt"), page.read_text()), page.name


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
        [sys.executable, "-m", "narezka", "chunk", str(CHAT), "--strategy", "chat",
         "--format", "jsonl", *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    out.write_text(made.stdout, encoding="utf-8")
    rows = [json.loads(line) for line in made.stdout.splitlines()]
    assert {row["source"] for row in rows} == {"support.jsonl", "team.json", "call.txt"}
    assert all(row["meta"]["speakers"] for row in rows)
    check = subprocess.run(
        [sys.executable, str(check_chunks_tool), str(CHAT), str(out), *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout
    assert check.stdout.strip().splitlines()[-1].startswith("ok: 3 files")


def test_a_jsonl_number_python_cannot_read_is_a_source_error_naming_the_line() -> None:
    line = '{"role": "user", "content": "hi", "n": ' + "9" * 5000 + "}\n"
    text = '{"role": "user", "content": "first"}\n' + line
    with pytest.raises(SourceError, match=r"a\.jsonl: line 2: unreadable JSON value"):
        narezka.chunk_text(text, "chat", source="a.jsonl")
