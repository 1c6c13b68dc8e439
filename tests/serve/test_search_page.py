"""The search page at ``/`` of a real `narezka serve --http` process: in headless Chromium as a
person uses it (type, Enter, read, Tab, follow a link), with JavaScript off, with an API key,
against hostile documents and file names, and behind the Host/Origin guards."""

from __future__ import annotations

import html
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("uvicorn", reason="the serve extra is not installed")

from narezka.serve.page import highlight, query_terms, source_link

from serve.helpers import start_http, stop

QUESTION = "можно ли вернуть вскрытый чай?"
NONSENSE = "zzqx flurbo qwv"
KEY = "page-test-key-5c1f"
HOSTILE = """# Кактус <script>window.__pwned = 1</script>

## "><img src=x onerror="window.__pwned = 2"> уход за кактусом

Колючий кактус <script>window.__pwned = 3</script> любит свет
"><img src=y onerror=window.__pwned=4>.

[полить кактус](javascript:window.__pwned=5) и <a href="javascript:window.__pwned=6">кактус</a>.
"""
# Names a page could be fooled by: markup in a path, a javascript: scheme as a file name.
HOSTILE_NAMES = ('x"><img src=z onerror=window.__pwned=7>.md', "javascript:window.__pwned=8.md")


def _corpus(root: Path) -> Path:
    from narezka import Index, Settings

    from conftest import copy_examples

    corpus = copy_examples(root / "kb")
    (corpus / "hostile.md").write_text(HOSTILE, encoding="utf-8")
    for name in HOSTILE_NAMES:
        (corpus / name).write_text("# Кактус в имени\n\nКактус колючий.\n", encoding="utf-8")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
    return corpus


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # A small reply budget, so that a long result list pages (More results).
    corpus = _corpus(tmp_path_factory.mktemp("page"))
    proc, base = start_http(corpus, "--no-watch", "--max-reply-tokens", "3000")
    try:
        yield base
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    corpus = _corpus(tmp_path_factory.mktemp("page-key"))
    proc, base = start_http(corpus, "--no-watch", env={"NAREZKA_API_KEY": KEY}, key=KEY)
    try:
        yield base
    finally:
        stop(proc)


def _shot(page: Any, path: Path) -> None:
    """A screenshot kept with the test's files (and copied to $NAREZKA_SCREENSHOTS if set)."""
    page.screenshot(path=str(path), full_page=True)
    if os.environ.get("NAREZKA_SCREENSHOTS"):
        shutil.copy(path, Path(os.environ["NAREZKA_SCREENSHOTS"]) / path.name)


class Watched:
    """A page whose console errors, page errors and requests elsewhere fail the test."""

    def __init__(self, chromium: Any, base: str, *, javascript: bool = True) -> None:
        self.context = chromium.new_context(
            viewport={"width": 1100, "height": 800}, java_script_enabled=javascript
        )
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", self._console)
        self.page.on(
            "request",
            lambda r: None if r.url.startswith(base) else self.errors.append(f"request {r.url}"),
        )

    def _console(self, message: Any) -> None:
        # A plain-text /sources/… page has no icon link, so the browser asks for
        # /favicon.ico on its own: that 404 is not the search page's.
        if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico"):
            self.errors.append(message.text)

    def close(self) -> list[str]:
        self.context.close()
        return self.errors


@pytest.fixture
def watched(browser: Any) -> Iterator[Any]:
    opened: list[Watched] = []

    def _open(base: str, *, javascript: bool = True) -> Watched:
        opened.append(Watched(browser, base, javascript=javascript))
        return opened[-1]

    yield _open
    errors = [e for w in opened for e in w.close()]
    assert not errors, errors


def _search(page: Any, query: str, count: int = 1) -> None:
    page.locator("#q").fill("")
    page.keyboard.type(query)
    page.keyboard.press("Enter")
    page.wait_for_selector(f"body[data-searched='{count}']", timeout=30_000)


