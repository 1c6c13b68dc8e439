"""The inspector's data and page without a browser, and ``narezka inspect``'s error paths."""

from __future__ import annotations

import json
import re
import webbrowser
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from narezka.cli import cli
from narezka.inspector import InspectRun, inspection_data, read_sources, render_page, script_json
from narezka.inspector.model import breadcrumb_prefix
from narezka.runs import chunk_documents

from conftest import EXAMPLES
from inspector.pages import write_corpus

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_script_json_round_trips_and_cannot_close_its_script(value: object) -> None:
    out = script_json(value)
    assert json.loads(out) == value
    assert not set(out) & {"<", ">", "&", "\u2028", "\u2029"}


def test_a_closing_script_tag_in_the_data_stays_inside_its_block() -> None:
    page = render_page(
        "inspector", "t</title><b>", {"a": "</script><script>alert(1)"}, ["</SCRIPT>"]
    )
    scripts = re.findall(r"<script\b[^>]*>", page, re.IGNORECASE)
    assert len(re.findall(r"</script", page, re.IGNORECASE)) == len(scripts) == 3
    assert "<title>t&lt;/title&gt;&lt;b&gt;</title>" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


@pytest.mark.parametrize("strategy", ["headings", "overlap"])
def test_the_data_rebuilds_every_chunk_and_counts_it(strategy: str) -> None:
    report = chunk_documents([EXAMPLES], strategy, size=300, overlap=40)
    run = InspectRun(strategy, report, 300, "chars")
    sources = read_sources([EXAMPLES], [run])
    index, docs = inspection_data([run], sources)
    by_key = {(c.source, c.index): c for c in report.chunks}
    seen = 0
    for doc in docs:
        assert doc["text"] == sources[doc["source"]].text and not doc["stale"]
        for record in doc["runs"][0]:
            c = by_key[(doc["source"], record["i"])]
            span = doc["text"][record["s"] : record["e"]]
            assert span == c.text
            prefix = record.get("p", breadcrumb_prefix(record["sec"]))
            assert record.get("x", prefix + span) == c.embed_text
            assert record.get("u", f"{doc['source']}#{record.get('a')}") == c.url
            seen += 1
    assert seen == len(report.chunks) == index["runs"][0]["totals"]["chunks"]
    assert sum(f["chunks"][0] for f in index["files"]) == seen
    assert sum(index["runs"][0]["histogram"]["counts"]) == seen
    # Atoms are the parser's code blocks, tables and HTML blocks, as offsets of the text.
    faq = next(d for d in docs if d["source"] == "delivery.md")
    kinds = {kind for _, _, kind in faq["atoms"]}
    assert "table" in kinds
    for start, end, kind in faq["atoms"]:
        if kind == "table":
            assert faq["text"][start:end].startswith("|")


def test_a_file_changed_after_chunking_is_flagged_stale(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "kb")
    report = chunk_documents([corpus], "headings", size=300)
    (corpus / "cjk.md").write_text("# 完全不同\n\n新的文字。\n", encoding="utf-8")
    run = InspectRun("headings", report, 300, "chars")
    _, docs = inspection_data([run], read_sources([corpus], [run]))
    assert {d["source"]: d["stale"] for d in docs} == {"cjk.md": True, "ru.md": False}


def test_over_the_limit_is_counted_against_the_runs_limit() -> None:
    report = chunk_documents([EXAMPLES], "headings", size=300)
    sizes = [c.tokens for c in report.chunks]
    run = InspectRun("headings", report, 200, "chars")  # a stricter limit than it was cut to
    index, _ = inspection_data([run], read_sources([EXAMPLES], [run]))
    totals = index["runs"][0]["totals"]
    assert totals["over"] == sum(1 for s in sizes if s > 200) > 0
    assert index["runs"][0]["histogram"]["counts"][-1] == totals["over"]
    assert totals["max"] == max(sizes)


