"""A neutral reading of Word, PowerPoint and Excel files: their XML parts unzipped and read with
lxml, no Office library, no narezka. ``bench_realdocs_office.py`` scores converters against it,
and ``office_expectations.json`` was first written from it, then checked by hand.

What counts as a document's words: the body (paragraphs, tables, text boxes, content
controls, equations' text, SmartArt), footnotes and endnotes, slide text, charts' titles and
labels, speaker notes, cell values. Left out: page headers and footers (page furniture,
repeated on every page), comments (metadata), deleted text, field codes, the fallback copy of
a drawing (``mc:Fallback`` repeats its ``mc:Choice``).

    python benchmarks/realdocs/office_reference.py FILE…   # prints what it reads
    python benchmarks/realdocs/office_reference.py --write FOLDER   # office_expectations.json
"""

from __future__ import annotations

import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
_SKIP = {MC + "Fallback", W + "del", W + "delText", W + "instrText", W + "moveFrom"}


@dataclass
class Reading:
    """What a file holds: its words' text, headings and table cells (each table a list of
    rows of cell texts)."""

    text: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    tables: list[list[list[str]]] = field(default_factory=list)


def _xml(archive: zipfile.ZipFile, name: str) -> Any:
    return etree.fromstring(archive.read(name))


def _texts(element: Any, tags: tuple[str, ...]) -> str:
    """The text of ``tags`` under ``element``, skipping the parts no reader should read."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if node.tag in _SKIP:
            return
        if node.tag in tags and node.text:
            out.append(node.text)
        if node.tag in (W + "tab", W + "br", A + "br", W + "cr"):
            out.append(" ")
        for child in node:
            walk(child)
        if node.tag in (W + "p", A + "p"):
            out.append(" ")

    walk(element)
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _word_styles(archive: zipfile.ZipFile) -> dict[str, str]:
    try:
        root = _xml(archive, "word/styles.xml")
    except KeyError:
        return {}
    names = {}
    for style in root.iter(W + "style"):
        name = style.find(W + "name")
        names[style.get(W + "styleId") or ""] = (
            (name.get(W + "val") or "") if name is not None else ""
        )
    return names


def _word_tables(root: Any) -> list[list[list[str]]]:
    tables = []
    for tbl in root.iter(W + "tbl"):
        if any(a.tag == MC + "Fallback" for a in tbl.iterancestors()):
            continue
        rows = []
        for tr in tbl.iter(W + "tr"):
            if next(tr.iterancestors(W + "tbl")) is not tbl:
                continue
            cells = []
            for tc in tr.iter(W + "tc"):
                if (
                    next(tc.iterancestors(W + "tr")) is not tr
                    or tc.find(".//" + W + "tbl") is not None
                ):
                    continue  # a cell holding a table: its own cells are counted
                cells.append(_texts(tc, (W + "t", M + "t")))
            rows.append(cells)
        tables.append(rows)
    return tables


def read_docx(path: Path) -> Reading:
    reading = Reading()
    with zipfile.ZipFile(path) as archive:
        styles = _word_styles(archive)
        body = _xml(archive, "word/document.xml")
        for p in body.iter(W + "p"):
            style = p.find(W + "pPr/" + W + "pStyle")
            name = styles.get(style.get(W + "val") or "", "") if style is not None else ""
            if re.match(r"(?i)^(heading \d|title)$", name):
                text = _texts(p, (W + "t",))
                if text:
                    reading.headings.append(text)
        reading.text.append(_texts(body, (W + "t", M + "t")))
        reading.tables = _word_tables(body)
        for part in ("word/footnotes.xml", "word/endnotes.xml"):
            if part in archive.namelist():
                reading.text.append(_texts(_xml(archive, part), (W + "t", M + "t")))
        for name in archive.namelist():
            if name.startswith("word/diagrams/data"):
                reading.text.append(_texts(_xml(archive, name), (A + "t",)))
    return reading


def _slide_order(archive: zipfile.ZipFile) -> list[str]:
    pres = _xml(archive, "ppt/presentation.xml")
    rels = _xml(archive, "ppt/_rels/presentation.xml.rels")
    targets = {r.get("Id"): r.get("Target") for r in rels}
    rid = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    return [
        "ppt/" + targets[s.get(rid)].lstrip("/").removeprefix("ppt/")
        for s in pres.iter(P + "sldId")
    ]


def read_pptx(path: Path) -> Reading:
    reading = Reading()
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        for slide in _slide_order(archive):
            if slide not in names:
                continue
            root = _xml(archive, slide)
            for sp in root.iter(P + "sp"):
                ph = sp.find(f"{P}nvSpPr/{P}nvPr/{P}ph")
                if ph is not None and ph.get("type") in ("title", "ctrTitle"):
                    text = _texts(sp, (A + "t",))
                    if text:
                        reading.headings.append(text)
            reading.text.append(_texts(root, (A + "t",)))
            for tbl in root.iter(A + "tbl"):
                reading.tables.append(
                    [
                        [_texts(tc, (A + "t",)) for tc in tr.iter(A + "tc")]
                        for tr in tbl.iter(A + "tr")
                    ]
                )
            rels = slide.replace("slides/", "slides/_rels/") + ".rels"
            if rels in names:
                for rel in _xml(archive, rels):
                    target = rel.get("Target") or ""
                    part = str(Path("ppt/slides") / target).replace("ppt/slides/../", "ppt/")
                    kind = rel.get("Type", "")
                    if part in names and (kind.endswith("/notesSlide") or kind.endswith("/chart")):
                        root = _xml(archive, part)
                        reading.text.append(_texts(root, (A + "t", C + "v")))
    return reading


def _column(ref: str) -> int:
    letters = re.match(r"[A-Z]+", ref)
    number = 0
    for ch in letters.group(0) if letters else "A":
        number = number * 26 + ord(ch) - 64
    return number


def _number(raw: str) -> str:
    """A stored number as Excel's General format shows it: ``1.0`` is ``1``."""
    try:
        value = float(raw)
    except ValueError:
        return raw
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else raw


