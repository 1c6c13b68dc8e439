"""Secrets planted in every place a Markdown file offers leave no trace in any field narezka
stores or serves, nor in any byte under ``.narezka/``: titles, anchors and urls, breadcrumbs,
front matter and the rest, not only the text (issue 23, item 2).

The one exception is the chunk contract's own: ``chunk.text`` (and so the ``text`` of
``chunk --format jsonl``) is the exact span of the file, with ``secrets`` saying which parts
to withhold; everything derived from it, stored or served is redacted."""

from __future__ import annotations

import json
import string
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from narezka import Index
from narezka.cli import cli
from narezka.cli.common import EXIT_NOTHING
from narezka.embed import HashEmbedder, signal_embedder
from narezka.enrich import chunk_payload
from narezka.enrich.payload import Rules
from narezka.parse.redaction import find_secrets
from narezka.parse.syntax import slugify
from narezka.runs import chunk_text
from narezka.split import strategy_names

EMBED = signal_embedder(HashEmbedder(32))
ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits


def _body(alphabet: str, n: int) -> st.SearchStrategy[str]:
    # Several kinds of character, so the body is no word and no placeholder ("xxxx").
    return st.text(alphabet, min_size=n, max_size=n).filter(
        lambda s: (
            any(c.isdigit() for c in s) and any(c.isalpha() for c in s) and len(set(s.lower())) > 4
        )
    )


TOKENS = st.one_of(
    _body(ALNUM, 36).map(lambda b: "ghp_" + b),
    _body(UPPER, 16).map(lambda b: "AKIA" + b),
    _body(ALNUM, 24).map(lambda b: "sk_live_" + b),
    _body(ALNUM, 30).map(lambda b: "hf_" + b + "Zq9x"),
)
"""Token formats whose prefix names the issuer: found wherever they stand."""
PASSWORDS = _body(ALNUM, 14)
"""A value a ``password:`` key makes secret: found only beside its key."""


def document(tokens: list[str], password: str, other: str) -> str:
    """A note with a secret in every place Markdown offers."""
    t = iter(tokens)
    return (
        "---\n"
        f"title: Keys {next(t)}\n"
        f"password: {password}\n"
        f"tags: [ops, {next(t)}]\n"
        f"source: https://deploy:{other}@git.example.com/repo\n"
        "notes: |\n"
        f"  rotate {next(t)}\n"
        "  every month\n"
        "---\n\n"
        f"# Token {next(t)} rotation\n\n"
        "Intro text about rotating the keys of the team, long enough to be a chunk.\n\n"
        f"## Explicit anchor {{#key-{next(t)}}}\n\n"
        "| service | key |\n|---|---|\n"
        f"| billing | {next(t)} |\n\n"
        f"See [the runbook](https://wiki.example.com/{next(t)}/runbook) and "
        f"![diagram of {next(t)}](diagram.png).\n\n"
        f"Setext {next(t)} title\n"
        "--------------------------\n\n"
        "```python\n"
        f'API_KEY = "{next(t)}"\n'
        "```\n\n"
        f"- first item {next(t)}\n"
        f"- second item password={other}\n\n"
        f"> quoted {next(t)}\n"
    )


POSITIONS = 12
"""How many token slots :func:`document` has."""


def secret_bodies(tokens: Iterable[str], others: Iterable[str]) -> list[str]:
    """What must never show: each secret without its issuer's prefix (a slug lowercases it
    and turns ``_`` into ``-``, so the prefix alone would miss an anchor)."""
    bodies = [t.split("_", 2)[-1] if "_" in t else t[4:] for t in tokens]
    return [*bodies, *others]


def leaks(texts: Iterable[str], bodies: list[str]) -> list[str]:
    """The secrets some text shows a 10-character piece of, in any case."""
    lowered = [t.lower() for t in texts]
    found = []
    for body in bodies:
        pieces = {body.lower()[i : i + 10] for i in range(len(body) - 9)}
        if any(p in t for t in lowered for p in pieces):
            found.append(body)
    return found


def _served(chunk_json: dict[str, Any]) -> str:
    """A chunk's JSONL line without ``text``, the exact span the contract keeps."""
    return json.dumps({k: v for k, v in chunk_json.items() if k != "text"}, ensure_ascii=False)


STRATEGIES = [s for s in strategy_names() if s not in ("chat", "code")]


@settings(max_examples=25)
@given(
    tokens=st.lists(TOKENS, min_size=POSITIONS, max_size=POSITIONS),
    password=PASSWORDS,
    other=PASSWORDS,
    strategy=st.sampled_from(STRATEGIES),
    size=st.sampled_from([120, 400, 3000]),
)
def test_no_chunk_field_nor_stored_payload_holds_a_planted_secret(
    tokens: list[str], password: str, other: str, strategy: str, size: int
) -> None:
    text = document(tokens, password, other)
    bodies = secret_bodies(tokens, [password, other])
    assert len(find_secrets(text)) == POSITIONS + 3  # every plant is found where it stands
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a strategy's note on this odd page is not the point
        chunks = chunk_text(text, strategy, source="notes/keys.md", embed=EMBED, size=size)
    assert chunks
    shown = [_served(c.to_json()) for c in chunks]
    stored = [json.dumps(chunk_payload(c, Rules()), ensure_ascii=False) for c in chunks]
    assert leaks(shown, bodies) == [], strategy
    assert leaks(stored, bodies) == [], strategy
    # The exact spans still hold what the file says (the contract), and the secrets list
    # tells a consumer which parts those are.
    assert leaks([c.text for c in chunks], bodies)


