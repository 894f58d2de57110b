"""Key-shaped values found by a maintained secret scanner, detect-secrets (issue 39 item 4 (b); SPEC T2).

The language rules find a secret by its key word (``password: …``, ``пароль …``, ``パスワードは …``);
this rule finds one by its shape alone, with the plugins of `detect-secrets
<https://github.com/Yelp/detect-secrets>`_ (Yelp, Apache-2.0):

* its token plugins (AWS, Artifactory, Azure storage, basic-auth URLs, Cloudant, Discord, GitHub,
  GitLab, IBM Cloud IAM and COS HMAC, JWT, Mailchimp, npm, OpenAI, private keys, PyPI, SendGrid,
  Slack, SoftLayer, Square, Stripe, Telegram, Twilio): each value a plugin yields is replaced where
  it stands; ``IPPublicDetector`` is left out (an address is not a secret) and so is
  ``KeywordDetector`` (the key-word rules of ``searchkit.ingest.redact`` read ru/ja/en);
* its high-entropy measure (``Base64HighEntropyString`` / ``HexHighEntropyString``:
  ``calculate_shannon_entropy``) on each unquoted run of base64 or hex characters of 16 or more
  (detect-secrets scans only quoted strings unless asked to scan every word: prose has no quotes):
  a run of letters, digits and both cases whose entropy is within ``_B64_MARGIN`` bits of the most
  its length allows (the plugin's limit, 4.5, is for strings of 40 and more) and whose characters
  change class often (an identifier such as ``getUserById2026`` changes rarely); a hex run of 24 or
  more over the hex plugin's limit (3.0).

What it never takes (``_checksum_context``): a git commit SHA (40 hex) or a checksum (32, 40, 64 or
128 hex) that its words name: ``commit 3f2a…``, ``merged 1f0e… into main``, ``sha256: 9f86…``,
``контрольная сумма …``, ``コミット …``, ``SHA256は …``, a ``sha256:…`` digest, a ``sha256sum`` line.

detect-secrets is imported on first use (it imports ``requests``); no plugin verifies anything (no
network: ``analyze_string`` only).
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Iterator, Protocol

from searchkit.ingest.redact.shapes import Edit, SECRET

_PLUGINS = (
    ("aws", "AWSKeyDetector"), ("artifactory", "ArtifactoryDetector"), ("azure_storage_key", "AzureStorageKeyDetector"),
    ("basic_auth", "BasicAuthDetector"), ("cloudant", "CloudantDetector"), ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"), ("gitlab_token", "GitLabTokenDetector"),
    ("ibm_cloud_iam", "IbmCloudIamDetector"), ("ibm_cos_hmac", "IbmCosHmacDetector"), ("jwt", "JwtTokenDetector"),
    ("mailchimp", "MailchimpDetector"), ("npm", "NpmDetector"), ("openai", "OpenAIDetector"),
    ("private_key", "PrivateKeyDetector"), ("pypi_token", "PypiTokenDetector"), ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"), ("softlayer", "SoftlayerDetector"), ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"), ("telegram_token", "TelegramBotTokenDetector"), ("twilio", "TwilioKeyDetector"),
)
"""detect-secrets' token plugins this rule runs (module, class)."""

_HINTS: dict[str, tuple[re.Pattern[str] | None, int]] = {
    # plugin: (a pattern its matches all hold, or None; the run of 16 or more base64 characters they need)
    "AWSKeyDetector": (re.compile(r"A3T|ABIA|ACCA|AKIA|ASIA|aws|AWS|Aws"), 16),
    "ArtifactoryDetector": (re.compile(r"AKC|AP[\dA-F]"), 0),
    "AzureStorageKeyDetector": (re.compile(r"AccountKey="), 88),
    "BasicAuthDetector": (re.compile(r"://"), 0),
    "CloudantDetector": (re.compile(r"(?:cl|CL|Cl)(?:oudant|OUDANT|ou|OU)?[-_]?(?:api|API)?(?:key|KEY|Key|pw|PW|Pw|pass|PASS|Pass|token|TOKEN|Token)|cloudant\.com"), 24),
    "DiscordBotTokenDetector": (None, 24),
    "GitHubTokenDetector": (re.compile(r"gh[pousr]_"), 36),
    "GitLabTokenDetector": (re.compile(r"gl[a-z]{2,6}-|GR1348941"), 20),
    "IbmCloudIamDetector": (None, 44),
    "IbmCosHmacDetector": (None, 48),
    "JwtTokenDetector": (re.compile(r"eyJ"), 0),
    "MailchimpDetector": (re.compile(r"-us\d"), 32),
    "NpmDetector": (re.compile(r"_authToken"), 0),
    "OpenAIDetector": (re.compile(r"T3BlbkFJ"), 20),
    "PrivateKeyDetector": (re.compile(r"PRIVATE KEY|PuTTY-User-Key"), 0),
    "PypiTokenDetector": (re.compile(r"pypi-"), 70),
    "SendGridDetector": (re.compile(r"SG\."), 22),
    "SlackDetector": (re.compile(r"xox|XOX|Xox|hooks\.slack"), 0),
    "SoftlayerDetector": (None, 64),
    "SquareOAuthDetector": (re.compile(r"sq0csp"), 43),
    "StripeDetector": (re.compile(r"_live_"), 24),
    "TelegramBotTokenDetector": (re.compile(r"\d{8}:"), 35),
    "TwilioKeyDetector": (re.compile(r"AC|SK"), 32),
}
"""A plugin is run only on a text that its patterns could match: one holding its pattern (its
tokens' prefix, its key words) and a run of token characters as long as its secrets (most texts hold
none; each plugin is a few regular expressions over the whole text)."""
@lru_cache(maxsize=1)
def _scanner() -> tuple[tuple[Any, tuple[re.Pattern[str] | None, int]], ...] | None:
    """detect-secrets' plugins and measures, or None where it is not installed (then only the
    key-word rules and the shape rules of ``tokens`` redact)."""
    import importlib

    try:
        found = []
        for module, name in _PLUGINS:
            try:
                cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
            except (ImportError, AttributeError):
                continue  # another version of detect-secrets: the plugins it has
            found.append((cls(), _HINTS.get(name, (None, 0))))
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
    except ImportError:
        return None
    return (*found, (Base64HighEntropyString(), (None, 0)), (HexHighEntropyString(), (None, 0)))


