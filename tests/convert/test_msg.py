"""Outlook .msg: the compound file read into the same Markdown an .eml becomes; the files are
made by ``cfb_writer`` (no binaries committed)."""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from cfb_writer import MsgAttachment, MsgMail, msg_file
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.convert import locate, mail
from narezka.convert.msg import convert_msg
from narezka.errors import ConvertError
from narezka.parse import split_front_matter

# 2024-05-14 07:30:00 UTC as a FILETIME (100 ns ticks since 1601).
FILETIME = (1715671800 + 11644473600) * 10_000_000


def _msg(**kw: object) -> MsgMail:
    fields: dict[str, object] = {
        "subject": "Отчёт за май",
        "sender": ("Анна Петрова", "anna@example.ru"),
        "to": [("Борис", "boris@example.ru"), ("team@example.ru", "team@example.ru")],
        "cc": [("Вера", "vera@example.ru")],
        "body": "Привет, команда!\r\n\r\nОтчёт во вложении.",
        "submit_time": FILETIME,
    }
    fields.update(kw)
    return MsgMail(**fields)  # type: ignore[arg-type]


def test_headers_body_and_recipients() -> None:
    result = convert_msg(msg_file(_msg()), "m.msg")
    assert result.meta["headers"] == {
        "subject": "Отчёт за май",
        "from": "Анна Петрова <anna@example.ru>",
        "to": "Борис <boris@example.ru>, team@example.ru",
        "cc": "Вера <vera@example.ru>",
        "date": "2024-05-14T07:30:00+00:00",
    }
    body_start, front, _ = split_front_matter(result.markdown)
    assert front == result.meta["headers"]
    assert result.markdown[body_start:].lstrip("\n") == (
        "# Отчёт за май\n\nПривет, команда!\n\nОтчёт во вложении.\n"
    )


def test_transport_headers_give_the_sent_date_and_message_id() -> None:
    transport = "Date: Tue, 14 May 2024 10:30:00 +0300\r\nMessage-ID: <m1@example.ru>\r\n\r\n"
    headers = convert_msg(msg_file(_msg(transport_headers=transport)), "m.msg").meta["headers"]
    assert headers["date"] == "2024-05-14T10:30:00+03:00"
    assert headers["message_id"] == "<m1@example.ru>"


def test_html_body_in_the_mail_code_page_when_there_is_no_plain_body() -> None:
    html = "<p>Счёт <b>оплачен</b>.</p><script>x()</script>".encode("cp1251")
    result = convert_msg(msg_file(_msg(body=None, html=html, codepage=1251)), "m.msg")
    assert "Счёт **оплачен**." in result.markdown and "x()" not in result.markdown


def test_an_rtf_only_body_is_named() -> None:
    result = convert_msg(msg_file(_msg(body=None, rtf=b"LZFu compressed")), "m.msg")
    assert result.meta["notes"] == ["body kept only as RTF, not read"]
    assert "# Отчёт за май" in result.markdown


def test_attachments_by_long_name_with_provenance_and_big_streams() -> None:
    long_text = "Длинная строка вложения.\n" * 400  # over 4096 bytes: regular sectors
    attachments = [
        MsgAttachment("итоги.csv", "имя,сумма\nЧай,100\n".encode(), "text/csv"),
        MsgAttachment("заметки.txt", long_text.encode()),
        MsgAttachment("song.mp3", b"ID3\x00", "audio/mpeg"),
    ]
    result = convert_msg(msg_file(_msg(attachments=attachments)), "m.msg")
    text = result.markdown
    start = text.index("| Чай | 100 |")
    found = locate(result.provenance, start, start + 5)
    assert found is not None and found[0].element == "итоги.csv › A2:B2"
    assert text.count("Длинная строка вложения.") == 400
    assert result.meta["notes"] == ["song.mp3: not read (narezka does not read .mp3 files)"]


def test_attached_mails_nest_and_the_depth_is_bounded() -> None:
    inner = _msg(subject="Уровень 0", body="Текст уровня 0.")
    for level in range(1, mail.MAX_DEPTH + 2):
        attachment = MsgAttachment("forward.msg", mail=inner)
        inner = _msg(
            subject=f"Уровень {level}", body=f"Текст уровня {level}.", attachments=[attachment]
        )
    result = convert_msg(msg_file(inner), "m.msg")
    top = mail.MAX_DEPTH + 1
    for level in range(top, 0, -1):
        assert f"Текст уровня {level}." in result.markdown
    assert "Текст уровня 0." not in result.markdown
    assert any(f"nested more than {mail.MAX_DEPTH} deep" in n for n in result.meta["notes"])
    start = result.markdown.index(f"Текст уровня {top - 1}.")
    found = locate(result.provenance, start, start + 3)
    assert found is not None and found[0].element == f"Уровень {top - 1}"