def test_a_question_typed_and_entered_finds_its_answer(
    served: str, watched: Any, tmp_path: Path
) -> None:
    w = watched(served)
    page = w.page
    page.goto(served + "/")
    page.wait_for_selector("body[data-ready='1']")
    assert page.evaluate("document.activeElement.id") == "q"  # focus on the box on load
    _search(page, QUESTION)
    assert page.locator(".result a.source").first.text_content() == "faq.md"
    first = page.locator(".result").first
    assert "Частые вопросы" in first.locator(".crumb").text_content()
    assert re.search(r"relevance 0\.\d\d", first.text_content())
    marked = [m.lower() for m in first.locator("mark").all_text_contents()]
    assert "вскрытый" in marked and "вскрытые" in marked  # the query's words in other forms
    assert "ли" not in marked  # a stop word is no match
    assert "q=" in page.url  # the search has its own URL: reload and back work
    assert page.inner_text("#announce") == page.inner_text("#status")  # read out
    # Every result is reachable by Tab from the box, and the focus is visible.
    tabs = 0
    while page.evaluate("document.activeElement.className") != "source" and tabs < 30:
        page.keyboard.press("Tab")
        tabs += 1
    assert page.evaluate("document.activeElement.textContent") == "faq.md"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none")
    _shot(page, tmp_path / "search-results.png")
    page.keyboard.press("Enter")  # follow the link
    page.wait_for_url(served + "/sources/faq.md")
    assert "Можно ли вернуть вскрытый чай" in page.locator("body").inner_text()
    page.go_back()
    page.wait_for_selector(".result a.source")


def test_a_nonsense_query_is_told_nothing_relevant(
    served: str, watched: Any, tmp_path: Path
) -> None:
    reply = httpx.get(f"{served}/search", params={"q": NONSENSE}).json()
    assert not reply["hits"] and reply["best_relevance"] < reply["min_relevance"]
    page = watched(served).page
    page.goto(served + "/")
    page.wait_for_selector("body[data-ready='1']")
    _search(page, NONSENSE)
    status = page.locator("#status").text_content()
    assert status.startswith("Nothing relevant")
    assert f"{reply['best_relevance']:.2f}" in status and f"{reply['min_relevance']:.2f}" in status
    assert page.locator(".result").count() == 0
    _shot(page, tmp_path / "search-nothing.png")
    _search(page, QUESTION, 2)  # a later search replaces the message
    assert page.locator(".result").count() == 5 and "Nothing" not in page.inner_text("#status")


def test_modes_and_filters_reach_the_search(served: str, watched: Any) -> None:
    page = watched(served).page
    page.goto(served + "/")
    page.wait_for_selector("body[data-ready='1']")
    page.select_option("#mode", "bm25")
    page.locator(".filters summary").click()
    page.fill("#f-path", "products/**")
    page.locator("#q").focus()
    _search(page, QUESTION)
    paths = page.locator(".result a.source").all_text_contents()
    assert paths and all(p.startswith("products/") for p in paths)
    assert "mode=bm25" in page.url and "path=products" in page.url
    page.select_option("#mode", "dense")
    _search(page, "доставка", 2)
    page.go_back()  # the form is the earlier search's again
    page.wait_for_selector("body[data-searched='3']")
    assert page.input_value("#mode") == "bm25" and page.input_value("#q") == QUESTION
    expected = httpx.get(
        f"{served}/search", params={"q": QUESTION, "mode": "bm25", "path": "products/**"}
    ).json()
    assert paths == [h["file_path"] for h in expected["hits"]]


def test_the_page_works_with_javascript_off(served: str, watched: Any, tmp_path: Path) -> None:
    page = watched(served, javascript=False).page
    page.goto(served + "/")
    page.locator("#q").fill(QUESTION)
    page.locator("#q").press("Enter")
    page.wait_for_selector(".result")
    assert page.locator(".result a.source").first.text_content() == "faq.md"
    assert page.locator("#key-form").is_hidden()  # the key field needs the script
    _shot(page, tmp_path / "search-nojs.png")