# --------------------------------------------------------------------------------------------
# What is never a secret: a commit SHA, a checksum its words name
# --------------------------------------------------------------------------------------------

_CHECKSUM_WORDS_RE = re.compile(
    r"(?i)(?:(?<![A-Za-z0-9])(?:commit(?:s|ted)?|cherry[- ]?pick(?:ed)?|merged?|revert(?:ed)?|rebased?|rev(?:ision)?|sha(?:-?(?:1|224|256|384|512))?"
    r"(?:sum)?|md5(?:sum)?|checksums?|hash(?:es)?|digests?|fingerprint|blake2b?|crc32|etag|git|head|tree|blob|tag|"
    r"hashsum|integrity)(?![A-Za-z0-9])"
    r"|коммит\w*|хе[шщ]\w*|хэш\w*|контрольн\w+\s+сумм\w*|чексумм\w*|ревизи\w*|дайджест\w*|слил\w*|смерж\w*|влил\w*"
    r"|コミット|ハッシュ(?:値)?|チェックサム|ダイジェスト|リビジョン|マージ)"
)
_SECRET_WORDS_RE = re.compile(
    r"(?i)pass|pwd|token|secret|api[ _-]?key|private|credential|auth|парол|токен|ключ|секрет|パスワード|トークン|キー|鍵"
)
_CHECKSUM_LENGTHS = frozenset({32, 40, 64, 96, 128})


def _checksum_context(text: str, start: int, end: int) -> bool:
    """A hex run of a SHA's or checksum's length that the words before it on its line (or a
    ``sha256:`` prefix, a ``sha256sum`` line) name as a commit or a checksum, with no secret's key
    word between them: ``fixed in commit 3f2a…``, ``sha256 checksum: 9f86…``, ``コミット 5d41… で修正``."""
    run = text[start:end]
    if len(run) not in _CHECKSUM_LENGTHS or not re.fullmatch(r"[0-9a-fA-F]+", run):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 60):start]
    words = list(_CHECKSUM_WORDS_RE.finditer(before))
    if words and not _SECRET_WORDS_RE.search(before[words[-1].end():]):
        return True
    line_end = text.find("\n", end)
    after = text[end:line_end if line_end >= 0 else len(text)][:60]
    # `<hex>  file.tar.gz` (sha256sum's own lines), `<hex> で修正済み` after a named commit
    if re.match(r"  [\w./-]+\s*\Z", after) or re.match(r"\s*(?:\*|\s)[\w./-]+\.\w+\s*\Z", after):
        return True
    return bool(_CHECKSUM_WORDS_RE.search(after[:24])) and not _SECRET_WORDS_RE.search(before)


# --------------------------------------------------------------------------------------------
# High-entropy runs
# --------------------------------------------------------------------------------------------

_B64_RUN_RE = re.compile(r"(?<![A-Za-z0-9+/_\-=])[A-Za-z0-9+/_\-]{16,}={0,2}(?![A-Za-z0-9+/_\-=])")
_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_B64_MARGIN = 0.75
"""A random run of ``n`` characters of base64 has an entropy close to ``log2(n)`` bits (for ``n``
below the alphabet's 64); detect-secrets' limit (4.5) suits runs of 40 and more. A run is taken
when its entropy is within this margin of ``log2(n)`` (and over 3.3), capped at the plugin's limit."""
_MIN_HEX = 24
_WORDISH_RE = re.compile(r"[A-Z]?[a-z]{2,}\d*|[A-Z]{2,}[a-z]*\d*|\d+[A-Za-z]?|[a-z]?\d+")
"""A part of a joined name that is a word, an acronym or a number (``Embedding``, ``V2``, ``8B``)."""
_CAMEL_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
"""The words of a camelCase name; a generated key's runs are one or two characters long."""


