"""E-mail (.eml): headers as metadata, the body, each attachment converted as its own section
with provenance naming it; every part that cannot be read named in a note, never a crash."""

from __future__ import annotations

import email.policy
from email.header import Header
from email.message import EmailMessage

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.convert import locate, mail
from narezka.convert.mail import convert_eml
from narezka.convert.options import ConvertOptions
from narezka.errors import ConvertError
from narezka.formats import place
from narezka.parse import split_front_matter

import convert_samples as samples


def _mail(subject: str = "Отчёт за май", body: str = "Привет, команда!\n") -> EmailMessage:
    msg = EmailMessage(policy=email.policy.SMTP)
    msg["Subject"] = subject
    msg["From"] = "Анна Петрова <anna@example.ru>"
    msg["To"] = "team@example.ru, boss@example.ru"
    msg["Cc"] = "Борис <boris@example.ru>"
    msg["Date"] = "Tue, 14 May 2024 10:30:00 +0300"
    msg["Message-ID"] = "<m1@example.ru>"
    msg.set_content(body)
    return msg


def _where(result: mail.Converted, needle: str) -> object:
    start = result.markdown.index(needle)
    found = locate(result.provenance, start, start + len(needle))
    assert found is not None
    return found[0]


def test_headers_become_meta_front_matter_and_the_title() -> None:
    result = convert_eml(bytes(_mail()), "m.eml")
    headers = result.meta["headers"]
    assert headers["subject"] == "Отчёт за май"
    assert headers["from"] == "Анна Петрова <anna@example.ru>"
    assert headers["to"] == "team@example.ru, boss@example.ru"
    assert headers["cc"] == "Борис <boris@example.ru>"
    assert headers["date"] == "2024-05-14T10:30:00+03:00"
    assert headers["message_id"] == "<m1@example.ru>"
    # The front matter is what carries them to every chunk: it parses back to the same values
    # and the body (title, text) starts after it.
    body_start, front, problem = split_front_matter(result.markdown)
    assert problem == "" and front == headers
    assert (
        result.markdown[body_start:].lstrip("\n").startswith("# Отчёт за май\n\nПривет, команда!")
    )


def test_rfc2047_subject_in_a_russian_code_page_is_decoded() -> None:
    msg = _mail()
    del msg["Subject"]
    # Written by hand: the stdlib would re-encode the header in UTF-8.
    raw = b"Subject: " + Header("Счёт 7 за май", "koi8-r").encode().encode() + b"\r\n" + bytes(msg)
    assert b"koi8-r" in raw.lower()
    assert "# Счёт 7 за май" in convert_eml(raw, "m.eml").markdown


def test_no_subject_and_no_headers_still_titled() -> None:
    result = convert_eml(b"From: a@example.ru\n\nJust text.\n", "m.eml")
    assert "# (no subject)\n\nJust text." in result.markdown
    _, front, _ = split_front_matter(result.markdown)
    assert front == {"from": "a@example.ru"}


def test_plain_text_is_preferred_over_its_html_alternative() -> None:
    msg = _mail(body="Обычный текст письма.\n")
    msg.add_alternative("<p>HTML-вариант письма.</p>", subtype="html")
    text = convert_eml(bytes(msg), "m.eml").markdown
    assert "Обычный текст письма." in text
    assert "HTML-вариант" not in text


def test_html_only_body_goes_through_the_html_converter_in_the_mime_charset() -> None:
    html = "<html><head><script>alert(1)</script></head><body><h2>Итоги</h2><p>Всё в срок.</p>"
    msg = EmailMessage()
    msg["Subject"] = "Итоги"
    msg.set_content(html, subtype="html", charset="windows-1251", cte="quoted-printable")
    raw = bytes(msg)
    assert "Итоги".encode("cp1251") in raw.replace(b"=\n", b"") or b"=C8" in raw
    text = convert_eml(raw, "m.eml").markdown
    assert "## Итоги" in text and "Всё в срок." in text
    assert "alert" not in text


def test_plain_text_lines_do_not_become_markdown_structure() -> None:
    body = "Итоги\n---\n# не заголовок\n<div>\n- пункт списка\n> цитата\n"
    text = convert_eml(bytes(_mail(body=body)), "m.eml").markdown
    assert "Итоги\n\\---\n\\# не заголовок\n\\<div>\n- пункт списка\n> цитата" in text