def test_hostile_documents_and_names_stay_text(served: str, watched: Any, tmp_path: Path) -> None:
    page = watched(served).page
    page.goto(served + "/")
    page.wait_for_selector("body[data-ready='1']")
    _search(page, "кактус")
    results = page.locator("#results")
    text = results.inner_text()
    assert "<script>window.__pwned = 3</script>" in text  # shown, not run
    assert 'onerror="window.__pwned = 2"' in text
    assert "javascript:window.__pwned=5" in text
    assert page.evaluate("window.__pwned") is None
    assert results.locator("script, img, svg, iframe").count() == 0
    hrefs = results.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert hrefs and all(h.startswith("/sources/") or h.startswith("/?") for h in hrefs), hrefs
    shown = results.locator("a.source").all_text_contents()
    assert set(HOSTILE_NAMES) <= set(shown)  # the names, as they are, as text
    _shot(page, tmp_path / "search-hostile.png")
    # The javascript: file name is a link to its source on this server, not a script.
    page.locator("a.source", has_text="javascript:").first.click()
    page.wait_for_load_state()
    assert page.url.startswith(served + "/sources/javascript%3A")
    assert "Кактус колючий" in page.inner_text("body")
    assert page.evaluate("window.__pwned") is None


def test_the_server_renders_hostile_text_escaped(served: str) -> None:
    r = httpx.get(served + "/", params={"q": "кактус", "k": 20})
    assert r.status_code == 200
    body = r.text
    # The page's own markup has exactly one script and no image; the documents add none.
    assert body.count("<script") == 1 and "<img" not in body
    assert not re.search(r"""(href|src|action)\s*=\s*["']?\s*javascript:""", body, re.I)
    assert html.escape('"><img src=x onerror="window.__pwned = 2">') in body


def test_csp_and_headers(served: str) -> None:
    r = httpx.get(served + "/")
    policy = r.headers["content-security-policy"]
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+';", policy)
    assert r.headers["referrer-policy"] == "no-referrer"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-type"].startswith("text/html")


def test_a_bad_option_is_said_on_the_page(served: str) -> None:
    for params, words in (({"k": "999"}, "k must be between"), ({"mode": "<b>x"}, "mode")):
        r = httpx.get(served + "/", params={"q": "чай", **params})
        assert r.status_code == 400, params
        status = re.search(r'<p id="status"[^>]*>(.*?)</p>', r.text, re.S)
        assert status and words in html.unescape(status.group(1))
        assert "<b>x" not in r.text  # echoed escaped, in the box and the message


def test_the_guards_cover_the_page(served: str) -> None:
    port = served.rpartition(":")[2]
    rebound = httpx.get(served + "/", params={"q": "чай"}, headers={"Host": f"evil.example:{port}"})
    assert rebound.status_code == 421 and "Вскрыт" not in rebound.text
    foreign = httpx.get(
        served + "/", params={"q": "чай"}, headers={"Origin": "https://evil.example"}
    )
    assert foreign.status_code == 403 and "Вскрыт" not in foreign.text


def test_without_the_key_nothing_from_the_index_is_shown(keyed: str) -> None:
    bare = httpx.get(keyed + "/", params={"q": QUESTION})
    assert bare.status_code == 200 and 'data-key="needed"' in bare.text
    wrong = httpx.get(keyed + "/", params={"q": QUESTION}, headers={"Authorization": "Bearer nope"})
    for r in (bare, wrong):
        assert "faq.md" not in r.text and "Вскрыт" not in r.text and 'class="result"' not in r.text
        assert "needs an API key" in r.text
    # Only the page itself is let through without the key: the API and the sources are not.
    for path in ("/search?q=чай", "/sources/faq.md", "/status", "/favicon.ico"):
        assert httpx.get(keyed + path).status_code == 401, path
    assert httpx.post(keyed + "/", json={}).status_code == 401
    good = httpx.get(
        keyed + "/", params={"q": QUESTION}, headers={"Authorization": f"Bearer {KEY}"}
    )
    assert good.status_code == 200 and "faq.md" in good.text


