"""Find secrets in a document and redact them from what is embedded, stored and served.

Detection runs once per document over its whole text (:func:`find_secrets`) and yields
spans in document offsets; chunks keep their exact spans and carry the secrets that touch
them, and every text narezka derives from a span (``embed_text``, the stored text and
preview, a parent's text) replaces each such piece by ``[REDACTED:<kind>]``
(:func:`redact_span`). :func:`redact` does both steps for one free-standing text.
Strings a document yields that are not spans of it (heading titles, anchors and urls,
front-matter values) go through :class:`DerivedRedactor`.

The rules are our own, tested set (see ``benchmarks/bench_redact.py`` for why not a
library): token formats whose prefix names the issuer (AWS, GitHub, GitLab, Slack, OpenAI,
Stripe, Google…), private key blocks (also JSON-escaped, as in a GCP service-account file),
JWTs, credentials inside URLs, and ``password=``/``token:``/``api_key`` assignments in
configs, ``.env`` files and code, whose value must look like a literal, not a placeholder.
The token formats are listed in :mod:`narezka.parse.token_rules`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from narezka._native import core
from narezka.parse.token_rules import TOKEN_RULES as _TOKEN_RULES
from narezka.parse.token_rules import Rule
from narezka.types import Chunk, Secret

__all__ = [
    "RULES_VERSION",
    "DerivedRedactor",
    "count_kinds",
    "find_secrets",
    "marker",
    "redact",
    "redact_span",
    "redacted_text",
    "secrets_in",
    "size_change",
]

RULES_VERSION = 2
"""Part of the strategy fingerprint when redaction is on: changing the rules in a way that
finds more must bump it, so the next sync re-chunks every file and drops what is now found.
(2: a converted file's text, provenance and metadata are redacted as it is converted, and a
marker counts as the secret it stands for: ``narezka.convert.cache``.)"""


def marker(kind: str) -> str:
    """What replaces a secret (or the part of one inside a chunk)."""
    return f"[REDACTED:{kind}]"


_MARKER = re.compile(r"\[REDACTED:([a-z0-9-]{1,40})\]")
_ASSIGNED_KINDS = ("password", "token", "api-key", "secret")
"""The kinds an assignment's key names (``_kind_of``)."""


# After "scheme://": user:password@ (the password is the secret; the user name goes too).
_URL_CREDENTIALS = re.compile(r"([^\s:/@\"'<>]{1,128}):([^\s/@\"'<>]{1,256})@")

# A key that names a secret, at its end (``DB_PASSWORD``, ``client_secret``, ``api-key``,
# ``GITHUB_TOKEN``, ``accessToken``), then ``=``, ``:``, ``:=`` or ``=>``, then the value.
# The keyword is searched for alone, in the lowercased text (a case-insensitive pattern is
# several times slower), and the rest is matched from there.
_KEYWORDS = (
    r"pass(?:word|wd|phrase)|secret(?:[_-]?key)?(?:[_-]?base)?|token|api[_-]?key|apikey"
    r"|access[_-]?key|auth[_-]?key|private[_-]?key|pwd"
)
_KEYWORD = re.compile(_KEYWORDS)
_KEYWORD_ANY_CASE = re.compile(_KEYWORDS, re.IGNORECASE)
_VALUE = re.compile(
    r"[\"']?[ \t]*(?::=|=>|=|:)[ \t]*"
    r"(?:(?P<q>[\"'])(?P<quoted>[^\s\"'\\]{4,256})(?P=q)|(?P<bare>[^\s\"'`,;&)\]}]{4,256}))"
)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_PLACEHOLDERS = frozenset(
    """
    password passwd pass secret token apikey api_key key value changeme change_me example
    xxx xxxx none null nil true false undefined required optional str string int integer
    bool boolean bytes float number any object dict list redacted hidden masked empty
    your_password your_token your_secret your_api_key mypassword mysecret mytoken
    """.split()
)
_REFERENCE = re.compile(
    r"^(?:[$%!*&]|\.\.\.|…)|[{}()<>\[\]]|\.\.\.$"
    r"|^(?:os|env|process|self|settings|config|request|ctx|args|props|this|import)\."
)
"""Values that are not literals: ``${VAR}``, ``%(x)s``, YAML tags and aliases, templates,
``<token>``, calls and indexing, attribute access on well-known objects."""


