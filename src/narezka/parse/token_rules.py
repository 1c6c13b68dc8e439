"""The token-format rules secret detection runs: one per issuer whose prefix names it (AWS,
GitHub, GitLab, Slack, OpenAI, Stripe, Google…), private key blocks, JWTs, and a few
``key: value`` shapes whose key is specific enough (AWS secret keys, Authorization headers).

:mod:`narezka.parse.redaction` runs them, with the URL-credential and assignment rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    """One token format: its kind, its pattern, and the literal hints that gate it."""

    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]
    """Literal substrings one of which every match contains: a cheap test skips the regex."""
    group: int = 0
    """The group holding the secret itself (0: the whole match)."""
    priority: int = 0
    """Lower wins when spans overlap: a named token format beats a generic assignment."""
    any_case: bool = False
    """The hints are found in any case, as the pattern's key is (``AuThOrIzAtIoN:``)."""


_B64 = r"[A-Za-z0-9+/]"
TOKEN_RULES = (
    Rule(
        "private-key",
        # Up to the END line; JSON files escape the newlines (GCP service-account keys).
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{0,12000}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:(?:\\n|\s)+(?:[A-Za-z-]+: [^\n]*|[A-Za-z0-9+/=]{8,}))*)"
        ),
        ("PRIVATE KEY",),
    ),
    Rule(
        "aws-access-key-id",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
        ("AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    Rule(
        "aws-secret-access-key",
        re.compile(
            r"(?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
            rf"({_B64}{{40}})(?!{_B64})"
        ),
        ("secret",),
        group=1,
        any_case=True,
    ),
    Rule("gcp-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"), ("AIza",)),
    Rule("gcp-oauth-secret", re.compile(r"\bGOCSPX-[0-9A-Za-z_\-]{28}"), ("GOCSPX-",)),
    Rule(
        "github-token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{60,250})\b"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Rule(
        "gitlab-token",
        re.compile(
            r"\b(?:gl(?:pat|dt|rt|ptt|soat|ft|cbt|imt)-[0-9A-Za-z_\-]{20,}|GR1348941[0-9A-Za-z_\-]{20,})"
        ),
        ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glft-", "glcbt-", "glimt-", "GR1348941"),
    ),
    Rule("slack-token", re.compile(r"\bxox[abposre]-[0-9A-Za-z][0-9A-Za-z\-]{8,}"), ("xox",)),
    Rule(
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}"),
        ("hooks.slack.com",),
    ),
    Rule(
        "anthropic-key", re.compile(r"\bsk-ant-[a-z]{3,8}\d{0,3}-[A-Za-z0-9_\-]{20,}"), ("sk-ant-",)
    ),
    Rule(
        "openai-key",
        # A digit and a capital inside: a hyphenated slug ("sk-learn-…") has neither.
        re.compile(
            r"\bsk-(?:proj-|svcacct-|admin-)?(?=[\w\-]*\d)(?=[\w\-]*[A-Z])[A-Za-z0-9_\-]{32,}"
            r"(?![\w\-])"
        ),
        ("sk-",),
        priority=1,
    ),
    Rule(
        "stripe-key",
        re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b"),
        ("_live_", "_test_"),
    ),
    Rule("stripe-webhook-secret", re.compile(r"\bwhsec_[0-9A-Za-z]{24,}\b"), ("whsec_",)),
    Rule("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), ("npm_",)),
    Rule("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"), ("pypi-AgE",)),
    Rule("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{34,}\b"), ("hf_",)),
    Rule("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b"), ("SG.",)),
    Rule("telegram-bot-token", re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![\w\-])"), (":AA",)),
    Rule("digitalocean-token", re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}\b"), ("_v1_",)),
    Rule("shopify-token", re.compile(r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"), ("shp",)),
    Rule(
        "azure-storage-key",
        re.compile(rf"AccountKey=({_B64}{{86}}==)"),
        ("AccountKey=",),
        group=1,
    ),
    Rule(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        ("eyJ",),
    ),
    Rule(
        "kube-client-key",
        re.compile(rf"client-key-data:\s*[\"']?({_B64}{{20,}}=*)"),
        ("client-key-data",),
        group=1,
    ),
    Rule(
        "authorization-header",
        re.compile(
            r"(?i:authorization)(?:[\"']?\s*[:=]\s*[\"']?|\s+[\"'])(?i:bearer|basic|token)\s+"
            r"([A-Za-z0-9\-._~+/]{12,}=*)"
        ),
        ("authorization",),
        group=1,
        priority=1,
        any_case=True,
    ),
)