def test_a_browser_gives_the_key_once_per_tab(keyed: str, watched: Any, tmp_path: Path) -> None:
    w = watched(keyed)
    page = w.page
    page.goto(f"{keyed}/?q={QUESTION}")
    page.wait_for_selector("body[data-ready='1']")
    assert page.evaluate("document.activeElement.id") == "api-key"
    assert page.locator(".result").count() == 0
    assert "needs an API key" in page.inner_text("#results")
    _shot(page, tmp_path / "search-key.png")
    page.keyboard.type("wrong-key")
    page.keyboard.press("Enter")
    page.wait_for_selector("body[data-searched='1']")
    assert "did not accept" in page.inner_text("#status") and page.locator(".result").count() == 0
    page.locator("#api-key").fill(KEY)
    page.keyboard.press("Enter")
    page.wait_for_selector("body[data-searched='2']")
    assert page.locator(".result a.source").first.text_content() == "faq.md"
    assert page.locator("#forget-key").is_visible() and page.locator("#api-key").is_hidden()
    # A source link carries the key too: its text shows on the page.
    page.locator(".result a.source").first.click()
    page.wait_for_selector("#source-view:not([hidden])")
    assert "Можно ли вернуть вскрытый чай" in page.inner_text(".source-text")
    assert page.evaluate("document.activeElement.id") == "source-title"
    page.keyboard.press("Escape")
    assert page.locator("#source-view").is_hidden()
    page.reload()  # the tab still has it
    page.wait_for_selector("body[data-searched='1']")
    assert page.locator(".result").count() == 5
    page.locator("#forget-key").click()
    assert page.locator(".result").count() == 0 and page.locator("#api-key").is_visible()
    assert page.evaluate("sessionStorage.length") == 0


URLS = st.sampled_from(
    [
        "javascript:alert(1)",
        " javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
        "//evil.example/x",
        "http:/no-host",
        "https://docs.example/a b",
        "https://docs.example/page#part",
        "faq.md#faq-opened-tea",
    ]
)


@given(st.one_of(URLS, st.text(max_size=60)), st.text(max_size=40))
def test_a_link_is_this_server_or_the_web(url: str, path: str) -> None:
    link = source_link({"url": url, "file_path": path})
    assert link.startswith("/sources/") or (
        link.split(":", 1)[0] in ("http", "https") and link == url
    )
    assert not any(c.isspace() or c in "\"'<>" for c in link if link.startswith("/sources/"))


# Texts mixing the queries' words (in other forms too), markup and anything at all.
PIECES = st.sampled_from(["чай", "Чаю", "вскрытые", "<", ">", "&amp;", '"', "'", " ", "\n"])
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=30).map("".join)


@given(TEXTS, st.sampled_from(["чай", "вскрытый чай", "<mark>", "a & b"]))
def test_highlighting_escapes_and_keeps_the_text(text: str, query: str) -> None:
    out = highlight(text, query_terms(query))
    assert html.unescape(out.replace("<mark>", "").replace("</mark>", "")) == text
    assert "<" not in out.replace("<mark>", "").replace("</mark>", "")


def test_archived_pages_count_only_when_asked(served: str) -> None:
    asked = {"q": "возврат и обмен товара", "path": "returns-2023-archive.md"}
    shown = httpx.get(served + "/", params={**asked, "include_archived": "true"}).text
    assert 'class="result"' in shown and '<span class="tag">archived</span>' in shown
    assert 'value="true" checked' in shown and '<details class="filters" open>' in shown
    for value in ("", "false", "0"):
        hidden = httpx.get(served + "/", params={**asked, "include_archived": value}).text
        assert 'class="result"' not in hidden and 'value="true" checked' not in hidden, value
    bad = httpx.get(served + "/", params={**asked, "include_archived": "maybe"})
    assert bad.status_code == 400 and "include_archived" in bad.text


