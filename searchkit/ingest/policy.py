"""What is never indexed (SPEC H2), who may see what (H15) and which spaces a search covers (H14).

The rules are data (a frozen ``Policy``); the loader asks it about each path, table and column
and writes every refusal into an ``IndexingReport`` as a ``Skip`` naming the rule that fired.
No rule ever fails a build.
"""
from __future__ import annotations

import fnmatch
import re
import unicodedata
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Protocol, Sequence

from searchkit.errors import ParameterError
from searchkit.records import Record

MAX_SPACES = 60
"""At most this many spaces in one search (H14)."""

CAPS: tuple[str, ...] = ("max_tables", "max_rows", "max_file_bytes", "max_log_bytes", "max_item_chars",
                         "max_message_chars", "max_cell_chars", "max_depth")
"""The size caps of a ``Policy`` (H1, H2; issue 27 item 17), each a positive integer."""

CONTAINERS: tuple[str, ...] = ("personal", "shared")
"""Where a search runs: a person's own container, or a shared workspace container (H15)."""

SKIP_REASONS: tuple[str, ...] = ("not_member", "history_search_off", "space_limit")
"""Codes ``searchable_spaces`` gives for a space it leaves out (H14)."""

RULES: Mapping[str, str] = MappingProxyType({
    # H2: never indexed
    "excluded_dir": "a folder that is never indexed (uploads/, .git/, node_modules/)",
    "excluded_file": "a file name that is never indexed (.env*, credentials*.json, token.json)",
    "credential_file": "a credential file or credential store by name (id_rsa, *.pem, *.key, .netrc, .npmrc, "
                       ".pgpass, .git-credentials, .ssh/, .aws/, .kube/, .docker/, secrets.*, kubeconfig, ...)",
    "secret_content": "a text file whose content is key material (a private key block, a service-account key, "
                      "a .netrc / .pgpass / .htpasswd / .npmrc credential, a provider token, a dotenv file that "
                      "sets a secret), whatever its name; or a table cell that holds key material "
                      "(SLUG/.space/app.sqlite:TABLE.COLUMN#ROW; the cell is left out of its row)",
    "redacted": "indexed with secrets replaced by [redacted] (token shapes, credentials in URLs, key words such as "
                "password / пароль / パスワード, secret-like assignments); the detail counts them per rule, "
                "never a value",
    "hard_link": "a file with more than one hard link (st_nlink > 1): it may be another space's file, so it is "
                 "never read",
    "binary": "a binary file (a known binary signature, NUL bytes, or bytes that are text in no supported "
              "encoding), whatever its name",
    "journal_table": "a table named like a journal or message history by its name parts (messages, messages_archive, "
                     "chat_messages_v2, history_old, msg_archive, slack_export, dm, chats, inbox, threads, "
                     "сообщения, архив_сообщений, журнал, メッセージ, チャット履歴, 監査ログ, ...)",
    "message_history_table": "a table whose columns hold a channel's message history (channel + sender + text)",
    "virtual_table": "a virtual table (FTS, R*Tree, ...): it mirrors or indexes other tables' content",
    "shadow_table": "a shadow table of a virtual table (X_content, X_data, X_idx, X_docsize, X_config, "
                    "X_segments, X_segdir, X_stat, ...) or a table named as a full-text index (fts)",
    "secret_column": "a column named like a secret (password, pass, pw, pin, token, jwt, bearer, authorization, "
                     "cookie, salt, api_key, stripe_key, db_url, dsn, webhook_url, secret, пароль, токен, "
                     "ключ_api, パスワード, トークン, APIキー, ...)",
    "table_cap": "beyond the most recently modified tables (by newest updated_at)",
    "row_cap": "rows beyond the newest of a table (by updated_at)",
    # bad or unusable input: reported, the rest goes on
    "not_a_space": "a folder without .space/space.json",
    "bad_space": "a space whose .space/space.json cannot be used (so membership is unknown)",
    "bad_json": "a JSON / JSON-lines file or line that does not parse",
    "bad_shape": "parsed, but a required field is missing or has the wrong type",
    "orphan_digest": "a digest whose chat is gone or unusable (its owner and visibility are unknown)",
    "duplicate": "a second item with an id already loaded",
    "duplicate_id": "two or more items claim the same id (a chat's ses_id, a digest's turn_id, a page's or "
                    "source's uuid, a row id): none of them is indexed, and the digests of a contested chat "
                    "are left out, so no item can shadow another",
    "bad_text": "text that is not valid Unicode (a lone surrogate escape such as \\ud800, a name that is not UTF-8)",
    "load_error": "reading this one item failed unexpectedly (the error is named); the rest of the load goes on",
    "bad_sqlite": "an unreadable or corrupt SQLite file or table",
    "no_id_column": "a table without an id column",
    "no_updated_at": "a table without updated_at: ranked last among tables, rows taken by id (indexed)",
    "log_no_headings": "log.md without '## YYYY-MM-DD' headings",
    "log_preamble": "text in log.md before the first day heading",
    "unreadable": "a file the operating system would not let us read",
    "symlink": "a symbolic link (never followed), or a path that resolves outside its own space folder",
    "special_file": "not a regular file (a FIFO, socket or device): never opened",
    "too_large": "an item over the policy's caps: max_file_bytes (a file or JSON item file: a chat, digest, page), "
                 "max_log_bytes (log.md; the kept lines of sources.jsonl, read line by line), max_item_chars (a "
                 "chat, digest, page, source line or log day), max_message_chars (one message of a chat: left out "
                 "of it), max_cell_chars (a table cell: left out of its row)",
    "too_deep": "a folder nested deeper than the policy's max_depth: skipped alone (its files are not read), "
                "the rest of the space is",
    "bad_id": "an id that a ref would name (a chat's ses_id, a digest's turn_id or ses_id, a source's or page's "
              "uuid, a table name, a row id) that is not a plain token (letters, digits, _ - . : ; no '..', slash, "
              "space or control character): the item is not indexed",
    "kept_previous": "an update kept the previous index's records of a part it could not read this time "
                     "(unreadable, load_error, bad_sqlite): what cannot be read is never taken for deleted",
    "empty": "an empty or whitespace-only item",
    "decoded": "a text file not in UTF-8, decoded from the encoding named in the detail (ISO-2022-JP, cp1251, "
               "UTF-16, ...), or UTF-8 with a few invalid bytes replaced by U+FFFD (indexed)",
})
"""Every rule a ``Skip`` can name, with what it means."""


@dataclass(frozen=True)
class Skip:
    """One thing the loader did not index (or indexed with a fallback), and why.

    Args:
        path_or_table: what was skipped: ``SLUG/relative/path``, ``SLUG/app.sqlite:TABLE``,
            ``SLUG/app.sqlite:TABLE.COLUMN`` or a space slug.
        rule: a key of ``RULES``.
        detail: human text (counts, the offending name, the parse error).
    """

    path_or_table: str
    rule: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"Skip rule {self.rule!r} is unknown; valid rules: {sorted(RULES)}")

    def to_dict(self) -> dict[str, str]:
        return {"path_or_table": self.path_or_table, "rule": self.rule, "detail": self.detail}