def _placeholder(value: str) -> bool:
    """Whether an assigned value is a placeholder, a reference or code, not a secret."""
    lowered = value.lower().strip("'\"")
    if lowered in _PLACEHOLDERS or len(set(lowered)) <= 2:
        return True  # "password", "str", "xxxx", "****"
    if _REFERENCE.search(value) or not value.isascii():
        return True  # ${VAR}, {{ .Values.x }}, <token>, $(cat f), func(), Russian prose
    if re.fullmatch(r"[A-Za-z_][A-Za-z_.]*", value) and ("_" in value or "." in value):
        return True  # an identifier: settings.SECRET_KEY, DEFAULT_TOKEN, my_token
    return bool(re.fullmatch(r"[a-z]+(?:-[a-z]+)+", lowered) and "example" in lowered)


def _kind_of(key: str) -> str:
    lowered = key.lower()
    if "pass" in lowered or lowered.endswith("pwd"):
        return "password"
    if "token" in lowered:
        return "token"
    if re.search(r"api[_-]?key|apikey", lowered):
        return "api-key"
    return "secret"


def _assignment(text: str, start: int, end: int) -> tuple[int, int, int, str] | None:
    """The value assigned to the key whose keyword is ``text[start:end]``, if a secret."""
    before = text[start - 1] if start else " "
    # The keyword ends a key of its own: after a separator (DB_PASSWORD), at a camelCase
    # step (accessToken), or alone; never inside a word (bypassword, mytoken).
    if before.isalnum() and not (text[start].isupper() and not before.isupper()):
        return None
    m = _VALUE.match(text, end)
    if m is None:
        return None
    key_start = start
    while key_start and text[key_start - 1] in _KEY_CHARS:
        key_start -= 1
    key = text[key_start:end]
    group = "quoted" if m.group("quoted") is not None else "bare"
    value = m.group(group)
    if _placeholder(value) or (key.lower() == "pwd" and value.startswith(("/", "~"))):
        return None  # a placeholder, code, or the shell's working directory
    if value.isalpha() and len(value) < 12:
        return None  # a word: credentials: 'include', token: Struct, secret: 'abcdef'
    return m.start(group), m.end(group), 2, _kind_of(key)


