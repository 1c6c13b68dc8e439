"""LLM-written chunk context against a local fake of the Ollama and OpenAI chat APIs (no live
LLM was available): the request shapes, every fault path, the token budget, the cache."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fake_llm import LONG_REPLY, LLMState, fake_llm
from narezka.embed.remote import RetryPolicy
from narezka.enrich.context_cache import ContextCache
from narezka.enrich.context_text import (
    DOC_CHARS,
    MAX_CONTEXT_CHARS,
    SEPARATOR,
    clean_reply,
    document_excerpt,
    fit_context,
)
from narezka.enrich.llm_client import (
    LLMModelNotFoundError,
    LLMReplyError,
    LLMUnavailableError,
    OllamaChat,
    OpenAIChat,
    open_client,
    parse_spec,
)
from narezka.enrich.llm_context import ContextWriter
from narezka.errors import ConfigError
from narezka.runs.chunking import chunk_text
from narezka.settings import Settings
from narezka.tokens import CharCounter, get_counter
from narezka.types import Chunk

FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02, timeout=1.0)
DOC = """# Доставка по России

Интернет-магазин отправляет заказы во все регионы России со склада в Подольске.

## Тарифы курьерской доставки

Курьер привозит заказ до двери в удобный интервал. Цена зависит от веса и зоны.

## Пункты выдачи