def _inspect(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["inspect", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nosuch", "unknown strategy 'nosuch'"),
        ("headings:colour=red", "unknown option colour"),
        ("headings:unit=tokens", "unit cannot differ"),
        ("headings:size", "expected key=value"),
        ("fixed:size=4", "size must be at least 16"),
    ],
)
def test_a_bad_compare_spec_is_a_usage_error(tmp_path: Path, spec: str, message: str) -> None:
    code, output = _inspect(str(EXAMPLES), "--compare", spec, "--out", str(tmp_path / "p.html"))
    assert code == 2 and message in output
    assert not (tmp_path / "p.html").exists()


def test_nothing_to_inspect_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    code, output = _inspect(str(missing), "--out", str(tmp_path / "p.html"))
    assert code == 1
    assert f"skipped: {missing}: no such file or directory" in output
    assert f"no chunks from {missing}" in output


def test_a_bad_file_is_reported_and_the_others_are_inspected(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "kb")
    (corpus / "broken.md").write_bytes(b"\x00\x01\x02binary\x00" * 50)
    out = tmp_path / "p.html"
    code, output = _inspect(str(corpus), "--out", str(out))
    assert code == 0 and "skipped: " in output and "broken.md" in output
    page = out.read_text(encoding="utf-8")
    assert "cjk.md" in page and "ru.md" in page and '"source":"broken.md"' not in page


def test_an_unwritable_out_is_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "dir" / "p.html"
    code, output = _inspect(str(EXAMPLES), "--out", str(out))
    assert code == 1 and f"{out}: cannot write" in output


@pytest.mark.parametrize("found", [True, False])
def test_open_hands_the_page_to_the_default_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, found: bool
) -> None:
    opened: list[str] = []

    def fake_open(url: str) -> bool:
        opened.append(url)
        return found

    # No real browser can be started here: record what would be opened.
    monkeypatch.setattr(webbrowser, "open", fake_open)
    out = tmp_path / "p.html"
    code, output = _inspect(str(EXAMPLES / "faq.md"), "--out", str(out), "--open")
    assert code == 0 and opened == [out.resolve().as_uri()]
    assert ("no browser found" in output) is not found


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--levels", "two"], "expected FROM-TO like 2-3, got 'two'"),
        (["--unit", "tokens", "--embedder", "nosuch"], "nosuch"),
        (["--compare", "headings:levels=x-y"], "levels must look like 2-3, not 'x-y'"),
    ],
)
def test_bad_splitting_options_are_usage_errors(
    tmp_path: Path, args: list[str], message: str
) -> None:
    code, output = _inspect(str(EXAMPLES), *args, "--out", str(tmp_path / "p.html"))
    assert code == 2 and message in output
    assert not (tmp_path / "p.html").exists()


def test_a_compare_spec_changes_only_what_it_names(tmp_path: Path) -> None:
    out = tmp_path / "p.html"
    code, output = _inspect(
        str(EXAMPLES), "--size", "500", "--compare", "headings:levels=1-2", "--out", str(out)
    )
    assert code == 0, output
    block = re.search(r'id="narezka-index">(.*?)</script>', out.read_text(encoding="utf-8"))
    assert block is not None
    runs = json.loads(block.group(1))["runs"]
    assert [r["label"] for r in runs] == [
        "headings · 500 chars",
        "headings · 500 chars · levels=1-2",
    ]
    assert [r["limit"] for r in runs] == [500, 500]
    expected = [
        len(chunk_documents([EXAMPLES], "headings", size=500, levels=levels).chunks)
        for levels in [(1, 6), (1, 2)]
    ]
    assert [r["totals"]["chunks"] for r in runs] == expected and expected[0] != expected[1]


def test_auto_shows_every_kind_of_file_it_chunked(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "kb")
    (corpus / "tool.py").write_text("def f():\n    return 1\n\n\nclass A:\n    pass\n", "utf-8")
    report = chunk_documents([corpus], "auto", size=300)
    assert report.strategies["tool.py"] == "code"
    run = InspectRun("auto", report, 300, "chars", strategy="auto")
    index, docs = inspection_data([run], read_sources([corpus], [run]))
    assert [f["source"] for f in index["files"]] == ["cjk.md", "ru.md", "tool.py"]
    code = next(d for d in docs if d["source"] == "tool.py")
    assert code["atoms"] == [] and code["runs"][0]