def _class_changes(s: str) -> int:
    """How often a run changes between digits, upper and lower case."""
    def cls(c: str) -> int:
        return 0 if c.isdigit() else 1 if c.isupper() else 2 if c.islower() else 3
    return sum(1 for a, b in zip(s, s[1:]) if cls(a) != cls(b))


class _EntropyPlugin(Protocol):
    """What ``_high_entropy`` reads of detect-secrets' hex and base64 high-entropy plugins."""

    entropy_limit: float

    def calculate_shannon_entropy(self, data: str) -> float: ...


def _high_entropy(text: str, start: int, end: int, b64: _EntropyPlugin, hex_: _EntropyPlugin) -> bool:
    run = text[start:end]
    core = run.rstrip("=")
    if _HEX_RE.fullmatch(core):
        if len(core) < _MIN_HEX or _checksum_context(text, start, end):
            return False
        if not (any(c.isdigit() for c in core) and any(c.isalpha() for c in core)):
            return False
        return hex_.calculate_shannon_entropy(core) > hex_.entropy_limit
    if ("/" in core or "+" in core) and len(core) < 32:
        return False  # a path (`src/Login2Form/index`) or a sum
    if "/" in core and re.search(r"[a-z]{3,}/[a-z]{3,}", core):
        return False  # a path of words
    digits = sum(c.isdigit() for c in core)
    upper = sum(c.isupper() for c in core)
    lower = sum(c.islower() for c in core)
    least = 1 if len(core) >= 32 else 2  # a long run: one of each class is enough (the entropy decides)
    if not (digits >= least and upper >= least and lower >= least):
        return False
    letters = re.sub(r"[^A-Za-z0-9]", "", core)
    if _class_changes(letters) < len(letters) // 3:
        return False  # an identifier: `getUserAccountById2026`, `TestLoginFlow2026`
    parts = [p for p in re.split(r"[-_.]+", core) if p]
    if len(parts) > 1 and sum(len(p) for p in parts if _WORDISH_RE.fullmatch(p)) * 2 >= len(letters):
        return False  # words joined: `Qwen3-Embedding-8B`, `my_Service_V2_Token`
    if len(core) < 32 and sum(len(w) for w in _CAMEL_RE.findall(core) if len(w) >= 3) * 5 >= len(letters) * 3:
        return False  # camelCase words and a number: `getUserAccountById2026`, `TestLoginFlow2026`
    entropy = b64.calculate_shannon_entropy(core)
    limit = min(b64.entropy_limit, max(3.3, math.log2(len(core)) - _B64_MARGIN))
    return entropy >= limit


def _plugin_edits(text: str) -> Iterator[Edit]:
    """The values detect-secrets' token plugins find (rule ``detector``), where they stand."""
    scanner = _scanner()
    if scanner is None or len(text) < 8:
        return
    longest = max((end - start for start, end, _ in _runs(text)), default=0)
    edits: list[Edit] = []
    for plugin, (hint, run) in scanner[:-2]:
        if run > longest or hint is not None and not hint.search(text):
            continue
        for value in plugin.analyze_string(text):
            value = value.strip(" \t\r\n\"'=:")
            if len(value) < 8:
                continue
            pos = text.find(value)
            while pos >= 0:
                edits.append((pos, pos + len(value), SECRET))
                pos = text.find(value, pos + len(value))
    edits.sort(key=lambda e: (e[0], -e[1]))
    yield from edits


def _entropy_edits(text: str, *, hex_runs: bool) -> Iterator[Edit]:
    """Runs of base64 (``hex_runs`` False: rule ``long_base64``) or hex characters (rule ``long_hex``)
    that detect-secrets' entropy measures score as random (``_high_entropy``)."""
    scanner = _scanner()
    if scanner is None or len(text) < 16:
        return
    b64, hex_ = scanner[-2][0], scanner[-1][0]
    for start, end, is_hex in _runs(text):
        if is_hex is hex_runs and _high_entropy(text, start, end, b64, hex_):
            yield start, end, SECRET


_LAST_RUNS: tuple[str, list[tuple[int, int, bool]]] = ("", [])


def _runs(text: str) -> list[tuple[int, int, bool]]:
    """The base64 runs of ``text`` (start, end, all hex), kept for the next rule (``long_hex`` and
    ``long_base64`` read the same text one after the other)."""
    global _LAST_RUNS
    last = _LAST_RUNS
    if last[0] == text:
        return last[1]
    runs = [(m.start(), m.end(), bool(_HEX_RE.fullmatch(m.group(0).rstrip("=")))) for m in _B64_RUN_RE.finditer(text)]
    _LAST_RUNS = (text, runs)
    return runs


def _hex_edits(text: str) -> Iterator[Edit]:
    return _entropy_edits(text, hex_runs=True)


def _b64_edits(text: str) -> Iterator[Edit]:
    return _entropy_edits(text, hex_runs=False)
