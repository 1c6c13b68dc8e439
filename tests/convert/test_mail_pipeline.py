"""Mails and images through ``convert`` and a chunk run: the suffixes are read, attachments of
any readable kind are converted (mails in mails, images), and a mail's headers reach every
chunk's metadata."""

from __future__ import annotations

import email.policy
import io
import json
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from narezka.cli import cli
from narezka.convert import SUFFIXES, convert, ocr
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.discover.kinds import unread_type


def _mail(subject: str, body: str) -> EmailMessage:
    msg = EmailMessage(policy=email.policy.SMTP)
    msg["Subject"] = subject
    msg["From"] = "Анна <anna@example.ru>"
    msg["To"] = "team@example.ru"
    msg["Date"] = "Tue, 14 May 2024 10:30:00 +0300"
    msg.set_content(body)
    return msg


def test_mail_and_image_suffixes_are_read() -> None:
    for suffix in (".eml", ".msg", ".png", ".jpg", ".jpeg", ".tif", ".tiff"):
        assert suffix in SUFFIXES
    assert unread_type("old.eml") is None and unread_type("old.msg") is None


def test_an_eml_file_attached_as_a_file_and_an_image_are_converted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from PIL import Image

    monkeypatch.setattr(ocr, "engine", lambda env=None: ("tesseract", "rus+eng"))
    monkeypatch.setattr(
        ocr, "recognise", lambda *_: [ocr.OcrLine("Текст со скана", 0, 0, 9, 9, (1, 1))]
    )
    png = io.BytesIO()
    Image.new("L", (30, 10), 255).save(png, format="PNG")
    outer = _mail("Пересылка", "Смотри вложения.\n")
    inner = bytes(_mail("Исходное", "Текст исходного письма.\n"))
    outer.add_attachment(inner, maintype="application", subtype="octet-stream", filename="old.eml")
    outer.add_attachment(png.getvalue(), maintype="image", subtype="png", filename="scan.png")
    result = convert(bytes(outer), ".eml", "m.eml")
    text = result.markdown
    assert "## old.eml" in text and "Текст исходного письма." in text
    assert "## scan.png\n\nТекст со скана" in text
    spans = {s.where for s in result.provenance}
    assert any(w.element == "scan.png" and w.page == 1 for w in spans)
    # The attached file's own front matter is not a second front matter: it is inside a section.
    assert text.count("\n---\n") >= 1 and text.startswith("---\n")


def test_headers_reach_every_chunk(tmp_path: Path) -> None:
    body = "\n\n".join(f"Абзац номер {n}: " + "слово " * 40 for n in range(30))
    (tmp_path / "m.eml").write_bytes(bytes(_mail("Отчёт за май", body)))
    run = CliRunner().invoke(
        cli, ["chunk", str(tmp_path), "--format", "jsonl", "--size", "400", "--unit", "chars"]
    )
    assert run.exit_code == 0, run.output
    chunks = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk["meta"]["from"] == "Анна <anna@example.ru>"
        assert chunk["meta"]["subject"] == "Отчёт за май"
        assert chunk["meta"]["date"] == "2024-05-14T10:30:00+03:00"
        assert "anna@example.ru" not in chunk["text"]  # the headers are metadata, not body


def test_images_are_read_only_when_included_and_named_without_ocr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PIL import Image

    monkeypatch.setenv("NAREZKA_OCR", "off")
    (tmp_path / "a.md").write_text("# Заметка\n\nТекст.\n", encoding="utf-8")
    Image.new("L", (30, 10), 255).save(tmp_path / "scan.png")
    quiet = CliRunner().invoke(cli, ["chunk", str(tmp_path), "--format", "jsonl"])
    assert quiet.exit_code == 0 and "scan.png" not in quiet.output  # screenshots: not by default
    named = CliRunner().invoke(
        cli, ["chunk", str(tmp_path), "--format", "jsonl", "--include", "**/*.png"]
    )
    assert "scan.png: image not read: no OCR available" in named.output


@pytest.mark.skipif(ocr.engine(DEFAULT) is None, reason="tesseract is not installed")
def test_a_mail_whose_images_went_unread_is_read_again_once_ocr_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PIL import Image

    from narezka.convert.cache import ConvertCache
    from narezka.convert.capability import LACKS_OCR, lacking

    png = io.BytesIO()
    Image.new("L", (30, 10), 255).save(png, format="PNG")
    msg = _mail("Скан", "Скан во вложении.\n")
    msg.add_attachment(png.getvalue(), maintype="image", subtype="png", filename="scan.png")
    raw = bytes(msg)
    off = ConvertOptions(ocr=False)
    # The cache converts in a child process: the real tesseract, switched by the options
    # handed to it with the file.
    with ConvertCache(tmp_path / "c.sqlite", redact=False) as cache:
        first = cache.convert(raw, ".eml", "m.eml", options=off)
        assert lacking(first.meta) == LACKS_OCR
        assert "no OCR available" in first.meta["notes"][0]
        assert cache.convert(raw, ".eml", "m.eml", options=off) == first and cache.misses == 1
        again = cache.convert(raw, ".eml", "m.eml", options=DEFAULT)
        assert cache.misses == 2 and lacking(again.meta) == ""
        assert "found no text" in again.meta["notes"][0]  # a blank picture: tesseract read it


