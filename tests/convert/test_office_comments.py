"""Comments of Word files and workbooks reach the chunks holding the text or cell they comment
as metadata (``meta["comments"]``: author, text, on), never any chunk's text; a sheet's chunks
name their cells (issue 35, items 3, 5 and 10)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import office_samples as office
import pytest
from click.testing import CliRunner

from narezka.cli import cli
from narezka.convert import Converted, convert
from narezka.convert.cache import redacted
from narezka.types import ProvenanceSpan, SourceLocation

AWS = "AKIAQWERTYUIOPASDFGH"


def _commented_docx() -> bytes:
    """Three paragraphs; the second's "14 дней" carries Анна's comment."""
    filler = "Обычный абзац без замечаний, в нём много слов о доставке и оплате. " * 3
    body = (
        office.p("Первый абзац. " + filler)
        + '<w:p><w:r><w:t xml:space="preserve">Вернуть товар можно за </w:t></w:r>'
        '<w:commentRangeStart w:id="7"/><w:r><w:t>14 дней</w:t></w:r>'
        '<w:commentRangeEnd w:id="7"/><w:r><w:commentReference w:id="7"/></w:r>'
        '<w:r><w:t xml:space="preserve"> с момента покупки.</w:t></w:r></w:p>'
        + office.p("Третий абзац. " + filler)
    )
    comment = '<w:comment w:id="7" w:author="Анна">' + office.p("Проверить срок по закону")
    return office.docx(body, comments=comment + "</w:comment>")


def _commented_xlsx() -> bytes:
    import openpyxl
    from openpyxl.comments import Comment

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Q1 plan"
    sheet.append(["Статья", "Сумма", "Отдел"])
    for n in range(60):
        sheet.append([f"Статья {n}", n * 10, "Продажи"])
    sheet["B40"].comment = Comment("Сумма без НДС", "Борис")
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _chunks(folder: Path) -> list[dict[str, Any]]:
    run = CliRunner().invoke(
        cli, ["chunk", str(folder), "--format", "jsonl", "--size", "300", "--unit", "chars"]
    )
    assert run.exit_code == 0, run.output
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def test_a_word_comment_is_the_metadata_of_the_chunk_holding_its_text(tmp_path: Path) -> None:
    (tmp_path / "policy.docx").write_bytes(_commented_docx())
    chunks = _chunks(tmp_path)
    assert len(chunks) >= 2
    for chunk in chunks:
        assert "Проверить срок" not in chunk["text"] + chunk["embed_text"]
    commented = [c for c in chunks if "comments" in c["meta"]]
    assert [c for c in chunks if "14 дней" in c["text"]] == commented
    assert commented[0]["meta"]["comments"] == [
        {"author": "Анна", "text": "Проверить срок по закону", "on": "14 дней"}
    ]


def test_a_cell_comment_is_the_metadata_of_the_chunk_holding_its_row(tmp_path: Path) -> None:
    (tmp_path / "budget.xlsx").write_bytes(_commented_xlsx())
    chunks = _chunks(tmp_path)
    assert len(chunks) > 3
    assert all("НДС" not in c["text"] + c["embed_text"] for c in chunks)
    commented = [c for c in chunks if "comments" in c["meta"]]
    assert len(commented) == 1 and "| Статья 38 | 380 |" in commented[0]["text"]
    assert commented[0]["meta"]["comments"] == [
        {"author": "Борис", "text": "Сумма без НДС", "on": "'Q1 plan'!B40"}
    ]
    # Each chunk names its own rows: the commented one holds row 40.
    first, last = commented[0]["meta"]["element"].split(":")
    assert commented[0]["meta"]["sheet"] == "Q1 plan"
    assert int(first[1:]) <= 40 <= int(last[1:])


def test_the_index_stores_comments_and_a_hit_shows_them(tmp_path: Path) -> None:
    from narezka import Index, Settings

    (tmp_path / "policy.docx").write_bytes(_commented_docx())
    with Index.create(tmp_path, Settings(embedder="hash", size=300, unit="chars")) as index:
        index.sync()
        hits = index.search("вернуть товар 14 дней", k=1, mode="bm25", min_relevance=0.0)
    shown = hits[0].to_json()
    assert "14 дней" in shown["text"]
    assert shown["comments"] == [
        {"author": "Анна", "text": "Проверить срок по закону", "on": "14 дней"}
    ]


def test_a_comment_anchor_moves_with_the_text_when_a_secret_before_it_is_redacted() -> None:
    markdown = f"Ключ {AWS} в тексте.\n\nСрок 14 дней.\n"
    at = markdown.index("14 дней")
    converted = Converted(
        markdown,
        (ProvenanceSpan(0, len(markdown) - 1, SourceLocation(element="p1")),),
        {"comments": [{"author": "Анна", "text": "Проверить", "at": [at, at + 7]}]},
    )
    done = redacted(converted)
    assert AWS not in done.markdown
    start, end = done.meta["comments"][0]["at"]
    assert done.markdown[start:end] == "14 дней"


def _commented_deck() -> bytes:
    """Two slides, long enough to be chunks of their own; the first with an old comment (on
    the slide), a modern one (on its body shape) and speaker notes."""
    import pptx

    deck = pptx.Presentation()
    for title, body in (("Доставка", "Курьером по городу"), ("Оплата", "Картой или счётом")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = f"{body}. " + "Подробности условий. " * 12
    first = deck.slides[0]
    first.notes_slide.notes_text_frame.text = "Сказать про тарифы. " * 12
    office.old_pptx_comment(deck, first, "Анна", "Уточнить цену")
    office.modern_pptx_comment(
        deck, first, first.placeholders[1].shape_id, [("Борис", "Только по Москве")]
    )
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def test_slide_comments_are_the_metadata_of_their_slides_chunks_and_notes_are_marked(
    tmp_path: Path,
) -> None:
    (tmp_path / "deck.pptx").write_bytes(_commented_deck())
    chunks = _chunks(tmp_path)
    assert all("Уточнить" not in c["text"] + c["embed_text"] for c in chunks)
    assert all("Москве" not in c["text"] + c["embed_text"] for c in chunks)
    first = [c for c in chunks if c["meta"].get("slide") == 1]
    assert first and all(c["meta"].get("slide") != 2 or "comments" not in c["meta"] for c in chunks)
    old = {"author": "Анна", "text": "Уточнить цену", "on": "slide 1"}
    assert all(old in c["meta"]["comments"] for c in first)  # every chunk of its slide
    modern = {
        "author": "Борис",
        "text": "Только по Москве",
        "on": "Курьером по городу. " + ("Подробности условий. " * 12).strip(),
    }
    assert [c for c in first if modern in c["meta"]["comments"]] == [
        c for c in first if "Курьером" in c["text"]
    ]
    # The notes stay searchable, under their own heading, and their chunks say so.
    notes = [c for c in chunks if "Сказать про тарифы" in c["text"]]
    assert notes and all(c["meta"]["element"] == "notes" for c in notes)
    assert all(c["meta"].get("element") != "notes" for c in chunks if c not in notes)


def _mail_with(name: str, data: bytes) -> bytes:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["Subject"] = "Отчёт"
    msg["From"] = "anna@example.ru"
    msg.set_content("Отчёт во вложении.\n")
    msg.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return bytes(msg)


def test_an_attachments_comments_reach_the_mails_chunks_under_its_name(tmp_path: Path) -> None:
    (tmp_path / "mail.eml").write_bytes(_mail_with("policy.docx", _commented_docx()))
    chunks = _chunks(tmp_path)
    assert all("Проверить срок" not in c["text"] + c["embed_text"] for c in chunks)
    commented = [c for c in chunks if "comments" in c["meta"]]
    assert [c for c in chunks if "14 дней" in c["text"]] == commented
    assert commented[0]["meta"]["comments"] == [
        {"author": "Анна", "text": "Проверить срок по закону", "on": "policy.docx › 14 дней"}
    ]


def test_a_mails_attached_workbook_and_deck_keep_their_comments_anchored() -> None:
    from narezka.convert import convert

    done = convert(_mail_with("budget.xlsx", _commented_xlsx()), ".eml", "mail.eml")
    [note] = done.meta["comments"]
    assert (note["author"], note["on"]) == ("Борис", "budget.xlsx › 'Q1 plan'!B40")
    assert done.markdown[slice(*note["at"])] == "| Статья 38 | 380 | Продажи |"
    deck = convert(_mail_with("deck.pptx", _commented_deck()), ".eml", "mail.eml")
    on = {n["text"]: n for n in deck.meta["comments"]}["Уточнить цену"]
    assert on["on"] == "deck.pptx › slide 1"
    assert deck.markdown[slice(*on["at"])].startswith("# Доставка")
    assert deck.markdown[slice(*on["at"])].endswith("Сказать про тарифы.")


_TC = "http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments"
_REL_TYPE = "http://schemas.microsoft.com/office/2017/10/relationships/"
_FALLBACK = (
    "[Threaded comment]\n\nYour version of Excel allows you to read this threaded comment; "
    "however, any edits to it will get removed if the file is opened in a newer version of "
    "Excel.\n\nComment:\n    Проверьте сумму\nReply:\n    Исправлено"
)


def _threaded_xlsx(threads: str | None = None) -> bytes:
    """A workbook as modern Excel saves a comment thread on B3: the thread in
    ``xl/threadedComments``, its people in ``xl/persons/person.xml``, and a legacy note
    on the same cell saying so for older readers (openpyxl writes the workbook and the note,
    the threaded parts are added by hand)."""
    import zipfile

    import openpyxl
    from openpyxl.comments import Comment

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Бюджет"
    sheet.append(["Статья", "Сумма"])
    sheet.append(["Аренда", 1000])
    sheet.append(["Связь", 250])
    sheet["B3"].comment = Comment(_FALLBACK, "tc={11111111-0000-0000-0000-000000000001}")
    sheet["A2"].comment = Comment("Договор до мая", "Борис")
    out = io.BytesIO()
    book.save(out)
    if threads is None:
        threads = (
            f'<ThreadedComments xmlns="{_TC}">'
            '<threadedComment ref="B3" dT="2026-01-10T10:00:00.00" personId="{P1}" id="{C1}">'
            "<text>Проверьте сумму</text></threadedComment>"
            '<threadedComment ref="B3" dT="2026-01-10T11:00:00.00" personId="{P2}" id="{C2}" '
            'parentId="{C1}"><text>Исправлено</text></threadedComment></ThreadedComments>'
        )
    persons = (
        f'<personList xmlns="{_TC}"><person displayName="Анна Смирнова" id="{{P1}}" '
        'userId="anna" providerId="None"/><person displayName="Иван Петров" id="{P2}" '
        'userId="ivan" providerId="None"/></personList>'
    )
    done = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(out.getvalue())) as source,
        zipfile.ZipFile(done, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            member = source.read(info)
            if info.filename == "xl/worksheets/_rels/sheet1.xml.rels":
                member = member.replace(
                    b"</Relationships>",
                    f'<Relationship Id="rIdTc" Type="{_REL_TYPE}threadedComment" '
                    'Target="../threadedComments/threadedComment1.xml"/></Relationships>'.encode(),
                )
            if info.filename == "xl/_rels/workbook.xml.rels":
                member = member.replace(
                    b"</Relationships>",
                    f'<Relationship Id="rIdP" Type="{_REL_TYPE}person" '
                    'Target="persons/person.xml"/></Relationships>'.encode(),
                )
            target.writestr(info.filename, member)
        target.writestr("xl/threadedComments/threadedComment1.xml", threads)
        target.writestr("xl/persons/person.xml", persons)
    return done.getvalue()


@pytest.mark.parametrize("streamed", [False, True])
def test_an_excel_comment_thread_is_metadata_with_its_people_not_the_legacy_note(
    streamed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if streamed:  # a big workbook is streamed: its threads are read from their parts too
        monkeypatch.setattr("narezka.convert.sheets._FULL_LOAD_XML", 0)
    done = convert(_threaded_xlsx(), ".xlsx", "budget.xlsx")
    comments = [{k: v for k, v in c.items() if k != "at"} for c in done.meta["comments"]]
    assert comments == [
        {"author": "Борис", "text": "Договор до мая", "on": "Бюджет!A2"},
        {"author": "Анна Смирнова", "text": "Проверьте сумму", "on": "Бюджет!B3"},
        {"author": "Иван Петров", "text": "Исправлено", "on": "Бюджет!B3"},
    ]
    assert "Проверьте" not in done.markdown and "Threaded" not in done.markdown
    start, end = done.meta["comments"][2]["at"]
    assert "| Связь | 250 |" in done.markdown[start:end]


def test_an_unreadable_comment_thread_costs_the_thread_not_the_workbook() -> None:
    done = convert(_threaded_xlsx(threads="<ThreadedComments"), ".xlsx", "budget.xlsx")
    assert "| Связь | 250 |" in done.markdown
    assert any("threaded comments" in note for note in done.meta["notes"])
    # The legacy note Excel wrote for older readers is what is left of the thread.
    assert [c["on"] for c in done.meta["comments"]] == ["Бюджет!A2", "Бюджет!B3"]