@dataclass(frozen=True)
class IndexingReport:
    """What a load indexed and what it left out (H2: every skip is listed here).

    Args:
        skips: things not indexed, each with the rule that fired.
        notes: things indexed with a fallback (e.g. log.md without headings indexed whole,
            a table without ``updated_at``); same shape as ``skips``.
        counts: records loaded per kind.
        loaded_at: ISO time of the load.
        caps: the policy's caps the load ran under (``Policy.caps``).
    """

    skips: tuple[Skip, ...] = ()
    notes: tuple[Skip, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    loaded_at: str = ""
    caps: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "skips", tuple(self.skips))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))
        object.__setattr__(self, "caps", MappingProxyType(dict(self.caps)))

    def by_rule(self, rule: str) -> tuple[Skip, ...]:
        """Skips and notes that name ``rule``."""
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}; valid rules: {sorted(RULES)}")
        return tuple(s for s in self.skips + self.notes if s.rule == rule)

    def to_dict(self) -> dict[str, Any]:
        return {
            "loaded_at": self.loaded_at,
            "counts": dict(self.counts),
            "caps": dict(self.caps),
            "skips": [s.to_dict() for s in self.skips],
            "notes": [s.to_dict() for s in self.notes],
        }


def _script(ch: str) -> str:
    """The script class of a letter, for splitting names at script changes (``name_tokens``)."""
    code = ord(ch)
    if code < 0x250:
        return "latin"
    if 0x400 <= code <= 0x52F:
        return "cyrillic"
    if 0x30A0 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF:
        return "katakana"
    if 0x3040 <= code <= 0x309F or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF or code in (0x3005, 0x3006):
        return "kanji"  # kanji with their okurigana (hiragana)
    return "other"


def name_tokens(name: str) -> tuple[str, ...]:
    """Case-folded word tokens of an identifier: ``chatMessages`` -> (chat, messages).

    The name is NFKC-normalised first (full-width ``ＡＰＩキー`` reads ``APIキー``, half-width
    katakana as full-width) and case-folded. A run of digits after letters is a token of its own:
    ``messages2`` -> (messages, 2), ``chat_messages_v2`` -> (chat, messages, v, 2). A change of
    script is a boundary too, since Japanese names have no separators: ``チャンネルID`` ->
    (チャンネル, id), ``メッセージ履歴`` -> (メッセージ, 履歴), ``сообщенияV2`` -> (сообщения, v, 2).
    """
    text = unicodedata.normalize("NFKC", name)
    spaced = re.sub(r"([A-ZА-ЯЁ]+)([A-ZА-ЯЁ][a-zа-яё])", r"\1_\2", text)
    spaced = re.sub(r"([a-zа-яё0-9])([A-ZА-ЯЁ])", r"\1_\2", spaced)
    spaced = re.sub(r"([^\W\d_])(\d)", r"\1_\2", spaced)
    out: list[str] = []
    prev = ""
    for ch in spaced:
        if ch.isalpha():
            script = _script(ch)
            if prev and prev != script and not (ch == "ー" and prev == "kanji"):
                out.append("_")
            prev = script
        elif not ch.isdigit():
            prev = ""
        out.append(ch)
    return tuple(t for t in re.split(r"[\W_]+", "".join(out).casefold()) if t)



