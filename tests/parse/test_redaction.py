"""Tests for narezka.parse.redaction: what is a secret, what is not, and the span maths."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.discover import read_document
from narezka.parse import redaction
from narezka.parse.redaction import (
    count_kinds,
    find_secrets,
    marker,
    redact,
    redact_span,
    redacted_text,
    secrets_in,
    size_change,
)
from narezka.parse.token_rules import Rule
from narezka.types import Chunk, Secret

from conftest import TEST_DATA

SECRETS = TEST_DATA / "secrets"
PLANTED: list[dict[str, str]] = json.loads((SECRETS / "planted.json").read_text("utf-8"))


def _text(name: str) -> str:
    return read_document(SECRETS, SECRETS / name)[0].text


@pytest.mark.parametrize(
    "plant", PLANTED, ids=[f"{p['file']}:{p['kind']}:{i}" for i, p in enumerate(PLANTED)]
)
def test_every_planted_secret_is_found_whole_with_its_kind(plant: dict[str, str]) -> None:
    text = _text(plant["file"])
    found = find_secrets(text)
    at = text.find(plant["value"])
    while at != -1:
        covering = [s for s in found if s.start <= at and at + len(plant["value"]) <= s.end]
        assert covering, f"{plant['value'][:30]}… at {at} not redacted"
        at = text.find(plant["value"], at + 1)
    first = text.find(plant["value"])
    assert [s.kind for s in found if s.start <= first < s.end] == [plant["kind"]]


@pytest.mark.parametrize("name", sorted({p["file"] for p in PLANTED}))
def test_nothing_but_the_planted_secrets_is_found_in_the_notes(name: str) -> None:
    text = _text(name)
    values = [p["value"] for p in PLANTED if p["file"] == name]
    for s in find_secrets(text):
        piece = text[s.start : s.end]
        assert any(piece in v or v in piece for v in values), f"false positive {piece!r}"


# One realistic line per rule, the secret marked by «»: the span found must be exactly it.
SHAPES = [
    ("aws-access-key-id", "aws_access_key_id = «AKIAFAKE7QW2ZX0PLM4N»"),
    ("aws-secret-access-key", "AWS_SECRET_ACCESS_KEY=«fakeW8x2kZq9LmN4pR7sT1vY3bC6dF0gH5jK8aBz»"),
    ("gcp-api-key", "maps: «AIzaFAKEq1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h»"),
    ("gcp-oauth-secret", "client_id ok, the other: «GOCSPX-FAKEa1b2c3d4e5f6g7h8i9j0k1l2»"),
    ("github-token", "git clone https://x-access:«ghp_FAKE0123456789abcdefABCDEFghijklmnop»"),
    ("gitlab-token", "export CI_TOKEN «glpat-FAKE_x1y2z3w4v5u6t7s8»"),
    ("slack-token", "bot «xoxb-1234567890-0987654321098-FAKEabcdefghijklmnop»"),
    (
        "slack-webhook",
        "«https://hooks.slack.com/services/T0FAKE123/B0FAKE456/abcdefghijklmnopqrstuvwx»",
    ),
    ("openai-key", "key «sk-FAKE1234567890abcdefghijKLMNOPQRSTUVWXYZ»"),
    ("anthropic-key", "«sk-ant-api03-FAKE_abcdefghijklmnopqrstuvwxyz0123456789»"),
    ("stripe-key", "stripe.api_key = '«sk_test_FAKE4eC39HqLyjWDarjtT1zdp7dc»'"),
    ("stripe-webhook-secret", "«whsec_FAKEabcdefghijklmnopqrstuvwxyz0123»"),
    ("npm-token", "//registry.npmjs.org/:_authToken=«npm_FAKEabcdefghijklmnopqrstuvwxyz012345»"),
    ("huggingface-token", "HF: «hf_FAKEabcdefghijklmnopqrstuvwxyz0123»"),
    ("sendgrid-key", "«SG.FAKEabcdefghijklmnopqr.FAKEabcdefghijklmnopqrstuvwxyz0123456789abc»"),
    ("telegram-bot-token", "bot «123456789:AAFAKEabcdefghijklmnopqrstuvwxyz012»"),
    ("azure-storage-key", "AccountName=x;AccountKey=«" + "A1b2" * 21 + "Fk==»;EndpointSuffix"),
    ("jwt", "Cookie: session=«eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.c2lnbmF0dXJlLWZha2U»"),
    ("authorization-header", 'curl -H "Authorization: Bearer «FAKEabc123def456ghi789»"'),
    ("authorization-header", "Authorization: Basic «ZmFrZTpmYWtlcGFzcw==»"),
    ("url-credentials", "amqp://«guest:Fk9dsQ2mzL»@rabbit:5672/"),
    ("kube-client-key", "    client-key-data: «LS0tLS1CRUdJTiBGQUtFIEtFWS0tLS0t»"),
    ("password", "DB_PASSWORD=«Fk9dsQ2mzL»"),
    ("password", "  password: '«Fk9dsQ2mzL»'"),
    ("password", "mysql -u root --password=«Fk9dsQ2mzL» shop"),
    ("password", "$password = «Fk9dsQ2mzL»;"),
    ("token", "ACCESS_TOKEN := «a1b2c3d4e5f6»"),
    ("api-key", '{"apiKey": "«a1b2c3d4e5f6g7h8»"}'),
    ("api-key", "X_API_KEY=«a1b2c3d4e5f6g7h8»"),
    ("secret", "client_secret=«a1b2c3d4e5f6g7h8»&grant_type=client_credentials"),
    ("secret", 'SECRET_KEY = "«09d25e094faa6ca2556c818166b7a9563b93f7099f»"'),
]


@pytest.mark.parametrize(
    ("kind", "line"), SHAPES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(SHAPES)]
)
def test_each_rule_finds_exactly_its_secret(kind: str, line: str) -> None:
    start = line.index("«")
    end = line.index("»") - 1
    text = line.replace("«", "").replace("»", "")
    assert find_secrets(text) == (Secret(start, end, kind),)


@given(flips=st.lists(st.booleans(), min_size=30, max_size=30))
@pytest.mark.parametrize(
    ("kind", "key", "rest"),
    [
        (
            "aws-secret-access-key",
            "aws_secret_access_key",
            " = «wJalrXUtnFEMI9K7MDENG8bPxRfiCYzXAMPLEKEY»",
        ),
        ("authorization-header", "authorization", ": Bearer «FAKEabc123def456ghi789»"),
    ],
)
def test_a_key_of_no_one_case_is_found_in_any_case(
    kind: str, key: str, rest: str, flips: list[bool]
) -> None:
    # HTTP header names and many config keys are case-blind: so are these rules. Their hints
    # once were two literal cases ("ecret"/"ECRET"), and "SeCrEt_…" or "AuThOrIzAtIoN:" went
    # unredacted unless the hint appeared elsewhere in the document.
    cased = "".join(c.upper() if f else c for c, f in zip(key, flips, strict=False))
    line = "Заметка.\n" + cased + rest
    start, end = line.index("«"), line.index("»") - 1
    assert find_secrets(line.replace("«", "").replace("»", "")) == (Secret(start, end, kind),)


NOT_SECRETS = [
    "password: ${DB_PASSWORD}",
    "DB_PASSWORD=$POSTGRES_PASSWORD",
    'token: "{{ .Values.token }}"',
    "token: <your-token>",
    "api_key: YOUR_API_KEY",
    "password: str",
    "    password: str = Field(min_length=8)",
    "token: Annotated[str, Depends(oauth2_scheme)]",
    "access_token = create_access_token(data={'sub': user.username})",
    'return {"access_token": user.username, "token_type": "bearer"}',
    "secret_key = settings.SECRET_KEY",
    "max_tokens=512, temperature=0.2",
    "token_type: bearer",
    "export PWD=/home/user/project",
    "postgres://user:password@localhost:5432/db",
    "mongodb://<user>:<pass>@cluster0.mongodb.net",
    "https://example.com:8080/path@v2",
    "git@github.com:owner/repo.git",
    "Authorization: Bearer <token>",
    "The authorization token documentation explains scopes.",
    "pip install scikit-learn; import sk-learn-style names",
    "Токен: используйте переменную окружения.",
    "Пароль: спросите у администратора",
    'password = "****"',
    "password: xxxxxxxx",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuT\n-----END CERTIFICATE-----",
    "The token is valid for 24 hours; a secret is never logged.",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 3f1c7ec5e2b1a9d8f7e6c5b4a3928170615243ab",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_placeholders_references_code_and_prose_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == ()


def test_a_specific_rule_wins_over_the_assignment_that_holds_it() -> None:
    text = "GITHUB_TOKEN=ghp_FAKE0123456789abcdefABCDEFghijklmnop"
    assert find_secrets(text) == (Secret(13, len(text), "github-token"),)


def test_keys_in_camel_case_count_and_words_that_merely_contain_a_keyword_do_not() -> None:
    text = '{"accessToken": "a1b2c3d4e5f6", "bypassword": "a1b2c3d4", "mytoken": "a1b2c3d4"}'
    assert find_secrets(text) == (Secret(17, 29, "token"),)


def test_offsets_stay_exact_when_lowercasing_would_grow_the_text() -> None:
    # "İ".lower() is two characters: the keyword search must not drift.
    text = "İstanbul İzmir: password=Fk9dsQ2mzL"
    (found,) = find_secrets(text)
    assert text[found.start : found.end] == "Fk9dsQ2mzL"


def test_a_private_key_without_its_end_line_stops_at_the_key_lines() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(["QUFB" * 16] * 3)
    text = block + "\n\nThe rest of the note stays readable."
    (found,) = find_secrets(text)
    assert (found.start, found.end, found.kind) == (0, len(block), "private-key")


def test_redact_replaces_each_secret_by_its_marker() -> None:
    text = "user=qa password=Fk9dsQ2mzL key AKIAFAKE7QW2ZX0PLM4N."
    redacted, found = redact(text)
    assert redacted == ("user=qa password=[REDACTED:password] key [REDACTED:aws-access-key-id].")
    assert count_kinds(found) == {"password": 1, "aws-access-key-id": 1}
    assert redact("nothing here") == ("nothing here", ())


def test_a_range_that_cuts_a_secret_redacts_the_piece_it_holds() -> None:
    text = "a ghp_FAKE0123456789abcdefABCDEFghijklmnop b"
    found = find_secrets(text)
    assert redact_span(text, found, 0, 10) == "a [REDACTED:github-token]"
    assert redact_span(text, found, 20, len(text)) == "[REDACTED:github-token] b"
    assert secrets_in(found, 0, 2) == ()


def test_redacted_text_of_a_chunk_uses_document_offsets() -> None:
    text = "intro\npassword=Fk9dsQ2mzL\n"
    (secret,) = find_secrets(text)
    chunk = Chunk("a.md", 0, 6, len(text) - 1, text[6:-1], "", secrets=(secret,))
    assert redacted_text(chunk) == "password=[REDACTED:password]"


_PIECES = st.sampled_from(
    [
        "word ",
        "\n",
        "pwd=Fk9d ",
        "password=Fk9dsQ2mzL ",
        "ghp_FAKE0123456789abcdefABCDEFghijklmnop ",
        "https://u:Pw9x@h/ ",
        "-----BEGIN PRIVATE KEY-----\nQUFBQUFBQUFBQUFBQUFB\n-----END PRIVATE KEY-----\n",
    ]
)


@given(
    text=st.lists(_PIECES, max_size=12).map("".join),
    cut=st.tuples(st.integers(0, 400), st.integers(0, 400)).map(sorted),
)
def test_size_change_is_exactly_what_redaction_adds(text: str, cut: list[int]) -> None:
    start, end = min(cut[0], len(text)), min(cut[1], len(text))
    found = find_secrets(text)
    piece = redact_span(text, found, start, end)
    assert len(piece) == end - start + size_change(found, start, end)
    for s in found:  # nothing of a secret survives, however the range cuts it
        inside = text[max(start, s.start) : min(end, s.end)]
        assert len(inside) < 4 or inside not in piece.replace(marker(s.kind), "")


def test_findings_are_sorted_and_disjoint_on_the_corpus() -> None:
    for name in sorted({p["file"] for p in PLANTED}):
        found = find_secrets(_text(name))
        assert all(a.end <= b.start for a, b in itertools.pairwise(found))


def _plain_scan(text: str) -> list[tuple[int, int, int, str]]:
    """What ``_candidates`` finds, the slow way: every rule run over the whole text (its
    hints unasked: a hint that some match lacks shows here), and every keyword of the whole
    (lowercased) text tried."""
    found = []
    for rule in redaction._TOKEN_RULES:
        for m in rule.pattern.finditer(text):
            found.append((m.start(rule.group), m.end(rule.group), rule.priority, rule.kind))
    at = text.find("://") if "@" in text else -1
    while at != -1:
        url = redaction._URL_CREDENTIALS.match(text, at + 3)
        if url is not None and not redaction._placeholder(url.group(2)):
            found.append((url.start(1), url.end(2), 1, "url-credentials"))
        at = text.find("://", at + 3)
    lowered = text.lower()
    keywords = (
        redaction._KEYWORD.finditer(lowered)
        if len(lowered) == len(text)
        else redaction._KEYWORD_ANY_CASE.finditer(text)
    )
    for m in keywords:
        assigned = redaction._assignment(text, m.start(), m.end())
        if assigned is not None:
            found.append(assigned)
    return sorted(found)


_HINTS = sorted({hint for rule in redaction._TOKEN_RULES for hint in rule.hints})
_KEYS = ["password", "PASSWD", "passphrase", "secret", "Secret_Key_Base", "token", "apiKey"]
_KEYS += ["api-key", "ACCESS_KEY", "auth_key", "private-key", "pwd", "secreToken", "mysecretoken"]
_TRICKY = [
    "İ",
    "\u212a",
    "K",
    "ſ",
    "\u0130stanbul",
    "ß",
    "\t",
    " ",
    "  ",
    '"',
    "'",
    ":",
    "=",
    ":=",
    "=>",
]
_ALPHABET = "aekmnoprstwyzAEKT0159_-.:=/@ \t\n\"'"


@given(
    st.lists(
        st.one_of(
            st.sampled_from([line.replace("«", "").replace("»", "") for _, line in SHAPES]),
            st.sampled_from(_HINTS + _KEYS + _TRICKY),
            st.text(_ALPHABET, max_size=12),
        ),
        max_size=16,
    ).map("".join)
)
def test_the_prefilters_find_what_the_plain_scan_finds(text: str) -> None:
    # The anchor pass and the separator scan only decide where the rules run; a miss here
    # would be a secret left in the index.
    assert sorted(redaction._candidates(text)) == _plain_scan(text)


@pytest.mark.parametrize("hint", _HINTS)
def test_every_hint_alone_reaches_its_rule(hint: str) -> None:
    text = f"до {hint} после {hint}{hint}"
    assert sorted(redaction._candidates(text)) == _plain_scan(text)
    assert {r.kind for r in redaction._rules_present(text)} >= {
        r.kind for r in redaction._TOKEN_RULES if hint in r.hints
    }


_FORMS = ["password", "passwd", "passphrase", "secret", "secret_key", "secretkey", "secret-base"]
_FORMS += ["secret_key_base", "token", "api_key", "apikey", "access-key", "authkey", "private_key"]
_FORMS += ["pwd", "DB_PASSWORD", "accessToken", "X_API_KEY", "API_\u212aEY", "Passwd"]
_BETWEEN = ["", '"', "'", " ", "\t", "  ", '" ', "' \t"]


@pytest.mark.parametrize("sep", [":", "=", ":=", "=>"])
@pytest.mark.parametrize("between", _BETWEEN, ids=repr)
@pytest.mark.parametrize("key", _FORMS)
def test_every_keyword_form_and_separator_reaches_the_assignment(
    key: str, between: str, sep: str
) -> None:
    text = f"x {key}{between}{sep} Fk9dsQ2mzL\n"
    assert redaction._candidates(text) == _plain_scan(text) != []


_CASES = {"s": "sSſ", "i": "iIıİ", "k": "kK\u212a"}
"""Every character a case-blind search takes for these letters (re's own extra cases)."""


@pytest.mark.parametrize("rule", [r for r in redaction._TOKEN_RULES if r.any_case], ids=repr)
@given(data=st.data(), around=st.sampled_from(["", "x", "Ё ", "ß", "\u0130", "\n"]))
def test_a_lowercased_hint_test_answers_what_the_case_blind_search_does(
    rule: Rule, data: st.DataObject, around: str
) -> None:
    # Which rules run is decided by this test alone: a no here is a key left unredacted.
    hint = data.draw(st.sampled_from(rule.hints))
    cased = "".join(
        data.draw(st.sampled_from(_CASES.get(c.lower(), c.lower() + c.upper()))) for c in hint
    )
    cut = data.draw(st.integers(0, len(cased)))
    for text in (around + cased + around, around + cased[:cut] + around + cased[cut:]):
        expected = redaction._ANY_CASE[rule.kind].search(text) is not None
        assert redaction._has(rule, rule.hints, text, redaction._lowered(text)) is expected
