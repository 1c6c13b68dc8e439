"""Index and search end to end on the example KB, with the deterministic HashEmbedder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.api.indexing import index
from narezka.api.searching import fold_neighbours, search
from narezka.cli import cli
from narezka.discover.walk import read_document
from narezka.embed import HashEmbedder, Matrix
from narezka.embed.base import WordCounter, check_window
from narezka.errors import ConfigError
from narezka.store import Manifest, open_store

from conftest import copy_examples, index_data, store_count


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    corpus = tmp_path / "kb"
    copy_examples(corpus)
    return corpus


def model() -> HashEmbedder:
    return HashEmbedder(64)


def stored_ids(corpus: Path) -> set[str]:
    with Manifest(index_data(corpus / ".narezka")) as manifest:
        return {c.point_id for p in manifest.paths() for c in manifest.get(p).chunks}  # type: ignore[union-attr]


def test_first_sync_indexes_everything_and_a_rerun_touches_nothing(kb: Path) -> None:
    first = index(kb, embedder=model())
    assert first.files_new == 18 and first.chunks_embedded > 50 and not first.skipped
    assert store_count(kb) == first.chunks_embedded == len(stored_ids(kb))
    again = index(kb, embedder=model())
    assert again.files_unchanged == 18
    assert (again.chunks_embedded, again.chunks_deleted, again.files_changed) == (0, 0, 0)


def test_a_one_line_edit_re_embeds_only_the_chunks_it_touches(kb: Path) -> None:
    index(kb, embedder=model())
    page = kb / "delivery.md"
    page.write_text(
        page.read_text(encoding="utf-8").replace("Курьер привозит", "Курьер бережно привозит"),
        encoding="utf-8",
    )
    report = index(kb, embedder=model())
    assert report.files_changed == 1 and report.files_unchanged == 17
    assert 1 <= report.chunks_embedded <= 3
    assert store_count(kb) == len(stored_ids(kb))


def test_a_deleted_file_loses_its_points_and_no_others(kb: Path) -> None:
    index(kb, embedder=model())
    before = store_count(kb)
    (kb / "faq.md").unlink()
    report = index(kb, embedder=model())
    assert report.files_deleted == 1 and report.chunks_deleted > 0
    assert store_count(kb) == before - report.chunks_deleted == len(stored_ids(kb))


def test_inserting_a_section_reuses_the_vectors_of_moved_chunks(kb: Path) -> None:
    index(kb, embedder=model())
    page = kb / "delivery.md"
    text = page.read_text(encoding="utf-8")
    cut = text.index("\n## ")
    page.write_text(
        text[:cut] + "\n\n## Новый раздел\n\nСовсем новый текст.\n" + text[cut:], encoding="utf-8"
    )
    report = index(kb, embedder=model())
    assert report.chunks_embedded <= 2
    assert report.chunks_reused + report.chunks_kept > 3
    assert store_count(kb) == len(stored_ids(kb))


def test_a_bad_file_is_reported_and_keeps_its_old_points(kb: Path) -> None:
    index(kb, embedder=model())
    before = store_count(kb)
    (kb / "payment.md").write_bytes(b"\x00\x01binary now")
    report = index(kb, embedder=model())
    assert [e.path for e in report.skipped] == [str(kb / "payment.md")] or any(
        "payment.md" in str(e) for e in report.skipped
    )
    assert store_count(kb) == before


def test_search_finds_the_rule_and_skips_the_archived_page(kb: Path) -> None:
    index(kb, embedder=model())
    hits = search("вскрытый чай возврат", kb, mode="bm25", k=5, embedder=model())
    assert hits and all(not h.payload["archived"] for h in hits)
    # The rule is in the returns policy, a PDF: converted, it is found like any page.
    assert any(h.file_path == "returns.pdf" and h.where.startswith("p. ") for h in hits)
    with_archive = search(
        "вскрытый чай возврат", kb, mode="bm25", k=8, include_archived=True, embedder=model()
    )
    assert any(h.file_path == "returns-2023-archive.md" for h in with_archive)


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_filters_and_modes(kb: Path, mode: str) -> None:
    index(kb, embedder=model())
    hits = search("гарантия лампа", kb, mode=mode, k=4, category="products", embedder=model())
    assert hits and all(h.payload["category"] == "products" for h in hits)
    only = search("гарантия", kb, mode=mode, k=4, path="products/*", embedder=model())
    assert only and all(h.file_path.startswith("products/") for h in only)


def test_expand_section_returns_the_whole_heading_section(kb: Path) -> None:
    index(kb, embedder=model(), size=40)
    (hit,) = search("тарифы курьерской доставки зона", kb, mode="bm25", k=1, embedder=model())
    (big,) = search(
        "тарифы курьерской доставки зона", kb, mode="bm25", k=1, expand="section", embedder=model()
    )
    assert len(big.text) > len(hit.text)
    assert hit.text.split("\n")[-1] in big.text


def test_neighbouring_chunks_of_a_section_fold_into_one_hit() -> None:
    from narezka.api.searching import Hit

    def hit(i: int, section: str = "A") -> Hit:
        return Hit(1.0 / (i + 1), "u", "f.md", (section,), "t", "t", i, i * 10, i * 10 + 8)

    folded = fold_neighbours([hit(3), hit(4), hit(9), hit(2), hit(4, "B")])
    assert [(h.chunk_index, h.merged) for h in folded] == [(3, (2, 4)), (9, ()), (4, ())]
    # The folded hit covers its neighbours' spans.
    assert [(h.start, h.end) for h in folded] == [(20, 48), (90, 98), (40, 48)]
    # With a limit, a neighbour ranked below the last returned result is not folded in.
    limited = fold_neighbours([hit(3), hit(9), hit(4), hit(2)], limit=2)
    assert [(h.chunk_index, h.merged) for h in limited] == [(3, (2, 4)), (9, ())]
    assert [(h.chunk_index, h.merged) for h in fold_neighbours([hit(3), hit(9), hit(4)], 1)] == [
        (3, ())
    ]


def test_a_folded_hit_returns_the_text_of_its_whole_span(kb: Path) -> None:
    index(kb, embedder=model(), size=40)
    query = "бонусы баллы"
    hits = search(query, kb, mode="bm25", k=5, embedder=model())
    folded = [h for h in hits if h.merged]
    assert folded, "the query should hit neighbouring chunks of one section"
    for h in folded:
        source = (kb / h.file_path).read_text(encoding="utf-8")
        assert h.text == source[h.start : h.end]
        assert h.end - h.start > h.payload["end"] - h.payload["start"]
    # If the file changed since indexing, a folded hit falls back to its own chunk.
    page = kb / folded[0].file_path
    page.write_text("# Другое\n\n" + page.read_text(encoding="utf-8"), encoding="utf-8")
    again = search(query, kb, mode="bm25", k=5, embedder=model())
    same = next(h for h in again if h.chunk_index == folded[0].chunk_index)
    assert (same.start, same.end) == (same.payload["start"], same.payload["end"])
    assert same.text == same.payload["text"]


def test_search_without_an_index_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="narezka index"):
        search("x", tmp_path)


def test_cli_index_and_search(kb: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, ["index", str(kb), "--embedder", "hash", "--json"])
    assert first.exit_code == 0, first.output
    result = runner.invoke(
        cli,
        [
            "search",
            "вскрытый чай",
            "--store",
            str(kb),
            "--mode",
            "bm25",
            "--format",
            "jsonl",
            "-k",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip().splitlines()) == 2
    missing = runner.invoke(cli, ["search", "x", "--store", str(kb / "nope")])
    assert missing.exit_code == 2 and "narezka index" in missing.stderr


class HalfCounter:
    """Counts half the words: a tokenizer that only approximates the server's."""

    name = "approx-half"

    def count(self, text: str) -> int:
        return WordCounter().count(text) // 2

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]


