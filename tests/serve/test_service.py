"""The service core without a transport: budgets, cursors, paths that must not escape the
corpus, and an Index used from many threads (as the servers use it)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from narezka import Index, Settings
from narezka.errors import ConfigError
from narezka.serve import Service, ServiceError
from narezka.serve.errors import NotFoundError

from conftest import copy_examples


def test_an_index_answers_searches_from_threads_other_than_its_first(built_kb: Path) -> None:
    # Regression: the embedding cache's sqlite connection was bound to the first thread
    # that searched, so a second thread (a server's worker) failed with ProgrammingError.
    with Index.open(built_kb) as index:
        assert index.search("чай", k=1)
        errors: list[BaseException] = []

        def worker() -> None:
            try:
                assert index.search("доставка", k=2)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    corpus = copy_examples(tmp_path_factory.mktemp("svc") / "kb")
    (corpus / "secret.md").write_text(
        "# Ключи\n\nAWS key: AKIAIOSFODNN7EXAMPLE\n", encoding="utf-8"
    )
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
    outside = corpus.parent / "outside.md"
    outside.write_text("# outside\n\nnot served\n", encoding="utf-8")
    with Service(corpus, max_reply_tokens=600, watch=False) as served:
        yield served


@hsettings(max_examples=15)
@given(budget=st.integers(min_value=500, max_value=3000), k=st.integers(1, 20))
def test_every_reply_fits_its_budget_and_pages_cover_the_hits(
    service: Service, budget: int, k: int
) -> None:
    service.budget = budget
    try:
        reply = service.search("возврат доставка чай", k=k)
        pages = [reply]
        while reply["next_cursor"]:
            reply = service.search("возврат доставка чай", k=k, cursor=reply["next_cursor"])
            pages.append(reply)
        assert all(service.tokens(p) <= budget for p in pages)
        ids = [h["chunk_id"] for p in pages for h in p["hits"]]
        assert len(ids) == len(set(ids)) == reply["total"]
    finally:
        service.budget = 600


def test_a_hit_bigger_than_the_budget_is_cut_and_says_so(service: Service) -> None:
    reply = service.search("чай", k=1, expand="section")
    hit = reply["hits"][0]
    assert service.tokens(reply) <= service.budget
    if hit.get("truncated"):
        assert hit["text"].endswith("truncated to fit the reply budget]")


def test_cursors_only_continue_their_own_request(service: Service) -> None:
    first = service.search("доставка", k=20)
    assert first["next_cursor"]
    with pytest.raises(ServiceError, match="other arguments"):
        service.search("доставка", k=19, cursor=first["next_cursor"])
    with pytest.raises(ServiceError, match="not one this server gave"):
        service.search("доставка", k=20, cursor="!!garbage")


def test_limits_on_query_and_k(service: Service) -> None:
    with pytest.raises(ServiceError, match="longer than"):
        service.search("а" * 2001)
    for k in (0, 51):
        with pytest.raises(ServiceError, match="k must be"):
            service.search("чай", k=k)
    with pytest.raises(ConfigError, match="empty"):
        service.search("   ")


def test_sources_are_served_redacted_and_only_from_inside(service: Service) -> None:
    text = service.source_text("secret.md")
    assert "AKIAIOSFODNN7EXAMPLE" not in text and "[REDACTED:" in text
    for bad in ("../outside.md", str(service.corpus / "faq.md"), "/etc/passwd", "a\\..\\b"):
        with pytest.raises(ServiceError):
            service.source_text(bad)
    with pytest.raises(NotFoundError):
        service.source_text("not-indexed.md")


def test_a_symlink_out_of_the_tree_is_not_served(tmp_path: Path) -> None:
    corpus = copy_examples(tmp_path / "kb")
    outside = tmp_path / "private.md"
    outside.write_text("# private\n\nне для чужих глаз\n", encoding="utf-8")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
    # The index holds faq.md; swapping it for a link out of the tree must not serve the
    # link's target.
    (corpus / "faq.md").unlink()
    os.symlink(outside, corpus / "faq.md")
    with Service(corpus, watch=False) as service, pytest.raises(ServiceError, match="outside"):
        service.source_text("faq.md")


def test_unknown_chunk_and_bad_context_sizes(service: Service) -> None:
    with pytest.raises(NotFoundError):
        service.get_context("00000000-0000-0000-0000-000000000000")
    with pytest.raises(ServiceError, match="before"):
        service.get_context("x", before=11)


def test_a_corpus_without_an_index_is_indexed_by_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAREZKA_EMBEDDER", "hash")
    corpus = copy_examples(tmp_path / "kb")
    with Service(corpus, watch=False) as service:
        service.start()
        assert service.wait_idle(120)
        status = service.status()
        assert status["files"] == 18 and status["writer"]["syncs"] == 1
        assert status["writer"]["last_error"] is None


def test_a_budget_too_small_is_refused(built_kb: Path) -> None:
    with pytest.raises(ConfigError, match="at least"):
        Service(built_kb, max_reply_tokens=100)


def test_an_index_built_with_no_redact_is_served_as_it_is(tmp_path: Path) -> None:
    corpus = copy_examples(tmp_path / "kb")
    (corpus / "secret.md").write_text(
        "# Ключи\n\nAWS key: AKIAIOSFODNN7EXAMPLE\n", encoding="utf-8"
    )
    with Index.create(corpus, Settings(embedder="hash", redact=False)) as index:
        index.sync()
    with Service(corpus, watch=False) as service:
        assert "AKIAIOSFODNN7EXAMPLE" in service.source_text("secret.md")
        hit = service.search("AKIAIOSFODNN7EXAMPLE", k=1, mode="bm25", path="secret.md")
        assert "AKIAIOSFODNN7EXAMPLE" in hit["hits"][0]["text"]