_DOTENV_LINE = re.compile(r"(?:export[ \t]+)?(?P<k>[A-Za-z_][A-Za-z0-9_.]*)=(?P<v>.*)")
_VALUE = r"""(?P<v>"[^"\n]*"|'[^'\n]*'|[^\s"'`#;,(){}\[\]<>=][^\s"'`#;,(){}\[\]<>]*)"""
_VALUE_RE = re.compile(_VALUE)
_ASSIGNMENTS: tuple[re.Pattern[str], ...] = (
    # NAME=value, NAME: value, NAME = "value" as a whole line (dotenv, YAML, INI, TOML, shell)
    re.compile(r"(?m)^[ \t]*(?:export[ \t]+|-[ \t]+)?([\"']?)(?P<k>[^\W\d][\w.-]{0,80})\1[ \t]*(?:=|:(?!//))[ \t]*"
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


@dataclass(frozen=True)
class Policy:
    """The never-index rules of H2 as data, and the caps that keep one item from swamping a build.

    Files:
        excluded_dirs: folder names never entered, at any depth (H2's literal list).
        excluded_files: ``fnmatch`` patterns on a file's name (case-insensitive; H2's literal list).
        credential_dirs: folder names that are credential stores (``.ssh``, ``.aws``, ...), never
            entered, at any depth (``credential_file``).
        credential_files: ``fnmatch`` patterns on a file's name that are credential files
            (``id_rsa``, ``*.pem``, ``.netrc``, ...; ``credential_file``).
        credential_paths: ``fnmatch`` patterns on a space-relative path (``*.config/gcloud/*``).
        secret_patterns: ``(label, needles, (regex, ...))``: a text that holds one of the needles
            (lower-case substrings, a cheap first test) and matches every regex of one entry (a
            regex starting with ``!`` must not match) is key material, whatever its name
            (``secret_content``).
        text_encodings: the encodings a non-UTF-8 text file may be in (charset-normalizer picks
            among them); bytes that are text in none of them are binary.

    Tables (matched on name parts, see ``name_tokens``):
        journal_words: a table is journal-like when any name token is one of these ...
        journal_heads: ... or when the head of its name is one of these (or ends with one of
            ``journal_suffixes``). The head is the last token once trailing ``table_modifiers``
            (archive, backup, old, v2, 2024, ...) are dropped; a name with a preposition
            (``messages_by_day``) is judged on the part before it as well.
        ru_journal_forms, ru_journal_nominatives, ru_modifiers, ru_adjective_endings: Russian
            names put the head first: after leading adjectives and modifiers (``личные``,
            ``архив``) the first word in any form of ``ru_journal_forms`` makes a journal
            (``сообщения_клиентов``, ``архив_сообщений``), as does a last word in a form that
            cannot be a genitive (``ru_journal_nominatives``); ``шаблоны_сообщений`` stays, as
            ``message_templates`` does.
        ja_journal_suffixes, ja_suffix_exceptions, ja_modifiers: Japanese names have no
            separators and put the head last: a head that ends with a message-like word
            (``チャット履歴``, ``監査ログ``, ``アーカイブメッセージ``) once trailing modifiers are cut
            (``メッセージアーカイブ``) makes a journal; ``メッセージテンプレート``, ``カタログ``,
            ``ブログ``, ``ログイン設定`` stay. Names are NFKC-normalised and case-folded first.
        message_columns: (channel-like, sender-like, text-like) column names (en/ru/ja); a table
            with one of each holds a channel's message history.
        shadow_suffixes: name endings of the shadow tables of a virtual table (FTS3/4/5, R*Tree).
        fts_words: a table with one of these name tokens is a full-text index.

    Columns:
        secret_words: a column is secret-like when any name token is one of these ...
        weak_secret_words: ... or one of these (``token``, ``pass``, ``pin``), unless another token
            says the column counts something (``count_words``: ``tokens_used``, ``pass_rate``) ...
        secret_names: ... or its whole name is one of these (``auth``) ...
        secret_pairs: ... or two adjacent tokens are one of these pairs ...
        key_words, key_owners: ... or a key word (``key``, ``ключ``, ``キー``) follows a word that
            names what it unlocks (``stripe_key``, ``aws_key``, ``signing_key``; in Russian also
            before it: ``ключ_доступа``), never ``primary_key``, ``sort_key``, ``key_name`` ...
        url_owners, url_words: ... or a URL word (``url``, ``uri``, ``dsn``) follows a database,
            broker or webhook word (``db_url``, ``database_url``, ``webhook_url``, ``redis_uri``) ...
        secret_substrings: ... or its tokens run together contain one of these.

    Secrets in the text that is indexed (privacy first: any doubt resolves to not showing it):
        a file or log day whose content *is* key material (``secret_patterns``, and a dotenv
        file, whatever its name, that sets a secret: ``prod.env``, ``env.production``) is
        skipped whole (``secret_content``), as is a file that is mostly secrets by name
        (``wp-config.php``: ``credential_file``). Everything else that is indexed -- file text,
        log days, chats, digests, pages, sources, table cells, titles, source URLs -- goes through
        ``redact_secrets`` at index time, as the task store does: a secret on one line of an
        otherwise useful file (``DATABASE_URL=postgres://user:pass@…``, ``POSTGRES_PASSWORD:``
        in docker-compose.yml, ``password:`` in database.yml, ``define('DB_PASSWORD', …)``, a JWT,
        a Slack webhook URL, ``пароль: …``) is replaced by ``[redacted]`` and the item is noted
        ``redacted`` (counts per rule, never the value). A table cell that is key material is
        left out of its row (``secret_content`` on ``TABLE.COLUMN#ROW``); one that holds a secret
        is redacted (``redacted``). Cell contents are sniffed like file contents.

    Caps (``CAPS``; each refusal is a ``too_large`` skip, ``too_deep`` for a folder; ``searchkit
    index --cap NAME=VALUE`` sets them):
        max_tables: only the most recently modified tables (by newest ``updated_at``); 30.
        max_rows: only the newest rows of each table (by ``updated_at``); 200.
        max_file_bytes: a space file, or one JSON item file (a chat with all its messages, a
            digest, a page; space.json, files.json, users.json); 5 MB.
        max_log_bytes: ``log.md`` (read whole), and the lines kept of ``sources.jsonl`` (read
            line by line: the lines past this many bytes are skipped); 20 MB.
        max_item_chars: the text of one record that is not a file: a chat, a digest, a page, a
            source entry (its JSON line), a log day; 500,000 characters (about 350 passages).
        max_message_chars: one message of a chat; a longer one is left out of the chat, the rest
            of the chat is indexed; 100,000 characters.
        max_cell_chars: one table cell; a longer value is left out of its row's card; 20,000.
        max_depth: folders of a space nested deeper than this are skipped alone; 64 levels.
    """

    excluded_dirs: frozenset[str] = frozenset({"uploads", ".git", "node_modules"})
    excluded_files: tuple[str, ...] = (".env*", "credentials*.json", "token.json")
    credential_dirs: frozenset[str] = frozenset({
        ".ssh", ".gnupg", ".aws", ".kube", ".docker", ".azure", ".password-store", ".vault",
    })
    credential_files: tuple[str, ...] = (
        # private keys and key stores
        "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", "identity",
        "*.pem", "*.key", "*.p12", "*.pfx", "*.p8", "*.jks", "*.keystore", "*.ppk", "*.kdbx", "*.keytab",
        # credential files of common tools
        ".npmrc", ".pypirc", ".netrc", "_netrc", ".pgpass", ".git-credentials", ".htpasswd", ".dockercfg",
        ".vault-token", ".boto", ".s3cfg", ".my.cnf", ".yarnrc.yml", "kubeconfig", "*.kubeconfig",
        "credentials", "credentials.*", "*-credentials.*", "*_credentials.*", "*.credentials", "*credentials*.json",
        "auth.json", "secrets", "secrets.*", "secret.*", "*.secret", "*.secrets", "*-secrets.*", "*_secrets.*",
        "client_secret*.json", "service-account*.json", "service_account*.json", "*serviceaccount*.json",
        "*.tfstate", "*.tfstate.backup", "*.tfvars",
        # a file that is mostly secrets (a dotenv file by another name is found by its content)
        "wp-config.php", "wp-config-*.php",
    )
    credential_paths: tuple[str, ...] = (
        "*.config/gcloud/*", "*.config/gh/hosts.yml", "*.cargo/credentials*", "*.m2/settings-security.xml",
    )
    secret_patterns: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
        ("a private key block", ("private key",), (r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",)),
        ("an SSH2 private key", ("ssh2",), (r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",)),
        ("a PuTTY private key", ("putty-user-key-file",), (r"(?m)^PuTTY-User-Key-File-\d+:", r"(?m)^Private-Lines:")),
        ("a service-account key", ("service_account",),
         (r'"type"\s*:\s*"service_account"', r'"private_key(?:_id)?"\s*:')),
        ("a private JSON web key", ('"kty"',), (r'"kty"\s*:\s*"', r'"d"\s*:\s*"[A-Za-z0-9_-]{16,}')),
        ("an AWS secret access key", ("aws_secret_access_key",),
         (r"(?im)^[ \t]*aws_secret_access_key[ \t]*[=:][ \t]*\S{16,}",)),
        ("a .netrc credential", ("machine",), (r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+\S+",)),
        ("an .npmrc auth token", ("_auth", "_password"),
         (r"(?m)^[ \t]*(?://\S+:)?_(?:authToken|auth|password)[ \t]*=[ \t]*\S+",)),
        ("a credential URL (.git-credentials)", ("://",),
         (r"(?m)^[ \t]*[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@\S+[ \t]*$",)),
        ("an .htpasswd hash", ("$apr1$", "$2a$", "$2b$", "$2y$", "{sha}", "$1$", "$5$", "$6$"),
         (r"(?m)^[^\s:#]+:(?:\$apr1\$|\$2[aby]\$\d\d\$|\{SHA\}|\$[156]\$)\S+[ \t]*$",)),
        # a .pgpass file: host:port:database:user:password lines (and comments) only
        ("a .pgpass file", (":",), (
            r"(?m)^[^:\s#]+:(?:\d+|\*):[^:\s]+:[^:\s]+:\S+",
            r"!(?m)^(?![ \t]*(?:#|\r?$)|[^:\s#]+:(?:\d+|\*):[^:\s]+:[^:\s]+:\S+[ \t]*\r?$).")),
        ("a Docker registry auth", ('"auths"',), (r'"auths"\s*:\s*\{', r'"auth"\s*:\s*"[A-Za-z0-9+/=]{8,}"')),
        ("a kubeconfig client key", ("client-key-data",), (r"(?m)^[ \t]*client-key-data:[ \t]*\S{20,}",)),
        ("a provider token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xoxa-", "xoxb-", "xoxp-",
                              "xoxo-", "xoxs-", "xoxr-", "glpat-", "sk_live_", "rk_live_", "aiza", "akia", "asia",
                              "t3blbkfj", "npm_", "pypi-"), (
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,}|xox[abposr]-[A-Za-z0-9-]{10,}"
            r"|glpat-[A-Za-z0-9_-]{20,}|sk_live_[A-Za-z0-9]{20,}|rk_live_[A-Za-z0-9]{20,}|AIza[A-Za-z0-9_-]{35}"
            r"|(?:AKIA|ASIA)[A-Z0-9]{16}|sk-(?:proj-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"
            r"|npm_[A-Za-z0-9]{36}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})",)),
    )
    text_encodings: tuple[str, ...] = (
        "utf_8", "utf_16_le", "utf_16_be", "utf_32_le", "utf_32_be",
        "cp1251", "koi8_r", "cp866", "iso8859_5",
        "cp932", "shift_jis", "euc_jp", "iso2022_jp",
        "cp1252",
    )
    journal_words: frozenset[str] = frozenset({
        "audit", "audits", "auditlog", "journal", "journals", "changelog", "changelogs",
        "eventlog", "chatlog", "chatlogs", "msglog", "activitylog", "eventstore", "chathistory",
        "msghistory", "messagelog", "messagehistory", "dms", "directmessages",
        # Russian (any case form) and Japanese
        "аудит", "аудита", "аудиту", "аудиты", "аудитов", "журнал", "журналы", "журнала", "журналов",
        "журнале", "журналу", "監査", "日誌", "ジャーナル",
    })
    journal_heads: frozenset[str] = frozenset({
        "message", "messages", "msg", "msgs", "event", "events", "history", "histories",
        "log", "logs", "transcript", "transcripts", "trail", "trails",
        # what holds a channel's message history
        "chat", "chats", "conversation", "conversations", "convo", "convos", "dialog", "dialogs",
        "dialogue", "dialogues", "dm", "dms", "directmessage", "directmessages", "inbox", "inboxes",
        "outbox", "mailbox", "mailboxes", "mail", "mails", "email", "emails", "sms", "thread", "threads",
        "comment", "comments", "reply", "replies", "notification", "notifications", "correspondence",
        "communications", "comms", "slack", "telegram", "whatsapp", "discord", "mattermost", "irc",
        "chatter",
    })
    journal_suffixes: tuple[str, ...] = (
        "messages", "message", "history", "histories", "transcript", "transcripts", "conversation",
        "conversations", "comments", "notifications", "correspondence",
    )
    table_modifiers: frozenset[str] = frozenset({
        "archive", "archived", "archives", "arch", "backup", "backups", "bak", "bkp", "old", "older",
        "new", "copy", "copies", "tmp", "temp", "legacy", "prev", "previous", "orig", "original",
        "export", "exported", "exports", "dump", "dumps", "raw", "staging", "stage", "import",
        "imported", "imports", "snapshot", "snapshots", "v", "ver", "version", "all", "full", "live",
        "prod", "dev", "test", "tests", "mirror", "sync", "synced", "cache", "cached", "fts", "index",
        "idx", "view", "deleted", "final", "latest", "current", "tbl", "table", "tab", "store", "q", "h",
        "part", "shard", "partition", "daily", "monthly", "yearly", "list", "lists",
    })
    table_prepositions: frozenset[str] = frozenset({
        "by", "per", "for", "from", "of", "in", "to", "with", "on", "at", "since", "until",
        "по", "за", "для", "от", "с", "со", "из", "в", "во", "на", "до", "к", "о", "об", "при", "без",
    })
    ru_journal_forms: frozenset[str] = frozenset({
        "сообщение", "сообщения", "сообщений", "сообщениям", "сообщениями", "сообщении", "смс",
        "история", "истории", "историй", "историю", "событие", "события", "событий", "событиям",
        "чат", "чаты", "чата", "чатов", "чате", "чатам", "диалог", "диалоги", "диалога", "диалогов",
        "беседа", "беседы", "бесед", "переписка", "переписки", "переписку", "перепиской", "личка", "лички",
        "уведомление", "уведомления", "уведомлений", "комментарий", "комментарии", "комментария",
        "комментариев", "письмо", "письма", "писем", "лог", "логи", "лога", "логов", "тред", "треды",
        "тредов", "входящие", "исходящие", "стенограмма", "стенограммы",
    })
    ru_journal_nominatives: frozenset[str] = frozenset({
        "сообщение", "смс", "история", "событие", "чат", "чаты", "диалог", "диалоги", "беседа", "переписка",
        "личка", "уведомление", "комментарии", "письмо", "лог", "логи", "тред", "треды", "входящие",
        "исходящие", "стенограмма",
    })
    ru_modifiers: frozenset[str] = frozenset({
        "архив", "архивы", "архива", "архивные", "архивный", "архивная", "бэкап", "бекап", "бэкапы", "резерв",
        "резервная", "резервные", "копия", "копии", "старые", "старый", "старая", "новые", "новый", "новая",
        "временные", "временный", "врем", "тест", "тестовые", "тестовый", "выгрузка", "выгрузки", "экспорт",
        "импорт", "дамп", "все", "всё", "удаленные", "удалённые", "полный", "полная", "полные", "таблица",
        "табл", "список", "текущие", "последние", "личные", "личная", "личный", "прямые", "групповые",
        "групповой", "клиентские", "общие",
    })
    ru_adjective_endings: tuple[str, ...] = (
        "ые", "ый", "ая", "ое", "ской", "ский", "ская", "ское", "ские", "ных", "ной",
    )
    ja_journal_suffixes: tuple[str, ...] = (
        "メッセージ", "履歴", "ログ", "チャット", "会話", "対話", "通知", "コメント", "イベント", "トーク",
        "スレッド", "受信箱", "送信箱", "受信トレイ", "送信トレイ", "返信", "発言", "やり取り", "やりとり",
        "メール", "ダイアログ", "文字起こし",
    )
    ja_suffix_exceptions: tuple[str, ...] = ("カタログ", "ブログ", "アナログ", "バックログ", "ウェブログ")
    ja_modifiers: tuple[str, ...] = (
        "アーカイブ", "バックアップ", "コピー", "旧", "新", "一時", "過去", "全件", "全", "一覧", "リスト",
        "データ", "テーブル", "表", "保存", "控え", "エクスポート", "ダンプ", "テスト", "最新", "削除済み",
        "削除済", "退避", "古い",
    )
    message_columns: tuple[frozenset[str], frozenset[str], frozenset[str]] = (
        frozenset({
            "channel", "channel_id", "chat_id", "thread_id", "conversation_id", "room", "room_id",
            "канал", "канал_id", "id_канала", "чат", "чат_id", "id_чата", "комната", "комната_id", "тред",
            "беседа", "диалог", "диалог_id", "id_диалога",
            "チャンネル", "チャネル", "チャンネル_id", "チャネル_id", "ルーム", "ルーム_id", "スレッド", "スレッド_id",
            "会話_id", "トークルーム", "チャット_id", "チャット",
        }),
        frozenset({
            "sender", "sender_id", "author", "author_id", "from", "from_id", "user", "user_id",
            "автор", "автор_id", "id_автора", "отправитель", "отправитель_id", "id_отправителя", "пользователь",
            "пользователь_id", "id_пользователя", "от", "от_кого", "кто",
            "送信者", "送信者_id", "差出人", "投稿者", "発言者", "送信元", "ユーザー", "ユーザー_id", "ユーザ",
            "ユーザ_id", "作成者", "著者", "発信者",
        }),
        frozenset({
            "message", "text", "body", "content",
            "текст", "сообщение", "тело", "содержание", "содержимое", "текст_сообщения",
            "本文", "内容", "メッセージ", "テキスト", "発言", "文面", "メッセージ_本文", "発言内容",
        }),
    )
    shadow_suffixes: tuple[str, ...] = (
        "content", "data", "idx", "docsize", "config", "segments", "segdir", "stat", "node", "rowid", "parent",
    )
    fts_words: frozenset[str] = frozenset({"fts", "fts3", "fts4", "fts5"})
    secret_words: frozenset[str] = frozenset({
        "password", "passwords", "passwd", "pwd", "pswd", "pw", "passphrase", "passcode", "passcodes",
        "secret", "secrets", "apikey", "apikeys", "credential", "credentials", "privatekey", "privkey",
        "accesskey", "secretkey", "otp", "totp", "hotp", "jwt", "jwts", "bearer", "authorization",
        "authorisation", "cookie", "cookies", "salt", "pincode", "csrf", "xsrf", "cvv", "cvc",
        "mnemonic", "sessionid", "sessid", "apitoken", "authtoken", "accesstoken", "refreshtoken",
        "idtoken", "sessiontoken", "htpasswd", "netrc", "pgpass", "dsn", "connstr", "connectionstring",
        # Russian and Japanese
        "пароль", "пароли", "пароля", "паролей", "паролем", "паролю", "секрет", "секреты", "секрета",
        "секретов", "секретный", "секретная", "секретное", "секретные", "пинкод", "куки", "соль",
        "パスワード", "暗証番号", "シークレット", "秘密鍵", "合言葉", "クッキー", "ソルト", "認証情報",
    })
    weak_secret_words: frozenset[str] = frozenset({
        "token", "tokens", "pass", "pin", "токен", "токены", "токена", "токенов", "пин", "トークン",
    })
    count_words: frozenset[str] = frozenset({
        "used", "use", "usage", "count", "counts", "cnt", "num", "number", "n", "max", "min", "total",
        "input", "output", "prompt", "completion", "completions", "cached", "reasoning", "limit",
        "limits", "budget", "per", "rate", "ratio", "cost", "costs", "spent", "remaining", "left",
        "estimate", "estimated", "avg", "mean", "sum", "in", "out", "length", "len", "size", "score",
        "percent", "pct", "fail", "failed", "threshold", "quota", "consumed",
        "количество", "кол", "во", "число", "использовано", "лимит", "всего", "макс", "мин", "расход",
        "остаток", "数", "件数", "使用量", "上限", "合計", "最大", "残り", "消費", "入力", "出力",
    })
    secret_context: frozenset[str] = frozenset({
        "access", "refresh", "auth", "api", "bearer", "session", "csrf", "xsrf", "oauth", "reset",
        "verification", "invite", "device", "push", "secret", "private",
        "доступа", "обновления", "апи", "アクセス", "リフレッシュ", "認証",
    })
    secret_names: frozenset[str] = frozenset({"auth", "authz", "creds"})
    secret_pairs: frozenset[tuple[str, str]] = frozenset({
        ("api", "key"), ("private", "key"), ("access", "key"), ("auth", "key"), ("session", "key"),
        ("ssh", "key"), ("signing", "key"), ("encryption", "key"), ("master", "key"), ("client", "key"),
        ("license", "key"), ("hmac", "key"), ("secret", "key"), ("recovery", "code"), ("recovery", "codes"),
        ("backup", "code"), ("backup", "codes"), ("seed", "phrase"), ("session", "id"), ("security", "code"),
        ("security", "answer"), ("auth", "header"), ("auth", "code"), ("auth", "string"), ("x", "auth"),
        ("connection", "string"), ("conn", "string"), ("conn", "str"), ("db", "string"), ("database", "string"),
        ("пин", "код"), ("код", "восстановления"), ("код", "подтверждения"), ("код", "доступа"),
        ("секретное", "слово"), ("セキュリティ", "コード"),
    })
    key_words: frozenset[str] = frozenset({"key", "keys", "ключ", "ключи", "ключа", "ключей", "キー", "鍵"})
    key_owners: frozenset[str] = frozenset({
        # a *_key column is a secret only when the word before (or, in Russian, after) names what it unlocks
        "api", "private", "access", "auth", "session", "ssh", "signing", "sign", "encryption", "decryption",
        "master", "client", "license", "licence", "hmac", "secret", "stripe", "aws", "gcp", "google", "azure",
        "openai", "anthropic", "github", "gitlab", "slack", "twilio", "sendgrid", "mailgun", "mailchimp",
        "paypal", "shopify", "firebase", "supabase", "telegram", "discord", "heroku", "cloudflare", "datadog",
        "sentry", "algolia", "mapbox", "pusher", "gpg", "pgp", "rsa", "ed25519", "jwt", "app", "service",
        "webhook", "bot", "deploy", "deployment", "oauth", "consumer", "recovery", "root", "admin", "s3",
        "kms", "vault", "crypt", "crypto", "cipher", "aes", "product", "activation", "serial", "nonce",
        "апи", "секретный", "приватный", "закрытый", "доступа", "шифрования", "подписи", "сессии",
        "авторизации", "аутентификации", "лицензии", "лицензионный", "アクセス", "暗号化", "署名", "秘密",
        "認証", "ライセンス",
    })
    url_owners: frozenset[str] = frozenset({
        # a *_url / *_uri / *_dsn column that holds a connection string (credentials inside)
        "db", "database", "postgres", "postgresql", "pg", "psql", "mysql", "mariadb", "mongo", "mongodb",
        "redis", "amqp", "rabbitmq", "jdbc", "sql", "sqlalchemy", "broker", "celery", "connection", "conn",
        "webhook", "smtp", "ldap", "sentry", "elasticsearch", "kafka", "nats", "memcached", "clickhouse",
        "бд", "базы", "подключения", "вебхук", "вебхука", "ウェブフック", "データベース", "接続",
    })
    url_words: frozenset[str] = frozenset({"url", "uri", "dsn", "урл", "адрес", "строка", "文字列"})
    secret_substrings: tuple[str, ...] = (
        "password", "passwd", "apikey", "privatekey", "accesskey", "secretkey", "passhash", "pwhash",
        "pwdhash", "pinhash", "authtoken", "accesstoken", "refreshtoken", "bearertoken", "connectionstring",
        "databaseurl", "webhookurl",
        "парол", "apiключ", "апиключ", "ключapi", "ключапи", "パスワード", "暗証番号", "シークレット", "秘密鍵",
        "秘密キー", "apiキー", "アクセスキー", "アクセストークン", "認証トークン", "リフレッシュトークン",
        "セキュリティコード", "接続文字列",
    )
    max_tables: int = 30
    max_rows: int = 200
    max_file_bytes: int = 5_000_000
    max_log_bytes: int = 20_000_000
    max_item_chars: int = 500_000
    max_message_chars: int = 100_000
    max_cell_chars: int = 20_000
    max_depth: int = 64

    def __post_init__(self) -> None:
        for name in CAPS:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Policy.{name} must be a positive integer, got {value!r}")
        compiled = tuple(
            (label, tuple(n.lower() for n in needles),
             tuple((not p.startswith("!"), re.compile(p.removeprefix("!"))) for p in patterns))
            for label, needles, patterns in self.secret_patterns
        )
        object.__setattr__(self, "_secret_res", compiled)

    def caps(self) -> dict[str, int]:
        """The caps in force, by name (``CAPS``)."""
        return {name: getattr(self, name) for name in CAPS}

    def with_caps(self, caps: Mapping[str, Any]) -> "Policy":
        """This policy with some caps changed; ``ValueError`` naming an unknown cap or a value
        that is not a positive integer."""
        unknown = sorted(set(caps) - set(CAPS))
        if unknown:
            raise ValueError(f"unknown cap {unknown[0]!r}; the caps are {', '.join(CAPS)}")
        return replace(self, **dict(caps))

    # -- files ---------------------------------------------------------------------------
    def excluded_dir(self, name: str) -> bool:
        """True when a folder of this name is never entered (H2, or a credential store)."""
        return self.dir_skip(name) is not None

    def dir_skip(self, name: str) -> tuple[str, str] | None:
        """``(rule, detail)`` when a folder of this name is never entered, else None."""
        lower = name.lower()
        if lower in self.excluded_dirs:
            return "excluded_dir", f"{name}/"
        if lower in self.credential_dirs:
            return "credential_file", f"{name}/ is a credential store"
        return None

    def excluded_file(self, name: str) -> str | None:
        """The pattern a file name matches among ``excluded_files``, or None."""
        lower = name.lower()
        for pattern in self.excluded_files:
            if fnmatch.fnmatchcase(lower, pattern.lower()):
                return pattern
        return None

    def credential_file(self, rel_path: str) -> str | None:
        """The pattern a space-relative path matches among the credential rules, or None."""
        lower = rel_path.replace("\\", "/").lower()
        name = lower.rsplit("/", 1)[-1]
        for pattern in self.credential_files:
            if fnmatch.fnmatchcase(name, pattern.lower()):
                return pattern
        for pattern in self.credential_paths:
            if fnmatch.fnmatchcase(lower, pattern.lower()):
                return pattern
        return None

    def path_skip(self, rel_path: str) -> tuple[str, str] | None:
        """``(rule, detail)`` when a space-relative path is never indexed by name, else None."""
        parts = [p for p in rel_path.replace("\\", "/").split("/") if p]
        for part in parts[:-1]:
            ruled = self.dir_skip(part)
            if ruled:
                return ruled[0], f"inside {ruled[1]}"
        if parts and self.dir_skip(parts[-1]):
            return self.dir_skip(parts[-1])
        if parts:
            pattern = self.excluded_file(parts[-1])
            if pattern:
                return "excluded_file", f"matches {pattern}"
            pattern = self.credential_file("/".join(parts))
            if pattern:
                return "credential_file", f"matches {pattern}"
        return None

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
        from searchkit.ingest.redact import plain_value

        spans: list[tuple[int, int, str]] = []
        for regex in _ASSIGNMENTS:
            for m in regex.finditer(text):
                value = m.group("v")
                name = m.group("k")
                if not _real_value(value) or plain_value(value) or _about_a_secret(name) or not self.secret_column(name):
                    continue
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
        from searchkit.ingest import redact as _redact  # the shared redactor (SPEC T2)

        counts: dict[str, int] = {}
        for rule in _redact.RULES:
            if "mail" in rule.name:
                continue
            text, n = rule.apply(text)
            if n:
                counts[rule.name] = counts.get(rule.name, 0) + n
        spans = [s for s in self.secret_assignments(text) if text[s[0]:s[1]] != _redact.SECRET]
        if spans:
            parts: list[str] = []
            pos = 0
            for start, end, _ in spans:
                parts += [text[pos:start], _redact.SECRET]
                pos = end
            parts.append(text[pos:])
            text = "".join(parts)
            counts["assignment"] = len(spans)
        return text, counts

    # -- tables --------------------------------------------------------------------------
    def _heads(self, tokens: Sequence[str]) -> list[str]:
        """The head of a name, and of each part before a preposition, modifiers dropped."""
        parts: list[list[str]] = [[]]
        for t in tokens:
            if t in self.table_prepositions:
                parts.append([])
            else:
                parts[-1].append(t)
        heads = []
        for part in parts:
            core = list(part)
            while core and (core[-1] in self.table_modifiers or core[-1].isdigit()):
                core.pop()
            if core:
                heads.append(core[-1])
        return heads

    def journal_table(self, name: str) -> bool:
        """True when a table's name says it is a journal or a message history (H2), by its parts.

        ``messages``, ``messages_archive``, ``chat_messages_v2``, ``history_old``, ``messages2``,
        ``msg_archive``, ``slack_export``, ``dm``, ``chats``, ``inbox``, ``threads`` are;
        ``message_templates``, ``event_plans``, ``backlog``, ``logistics`` are not. Russian and
        Japanese names too (``_journal_ru``, ``_journal_ja``): ``сообщения``, ``архив_сообщений``,
        ``история_заказов``, ``журнал``, ``メッセージ``, ``チャット履歴``, ``監査ログ`` are;
        ``шаблоны_сообщений``, ``メッセージテンプレート``, ``カタログ``, ``ログイン設定`` are not.
        """
        tokens = name_tokens(name)
        if any(t in self.journal_words for t in tokens):
            return True
        if any(w in t for t in tokens for w in self.journal_words if not w.isascii()):
            return True  # a Japanese journal word inside a token (監査ログ, 業務日誌)
        for head in self._heads(tokens):
            if head in self.journal_heads:
                return True
            if any(head.endswith(s) and len(head) > len(s) for s in self.journal_suffixes):
                return True
        return self._journal_ru(tokens) or self._journal_ja(tokens)

    def _journal_ru(self, tokens: Sequence[str]) -> bool:
        """Russian names put the head noun first (adjectives before it, a genitive after it):
        ``сообщения_клиентов``, ``личные_сообщения``, ``архив_сообщений`` (an archive is a modifier,
        so its complement decides) and ``история_заказов`` are journals; ``шаблоны_сообщений`` (message
        templates) is not, as ``message_templates`` is not. A message-like word at the end counts
        only in a form that cannot be a genitive (``клиент_чаты``, not ``шаблон_сообщения``)."""
        if not any(_script(t[0]) == "cyrillic" for t in tokens):
            return False
        parts: list[list[str]] = [[]]
        for t in tokens:
            if t in self.table_prepositions:
                parts.append([])
            else:
                parts[-1].append(t)
        for part in parts:
            core = [t for t in part if not t.isdigit()]
            while len(core) > 1 and (core[0] in self.ru_modifiers or core[0] in self.table_modifiers
                                     or core[0].endswith(self.ru_adjective_endings)):
                core.pop(0)
            while core and (core[-1] in self.ru_modifiers or core[-1] in self.table_modifiers):
                core.pop()
            if not core:
                continue
            if core[0] in self.ru_journal_forms or core[-1] in self.ru_journal_nominatives:
                return True
        return False

    def _ja_core(self, token: str) -> str:
        """A Japanese token with trailing modifiers (アーカイブ, バックアップ, 一覧, ...) cut off."""
        changed = True
        while changed:
            changed = False
            for m in self.ja_modifiers:
                if token.endswith(m) and len(token) > len(m):
                    token = token[: -len(m)]
                    changed = True
        return token

    def _journal_ja(self, tokens: Sequence[str]) -> bool:
        """Japanese compounds put the head last: a head token (trailing modifiers dropped) that is
        or ends with a message-like word (メッセージ, 履歴, ログ, チャット, 会話, 通知, ...) is a journal:
        ``チャット履歴``, ``アーカイブメッセージ``, ``メッセージアーカイブ``, ``送信履歴``; ``メッセージテンプレート``,
        ``イベント計画``, ``ログイン設定``, ``カタログ``, ``ブログ``, ``履歴書`` are not."""
        core = [t for t in tokens if not t.isdigit()]
        while core and (core[-1] in self.table_modifiers or core[-1] in self.ja_modifiers):
            core.pop()
        if not core or _script(core[-1][0]) not in ("katakana", "kanji"):
            return False
        head = self._ja_core(core[-1])
        stripped = True
        while stripped:  # leading modifiers too: アーカイブログ is an archived log, not a blog
            stripped = False
            for m in self.ja_modifiers:
                if head.startswith(m) and len(head) > len(m):
                    head, stripped = head[len(m):], True
        if head.endswith(self.ja_suffix_exceptions):
            return False
        return head.endswith(self.ja_journal_suffixes)

    def shadow_table(self, name: str, virtual: Iterable[str] = ()) -> str | None:
        """Why a table is a full-text index or a virtual table's shadow table, or None.

        Args:
            name: the table.
            virtual: names of the virtual tables of the same database.
        """
        lower = name.lower()
        for v in sorted(virtual):
            for suffix in self.shadow_suffixes:
                if lower == f"{v.lower()}_{suffix}":
                    return f"shadow table ({suffix}) of virtual table {v!r}"
        tokens = name_tokens(name)
        if any(t in self.fts_words for t in tokens) or any(
                t == "fts" or (t.startswith("fts") and t[3:].isdigit()) for t in tokens):
            return f"table name {name!r} names a full-text index"
        return None

    def message_history_columns(self, columns: Iterable[str]) -> bool:
        """True when the columns hold a channel's message history (channel + sender + text)."""
        names = {"_".join(name_tokens(c)) for c in columns}
        return all(names & group for group in self.message_columns)

    def table_skip(self, name: str, columns: Sequence[str], virtual: Iterable[str] = ()) -> tuple[str, str] | None:
        """``(rule, detail)`` when a whole table is never indexed, else None.

        ``virtual`` names the virtual tables of the same database (their shadow tables are skipped).
        """
        shadow = self.shadow_table(name, virtual)
        if shadow:
            return "shadow_table", shadow
        if self.journal_table(name):
            return "journal_table", f"table name {name!r} is journal-like"
        if self.message_history_columns(columns):
            return "message_history_table", f"columns {list(columns)} hold a message history"
        return None

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

    def select_tables(self, modified: Mapping[str, str | None]) -> tuple[list[str], list[str]]:
        """Split tables into (kept, dropped): the ``max_tables`` with the newest ``updated_at``.

        ``modified`` maps a table to its newest ``updated_at`` (None when unknown; such tables
        rank last). Ties break by name, so the choice is deterministic.
        """
        known = sorted(t for t, m in modified.items() if m is not None)
        known.sort(key=lambda t: str(modified[t]), reverse=True)  # stable: ties stay by name
        unknown = sorted(t for t, m in modified.items() if m is None)
        ordered = known + unknown
        return ordered[: self.max_tables], ordered[self.max_tables:]


DEFAULT_POLICY = Policy()


BINARY_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "PNG"), (b"GIF87a", 0, "GIF"), (b"GIF89a", 0, "GIF"), (b"\xff\xd8\xff", 0, "JPEG"),
    (b"%PDF-", 0, "PDF"), (b"PK\x03\x04", 0, "ZIP"), (b"PK\x05\x06", 0, "ZIP"), (b"PK\x07\x08", 0, "ZIP"),
    (b"\x1f\x8b", 0, "gzip"), (b"\xfd7zXZ\x00", 0, "xz"), (b"7z\xbc\xaf\x27\x1c", 0, "7-Zip"),
    (b"Rar!\x1a\x07", 0, "RAR"), (b"\x7fELF", 0, "ELF"), (b"SQLite format 3\x00", 0, "SQLite"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 0, "OLE (doc/xls)"), (b"ftyp", 4, "MP4/HEIC"), (b"OggS", 0, "Ogg"),
    (b"fLaC", 0, "FLAC"), (b"ID3", 0, "MP3"), (b"\x1a\x45\xdf\xa3", 0, "Matroska"), (b"wOFF", 0, "WOFF"),
    (b"wOF2", 0, "WOFF2"), (b"\xca\xfe\xba\xbe", 0, "Java class / Mach-O"), (b"\xcf\xfa\xed\xfe", 0, "Mach-O"),
    (b"II*\x00", 0, "TIFF"), (b"MM\x00*", 0, "TIFF"), (b"BZh", 0, "bzip2"), (b"\x28\xb5\x2f\xfd", 0, "zstd"),
)
"""Magic numbers of common binary formats: ``(bytes, offset, format)``."""

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\x00\x00\xfe\xff", "utf_32_be"), (b"\xff\xfe\x00\x00", "utf_32_le"), (b"\xef\xbb\xbf", "utf_8"),
    (b"\xfe\xff", "utf_16_be"), (b"\xff\xfe", "utf_16_le"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd]")


@dataclass(frozen=True)
class Decoded:
    """What ``decode_text`` made of some bytes.

    Args:
        text: the decoded text, or None for binary data.
        encoding: the encoding it was decoded from (``utf_8``, ``cp1251``, ``utf_16_le``,
            ``iso2022_jp``, ...).
        reason: why the data is binary (None for text).
        replaced: how many invalid byte sequences were replaced by U+FFFD (0 but for UTF-8 text
            with a few stray bytes).
    """

    text: str | None
    encoding: str | None = None
    reason: str | None = None
    replaced: int = 0
    """Invalid byte sequences replaced by U+FFFD (UTF-8 text with a few stray bytes)."""


def _text_like(text: str, share: int = 100) -> bool:
    """No NUL, and at most one in ``share`` characters a control (C0 other than whitespace, C1, U+FFFD)."""
    if "\x00" in text:
        return False
    return len(_CONTROL.findall(text)) <= len(text) // share


def _halfwidth_kana_heavy(text: str) -> bool:
    """More than 30% of the non-ASCII characters (of the first 100,000) are half-width katakana."""
    wide = [ch for ch in text[:100_000] if ord(ch) > 0x7F]
    kana = sum(1 for ch in wide if 0xFF61 <= ord(ch) <= 0xFF9F)
    return bool(wide) and kana > 0.3 * len(wide)


def _ascii_with_nuls(data: bytes) -> bool:
    """True for ASCII bytes with stray NULs, which UTF-16 would misread as CJK.

    In UTF-16 text the code units without a NUL byte are non-ASCII characters (Cyrillic has a
    0x04 byte, kana 0x30 with a varied second byte, ...); when nearly all of them are two
    printable ASCII bytes, the data is ASCII with NULs in it, i.e. binary.
    """
    printable = range(0x20, 0x7F)
    sample = data[:65_536]
    units = [sample[i:i + 2] for i in range(0, len(sample) - 1, 2)]
    wide = [u for u in units if 0 not in u]
    if not wide:
        return False
    ascii_pairs = sum(1 for u in wide if u[0] in printable and u[1] in printable)
    return ascii_pairs >= 0.8 * len(wide)


_ISO2022_ESCAPES = re.compile(rb"\x1b(?:\$[@AB]|\$\([CDQ]|\([BIJ]|\.[AF]|N)")
_ISO2022_CODECS: tuple[str, ...] = ("iso2022_jp", "iso2022_jp_ext", "iso2022_jp_2", "iso2022_jp_2004", "iso2022_jp_3")


def _iso2022(data: bytes) -> Decoded | None:
    """ISO-2022-JP text: 7-bit bytes that switch to JIS X 0208 / 0212 / 0213 with ``ESC $ B`` and
    back with ``ESC ( B`` (valid ASCII, so UTF-8 would read it as escape-sequence garbage)."""
    if max(data) >= 0x80 or not re.search(rb"\x1b\$(?:[@B]|\([DOPQ])", data):
        return None
    for codec in _ISO2022_CODECS:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        if "\x1b" not in text and _text_like(text):
            return Decoded(text, codec)
    return None


def _damaged_utf8(data: bytes) -> Decoded | None:
    """UTF-8 text with a few stray invalid bytes, decoded with U+FFFD in their place; else None.

    At least 99% of the bytes must lie in valid sequences (or the damage is one spot of at most
    4 bytes: a stray byte that also broke the character it fell into), and the rest must show it
    is UTF-8 (at least one valid multi-byte sequence): a legacy 8-bit text that is mostly ASCII
    (cp1252 ``café``) has none and is left to charset-normalizer. ``replaced`` counts the spots.
    """
    escaped = data.decode("utf-8", "surrogateescape")  # one lone surrogate per invalid byte
    runs = list(_STRAY.finditer(escaped))
    invalid = sum(len(r.group()) for r in runs)
    one_spot = bool(runs) and invalid <= 4 and runs[-1].end() - runs[0].start() <= 8
    if not runs or (invalid * 100 > len(data) and not one_spot):
        return None
    if not any(ord(ch) > 0x7F and not 0xDC80 <= ord(ch) <= 0xDCFF for ch in escaped):
        return None
    text = _STRAY.sub("\ufffd", escaped)
    if not _text_like(text, 20):
        return None
    return Decoded(text, "utf_8", replaced=1 if one_spot else len(runs))


_STRAY = re.compile("[\udc80-\udcff]+")


def decode_text(data: bytes, encodings: Sequence[str] | None = None) -> Decoded:
    """Decode the bytes of a file that may be text in any of ``encodings`` (H1), or say why not.

    In order: a byte-order mark (UTF-8/16/32) decides; a known binary signature (PNG, ZIP, PDF,
    ...) is binary; 7-bit text with ISO-2022-JP escapes (``ESC $ B`` ... ``ESC ( B``) is
    ISO-2022-JP; valid UTF-8 without NUL bytes is UTF-8 text; UTF-8 with a few stray invalid
    bytes (at most 1% of the bytes, and at least one valid multi-byte sequence) is UTF-8 with
    U+FFFD in their place (``Decoded.replaced``); otherwise charset-normalizer
    picks among ``encodings`` (default ``Policy.text_encodings``: UTF-16/32 with or without a
    BOM, cp1251, KOI8-R, Shift_JIS, EUC-JP, cp1252, ...), and its pick must read as text (no
    NUL, at most 1% control characters; 5% for UTF-8). Deterministic.
    """
    if not data:
        return Decoded("", "utf_8")
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(encoding)
            except UnicodeDecodeError:
                break
            if _text_like(text):
                return Decoded(text, encoding)
            break
    for magic, offset, fmt in BINARY_SIGNATURES:
        if data[offset:offset + len(magic)] == magic:
            return Decoded(None, None, f"{fmt} signature")
    nul = data.find(b"\x00")
    if nul < 0 and b"\x1b" in data:
        jis = _iso2022(data)
        if jis is not None:
            return jis
    utf8_error = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        utf8_error = f"byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8"
    else:
        if nul < 0:
            if _text_like(text, 20):
                return Decoded(text, "utf_8")
            return Decoded(None, None, "valid UTF-8, but more than 5% control characters")
    if nul < 0:
        damaged = _damaged_utf8(data)
        if damaged is not None:
            return damaged
    candidates = list(encodings if encodings is not None else DEFAULT_POLICY.text_encodings)
    if nul >= 0:  # only UTF-16/32 text has NUL bytes: on one side of each code unit
        quarter = len(data) // 4
        utf32 = len(data) % 4 == 0 and quarter > 0 and quarter in (data[3::4].count(0), data[0::4].count(0))
        even, odd = data[0::2].count(0), data[1::2].count(0)
        utf16 = len(data) % 2 == 0 and min(even, odd) <= 0.1 * max(even, odd) and not _ascii_with_nuls(data)
        candidates = [e for e in candidates if (utf16 and e.startswith("utf_16")) or (utf32 and e.startswith("utf_32"))]
    elif len(data) % 2:
        candidates = [e for e in candidates if not e.startswith(("utf_16", "utf_32"))]
    if candidates:
        from charset_normalizer import from_bytes  # a declared dependency; imported when needed

        fallback: Decoded | None = None
        for match in list(from_bytes(data, cp_isolation=candidates))[:5]:
            text = str(match).removeprefix("\ufeff")
            if not _text_like(text):
                continue
            # KOI8-R / cp1251 bytes also read as Shift_JIS half-width katakana: real Japanese
            # text rarely is mostly half-width katakana, so such a reading loses to the next one
            if not _halfwidth_kana_heavy(text):
                return Decoded(text, str(match.encoding))
            fallback = fallback or Decoded(text, str(match.encoding))
        if fallback is not None:
            return fallback
    if nul >= 0:
        return Decoded(None, None, f"NUL byte at offset {nul}")
    return Decoded(None, None, f"not text in any supported encoding ({utf8_error})")


def binary_reason(data: bytes) -> str | None:
    """Why these bytes are binary (see ``decode_text``), or None when they are text."""
    return decode_text(data).reason


# -- visibility (H15) and spaces (H14) --------------------------------------------------------

def _check_container(container: str) -> None:
    if container not in CONTAINERS:
        raise ValueError(f"container must be one of {CONTAINERS}, got {container!r}")


def can_see(record: Record, caller: str | None, container: str) -> bool:
    """May ``caller`` see ``record`` in a search run in ``container`` (H15)?

    A personal record (a personal chat, the digests of its turns, its scheduled or automatic
    runs) is seen only by its owner, and never in a ``shared`` container (no person behind it).
    A shared record is seen by every member; membership itself is decided per space by
    ``searchable_spaces``.
    """
    _check_container(container)
    if record.visibility == "shared":
        return True
    if container != "personal" or caller is None or record.owner is None:
        return False
    return record.owner == caller


class SpaceLike(Protocol):
    slug: str
    members: tuple[str, ...]
    history_search: bool


def searchable_spaces(
    spaces: Mapping[str, SpaceLike],
    caller: str | None,
    requested: str | Sequence[str] | None,
    current: str,
    *,
    activity: Mapping[str, str] | None = None,
) -> tuple[list[str], list[tuple[str, str]]]:
    """The spaces a search covers, and those it skips with a reason code (H14).

    Args:
        spaces: every known space by slug.
        caller: the user id of the person searching; None in a shared workspace container,
            where only ``current`` is searched and ``spaces`` is not available.
        requested: the ``spaces`` parameter: None (only ``current``), ``"all"`` (every space
            the caller is a member of now) or a list of slugs.
        current: the slug of the space the search runs in.
        activity: slug -> the newest date the caller can see in that space (ISO); decides which
            spaces ``"all"`` searches when the caller is a member of more than ``MAX_SPACES``.

    Returns:
        ``(searched, skipped)``: slugs in request order (``current`` first, then the most
        recently active, for ``"all"``), and ``(slug, reason)`` with reason ``not_member`` |
        ``history_search_off`` | ``space_limit``. For a caller, a slug that names no space is
        skipped as ``not_member`` too, so the answer never tells a space the caller is not in
        from one that does not exist; ``history_search_off`` is told only of the caller's own
        spaces. ``"all"`` counts only searchable spaces towards ``MAX_SPACES``: the first
        ``MAX_SPACES`` are searched, the rest skipped as ``space_limit``.

    Raises:
        ParameterError: naming ``spaces`` for a malformed value, more than ``MAX_SPACES`` slugs in
            a list, or ``spaces`` given without a caller; naming ``current`` when the shared
            container's own space is unknown.
    """
    if requested is None:
        if caller is None and current not in spaces:
            raise ParameterError("space", f"unknown space {_shown(current)}")
        return _sort_out([current], spaces, caller, member_check=caller is not None)
    if caller is None:
        raise ParameterError(
            "spaces", "not available in a shared workspace container (no caller); "
            "search the current space by leaving spaces unset"
        )
    if isinstance(requested, str):
        if requested != "all":
            raise ParameterError("spaces", f"expected \"all\" or a list of space slugs, got the string {_shown(requested)}")
        mine = [s for s, info in spaces.items() if caller in info.members]
        recent = activity or {}
        mine.sort(key=lambda s: (s != current, _desc(recent.get(s) or ""), s))
        searched, skipped = _sort_out(mine, spaces, caller, member_check=True)
        for slug in searched[MAX_SPACES:]:
            skipped.append((slug, "space_limit"))
        return searched[:MAX_SPACES], skipped
    if not isinstance(requested, (list, tuple)):
        raise ParameterError("spaces", f"expected \"all\" or a list of space slugs, got {type(requested).__name__}")
    slugs: list[str] = []
    for slug in requested:
        if not isinstance(slug, str) or not slug:
            raise ParameterError("spaces", f"every item must be a non-empty space slug, got {_shown(slug)}")
        if slug not in slugs:
            slugs.append(slug)
        if len(slugs) > MAX_SPACES:
            raise ParameterError("spaces", f"more than {MAX_SPACES} spaces requested, at most {MAX_SPACES} a search")
    if not slugs:
        raise ParameterError("spaces", "the list is empty; give at least one space slug or \"all\"")
    return _sort_out(slugs, spaces, caller, member_check=True)


def _desc(text: str) -> tuple[int, ...]:
    """A key that sorts ISO strings newest first."""
    return tuple(-ord(ch) for ch in text) + (1,)


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _sort_out(
    slugs: list[str], spaces: Mapping[str, SpaceLike], caller: str | None, *, member_check: bool
) -> tuple[list[str], list[tuple[str, str]]]:
    searched: list[str] = []
    skipped: list[tuple[str, str]] = []
    for slug in slugs:
        info = spaces.get(slug)
        if info is None or (member_check and caller not in info.members):
            skipped.append((slug, "not_member"))
        elif not info.history_search:
            skipped.append((slug, "history_search_off"))
        else:
            searched.append(slug)
    return searched, skipped