def test_a_hit_in_a_mails_body_says_where_by_its_heading_path() -> None:
    from narezka.formats import where

    # The body has no element: its subject (and headings) place it; an attachment is named.
    assert where("mail.eml", {}, ["Отчёт за март"]) == "§ Отчёт за март"
    assert where("mail.msg", {}, ["Отчёт", "Итоги"]) == "§ Отчёт > Итоги"
    attached = {"element": "report.pdf", "page_start": 2, "page_end": 3}
    assert where("mail.eml", attached, ["Отчёт"]) == "report.pdf p. 2–3"
    assert where("mail.eml", {}, []) == ""


def _chunks(folder: Path, *flags: str) -> list[dict[str, Any]]:
    run = CliRunner().invoke(cli, ["chunk", str(folder), "--format", "jsonl", *flags])
    assert run.exit_code == 0, run.output
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


_STRATEGIES = ["headings", "recursive", "fixed", "sentences", "overlap", "parent-child", "auto"]


@pytest.mark.parametrize("strategy", _STRATEGIES)
def test_each_attachment_is_a_document_of_its_own_however_short(
    tmp_path: Path, strategy: str
) -> None:
    from narezka.formats import where

    # Body and attachments all far under the merge threshold (150 characters): before, the
    # splitter packed them into one chunk, named by the body alone.
    msg = _mail("Отчёт за май", "Привет! Отчёт во вложении.\n")
    msg.add_attachment("Итог: 42 заказа.\n", filename="report.txt")
    msg.add_attachment(b"# Plan\n\nShip it.\n", maintype="text", subtype="markdown",
                       filename="plan.md")  # fmt: skip
    (tmp_path / "m.eml").write_bytes(bytes(msg))
    chunks = _chunks(tmp_path, "--strategy", strategy, "--size", "800", "--unit", "chars")
    by_part: dict[str | None, list[str]] = {}
    for chunk in chunks:
        meta = chunk["meta"]
        by_part.setdefault(meta.get("element"), []).append(chunk["text"])
        assert meta["from"] == "Анна <anna@example.ru>"  # the mail's headers reach them all
    assert set(by_part) == {None, "report.txt", "plan.md"}, by_part
    assert all("Итог" not in t and "Ship" not in t for t in by_part[None])
    assert "Итог: 42 заказа." in "".join(by_part["report.txt"])
    assert "Ship it." in "".join(by_part["plan.md"])
    assert [c["index"] for c in chunks] == list(range(len(chunks)))
    named = next(c for c in chunks if "Итог" in c["text"])
    section = named["section"]
    assert where("m.eml", named["meta"], section) == "report.txt"
    if strategy in ("headings", "parent-child", "auto"):  # under the mail's heading path
        assert section == ["Отчёт за май", "report.txt"]
    if strategy == "parent-child":  # each part's parents numbered apart (search folds by it)
        parents = {c["meta"].get("element"): c["meta"]["parent"]["index"] for c in chunks}
        assert len(set(parents.values())) == 3, parents


def test_a_secret_before_an_attachment_moves_its_boundary(tmp_path: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    msg = _mail("Доступ", f"Токен: {token}\n")
    msg.add_attachment("Инструкция короткая.\n", filename="howto.txt")
    (tmp_path / "m.eml").write_bytes(bytes(msg))
    chunks = _chunks(tmp_path, "--size", "800", "--unit", "chars")
    attached = [c for c in chunks if c["meta"].get("element") == "howto.txt"]
    assert len(attached) == 1
    assert attached[0]["text"].startswith("## howto.txt")
    assert all(token not in c["text"] for c in chunks)


def test_document_parts_are_offsets_inside_the_text() -> None:
    from narezka.convert import document_parts

    assert document_parts({"parts": [30, 10, 10, 0, 99, "x", 50]}, 60) == (10, 30, 50)
    assert document_parts({}, 60) == () and document_parts({"parts": "10"}, 60) == ()


def test_an_attachment_left_unread_is_named_in_the_mails_chunk_not_one_of_its_own(
    tmp_path: Path,
) -> None:
    msg = _mail("Запись звонка", "Запись во вложении.\n")
    msg.add_attachment(b"ID3\x00\x00", maintype="audio", subtype="mpeg", filename="call.mp3")
    (tmp_path / "m.eml").write_bytes(bytes(msg))
    chunks = _chunks(tmp_path, "--size", "800", "--unit", "chars")
    assert len(chunks) == 1 and "## call.mp3" in chunks[0]["text"]


def test_a_body_hit_expanded_to_its_section_stops_where_the_attachments_start(
    tmp_path: Path,
) -> None:
    from narezka import Index, Settings

    msg = _mail("Отчёт за май", "Привет! Заказы выросли, подробности во вложении.\n")
    msg.add_attachment("Итог: сорок два заказа за май.\n", filename="report.txt")
    root = tmp_path / "kb"
    root.mkdir()
    (root / "m.eml").write_bytes(bytes(msg))
    with Index.create(root, Settings(embedder="hash")) as index:
        index.sync()
        body = index.search("заказы выросли", k=1, mode="bm25", expand="section", fold=None)[0]
        attached = index.search("сорок два", k=1, mode="bm25", expand="section", fold=None)[0]
    assert "Заказы выросли" in body.text and "сорок два" not in body.text
    assert attached.text.startswith("## report.txt") and attached.where == "report.txt"