Заказ хранится в пункте выдачи семь дней, потом возвращается на склад.
"""
SIZE = 200


@pytest.fixture
def state() -> LLMState:
    return LLMState()


@pytest.fixture
def url(state: LLMState) -> Iterator[str]:
    with fake_llm(state) as base:
        yield base


def chunks_of(text: str = DOC, size: int = SIZE) -> list[Chunk]:
    return chunk_text(text, "headings", source="delivery.md", size=size, unit="chars")


def client_for(backend: str, url: str) -> OllamaChat | OpenAIChat:
    return ollama(url) if backend == "ollama" else OpenAIChat("ctx-model", url + "/v1", retry=FAST)


def ollama(url: str, model: str = "ctx-model", **kw: object) -> OllamaChat:
    return OllamaChat(model, host=url, retry=kw.pop("retry", FAST))  # type: ignore[arg-type]


def writer(client: object, cache: ContextCache | None = None) -> ContextWriter:
    return ContextWriter(client, cache)  # type: ignore[arg-type]


def apply(w: ContextWriter, chunks: list[Chunk], text: str = DOC, limit: int = SIZE) -> object:
    return w.apply("delivery.md", text, chunks, counter=CharCounter(), limit=limit)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---- specs and settings -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "kind", "model", "where"),
    [
        ("ollama:qwen2.5:3b", "ollama", "qwen2.5:3b", None),
        (
            "ollama:library/qwen2.5:3b@http://gpu:11434/",
            "ollama",
            "library/qwen2.5:3b",
            "http://gpu:11434",
        ),
        (
            "openai:qwen-3b@http://127.0.0.1:8080/v1",
            "openai",
            "qwen-3b",
            "http://127.0.0.1:8080/v1",
        ),
    ],
)
def test_specs_parse(spec: str, kind: str, model: str, where: str | None) -> None:
    parsed = parse_spec(spec)
    assert (parsed.kind, parsed.model, parsed.url) == (kind, model, where)


@pytest.mark.parametrize(
    "spec", ["ollama:", "openai:model", "gpt:x", "openai:m@ftp://host", "qwen2.5:3b"]
)
def test_bad_specs_are_config_errors_that_show_the_forms(spec: str) -> None:
    with pytest.raises(ConfigError, match="context_llm"):
        parse_spec(spec)


def test_settings_take_the_spec_from_toml_env_and_flags_and_off_switches_it_off(
    tmp_path: Path,
) -> None:
    (tmp_path / "narezka.toml").write_text(
        '[settings]\ncontext_llm = "ollama:qwen2.5:3b"\n', encoding="utf-8"
    )
    assert Settings.load(tmp_path, environ={}).context_llm == "ollama:qwen2.5:3b"
    env = {"NAREZKA_CONTEXT_LLM": "openai:m@http://h/v1"}
    assert Settings.load(tmp_path, environ=env).context_llm == "openai:m@http://h/v1"
    assert Settings.load(tmp_path, environ=env, context_llm="off").context_llm is None
    with pytest.raises(ConfigError, match="context_llm"):
        Settings.load(tmp_path, environ={"NAREZKA_CONTEXT_LLM": "ollama"})


# ---- the requests and the happy path ----------------------------------------------------


def test_ollama_gets_a_non_streaming_chat_and_the_context_goes_before_embed_text(
    url: str, state: LLMState
) -> None:
    chunks = chunks_of()
    done = apply(writer(ollama(url)), chunks, limit=2 * SIZE)
    body = state.chat_requests()[0]
    assert body["stream"] is False and body["model"] == "ctx-model"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "<document>\n" + DOC.rstrip("\n") in body["messages"][1]["content"]
    assert body["options"]["num_predict"] > 0 and body["options"]["temperature"] == 0
    assert len(state.chat_requests()) == len(chunks)
    for before, after in zip(chunks, done.chunks, strict=True):  # type: ignore[attr-defined]
        assert after.text == before.text == DOC[after.start : after.end]
        context = after.meta["llm_context"]
        assert context.startswith("Part of «Доставка по России»")
        assert after.embed_text == context + SEPARATOR + before.embed_text
        assert after.chars == len(after.embed_text) <= 2 * SIZE
        assert after.content_hash != before.content_hash
    assert done.stats.with_context == len(chunks) and not done.problems  # type: ignore[attr-defined]


def test_openai_compatible_chat_completions(url: str, state: LLMState) -> None:
    client = OpenAIChat("ctx-model", url + "/v1", retry=FAST)
    done = apply(writer(client), chunks_of())
    body = state.chat_requests()[0]
    assert state.requests[0][0] == "/v1/chat/completions"
    assert body["stream"] is False and body["max_tokens"] > 0
    assert done.stats.with_context == done.stats.chunks > 0  # type: ignore[attr-defined]
    assert done.stats.prompt_tokens > 0  # from usage.prompt_tokens  # type: ignore[attr-defined]


def test_open_client_builds_the_named_backend(url: str) -> None:
    assert isinstance(open_client(f"ollama:ctx-model@{url}"), OllamaChat)
    client = open_client(f"openai:ctx-model@{url}/v1")
    assert isinstance(client, OpenAIChat) and client.name == f"openai:ctx-model@{url}/v1"


def test_the_llm_client_reaches_the_servers_the_top_read(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.settings import servers

    monkeypatch.setenv("OLLAMA_HOST", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-handed-down")
    ollama = open_client("ollama:ctx-model", servers=servers())
    assert isinstance(ollama, OllamaChat) and ollama.host == url
    assert isinstance(open_client(f"ollama:ctx-model@{url}/x"), OllamaChat)  # @HOST wins
    openai = open_client(f"openai:ctx-model@{url}/v1", servers=servers())
    assert isinstance(openai, OpenAIChat)
    assert openai._http.headers["Authorization"] == "Bearer sk-handed-down"
    # The client reads no environment: given no servers, no host of its own and no key.
    assert open_client("ollama:ctx-model").host != url  # type: ignore[attr-defined]
    bare = open_client(f"openai:ctx-model@{url}/v1")
    assert "Authorization" not in bare._http.headers  # type: ignore[attr-defined]


# ---- faults: each gives a message naming the file, and the chunks stay ------------------


def _no_context(done: object, chunks: list[Chunk]) -> None:
    out = done.chunks  # type: ignore[attr-defined]
    assert [c.embed_text for c in out] == [c.embed_text for c in chunks]
    assert [c.content_hash for c in out] == [c.content_hash for c in chunks]


def test_server_down_names_the_file_and_stops_asking_for_the_run() -> None:
    client = ollama(f"http://127.0.0.1:{closed_port()}")
    w = writer(client)
    chunks = chunks_of()
    done = apply(w, chunks)
    _no_context(done, chunks)
    (problem, stopped) = done.problems  # type: ignore[attr-defined]
    assert problem.startswith("delivery.md: 1 chunk(s) indexed without context")
    assert "failed 2 time(s)" in problem and "asked again on the next sync" in problem
    assert stopped.startswith(f"delivery.md: {len(chunks) - 1} chunk(s)")
    assert done.stats.failed == 1 and done.stats.not_asked == len(chunks) - 1  # type: ignore[attr-defined]
    assert done.incomplete  # type: ignore[attr-defined]
    with pytest.raises(LLMUnavailableError):
        client.chat([{"role": "user", "content": "x"}])


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_unknown_model_says_how_to_get_it(url: str, state: LLMState, backend: str) -> None:
    client = (
        ollama(url, "qwen2.5:3b")
        if backend == "ollama"
        else OpenAIChat("qwen2.5:3b", url + "/v1", retry=FAST)
    )
    with pytest.raises(LLMModelNotFoundError, match=r"qwen2\.5:3b") as info:
        client.chat([{"role": "user", "content": "x"}])
    if backend == "ollama":
        assert "ollama pull qwen2.5:3b" in str(info.value)
    done = apply(writer(client), chunks_of())
    assert "model" in done.problems[0] and done.stats.not_asked > 0  # type: ignore[attr-defined]
    assert len(state.chat_requests()) == 2  # one per chat above: the run stopped asking


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_a_500_is_retried_and_a_lasting_one_fails_only_that_chunk(
    url: str, state: LLMState, backend: str
) -> None:
    client = client_for(backend, url)
    chunks = chunks_of()
    state.faults = [500]  # the first attempt fails, its retry succeeds
    done = apply(writer(client), chunks)
    assert done.stats.with_context == len(chunks)  # type: ignore[attr-defined]
    state.requests.clear()
    state.faults = [500, 503]  # both attempts of the first chunk fail
    done = apply(writer(client), chunks)
    assert done.stats.failed == 1 and done.stats.with_context == len(chunks) - 1  # type: ignore[attr-defined]
    assert "HTTP 503" in done.problems[0] and done.problems[0].startswith("delivery.md:")  # type: ignore[attr-defined]
    assert done.chunks[0].embed_text == chunks[0].embed_text  # type: ignore[attr-defined]


def test_a_timeout_is_retried_then_reported(url: str, state: LLMState) -> None:
    client = ollama(url, retry=RetryPolicy(attempts=2, base_delay=0.01, timeout=0.2))
    state.faults = [0.6, 0.6]
    chunks = chunks_of()
    done = apply(writer(client), chunks)
    assert done.stats.failed == 1  # type: ignore[attr-defined]
    assert "Timeout" in done.problems[0] or "timed out" in done.problems[0]  # type: ignore[attr-defined]
    assert done.stats.with_context == len(chunks) - 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", ["ollama", "openai"])
@pytest.mark.parametrize("fault", ["garbage", "empty"])
def test_garbage_and_empty_replies_leave_the_chunk_without_context(
    url: str, state: LLMState, backend: str, fault: str
) -> None:
    client = client_for(backend, url)
    with pytest.raises(LLMReplyError):
        state.faults = [fault]
        client.chat([{"role": "user", "content": "x"}])
    state.faults = [fault]
    chunks = chunks_of()
    done = apply(writer(client), chunks)
    assert done.stats.failed == 1 and done.stats.with_context == len(chunks) - 1  # type: ignore[attr-defined]
    assert "reply" in done.problems[0]  # type: ignore[attr-defined]


def test_three_failures_in_a_row_stop_the_run_asking(url: str, state: LLMState) -> None:
    text = "\n\n".join(f"## Раздел {i}\n\nТекст раздела номер {i}." for i in range(8))
    chunks = chunks_of(text, size=60)
    state.always = "garbage"
    done = apply(writer(ollama(url)), chunks, text, limit=60)
    assert len(state.chat_requests()) == 3
    assert done.stats.failed == 3 and done.stats.not_asked == len(chunks) - 3  # type: ignore[attr-defined]


def test_a_reply_that_is_too_long_is_cut_to_two_sentences(url: str, state: LLMState) -> None:
    state.faults = ["long"]
    done = apply(writer(ollama(url)), chunks_of())
    context = done.chunks[0].meta["llm_context"]  # type: ignore[attr-defined]
    assert context == "Sentence number 0 keeps going on. Sentence number 1 keeps going on."
    assert LONG_REPLY.startswith(context)
    assert done.stats.long_replies == 1  # type: ignore[attr-defined]
    assert any("shortened" in p for p in done.problems)  # type: ignore[attr-defined]


# ---- the budget ----------------------------------------------------------------------


def test_context_that_does_not_fit_is_cut_or_dropped_and_counted(url: str, state: LLMState) -> None:
    chunks = chunks_of()
    tight = max(c.chars for c in chunks) + 20  # room for a few words in the largest chunk
    done = apply(writer(ollama(url)), chunks, limit=tight)
    for chunk in done.chunks:  # type: ignore[attr-defined]
        assert chunk.chars <= tight
    stats = done.stats  # type: ignore[attr-defined]
    assert stats.cut + stats.dropped >= 1
    assert any(f"within {tight} characters" in p for p in done.problems)  # type: ignore[attr-defined]
    at_limit = [c for c in chunks if c.chars >= tight - 1]
    done = apply(writer(ollama(url)), at_limit, limit=tight)
    assert done.stats.dropped == len(at_limit)  # type: ignore[attr-defined]
    _no_context(done, at_limit)


WORDS = st.lists(st.sampled_from(["доставка", "курьер", "zone", "3–5 кг.", "Пункт.", "ok"]))


@given(context=WORDS, body=WORDS, slack=st.integers(min_value=-5, max_value=60))
def test_fitted_context_never_breaks_the_budget(
    context: list[str], body: list[str], slack: int
) -> None:
    counter = get_counter("tokens", "cl100k_base")
    text, embed = " ".join(context), " ".join(body) or "x"
    limit = max(1, counter.count(embed) + slack)
    kept, how = fit_context(text, embed, counter, limit)
    assert text.startswith(kept)
    if how == "dropped":
        assert kept == ""
    else:
        assert counter.count(kept + SEPARATOR + embed) <= limit
        assert how == "full" or len(kept) < len(text)


@pytest.mark.parametrize(
    ("reply", "cleaned"),
    [
        ("<think>let me see</think>\nContext: «Раздел о доставке.»", "Раздел о доставке."),
        ("  Контекст:  Первое.\n\nВторое!  Третье? ", "Первое. Второе!"),
        ("", ""),
    ],
)
def test_replies_are_cleaned(reply: str, cleaned: str) -> None:
    assert clean_reply(reply)[0] == cleaned


def test_a_reply_without_sentence_ends_is_cut_at_a_word() -> None:
    text, cut = clean_reply("слово " * 200)
    assert cut and len(text) <= MAX_CONTEXT_CHARS and text.endswith("слово")


def test_a_long_document_is_sent_as_its_opening_and_the_chunk_surroundings() -> None:
    body = "".join(f"Строка номер {i} длинного документа.\n" for i in range(2000))
    text = "# Заголовок\n\n" + body
    at = text.index("Строка номер 1500 ")
    excerpt = document_excerpt(text, at, at + 40)
    assert len(excerpt) <= DOC_CHARS + 10
    assert excerpt.startswith("# Заголовок") and "Строка номер 1500 " in excerpt
    assert "[…]" in excerpt


def test_secrets_in_the_document_are_not_sent(url: str, state: LLMState) -> None:
    text = DOC + "\n## Доступ\n\nAPI: token ghp_" + "a1B2c3D4e5" * 4 + "\n"
    apply(writer(ollama(url)), chunks_of(text), text)
    sent = " ".join(m["content"] for b in state.chat_requests() for m in b["messages"])
    assert "ghp_a1B2" not in sent and "[REDACTED" in sent


# ---- the cache --------------------------------------------------------------------------


def test_cached_contexts_make_no_calls_and_survive_a_reopen(
    url: str, state: LLMState, tmp_path: Path
) -> None:
    chunks = chunks_of()
    with ContextCache(tmp_path / "contexts.sqlite") as cache:
        first = apply(writer(ollama(url), cache), chunks)
    calls = len(state.chat_requests())
    with ContextCache(tmp_path / "contexts.sqlite") as cache:  # a later run: resumed
        second = apply(writer(ollama(url), cache), chunks)
        assert len(state.chat_requests()) == calls
        assert second.stats.cached == len(chunks) and second.stats.generated == 0  # type: ignore[attr-defined]
        assert [c.embed_text for c in second.chunks] == [c.embed_text for c in first.chunks]  # type: ignore[attr-defined]
        state.models.add("other")
        apply(writer(ollama(url, "other"), cache), chunks)  # another model: asked anew
        assert len(state.chat_requests()) == calls + len(chunks)


def test_an_interrupted_run_keeps_what_it_generated(
    url: str, state: LLMState, tmp_path: Path
) -> None:
    chunks = chunks_of()
    calls = 0

    def interrupt() -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise KeyboardInterrupt

    with ContextCache(tmp_path / "c.sqlite") as cache:
        w = ContextWriter(ollama(url), cache, on_call=interrupt)
        with pytest.raises(KeyboardInterrupt):
            apply(w, chunks)
        # The request in flight at the interrupt was answered but not kept; the first was.
        assert cache.count() == 1
        done = apply(writer(ollama(url), cache), chunks)
        assert done.stats.cached == 1 and done.stats.generated == len(chunks) - 1  # type: ignore[attr-defined]


def test_failures_are_not_cached(url: str, state: LLMState, tmp_path: Path) -> None:
    with ContextCache(tmp_path / "c.sqlite") as cache:
        state.faults = ["empty"]
        apply(writer(ollama(url), cache), chunks_of())
        assert cache.count() == len(chunks_of()) - 1


def test_estimate_counts_cached_and_to_generate(url: str, tmp_path: Path) -> None:
    chunks = chunks_of()
    with ContextCache(tmp_path / "c.sqlite") as cache:
        w = writer(ollama(url), cache)
        before = w.estimate([(DOC, chunks)])
        assert (before.chunks, before.cached, before.to_generate) == (len(chunks), 0, len(chunks))
        assert before.prompt_tokens > len(DOC) // 5 * len(chunks) // 2
        apply(w, chunks[:1])
        after = w.estimate([(DOC, chunks)])
        assert (after.cached, after.to_generate) == (1, len(chunks) - 1)
        assert after.seconds < before.seconds
        assert f"{len(chunks) - 1} to generate" in after.describe()


def test_ollama_on_another_host_is_the_same_model_for_the_cache(
    url: str, state: LLMState, tmp_path: Path
) -> None:
    chunks = chunks_of()
    with ContextCache(tmp_path / "c.sqlite") as cache:
        apply(writer(ollama(url), cache), chunks)
        calls = len(state.chat_requests())
        moved = OllamaChat("ctx-model", host=url.replace("127.0.0.1", "localhost"), retry=FAST)
        assert moved.name == ollama(url).name == "ollama:ctx-model"
        done = apply(writer(moved, cache), chunks)
        assert done.stats.cached == len(chunks) and len(state.chat_requests()) == calls  # type: ignore[attr-defined]