class UndercountingServer(HashEmbedder):
    """A model that refuses inputs over its window by its real count, while narezka's
    tokenizer for it counts half: what happens with a server narezka cannot size exactly."""

    def __init__(self) -> None:
        super().__init__(64, max_tokens=120)
        self.counter = HalfCounter()

    def embed(self, texts: Sequence[str]) -> Matrix:
        check_window(self.name, WordCounter(), self.max_tokens, texts)
        return super().embed(texts)


def test_a_refused_chunk_is_re_split_at_exact_boundaries_never_truncated(kb: Path) -> None:
    server = UndercountingServer()
    report = index(kb, embedder=server, size=110)
    assert not report.skipped
    assert any("re-split" in w for w in report.warnings)
    hits = search("тарифы доставки", kb, mode="bm25", k=50, include_archived=True, embedder=server)
    assert hits
    store = open_store(index_data(kb / ".narezka"))
    try:
        store.ensure(64)
        points = store.get(sorted(stored_ids(kb)))
    finally:
        store.close()
    by_file: dict[str, list[tuple[int, int]]] = {}
    for p in points:
        by_file.setdefault(p.payload["file_path"], []).append(
            (p.payload["start"], p.payload["end"])
        )
    for name in ("delivery.md", "delivery-zones.html"):  # its long table, converted from HTML
        # Spans lie in the canonical text: a converted page's Markdown.
        text = read_document(kb, kb / name)[0].text
        spans = sorted(by_file[name])
        covered = {i for s, e in spans for i in range(s, e)}
        body = text.index("\n---", 3) + 4 if text.startswith("---") else 0
        lost = [i for i in range(body, len(text)) if i not in covered and not text[i].isspace()]
        assert not lost, name


def test_zones_and_projects_come_from_narezka_toml(kb: Path) -> None:
    (kb / "narezka.toml").write_text(
        '[zones]\n"faq.md" = "hot"\n"returns-2023-archive.md" = "cold"\n\n'
        '[projects]\n"products/**" = "catalog"\n',
        encoding="utf-8",
    )
    index(kb, embedder=model())
    hot = search("вопросы", kb, mode="bm25", k=3, zone="hot", embedder=model())
    assert hot and {h.file_path for h in hot} == {"faq.md"}
    catalog = search("лампа", kb, mode="bm25", k=3, project="catalog", embedder=model())
    assert catalog and all(h.file_path.startswith("products/") for h in catalog)
    warm = search("доставка", kb, mode="bm25", k=3, zone="warm", embedder=model())
    assert warm and all(h.payload["zone"] == "warm" for h in warm)


def test_a_strategy_change_re_indexes_and_leaves_no_stale_points(kb: Path) -> None:
    index(kb, embedder=model())
    report = index(kb, embedder=model(), strategy="sentences", size=200, unit="chars")
    assert report.files_changed == 18 and report.chunks_deleted > 0
    assert store_count(kb) == len(stored_ids(kb))


def test_an_index_of_another_format_version_asks_for_rebuild(kb: Path) -> None:
    import json

    index(kb, embedder=model())
    meta_path = kb / ".narezka" / "index.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta_path.write_text(json.dumps({**meta, "version": 999}), encoding="utf-8")
    with pytest.raises(ConfigError, match="--rebuild"):
        index(kb, embedder=model())
    assert index(kb, embedder=model(), rebuild=True).files_new == 18