def test_the_page_assets_ship_with_the_package() -> None:
    # A non-editable install (pip install .) carries only what package-data names.
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[2]
    setup = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    globs = setup["setuptools"]["package-data"]["narezka"]
    for name in ("common.css", "common.js", "search.css", "search.js"):
        assert (root / "src/narezka/pages/assets" / name).is_file(), name
        assert any(fnmatch.fnmatch(f"pages/assets/{name}", glob) for glob in globs), name


def test_more_results_follow_the_cursor(served: str) -> None:
    first = httpx.get(served + "/", params={"q": "чай кофе возврат доставка", "k": 50})
    link = re.search(r'<a href="([^"]+)" data-swap rel="next">', first.text)
    assert link, "the hits overflow the reply budget of 3,000 tokens"
    rest = httpx.get(served + html.unescape(link.group(1)))
    assert rest.status_code == 200

    def paths(body: str) -> list[str]:
        return re.findall(r'<div class="text">(.*?)</div>', body, re.S)

    assert paths(rest.text) and not set(paths(rest.text)) & set(paths(first.text))


def test_more_results_swap_in_by_keyboard(served: str, watched: Any) -> None:
    page = watched(served).page
    page.goto(served + "/")
    page.wait_for_selector("body[data-ready='1']")
    page.select_option("#k", "50")
    _search(page, "чай кофе возврат доставка")
    before = page.locator(".result .text").all_text_contents()
    page.locator("a[rel=next]").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("body[data-searched='2']")
    after = page.locator(".result .text").all_text_contents()
    assert after and not set(after) & set(before) and "cursor=" in page.url
    page.go_back()  # the first page of results again
    page.wait_for_selector("body[data-searched='3']")
    assert page.locator(".result .text").all_text_contents() == before


def test_a_failed_search_is_said_on_the_page(served: str, watched: Any) -> None:
    w = watched(served)
    page = w.page
    page.goto(served + "/")
    page.wait_for_selector("body[data-ready='1']")
    error = {"error": "the server cannot answer: <b>index damaged</b>"}
    page.route("**/?q=*", lambda route: route.fulfill(status=500, json=error))
    _search(page, "чай")
    assert page.inner_text("#status") == f"The server cannot answer: {error['error']}"
    assert page.locator("#results b").count() == 0
    page.unroute("**/?q=*")
    page.route("**/?q=*", lambda route: route.abort())
    _search(page, "кофе", 2)
    assert "did not answer" in page.inner_text("#status")
    # The browser's own console lines for the refused and aborted fetches; nothing else.
    w.errors[:] = [e for e in w.errors if "500" not in e and "ERR_FAILED" not in e]


def test_a_hit_shows_where_and_links_its_web_url() -> None:
    from narezka.serve.page import Asked, render_results

    hit = {
        "file_path": "manual.pdf",
        "url": "https://docs.example/manual#p3",
        "section": ["Руководство", "Возврат"],
        "where": "p. 3–4",
        "relevance": 0.8123,
        "text": "Чай можно вернуть.",
        "zone": "warm",
    }
    out = render_results(Asked(q="вернуть чай"), {"hits": [hit], "total": 1})
    assert '<a class="url" href="https://docs.example/manual#p3" rel="noopener noreferrer"' in out
    assert '<span class="tag">p. 3–4</span>' in out and "zone warm" in out
    assert "Руководство › Возврат" in out and "relevance 0.81" in out
    assert "<mark>Чай</mark> можно <mark>вернуть</mark>." in out
    local = render_results(Asked(q="x"), {"hits": [{**hit, "url": "manual.pdf#p3"}]})
    assert 'href="/sources/manual.pdf"' in local and "noopener" not in local


def test_serve_names_the_page_when_it_starts(tmp_path: Path) -> None:
    # A person who starts the server is told where to point a browser.
    corpus = _corpus(tmp_path)
    proc, base = start_http(corpus, "--no-watch")
    try:
        log = next(corpus.parent.glob("serve-*.log")).read_text(encoding="utf-8")
        assert f"search it in a browser at {base}/" in log
    finally:
        stop(proc)
