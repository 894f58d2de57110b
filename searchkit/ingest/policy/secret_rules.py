"""Secret detection in names, contents and cells (SPEC H2, T2; part of ``searchkit.ingest.policy``).

``SecretRules`` holds the ``Policy`` methods that find key material in a text (``secret_content``),
judge a column or variable name secret-like (``secret_column``), find the values a text assigns to
such names (``secret_assignments``) and redact what is indexed (``redact_secrets``, with the shared
rules of ``searchkit.ingest.redact``).
"""
from __future__ import annotations

import re

from searchkit.ingest import redact as _redact  # the shared redactor (SPEC T2)
from searchkit.ingest.policy.tables import name_tokens
from searchkit.ingest.redact import plain_value
from searchkit.ingest.redact.known import note_found

_DOTENV_LINE = re.compile(r"(?:export[ \t]+)?(?P<k>[A-Za-z_][A-Za-z0-9_.]*)=(?P<v>.*)")
_VALUE = r"""(?P<v>"[^"\n]*"|'[^'\n]*'|[^\s"'`#;,(){}\[\]<>=][^\s"'`#;,(){}\[\]<>]*)"""
_VALUE_RE = re.compile(_VALUE)
_ASSIGNMENTS: tuple[re.Pattern[str], ...] = (
    # NAME=value, NAME: value, NAME = "value" as a whole line (dotenv, YAML, INI, TOML, shell)
    re.compile(r"(?m)^[ \t]*(?:export[ \t]+|-[ \t]+)?([\"']?)(?P<k>[^\W\d][\w.-]{0,80})\1[ \t]*(?:=|:(?!//)|(?P<arrow>->|→))[ \t]*"
               + _VALUE + r"[ \t]*,?[ \t]*(?:[#;].*)?\r?$"),
    # define('NAME', 'value') (PHP)
    re.compile(r"""define\(\s*(['"])(?P<k>[^\W\d]\w{0,80})\1\s*,\s*(?P<v>"[^"\n]*"|'[^'\n]*')\s*\)"""),
    # "name": "value" (JSON), name = 'value' / name: "value" (code) anywhere in a line
    re.compile(r"""(?<![\w.-])(["']?)(?P<k>[^\W\d][\w.-]{0,80})\1\s*(?:=|:)\s*(?P<v>"[^"\n]*"|'[^'\n]*')"""),
)
_NOT_VALUES = frozenset({"", "null", "none", "nil", "~", "true", "false", "yes", "no", "on", "off", "|", ">",
                         "|-", ">-", "[redacted]"})


_ABOUT_WORDS = frozenset({
    "policy", "policies", "type", "kind", "method", "mode", "scheme", "algorithm", "algo", "format", "length",
    "len", "min", "max", "size", "ttl", "expiry", "expires", "lifetime", "rotation", "hint", "hints", "field",
    "label", "name", "file", "path", "env", "var", "header", "prefix", "required", "enabled", "strength", "rules",
    "regex", "pattern", "provider", "store", "manager", "source", "count", "limit", "timeout",
})
"""The last part of a name that describes a secret rather than holding it (``password_policy``,
``token_type``, ``PASSWORD_MIN_LENGTH``, ``secret_name``): ``secret_assignments`` leaves their values."""


def _about_a_secret(name: str) -> bool:
    parts = [p for p in re.split(r"[\W_]+|(?<=[a-z0-9])(?=[A-Z])", name) if p]
    return len(parts) > 1 and parts[-1].lower() in _ABOUT_WORDS


def _real_value(value: str) -> bool:
    """Whether an assigned value could be a secret (not empty, not a reference or a literal)."""
    value = value.strip()
    if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
        value = value[1:-1].strip()
    if value.lower() in _NOT_VALUES:
        return False
    return not re.fullmatch(r"\$\{[^}]*\}|\$[A-Za-z_]\w*|\{\{[^}]*\}\}|%\([^)]*\)s|<[^>]*>|\*+", value)


