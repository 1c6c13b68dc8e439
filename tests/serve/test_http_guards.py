"""The HTTP server's guards against hostile requests and its own faults, on a real
`narezka serve --http` process: DNS rebinding (Host), cross-site writes (Origin, content
type), bodies over the limit with no declared length, a damaged index (5xx, not 4xx)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn", reason="the serve extra is not installed")

from serve.helpers import start_http, stop

ATTACKER = "rebind.attacker.example"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from narezka import Index, Settings

    from conftest import copy_examples

    corpus = copy_examples(tmp_path_factory.mktemp("guards") / "kb")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
    proc, base = start_http(corpus, "--no-watch", env={"NAREZKA_ALLOWED_HOSTS": "docs.internal"})
    try:
        yield base
    finally:
        stop(proc)


def port_of(base: str) -> str:
    return base.rpartition(":")[2]


def test_a_rebound_host_gets_nothing(guarded: str) -> None:
    # Issue 23 item 5: these answered 200 with Host: rebind.attacker.example.
    base = guarded
    bad = {"Host": f"{ATTACKER}:{port_of(base)}"}
    for r in (
        httpx.get(f"{base}/search", params={"q": "чай"}, headers=bad),
        httpx.get(f"{base}/sources/faq.md", headers=bad),
        httpx.get(f"{base}/status", headers=bad),
        httpx.post(
            f"{base}/sync",
            content=b"x",
            headers={**bad, "Content-Type": "text/plain", "Origin": f"http://{ATTACKER}"},
        ),
        httpx.post(f"{base}/mcp", json={}, headers=bad),
    ):
        assert r.status_code == 421, r.text
        assert ATTACKER in r.json()["error"] and "чай" not in r.text
    for host in ("localhost", "127.0.0.1", "docs.internal"):
        ok = httpx.get(f"{base}/status", headers={"Host": f"{host}:{port_of(base)}"})
        assert ok.status_code == 200, host
    assert httpx.get(f"{base}/status", headers={"Host": "docs.internal"}).status_code == 200


def test_a_write_from_another_origin_or_as_a_form_is_refused(guarded: str) -> None:
    base = guarded
    foreign = httpx.post(f"{base}/sync", headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403 and "evil.example" in foreign.json()["error"]
    sandboxed = httpx.post(f"{base}/sync", headers={"Origin": "null"})
    assert sandboxed.status_code == 403
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x"):
        form = httpx.post(f"{base}/sync", content=b"a=1", headers={"Content-Type": kind})
        assert form.status_code == 415 and "application/json" in form.json()["error"], kind
    own = f"http://localhost:{port_of(base)}"
    same = httpx.post(f"{base}/sync", headers={"Origin": own}, json={}, timeout=120)
    assert same.status_code == 200 and same.json()["files_unchanged"] == 18
    assert httpx.post(f"{base}/sync", timeout=120).status_code == 200  # curl -X POST: no body


def test_a_chunked_body_over_the_limit_is_413_json(guarded: str) -> None:
    # Issue 23 item 14: /mcp answered a chunked body over the limit with a plain-text 500.
    base = guarded

    def chunked() -> Iterator[bytes]:
        for _ in range(40):
            yield b"x" * 4096

    for path in ("/mcp", "/sync"):
        r = httpx.post(
            f"{base}{path}",
            content=chunked(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        assert r.status_code == 413, (path, r.status_code, r.text)
        assert "over 65536 bytes" in r.json()["error"]


def test_host_names_and_origins_allowed_for_each_address() -> None:
    from narezka.serve.http_api import host_security

    loop = host_security("127.0.0.1")
    assert {"localhost:*", "127.0.0.1:*", "[::1]:*", "localhost"} <= set(loop.allowed_hosts)
    assert "http://localhost:*" in loop.allowed_origins
    assert ATTACKER not in str(loop.allowed_hosts)
    v6 = host_security("fd00::5", ["docs.internal:8443"])
    assert {"[fd00::5]:*", "docs.internal:8443"} <= set(v6.allowed_hosts)
    assert "docs.internal:8443:*" not in v6.allowed_hosts
    assert "https://docs.internal:8443" in v6.allowed_origins
    assert host_security("0.0.0.0").enable_dns_rebinding_protection is False
    assert "lan.example:*" in host_security("0.0.0.0", ["lan.example"]).allowed_hosts


def test_a_damaged_index_is_a_server_fault_not_a_bad_request(built_kb: Path) -> None:
    # Issue 23 item 13: a corrupt index answered 400, as if the caller had erred.
    proc, base = start_http(built_kb, "--no-watch", "--allowed-host", "kb.lan:80")
    try:
        assert httpx.get(f"{base}/search", params={"q": "чай"}).status_code == 200
        assert httpx.get(f"{base}/status", headers={"Host": "kb.lan:80"}).status_code == 200
        assert httpx.get(f"{base}/status", headers={"Host": "kb.lan:81"}).status_code == 421
        (built_kb / ".narezka" / "index.json").write_text("{ torn", encoding="utf-8")
        for r in (
            httpx.get(f"{base}/search", params={"q": "чай"}),
            httpx.get(f"{base}/sources"),
            httpx.get(f"{base}/status"),
        ):
            assert r.status_code == 500, r.text
            assert "index.json" in r.json()["error"] and "Traceback" not in r.text
        bad = httpx.get(f"{base}/search", params={"q": "чай", "mode": "fuzzy"})
        assert bad.status_code == 400 and "mode" in bad.json()["error"]
        cursor = httpx.get(f"{base}/search", params={"q": "чай", "cursor": "forged"})
        assert cursor.status_code == 400
    finally:
        stop(proc)