def test_each_attachment_is_its_own_section_with_provenance_naming_it() -> None:
    msg = _mail()
    msg.add_attachment(
        "имя,сумма\nЧай,100\n".encode(), maintype="text", subtype="csv", filename="итоги.csv"
    )
    pdf = samples.make_pdf([[(12, "Первая страница отчёта.")], [(12, "Вторая страница.")]])
    msg.add_attachment(pdf, maintype="application", subtype="pdf", filename="report.pdf")
    result = convert_eml(bytes(msg), "m.eml")
    text = result.markdown
    assert text.index("## итоги.csv") < text.index("| Чай | 100 |") < text.index("## report.pdf")
    # The attachment, then the cells of its one unnamed sheet; a span over the whole table
    # names all of them.
    assert _where(result, "| Чай | 100 |").element == "итоги.csv › A2:B2"  # type: ignore[attr-defined]
    table = result.markdown.index("| имя | сумма |")
    whole = locate(result.provenance, table, result.markdown.index("| Чай | 100 |") + 5)
    assert whole is not None and place(*whole)["element"] == "итоги.csv › A1:B2"
    first = _where(result, "Первая страница")
    second = _where(result, "Вторая страница")
    assert (first.element, first.page) == ("report.pdf", 1)  # type: ignore[attr-defined]
    assert (second.element, second.page) == ("report.pdf", 2)  # type: ignore[attr-defined]
    assert _where(result, "Привет, команда!").element is None  # type: ignore[attr-defined]
    assert "notes" not in result.meta


def test_markdown_attachment_is_kept_as_markdown() -> None:
    msg = _mail()
    note = "# Заметка\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    msg.add_attachment(note.encode(), maintype="text", subtype="markdown", filename="note.md")
    text = convert_eml(bytes(msg), "m.eml").markdown
    assert "## note.md\n\n# Заметка\n\n| a | b |\n|---|---|\n| 1 | 2 |" in text


def test_unreadable_attachments_are_named_and_the_mail_still_read() -> None:
    msg = _mail()
    msg.add_attachment(b"ID3\x00\x01", maintype="audio", subtype="mpeg", filename="song.mp3")
    msg.add_attachment(
        b"PK\x03\x04 not a zip",
        maintype="application",
        subtype="octet-stream",
        filename="broken.docx",
    )
    msg.add_attachment(b"\x00\x01", maintype="application", subtype="x-thing")
    result = convert_eml(bytes(msg), "m.eml")
    notes = result.meta["notes"]
    assert notes[0] == "song.mp3: not read (narezka does not read .mp3 files)"
    assert notes[1].startswith("broken.docx: not read (not a valid Office file")
    assert notes[2] == "attachment-3.bin: not read (narezka does not read .bin files)"
    assert "Привет, команда!" in result.markdown
    assert "## song.mp3" in result.markdown  # its name is still searchable


def test_an_empty_attachment_and_a_refused_html_body_are_named() -> None:
    msg = EmailMessage()
    msg["Subject"] = "x"
    msg.set_content('<!DOCTYPE x [<!ENTITY a "b">]><p>&a;</p>', subtype="html")
    msg.add_attachment(b"", maintype="application", subtype="pdf", filename="empty.pdf")
    notes = convert_eml(bytes(msg), "m.eml").meta["notes"]
    assert notes[0].startswith("body: not read (page declares an XML DTD or entity")
    assert notes[1] == "empty.pdf: empty, nothing to read"


def test_an_attachment_over_its_size_limit_is_named_not_read() -> None:
    small = ConvertOptions(max_file_mb=0.001)  # about 1 KB for every kind
    msg = _mail()
    msg.add_attachment(
        ("строка\n" * 400).encode(), maintype="text", subtype="csv", filename="big.csv"
    )
    result = convert_eml(bytes(msg), "m.eml", small)
    assert "big.csv" in result.meta["notes"][0] and "over the limit" in result.meta["notes"][0]
    assert "строка" not in result.markdown


def test_attached_mails_nest_and_the_depth_is_bounded() -> None:
    inner = _mail(subject="Уровень 0", body="Текст уровня 0.\n")
    for level in range(1, mail.MAX_DEPTH + 2):
        outer = _mail(subject=f"Уровень {level}", body=f"Текст уровня {level}.\n")
        outer.add_attachment(inner)
        inner = outer
    result = convert_eml(bytes(inner), "m.eml")
    text = result.markdown
    top = mail.MAX_DEPTH + 1
    for level in range(top, 0, -1):
        assert f"Текст уровня {level}." in text
    assert "Текст уровня 0." not in text
    assert any(f"nested more than {mail.MAX_DEPTH} deep" in n for n in result.meta["notes"])
    found = _where(result, f"Текст уровня {top - 1}.")
    assert found.element == f"Уровень {top - 1}"  # type: ignore[attr-defined]
    assert f"## Уровень {top - 1}\n\nFrom: Анна Петрова" in text