_RARE = frozenset("_-:ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def _anchor(hint: str) -> tuple[str, str] | None:
    """(the hint's first rare character, a pattern for what follows it there), or None.

    The pattern matches the rest of the hint and then checks the whole hint behind it, so
    a search for the rare character finds the hint wherever it is."""
    for i, char in enumerate(hint):
        if char in _RARE:
            rest = re.escape(hint[i + 1 :])
            return char, rest if i == 0 else f"{rest}(?<={re.escape(hint)})"
    return None


def _anchors() -> tuple[re.Pattern[str], tuple[tuple[Rule, tuple[str, ...]], ...]]:
    """One pattern that finds every hint with a rare character, and what it leaves out.

    The pattern starts only at ``_ - :``, capitals and digits (sre skips to those at C
    speed; its branches are grouped by that character); a document without any of these
    hints (almost every one) is cleared by one pass instead of ~40 substring scans. The
    hints without a rare character (``ecret``, ``xox``…) are left to substring tests."""
    branches: dict[str, list[str]] = {}
    bare: list[tuple[Rule, tuple[str, ...]]] = []
    for rule in _TOKEN_RULES:
        plain = []
        for hint in rule.hints:
            anchored = None if rule.any_case else _anchor(hint)
            if anchored is None:
                plain.append(hint)
            else:
                branches.setdefault(anchored[0], []).append(anchored[1])
        if plain:
            bare.append((rule, tuple(plain)))
    pattern = "|".join(
        f"{re.escape(char)}(?:{'|'.join(rests)})" for char, rests in branches.items()
    )
    return re.compile(pattern), tuple(bare)


_ANCHORED, _BARE_HINTS = _anchors()
_KINDS = frozenset([rule.kind for rule in _TOKEN_RULES] + ["url-credentials", *_ASSIGNED_KINDS])
"""Every kind a secret is found as: the markers ``_markers`` takes for secrets."""
_ANY_CASE = {
    rule.kind: re.compile("|".join(map(re.escape, rule.hints)), re.IGNORECASE)
    for rule in _TOKEN_RULES
    if rule.any_case
}
"""Rules whose key has no one case: their hints are searched for in any case."""
_LOWER_HINTS = {
    rule.kind: tuple(hint.lower() for hint in rule.hints) for rule in _TOKEN_RULES if rule.any_case
}
_FOLDED_APART = ("\u0130", "\u0131", "\u017f")
"""İ, ı and ſ: a case-insensitive search takes them for i, i and s, and ``str.lower`` does
not make them so (every other character it lowercases to an ASCII letter, it lowercases as
the search compares it)."""


def _lowered(text: str) -> str | None:
    """``text`` lowercased, where a lowercase hint's substring test answers what the
    case-insensitive search of ``_ANY_CASE`` would (one C pass and a few substring tests,
    against a several times slower search per rule); None where it might not."""
    if any(char in text for char in _FOLDED_APART):
        return None
    return text.lower()


def _has(rule: Rule, hints: tuple[str, ...], text: str, lowered: str | None) -> bool:
    if rule.any_case:
        if lowered is None:
            return _ANY_CASE[rule.kind].search(text) is not None
        hints = _LOWER_HINTS[rule.kind]
        text = lowered
    # A loop, not any() over a generator: this runs for every rule of every file.
    for hint in hints:  # noqa: SIM110
        if hint in text:
            return True
    return False


def _rules_present(text: str) -> Iterator[Rule]:
    """The token rules one of whose hints ``text`` contains (each hint's literal test)."""
    lowered = _lowered(text)
    if _ANCHORED.search(text) is None:
        for rule, hints in _BARE_HINTS:
            if _has(rule, hints, text, lowered):
                yield rule
        return
    for rule in _TOKEN_RULES:
        if _has(rule, rule.hints, text, lowered):
            yield rule


# Where a keyword's assignment can be: a ``:`` or ``=`` right after the last letters of a
# keyword in any case (ord, wd, ase, ret, key, ken: every keyword ends so; U+212A, the Kelvin
# sign, lowercases to k), or after a quote or a blank that may follow one. Few characters
# are ``:`` or ``=``, so this scan is quick; the keywords themselves are then matched on the
# short run of key characters before it, lowercased.
_SEPARATOR = re.compile(
    r"[:=](?:(?<=[oO][rR][dD].)|(?<=[wW][dD].)|(?<=[aA][sS][eE].)|(?<=[rR][eE][tT].)"
    "|(?<=[kK\u212a][eE][yY].)|(?<=[kK\u212a][eE][nN].)|(?<=[\"' \t].))"
)
_RUN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-\u212a")
"""The characters that lowercase to ``[a-z_-]``, what a keyword match is made of."""


def _keywords(text: str) -> Iterator[tuple[int, int]]:
    """Where ``_KEYWORD.finditer(text.lower())`` matches and an assignment may start.

    ``text`` holds no U+0130, the one character whose lowercase is longer, so offsets match.
    The other matches cannot be assigned a value (``_VALUE`` needs ``:`` or ``=`` after at
    most a quote and blanks). A keyword match holds only key characters, so none spans
    another: matching from the first key character before a separator finds the very
    matches (and misses the very overlapping ones) the scan from the start would."""
    for sep in _SEPARATOR.finditer(text):
        end = sep.start()
        while end and text[end - 1] in " \t":
            end -= 1
        if end and text[end - 1] in "\"'":
            end -= 1
        run = end
        while run and text[run - 1] in _RUN_CHARS:
            run -= 1
        window = text[run:end].lower()
        for m in _KEYWORD.finditer(window):
            if m.end() == len(window):
                yield run + m.start(), end


_PREFILTER = (
    core.SecretPrefilter([(list(rule.hints), rule.any_case) for rule in _TOKEN_RULES])
    if core is not None
    else None
)
"""The native core's prefilter over the same rules' hints (None on pure Python)."""


def _markers(text: str) -> Iterator[tuple[int, int, int, str]]:
    """Markers already in ``text`` (a converted file is stored redacted: its text holds the
    markers, ``narezka.convert.cache``), each found as the secret of its kind it stands for,
    so a text redacted once is redacted, counted and flagged again exactly as before."""
    if "[REDACTED:" not in text:
        return
    for m in _MARKER.finditer(text):
        if m.group(1) in _KINDS:
            yield m.start(), m.end(), 0, m.group(1)


def _candidates(text: str, *, native: bool = True) -> list[tuple[int, int, int, str]]:
    """Every match of every rule, before merging; the core's prefilter (where built, and
    unless ``native=False``: the tests compare the two) says which rules and keywords to try."""
    found: list[tuple[int, int, int, str]] = list(_markers(text))
    scanned = _PREFILTER.scan(text) if native and _PREFILTER is not None else None
    present: Iterable[Rule]
    keywords: Iterable[tuple[int, int]]
    if scanned is not None:
        present = [_TOKEN_RULES[i] for i in scanned[0]]
        keywords = scanned[1]
    else:
        present = _rules_present(text)
        if "\u0130" in text:  # lowercasing it adds a character: offsets would drift
            keywords = ((m.start(), m.end()) for m in _KEYWORD_ANY_CASE.finditer(text))
        else:
            keywords = _keywords(text)
    for rule in present:
        for m in rule.pattern.finditer(text):
            found.append((m.start(rule.group), m.end(rule.group), rule.priority, rule.kind))
    if "@" in text:
        at = text.find("://")
        while at != -1:
            url = _URL_CREDENTIALS.match(text, at + 3)
            if url is not None and not _placeholder(url.group(2)):
                found.append((url.start(1), url.end(2), 1, "url-credentials"))
            at = text.find("://", at + 3)
    for start, end in keywords:
        assigned = _assignment(text, start, end)
        if assigned is not None:
            found.append(assigned)
    return found


def find_secrets(text: str) -> tuple[Secret, ...]:
    """The secrets in ``text``, in order, as non-overlapping spans with a kind each.

    Overlapping matches merge into one span (so no piece of either leaks); the kind is the
    most specific rule's (a GitHub token assigned to ``token=`` is a ``github-token``).
    """
    merged: list[list[int | str]] = []
    for start, end, priority, kind in sorted(_candidates(text)):
        if merged and start < int(merged[-1][1]):
            last = merged[-1]
            last[1] = max(int(last[1]), end)
            if priority < int(last[2]):
                last[2], last[3] = priority, kind
            continue
        merged.append([start, end, priority, kind])
    return tuple(Secret(int(s), int(e), str(k)) for s, e, _, k in merged)


def secrets_in(secrets: Sequence[Secret], start: int, end: int) -> tuple[Secret, ...]:
    """The secrets overlapping ``[start, end)`` (``secrets`` sorted and disjoint)."""
    if not secrets:
        return ()
    lo = bisect_left(secrets, start + 1, key=lambda s: s.end)
    hi = lo
    while hi < len(secrets) and secrets[hi].start < end:
        hi += 1
    return tuple(secrets[lo:hi])


def redact_span(text: str, secrets: Sequence[Secret], start: int, end: int) -> str:
    """``text[start:end]`` with every secret piece inside it replaced by its marker."""
    touching = secrets_in(secrets, start, end)
    if not touching:
        return text[start:end]
    parts: list[str] = []
    pos = start
    for s in touching:
        parts.append(text[pos : max(pos, s.start)])
        parts.append(marker(s.kind))
        pos = min(end, s.end)
    parts.append(text[pos:end])
    return "".join(parts)


def size_change(secrets: Sequence[Secret], start: int, end: int) -> int:
    """Exactly how many characters longer (or, if negative, shorter) :func:`redact_span`
    makes ``[start, end)``: a short secret (``pwd=1234``) becomes a longer marker, a key
    block a shorter one."""
    change = 0
    for s in secrets_in(secrets, start, end):
        change += len(marker(s.kind)) - (min(end, s.end) - max(start, s.start))
    return change


def redact(text: str) -> tuple[str, tuple[Secret, ...]]:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``, and what was found.

    For text re-read from a source file at query time (search folding, ``--expand``)."""
    secrets = find_secrets(text)
    return (redact_span(text, secrets, 0, len(text)) if secrets else text), secrets


class DerivedRedactor:
    """Redacts the strings derived from one document that are not spans of its text: heading
    titles and the anchors slugged from them, front-matter values, a chat's title.

    Such a string holds a secret of the document as it was written (a title, a quoted YAML
    value), lowercased and slugged (an anchor), or re-flowed (a YAML block scalar, whose
    indentation is gone): each known secret's text is replaced wherever it appears, in any
    of the first two forms, and the string is then searched for secrets of its own."""

    def __init__(self, text: str, secrets: Sequence[Secret]) -> None:
        known = {text[s.start : s.end]: s.kind for s in secrets}
        # Longest first: a secret that contains another is replaced whole.
        self.known = sorted(known.items(), key=lambda item: -len(item[0]))

    def __call__(self, value: str) -> str:
        """``value`` with every secret in it replaced by its marker."""
        for secret, kind in self.known:
            if secret in value:
                value = value.replace(secret, marker(kind))
        return redact(value)[0]

    def anchor(self, anchor: str, slug: Callable[[str], str]) -> str:
        """An anchor with every secret in it, as written or as ``slug`` turns it, replaced by
        the slug of its marker: what slugging the redacted title would have given."""
        value = anchor
        for secret, kind in self.known:
            for form in (secret, slug(secret)):
                if form and form in value:
                    value = value.replace(form, slug(marker(kind)))
        found = find_secrets(value)
        return value if not found else slug(redact_span(value, found, 0, len(value)))

    def value(self, data: Any) -> Any:
        """A front-matter value (text, list, mapping, number…) with its text redacted."""
        if isinstance(data, str):
            return self(data)
        if isinstance(data, list | tuple):  # a converter's meta may hold tuples
            return [self.value(v) for v in data]
        if isinstance(data, dict):
            return {self(str(k)): self.value(v) for k, v in data.items()}
        if isinstance(data, int | float) and not isinstance(data, bool):
            # ``password: 12345678`` is read as a number: what it was written as is the secret.
            shown = self(str(data))
            return data if shown == str(data) else shown
        return data


def redacted_text(chunk: Chunk) -> str:
    """A chunk's exact span text with its secrets redacted: what the index stores."""
    if not chunk.secrets:
        return chunk.text
    shifted = [Secret(s.start - chunk.start, s.end - chunk.start, s.kind) for s in chunk.secrets]
    return redact_span(chunk.text, shifted, 0, len(chunk.text))


def count_kinds(secrets: Sequence[Secret]) -> dict[str, int]:
    """How many secrets of each kind, most frequent first."""
    if not secrets:
        return {}  # almost every file: a Counter costs more than the rest of this
    return dict(Counter(s.kind for s in secrets).most_common())
