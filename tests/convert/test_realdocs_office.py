"""The dev set's Word, PowerPoint and Excel files (realdocs/unstructured, never copied here):
none crashes, none is refused but the encrypted one (named password-protected), none comes
out empty without saying why, and each keeps the passages its expectations name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from narezka.convert import convert
from narezka.errors import PasswordProtectedError

REPO = Path(__file__).resolve().parents[2]
FOLDER = Path(os.environ.get("NAREZKA_SHARED", "/work/shared")) / "data/realdocs/unstructured"
EXPECTED = json.loads(
    (REPO / "benchmarks/realdocs/office_expectations.json").read_text(encoding="utf-8")
)["files"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_dev_set_office_file_converts_or_says_why(name: str) -> None:
    path = FOLDER / name
    if not path.exists():
        pytest.skip(f"{path} not found; set NAREZKA_SHARED to the shared/ folder")
    expect = EXPECTED[name]
    if expect.get("refused"):
        with pytest.raises(PasswordProtectedError, match="password-protected"):
            convert(path.read_bytes(), path.suffix, name)
        return
    result = convert(path.read_bytes(), path.suffix, name)
    body = [ln for ln in result.markdown.splitlines() if ln and not ln.startswith("# Slide ")]
    if expect.get("words", 0) > 0 or expect.get("cells"):
        assert body, name
    else:
        assert any(n.startswith("no text: ") for n in result.meta.get("notes", ())), name
    flat = " ".join(result.markdown.split())
    for passage in expect.get("passages", ()):
        assert " ".join(passage.split()) in flat, (name, passage)
    for heading in expect.get("headings", ()):
        assert f"# {' '.join(heading.split())}" in result.markdown, (name, heading)