def test_a_title_with_a_secret_gets_the_slug_of_its_redacted_title() -> None:
    token = "ghp_" + "aB3" * 12
    text = f"---\ntitle: Keys {token}\n---\n\n# Token {token} rotation\n\nRotate it monthly.\n"
    (chunk,) = chunk_text(text, "headings", source="notes/heading.md")
    assert chunk.section == ("Token [REDACTED:github-token] rotation",)
    assert chunk.anchor == slugify("Token [REDACTED:github-token] rotation")
    assert chunk.url == f"notes/heading.md#{chunk.anchor}"
    assert chunk.meta["title"] == "Keys [REDACTED:github-token]"
    assert chunk.embed_text.startswith("Keys [REDACTED:github-token] > Token [REDACTED:")
    assert token in chunk.text  # the span is the file's


def test_a_front_matter_number_that_is_a_password_is_redacted() -> None:
    text = "---\npassword: 83629174\nport: 8080\n---\n\n# Db\n\nThe database settings.\n"
    (chunk,) = chunk_text(text, "headings", source="db.md")
    assert chunk.meta["password"] == "[REDACTED:password]"
    assert chunk.meta["port"] == 8080  # numbers that hold no secret stay numbers


def test_a_document_without_secrets_keeps_its_fields_as_they_were() -> None:
    text = "---\ntitle: Plain\ntags: [a, b]\n---\n\n# Token rotation\n\nNothing secret.\n"
    (chunk,) = chunk_text(text, "headings", source="plain.md")
    assert chunk.anchor == "token-rotation" and chunk.meta["tags"] == ["a", "b"]


# ---- end to end: the index, what it serves, and its files --------------------------------


def _walk_bytes(home: Path) -> Iterator[tuple[Path, bytes]]:
    for path in sorted(home.rglob("*")):
        if path.is_file():
            yield path, path.read_bytes()


def raw_leaks(home: Path, bodies: list[str]) -> list[str]:
    """Files under ``home`` whose raw bytes hold a secret, as written or lowercased (the
    engine's pages and log, the manifest, the caches: every file)."""
    found = []
    for path, data in _walk_bytes(home):
        lowered = data.lower()
        for body in bodies:
            if body.encode() in data or body.lower().encode() in lowered:
                found.append(f"{path.relative_to(home)}: {body}")
    return found


def _hits_json(hits: Iterable[Any]) -> list[str]:
    return [json.dumps(h.to_json(), ensure_ascii=False) for h in hits]


FIXED_TOKENS = [f"ghp_{k:02d}" + "Qw7eRt5yUi3oPa1sDf9gHj2kLz4xCv6bNm" for k in range(POSITIONS)]


@settings(max_examples=3)
@example(tokens=FIXED_TOKENS, password="Hunter2Hunter2x", other="S3cretPassW0rd")
@given(
    tokens=st.lists(TOKENS, min_size=POSITIONS, max_size=POSITIONS),
    password=PASSWORDS,
    other=PASSWORDS,
)
def test_nothing_stored_served_or_on_disk_holds_a_planted_secret(
    tmp_path_factory: pytest.TempPathFactory, tokens: list[str], password: str, other: str
) -> None:
    corpus = tmp_path_factory.mktemp("notes")
    (corpus / "notes").mkdir()
    (corpus / "notes" / "keys.md").write_text(document(tokens, password, other), "utf-8")
    (corpus / "plain.md").write_text("# Plain\n\nA note about tea and the team.\n", "utf-8")
    bodies = secret_bodies(tokens, [password, other])
    runner = CliRunner()
    sizes = ["--size", "200", "--unit", "chars"]
    built = runner.invoke(cli, ["index", str(corpus), "--embedder", "hash:64", *sizes, "--json"])
    assert built.exit_code == 0, built.output
    assert sum(json.loads(built.stdout)["secrets"]["notes/keys.md"].values()) == POSITIONS + 3

    served: list[str] = []
    for query in ["Token rotation", "Keys", "runbook diagram", *tokens[:3], password]:
        result = runner.invoke(
            cli, ["search", query, "--store", str(corpus), "--mode", "bm25", "--format", "json"]
        )
        assert result.exit_code in (0, EXIT_NOTHING), result.output
        served.append(result.stdout)
    with Index.open(corpus) as index:
        every = list(index.chunks())
        assert len(every) > 3
        served += _hits_json(every)
        for hit in every:
            served += _hits_json([index.get(hit.chunk_id)])
            served += _hits_json(index.neighbours(hit.chunk_id, n=2))
        for mode in ("bm25", "dense", "hybrid"):
            served += _hits_json(index.search("Token rotation keys", k=20, mode=mode))
        served += _hits_json(index.search("runbook", mode="bm25", expand="section"))
    listed = runner.invoke(cli, ["chunk", str(corpus), *sizes, "--format", "jsonl"])
    assert listed.exit_code == 0, listed.output
    served += [_served(json.loads(line)) for line in listed.stdout.splitlines()]

    assert leaks(served, bodies) == []
    assert raw_leaks(corpus / ".narezka", bodies) == []
