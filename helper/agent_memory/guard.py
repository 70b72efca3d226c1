"""The secret guard: notes that contain credentials are refused, and error text is scrubbed before it is shown.

A finding names the rule and the line, never the value.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# values that only point at a secret (an environment variable, a call, a template) are not secrets
_REFERENCE = r"(?![\"']?(?:\$|<|\{|%|\*{3}|os\.|process\.env|getenv|environ|env\[|\.\.\.|x{6}|your[_-]))"

RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (rule, label, re.compile(pattern))
    for rule, label, pattern in (
        ("hf-token", "Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b"),
        ("github-token", "GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"),
        ("aws-access-key", "AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        (
            "aws-secret-key",
            "AWS secret access key",
            r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?" + _REFERENCE + r"[A-Za-z0-9/+=]{40}",
        ),
        ("private-key", "private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("openai-key", "OpenAI or Anthropic API key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}"),
        ("slack-token", "Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        (
            "password-assignment",
            "password or API key assignment",
            r"(?i)(?:password|passwd|pwd|api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token"
            r"|client[_-]?secret|private[_-]?key)[\"']?\s*[:=]\s*" + _REFERENCE + r"[\"']?[^\s\"',;]{8,}",
        ),
        ("bearer-token", "bearer token", r"(?i)\bbearer\s+" + _REFERENCE + r"[A-Za-z0-9._~+/=-]{20,}"),
    )
)


class Finding(NamedTuple):
    """A credential found in some text: which rule matched, on which line (1-based)."""

    rule: str
    label: str
    line: int


def scan(text: str) -> list[Finding]:
    """Every rule that matches, with the line it matches on."""
    findings = []
    for number, line in enumerate(text.splitlines(), start=1):
        for rule, label, pattern in RULES:
            if pattern.search(line):
                findings.append(Finding(rule, label, number))
    return findings


def redact(text: str) -> str:
    """`text` with every credential-shaped value replaced, for error messages and logs."""
    for _rule, _label, pattern in RULES:
        text = pattern.sub("[redacted]", text)
    return text
