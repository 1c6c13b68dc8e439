"""The shared dev set's mails and images: every file converted or named with why, none with a
traceback. Runs when ``NAREZKA_SHARED`` names the shared folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from narezka.convert import ocr
from narezka.convert.image import NO_OCR, convert_image
from narezka.convert.mail import convert_eml
from narezka.convert.msg import convert_msg
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.errors import ConvertError, NoTextLayerError
from narezka.parse import split_front_matter

from conftest import SHARED

ROOT = SHARED / "data/realdocs/unstructured"
pytestmark = pytest.mark.skipif(
    not (ROOT / "eml").is_dir(),
    reason=f"the shared dev set is not at {ROOT} (set NAREZKA_SHARED to its folder)",
)

# Files whose conversion is refused, and the reason's words.
REFUSED = {"empty.eml": "not an e-mail"}
# Files read with notes, and words of the first note.
NOTED = {
    "fake-encrypted.eml": "encrypted",
    "fake-encrypted.msg": "encrypted",
    "mime-attach-mp3.eml": "sample-3s.mp3: not read",
}


def _mails() -> list[Path]:
    if not SHARED:
        return []
    return sorted([*ROOT.glob("eml/*.eml"), *ROOT.glob("*.msg"), *ROOT.glob("*.eml")])


@pytest.mark.parametrize("path", _mails(), ids=lambda p: p.name)
def test_every_dev_set_mail_is_read_or_named(path: Path) -> None:
    convert = convert_msg if path.suffix == ".msg" else convert_eml
    data = path.read_bytes()
    if path.name in REFUSED:
        with pytest.raises(ConvertError, match=REFUSED[path.name]):
            convert(data, path.name)
        return
    result = convert(data, path.name)
    body_start, front, problem = split_front_matter(result.markdown)
    assert problem == "" and front == result.meta["headers"]
    assert result.markdown[body_start:].lstrip().startswith("# ")
    if path.name in NOTED:
        assert NOTED[path.name] in result.meta["notes"][0]
    for note in result.meta.get("notes", ()):
        assert "Traceback" not in note and "Error:" not in note


def test_the_utf16_mails_read_as_their_utf8_twin() -> None:
    twin = convert_eml((ROOT / "eml/fake-email.eml").read_bytes(), "m.eml").markdown
    for name in ("fake-email-utf-16.eml", "fake-email-utf-16-le.eml", "fake-email-utf-16-be.eml"):
        text = convert_eml((ROOT / "eml" / name).read_bytes(), "m.eml").markdown
        assert "This is a test email to use for unit tests." in text
        assert text.split("\n# ", 1)[1] == twin.split("\n# ", 1)[1]


def test_msg_attachment_and_recipients() -> None:
    result = convert_msg((ROOT / "fake-email-attachment.msg").read_bytes(), "m.msg")
    assert "## fake-attachment.txt\n\nHey this is a fake attachment!" in result.markdown
    headers = convert_msg((ROOT / "fake-email-with-cc-and-bcc.msg").read_bytes(), "m.msg").meta[
        "headers"
    ]
    assert headers["cc"] == "steve@unstructured.io"
    assert "hello@unstructured.io" not in headers.values()  # the Bcc stays hidden


def _images() -> list[Path]:
    if not SHARED:
        return []
    suffixes = {".png", ".jpg", ".jpeg", ".tif", ".tiff"}
    return sorted(p for p in ROOT.glob("img/*") if p.suffix.lower() in suffixes)


@pytest.mark.parametrize("path", _images(), ids=lambda p: p.name)
def test_without_ocr_every_dev_set_image_is_named(path: Path) -> None:
    with pytest.raises(NoTextLayerError) as refused:
        convert_image(path.read_bytes(), path.name, ConvertOptions(ocr=False))
    assert refused.value.problem == NO_OCR


@pytest.mark.skipif(ocr.engine(DEFAULT) is None, reason="tesseract is not installed")
def test_a_dev_set_table_image_is_read_by_ocr() -> None:
    # The smallest of the set (two seconds of OCR): the rest cost about 100 s in all.
    path = ROOT / "img/table-multi-row-column-cells.png"
    result = convert_image(path.read_bytes(), path.name)
    assert "Low Vision" in result.markdown
    assert {s.where.page for s in result.provenance} == {1}
