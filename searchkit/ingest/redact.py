"""Redaction of secrets and e-mail addresses in text that goes into an index (SPEC T2).

Each rule is a named entry of ``RULES``; ``redact`` applies them in order. A redacted span
becomes ``[redacted]`` (``[email]`` for an address); for ``key=value`` forms the key stays
and only the value is replaced, so ``password=hunter2`` reads ``password=[redacted]``.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

SECRET = "[redacted]"
EMAIL = "[email]"

_B64_CHARS = r"A-Za-z0-9+/_\-"


@dataclass(frozen=True)
class Rule:
    """One redaction rule: ``pattern`` and what a match becomes (a string or a function)."""

    name: str
    pattern: re.Pattern[str]
    replace: str | Callable[[re.Match[str]], str]

    def apply(self, text: str) -> tuple[str, int]:
        return self.pattern.subn(self.replace, text)


def _keep_key(match: re.Match[str]) -> str:
    return f"{match.group('key')}{match.group('sep')}{SECRET}"


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character of ``s``."""
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _random_looking(match: re.Match[str]) -> str:
    s = match.group(0)
    core = s.rstrip("=")
    mixed = (
        any(ch.isdigit() for ch in core)
        and any(ch.islower() for ch in core)
        and any(ch.isupper() for ch in core)
    )
    return SECRET if mixed and _entropy(core) >= 4.2 else s


RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
            re.S,
        ),
        SECRET,
    ),
    Rule(
        "url_credentials",
        re.compile(r"(?<=://)[^\s/@:]+:[^\s/@]+(?=@)"),
        SECRET,
    ),
    Rule(
        "bearer",
        re.compile(r"(?i)(?P<key>\bbearer)(?P<sep>\s+)[A-Za-z0-9\-._~+/]{8,}=*"),
        _keep_key,
    ),
    Rule(
        "token_prefix",
        re.compile(
            r"(?<![A-Za-z0-9])(?:"
            r"sk-[A-Za-z0-9_\-]{16,}"  # OpenAI / Anthropic style (sk-, sk-proj-, sk-ant-, sk-live-)
            r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
            r"|github_pat_[A-Za-z0-9_]{20,}"
            r"|xox[abposr]-[A-Za-z0-9\-]{10,}"  # Slack tokens
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
            r"|AIza[0-9A-Za-z_\-]{35}"  # Google API keys
            r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"  # JWT
            r")"
        ),
        SECRET,
    ),
    Rule(
        "key_value",
        re.compile(
            r"(?i)(?P<key>(?<![A-Za-z0-9])(?:password|passwd|pwd|passphrase|secret|client[_\-]?secret"
            r"|token|access[_\-]?token|refresh[_\-]?token|api[_\-]?key|access[_\-]?key|private[_\-]?key"
            r"|パスワード|トークン|пароль|токен))"
            r"(?P<sep>[\"']?\s*[:=]\s*)"
            r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;、。]+)"
        ),
        _keep_key,
    ),
    Rule(
        "email",
        re.compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"),
        EMAIL,
    ),
    Rule(
        "long_hex",
        re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])"),
        SECRET,
    ),
    Rule(
        "long_base64",
        re.compile(rf"(?<![{_B64_CHARS}=])[{_B64_CHARS}]{{32,}}={{0,2}}(?![{_B64_CHARS}=])"),
        _random_looking,
    ),
)
"""The redaction rules, applied in this order."""


def redact(text: str) -> str:
    """Return ``text`` with secrets and e-mail addresses replaced (see ``RULES``)."""
    return redact_counted(text)[0]


def redact_counted(text: str) -> tuple[str, dict[str, int]]:
    """Like ``redact``, and also return how many spans each rule replaced (rules with 0 omitted)."""
    counts: dict[str, int] = {}
    for rule in RULES:
        before = text
        text, n = rule.apply(text)
        if n and text != before:
            counts[rule.name] = n
    return text, counts