class SecretRules:
    """The rules of ``Policy`` that find secrets (H2, SPEC T2): key material in a text, secret-like
    column and variable names, and the redaction of what is indexed. A base of ``Policy``; its
    methods read the policy's fields (``secret_patterns``, ``secret_words``, ``key_owners``, ...)."""

    # The fields of ``Policy`` these methods read (declared for the type checker; ``Policy`` sets
    # them, and ``_secret_res``, ``secret_patterns`` compiled, in its ``__post_init__``).
    _secret_res: tuple[tuple[str, tuple[str, ...], tuple[tuple[bool, re.Pattern[str]], ...]], ...]
    secret_words: frozenset[str]
    weak_secret_words: frozenset[str]
    count_words: frozenset[str]
    secret_context: frozenset[str]
    secret_names: frozenset[str]
    secret_pairs: frozenset[tuple[str, str]]
    key_words: frozenset[str]
    key_owners: frozenset[str]
    url_owners: frozenset[str]
    url_words: frozenset[str]
    secret_substrings: tuple[str, ...]

    def secret_content(self, text: str) -> str | None:
        """What key material a text holds (a private key block, ...), or None (``secret_content``).

        Besides ``secret_patterns``: a dotenv file, whatever its name (every line that is not
        blank or a comment is ``NAME=value``), that assigns a value to a secret-like name
        (``SECRET_KEY=…``, ``DATABASE_URL=…``; names judged as columns are, ``secret_column``).
        """
        lower = text.lower()
        for label, needles, regexes in self._secret_res:
            if needles and not any(n in lower for n in needles):
                continue
            if all(bool(r.search(text)) is wanted for wanted, r in regexes):
                return label
        name = self._dotenv_secret(text)
        if name:
            return f"a dotenv file that sets a secret ({name})"
        return None

    def _dotenv_secret(self, text: str) -> str | None:
        """The first secret-like name a dotenv-shaped text assigns a value to, or None."""
        if "=" not in text:
            return None
        found: str | None = None
        for line in text.splitlines():
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            match = _DOTENV_LINE.match(stripped)
            if match is None:
                return None
            value = match.group("v").strip()
            if (found is None and _real_value(value) and _VALUE_RE.fullmatch(value)
                    and self.secret_column(match.group("k"))):
                found = match.group("k")
        return found

    def secret_assignments(self, text: str) -> list[tuple[int, int, str]]:
        """Spans ``(start, end, name)`` of the values a text assigns to secret-like names.

        ``NAME=value`` / ``NAME: value`` lines (dotenv, YAML, INI, shell), ``define('NAME', 'value')``
        (PHP) and ``"name": "value"`` / ``name = 'value'`` (JSON, code); the name is judged as a
        column is (``secret_column``: ``DB_PASSWORD``, ``SECRET_KEY``, ``POSTGRES_PASSWORD``,
        ``database_url``, ``AUTH_SALT``, ``пароль``, ``パスワード``, ...). Empty values and references
        (``${VAR}``, ``{{ var }}``, ``null``, ``true``), plain values (``redact.plain_value``:
        ``password: changed``, ``токен: истёк``) and the values of names that describe a secret
        (``password_policy``, ``token_type``, ``PASSWORD_MIN_LENGTH``) are not secrets.
        Ascending, non-overlapping.
        """
        spans: list[tuple[int, int, str]] = []
        for regex in _ASSIGNMENTS:
            for m in regex.finditer(text):
                value = m.group("v")
                name = m.group("k")
                if not _real_value(value) or plain_value(value) or _about_a_secret(name) or not self.secret_column(name):
                    continue
                if "arrow" in regex.groupindex and m.group("arrow") and not value.isascii():
                    continue  # `パスワード → 再設定のリンクを送付` is prose; `パスワード → kumo-99` a value
                start, end = m.span("v")
                if value[:1] in "\"'" and len(value) >= 2:
                    start, end = start + 1, end - 1
                spans.append((start, end, m.group("k")))
        spans.sort()
        kept: list[tuple[int, int, str]] = []
        for span in spans:
            if not kept or span[0] >= kept[-1][1]:
                kept.append(span)
        return kept

    def redact_secrets(self, text: str) -> tuple[str, dict[str, int]]:
        """``text`` with every secret in it replaced by ``[redacted]``, and the count per rule.

        The token shapes and key words of ``searchkit.ingest.redact`` (private key blocks,
        credentials in URLs, provider tokens, JWTs, webhook URLs, ``password: …`` in en/ru/ja, ...;
        e-mail addresses are left alone: history search shows them) and then ``secret_assignments``
        (named ``assignment``). The report counts never hold a value.
        """
        counts: dict[str, int] = {}
        for rule in _redact.RULES:
            if "mail" in rule.name:
                continue
            text, n = rule.apply(text)
            if n:
                counts[rule.name] = counts.get(rule.name, 0) + n
        text, n = self.redact_assignments(text)
        if n:
            counts["assignment"] = n
        return text, counts

    def redact_assignments(self, text: str) -> tuple[str, int]:
        """``text`` with the values of ``secret_assignments`` replaced by ``[redacted]``, and how many.

        History cards get it inside ``redact_secrets``; task excerpts after ``redact.redact``
        (``searchkit.ingest.tasks.model.redact_text``), so ``secret: blueberry-muffin`` or a
        ``Cookie: JSESSIONID=…`` line reads the same on both paths (issue 27 item 2, round 3)."""
        spans = [s for s in self.secret_assignments(text) if text[s[0]:s[1]] != _redact.SECRET]
        if not spans:
            return text, 0
        parts: list[str] = []
        pos = 0
        for start, end, _ in spans:
            parts += [text[pos:start], _redact.SECRET]
            note_found("assignment", text[start:end])  # for the workspace-wide pass (``known``)
            pos = end
        parts.append(text[pos:])
        return "".join(parts), len(spans)

    def secret_column(self, name: str) -> bool:
        """True when a column's name looks like a secret (H2), by its parts.

        ``pass``, ``pw``, ``pin``, ``jwt``, ``bearer``, ``authorization``, ``cookie``, ``salt``,
        ``password_hash``, ``api_key``, ``stripe_key``, ``aws_key``, ``db_url``, ``database_url``,
        ``connection_string``, ``dsn``, ``webhook_url``, ``пароль``, ``токен``, ``ключ_api``,
        ``секрет``, ``パスワード``, ``トークン``, ``暗証番号``, ``APIキー`` are; ``pinned``, ``spinner``,
        ``shipping``, ``tokens_used``, ``max_tokens``, ``pass_rate``, ``tokenizer``, ``primary_key``,
        ``foreign_key``, ``sort_key``, ``key_name``, ``public_key``, ``количество_токенов``,
        ``トークン数`` are not. A ``*_key`` is a secret only when the word before it (in Russian also
        after it) names what it unlocks (``key_owners``); a ``*_url`` / ``*_uri`` / ``*_dsn`` only
        when the word before it names a database, a broker or a webhook (``url_owners``).
        """
        tokens = name_tokens(name)
        if not tokens:
            return False
        if "".join(tokens) in self.secret_names or "_".join(tokens) in self.secret_names:
            return True
        if any(t in self.secret_words for t in tokens):
            return True
        if any(t in self.weak_secret_words for t in tokens):
            counted = any(t in self.count_words for t in tokens)
            if not counted or any(t in self.secret_context for t in tokens):
                return True
        for a, b in zip(tokens, tokens[1:]):
            if (a, b) in self.secret_pairs:
                return True
            if b in self.key_words and a in self.key_owners:
                return True
            if a in self.key_words and not a.isascii() and b in self.key_owners:  # ключ_доступа, ключ_api
                return True
            if b in self.url_words and a in self.url_owners:
                return True
            if a in self.url_words and not a.isascii() and b in self.url_owners:  # строка_подключения
                return True
        joined = "".join(tokens)
        return any(s in joined for s in self.secret_substrings)