def test_encrypted_mail_keeps_its_headers_and_says_why() -> None:
    raw = (
        b"From: a@example.ru\nSubject: secret\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/encrypted; boundary=b; protocol="application/pgp-encrypted"\n\n'
        b"--b\nContent-Type: application/pgp-encrypted\n\nVersion: 1\n"
        b"--b\nContent-Type: application/octet-stream\n\n-----BEGIN PGP MESSAGE-----\n--b--\n"
    )
    result = convert_eml(raw, "m.eml")
    assert "# secret" in result.markdown and "PGP" not in result.markdown
    assert result.meta["notes"] == [
        "encrypted (multipart/encrypted): its content cannot be read without the key"
    ]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-16"])
def test_utf16_files_read_as_the_same_mail(codec: str) -> None:
    raw = bytes(_mail()).decode("utf-8")
    assert (
        convert_eml(raw.encode(codec), "m.eml").markdown
        == convert_eml(raw.encode("utf-8"), "m.eml").markdown
    )


def test_malformed_encodings_are_tolerated() -> None:
    raw = (
        b"Subject: =?unknown-8bit?Q?=C1=C2?= and =?utf-8?B?broken\n"
        b'Content-Type: text/plain; charset = "UTF-8"Content-Transfer-Encoding: 8bit\n\n'
        + "Текст в UTF-8.\n".encode()
    )
    text = convert_eml(raw, "m.eml").markdown
    assert "Текст в UTF-8." in text


def test_a_label_that_lies_is_named_and_the_text_read_as_it_looks() -> None:
    msg = EmailMessage()
    msg["Subject"] = "x"
    text = "Привет! Отчёт за май готов, посмотрите его до пятницы, пожалуйста."
    msg.set_content(text.encode("cp1251"), maintype="text", subtype="plain")
    del msg["Content-Type"]
    msg["Content-Type"] = 'text/plain; charset="utf-8"'
    result = convert_eml(bytes(msg), "m.eml")
    assert text in result.markdown
    assert result.meta["notes"] == [
        "body: declares charset 'utf-8' but is not: read as windows-1251"
    ]


def test_parts_beyond_the_cap_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mail, "MAX_PARTS", 4)  # the mail, its text, two files
    msg = _mail()
    for n in range(5):
        msg.add_attachment(
            f"файл {n}\n".encode(), maintype="text", subtype="plain", filename=f"f{n}.txt"
        )
    result = convert_eml(bytes(msg), "m.eml")
    assert "файл 1" in result.markdown and "файл 2" not in result.markdown
    assert result.meta["notes"] == ["parts after the first 4 not read"]


@pytest.mark.parametrize("raw", [b"\n\n", b"\x00\x01\x02" * 3])
def test_no_mail_at_all_is_a_named_error(raw: bytes) -> None:
    if raw.strip(b"\n"):
        result = convert_eml(raw, "m.eml")  # bytes as a body: read, not refused
        assert result.markdown.startswith("# (no subject)")
        return
    with pytest.raises(ConvertError, match=r"m\.eml: not an e-mail"):
        convert_eml(raw, "m.eml")


def test_attachment_names_are_made_safe() -> None:
    assert mail.attachment_name("../../etc/passwd", "text/plain", 1) == "passwd"
    assert mail.attachment_name("C:\\Users\\a\\отчёт.pdf", "application/pdf", 1) == "отчёт.pdf"
    assert mail.attachment_name("bad\x00\nname.txt", "text/plain", 1) == "bad name.txt"
    assert mail.attachment_name(None, "application/pdf", 4) == "attachment-4.pdf"


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=3000), st.integers(0, 3000))
def test_any_bytes_give_a_mail_or_a_named_error(noise: bytes, at: int) -> None:
    msg = _mail()
    msg.add_attachment(b"a,b\n1,2\n", maintype="text", subtype="csv", filename="t.csv")
    raw = bytes(msg)
    data = raw[:at] + noise + raw[at:]
    try:
        result = convert_eml(data, "m.eml")
    except ConvertError as exc:
        assert exc.problem.startswith("not an e-mail")
    else:
        assert "\n# " in result.markdown or result.markdown.startswith("# ")