def read_xlsx(path: Path) -> Reading:
    """Sheet names are the headings; each sheet's non-empty cells, row by row, one table."""
    reading = Reading()
    with zipfile.ZipFile(path) as archive:
        shared = []
        if "xl/sharedStrings.xml" in archive.namelist():
            for si in _xml(archive, "xl/sharedStrings.xml").iter(S + "si"):
                shared.append(
                    "".join(
                        t.text or "" for t in si.iter(S + "t") if t.getparent().tag != S + "rPh"
                    )
                )
        book = _xml(archive, "xl/workbook.xml")
        rels = {r.get("Id"): r.get("Target") for r in _xml(archive, "xl/_rels/workbook.xml.rels")}
        rid = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
        for sheet in book.iter(S + "sheet"):
            reading.headings.append(sheet.get("name") or "")
            target = (rels.get(sheet.get(rid)) or "").lstrip("/").removeprefix("xl/")
            root = _xml(archive, "xl/" + target)
            rows = []
            for row in root.iter(S + "row"):
                cells = []
                for c in row.iter(S + "c"):
                    value = c.find(S + "v")
                    kind = c.get("t")
                    if kind == "s" and value is not None:
                        text = shared[int(value.text)]
                    elif kind == "inlineStr":
                        text = "".join(t.text or "" for t in c.iter(S + "t"))
                    else:
                        text = _number(value.text if value is not None and value.text else "")
                    if text.strip():
                        cells.append(text)
                if cells:
                    rows.append(cells)
            reading.tables.append(rows)
            reading.text.append(" ".join(" ".join(r) for r in rows))
    return reading


READERS = {".docx": read_docx, ".pptx": read_pptx, ".xlsx": read_xlsx, ".xlsm": read_xlsx}


def read(path: Path) -> Reading | None:
    """The neutral reading of ``path``, or None for a file that is not a zip (an encrypted
    Office file is an OLE container holding the encrypted package)."""
    if not zipfile.is_zipfile(path):
        return None
    return READERS[path.suffix.lower()](path)


def cells(reading: Reading) -> list[str]:
    """Every non-empty cell text, once per occurrence, spaces collapsed."""
    return [
        " ".join(c.split()) for table in reading.tables for row in table for c in row if c.strip()
    ]


def expectations(folder: Path, old: dict[str, Any]) -> dict[str, Any]:
    """The generated part of the expectations (headings, cells, word counts) for every office
    file of ``folder``, keeping the hand-written keys (passages, questions, notes) of ``old``."""
    files: dict[str, Any] = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() not in READERS:
            continue
        name = str(path.relative_to(folder))
        reading = read(path)
        entry: dict[str, Any] = {"format": path.suffix.lower().lstrip(".")}
        if reading is None:
            entry["refused"] = "password-protected"
        else:
            text = " ".join(reading.text)
            entry["words"] = len(re.findall(r"\w+", text))
            entry["headings"] = reading.headings
            entry["cells"] = cells(reading)
        hand = old.get("files", {}).get(name, {})
        entry.update({k: v for k, v in hand.items() if k in ("passages", "note")})
        files[name] = entry
    return {**{k: v for k, v in old.items() if k != "files"}, "files": files}


def main() -> None:
    if sys.argv[1:2] == ["--write"]:
        import json

        target = Path(__file__).with_name("office_expectations.json")
        old = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
        new = expectations(Path(sys.argv[2]), old)
        target.write_text(json.dumps(new, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return
    for name in sys.argv[1:]:
        path = Path(name)
        reading = read(path)
        if reading is None:
            print(f"===== {path.name}: not a zip")
            continue
        print(f"===== {path.name}")
        print("headings:", reading.headings)
        for table in reading.tables:
            print("table:", table[:6])
        print("text:", " ".join(reading.text)[:1500])


if __name__ == "__main__":
    main()