def test_encrypted_mails_keep_headers_and_say_why() -> None:
    smime = _msg(
        body=None,
        message_class="IPM.Note.SMIME",
        attachments=[MsgAttachment("smime.p7m", b"\x30\x80", "application/pkcs7-mime")],
    )
    result = convert_msg(msg_file(smime), "m.msg")
    assert result.meta["notes"] == [
        "encrypted (S/MIME): its content cannot be read without the key"
    ]
    assert "smime.p7m" not in result.markdown and "# Отчёт за май" in result.markdown
    pgp = _msg(body="", transport_headers="Content-Type: multipart/encrypted; boundary=b\r\n\r\n")
    notes = convert_msg(msg_file(pgp), "m.msg").meta["notes"]
    assert notes == ["encrypted (PGP): its content cannot be read without the key"]


def test_a_signed_mail_is_read_from_its_signed_content() -> None:
    signed = EmailMessage()
    signed.set_content("Подписанный текст письма.")
    signed.add_attachment(b"a,b\n1,2\n", maintype="text", subtype="csv", filename="t.csv")
    wrapper = (
        b'Content-Type: multipart/signed; protocol="application/pkcs7-signature"; boundary=s\r\n'
        b"\r\n--s\r\n" + bytes(signed) + b"\r\n--s\r\n"
        b"Content-Type: application/pkcs7-signature\r\n\r\nMIAGCSqG\r\n--s--\r\n"
    )
    message = _msg(
        body=None,
        message_class="IPM.Note.SMIME.MultipartSigned",
        attachments=[MsgAttachment("smime.p7m", wrapper, "multipart/signed")],
    )
    result = convert_msg(msg_file(message), "m.msg")
    assert "Подписанный текст письма." in result.markdown
    assert "## t.csv" in result.markdown and "| 1 | 2 |" in result.markdown
    assert "MIAGCSqG" not in result.markdown and "notes" not in result.meta


@pytest.mark.parametrize(
    "data",
    [
        b"/etc/passwd",  # short bytes olefile would take for a file name
        bytes.fromhex("D0CF11E0A1B11AE1") + b"\x00" * 600,
        b"\x00" * 4096,
    ],
)
def test_damaged_files_are_named(data: bytes) -> None:
    with pytest.raises(ConvertError, match=r"m\.msg: not a readable Outlook \.msg file"):
        convert_msg(data, "m.msg")


def test_a_truncated_file_is_named() -> None:
    data = msg_file(_msg(body="x" * 6000))
    with pytest.raises(ConvertError, match="not a readable Outlook"):
        convert_msg(data[: len(data) // 2], "m.msg")


_EDITS = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=12)
_SAMPLE = msg_file(
    _msg(
        attachments=[
            MsgAttachment("итоги.csv", "имя,сумма\nЧай,100\n".encode(), "text/csv"),
            MsgAttachment("forward.msg", mail=_msg(subject="Внутреннее")),
        ]
    )
)


@settings(max_examples=150, deadline=None)
@given(_EDITS)
def test_any_damage_is_a_named_error_or_a_mail(edits: list[tuple[int, int]]) -> None:
    data = bytearray(_SAMPLE)
    for at, value in edits:
        data[at % len(data)] = value
    try:
        result = convert_msg(bytes(data), "m.msg")
    except ConvertError as exc:
        assert exc.problem == "not a readable Outlook .msg file (damaged?)"
    else:
        assert result.markdown.startswith("---\n") or result.markdown.startswith("# ")


def test_an_attached_word_files_comments_are_the_mails_anchored_to_its_text() -> None:
    import office_samples as office

    body = (
        '<w:p><w:r><w:t xml:space="preserve">Вернуть товар можно за </w:t></w:r>'
        '<w:commentRangeStart w:id="7"/><w:r><w:t>14 дней</w:t></w:r>'
        '<w:commentRangeEnd w:id="7"/><w:r><w:commentReference w:id="7"/></w:r></w:p>'
    )
    comment = '<w:comment w:id="7" w:author="Анна">' + office.p("По закону") + "</w:comment>"
    docx = office.docx(body, comments=comment)
    attachments = [MsgAttachment("policy.docx", docx, "application/octet-stream")]
    result = convert_msg(msg_file(_msg(attachments=attachments)), "m.msg")
    assert "По закону" not in result.markdown
    [note] = result.meta["comments"]
    assert (note["author"], note["text"], note["on"]) == (
        "Анна",
        "По закону",
        "policy.docx › 14 дней",
    )
    assert result.markdown[slice(*note["at"])] == "14 дней"
