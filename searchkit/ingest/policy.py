"""What is never indexed (SPEC H2), who may see what (H15) and which spaces a search covers (H14).

The rules are data (a frozen ``Policy``); the loader asks it about each path, table and column
and writes every refusal into an ``IndexingReport`` as a ``Skip`` naming the rule that fired.
No rule ever fails a build.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Protocol, Sequence

from searchkit.errors import ParameterError
from searchkit.records import Record

MAX_SPACES = 60
"""At most this many spaces in one search (H14)."""

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
                      "a .netrc / .pgpass / .htpasswd / .npmrc credential, a provider token), whatever its name",
    "binary": "a binary file (a known binary signature, NUL bytes, or bytes that are text in no supported "
              "encoding), whatever its name",
    "journal_table": "a table named like a journal or message history by its name parts (messages, messages_archive, "
                     "chat_messages_v2, history_old, msg_archive, slack_export, dm, chats, inbox, threads, ...)",
    "message_history_table": "a table whose columns hold a channel's message history (channel + sender + text)",
    "virtual_table": "a virtual table (FTS, R*Tree, ...): it mirrors or indexes other tables' content",
    "shadow_table": "a shadow table of a virtual table (X_content, X_data, X_idx, X_docsize, X_config, "
                    "X_segments, X_segdir, X_stat, ...) or a table named as a full-text index (fts)",
    "secret_column": "a column named like a secret (password, pass, pw, pin, token, jwt, bearer, authorization, "
                     "cookie, salt, api_key, secret, ...)",
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
    "too_large": "an item over the policy's caps: max_file_bytes (a file or JSON item file), max_log_bytes "
                 "(log.md, sources.jsonl), max_item_chars (a chat, digest, page, source entry or log day), "
                 "max_cell_chars (a table cell)",
    "empty": "an empty or whitespace-only item",
    "decoded": "a text file not in UTF-8, decoded from the encoding named in the detail (indexed)",
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
    """

    skips: tuple[Skip, ...] = ()
    notes: tuple[Skip, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    loaded_at: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "skips", tuple(self.skips))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))

    def by_rule(self, rule: str) -> tuple[Skip, ...]:
        """Skips and notes that name ``rule``."""
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}; valid rules: {sorted(RULES)}")
        return tuple(s for s in self.skips + self.notes if s.rule == rule)

    def to_dict(self) -> dict[str, Any]:
        return {
            "loaded_at": self.loaded_at,
            "counts": dict(self.counts),
            "skips": [s.to_dict() for s in self.skips],
            "notes": [s.to_dict() for s in self.notes],
        }


def name_tokens(name: str) -> tuple[str, ...]:
    """Lower-case word tokens of an identifier: ``chatMessages`` -> (chat, messages).

    A run of digits after letters is a token of its own: ``messages2`` -> (messages, 2),
    ``chat_messages_v2`` -> (chat, messages, v, 2).
    """
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", spaced)
    spaced = re.sub(r"([^\W\d_])(\d)", r"\1_\2", spaced)
    return tuple(t for t in re.split(r"[\W_]+", spaced.lower()) if t)


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
        message_columns: (channel-like, sender-like, text-like) column names; a table with one
            of each holds a channel's message history.
        shadow_suffixes: name endings of the shadow tables of a virtual table (FTS3/4/5, R*Tree).
        fts_words: a table with one of these name tokens is a full-text index.

    Columns:
        secret_words: a column is secret-like when any name token is one of these ...
        weak_secret_words: ... or one of these (``token``, ``pass``, ``pin``), unless another token
            says the column counts something (``count_words``: ``tokens_used``, ``pass_rate``) ...
        secret_names: ... or its whole name is one of these (``auth``) ...
        secret_pairs: ... or two adjacent tokens are one of these pairs ...
        secret_substrings: ... or its tokens run together contain one of these.

    Caps (each refusal is a ``too_large`` skip):
        max_tables: only the most recently modified tables (by newest ``updated_at``).
        max_rows: only the newest rows of each table (by ``updated_at``).
        max_file_bytes: a space file, or one JSON item file (a chat, digest, page; space.json,
            files.json, users.json); 5 MB.
        max_log_bytes: a file that holds many records: ``log.md``, ``sources.jsonl``; 20 MB.
        max_item_chars: the text of one record that is not a file: a chat, a digest, a page, a
            source entry (its JSON line), a log day; 500,000 characters (about 350 passages).
        max_cell_chars: one table cell; a longer value is left out of its row's card; 20,000.
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
        "part", "shard", "partition", "daily", "monthly", "yearly",
    })
    table_prepositions: frozenset[str] = frozenset({
        "by", "per", "for", "from", "of", "in", "to", "with", "on", "at", "since", "until",
    })
    message_columns: tuple[frozenset[str], frozenset[str], frozenset[str]] = (
        frozenset({"channel", "channel_id", "chat_id", "thread_id", "conversation_id", "room", "room_id"}),
        frozenset({"sender", "sender_id", "author", "author_id", "from", "from_id", "user", "user_id"}),
        frozenset({"message", "text", "body", "content"}),
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
        "idtoken", "sessiontoken", "htpasswd", "netrc", "pgpass",
    })
    weak_secret_words: frozenset[str] = frozenset({"token", "tokens", "pass", "pin"})
    count_words: frozenset[str] = frozenset({
        "used", "use", "usage", "count", "counts", "cnt", "num", "number", "n", "max", "min", "total",
        "input", "output", "prompt", "completion", "completions", "cached", "reasoning", "limit",
        "limits", "budget", "per", "rate", "ratio", "cost", "costs", "spent", "remaining", "left",
        "estimate", "estimated", "avg", "mean", "sum", "in", "out", "length", "len", "size", "score",
        "percent", "pct", "fail", "failed", "threshold", "quota", "consumed",
    })
    secret_context: frozenset[str] = frozenset({
        "access", "refresh", "auth", "api", "bearer", "session", "csrf", "xsrf", "oauth", "reset",
        "verification", "invite", "device", "push", "secret", "private",
    })
    secret_names: frozenset[str] = frozenset({"auth", "authz", "creds"})
    secret_pairs: frozenset[tuple[str, str]] = frozenset({
        ("api", "key"), ("private", "key"), ("access", "key"), ("auth", "key"), ("session", "key"),
        ("ssh", "key"), ("signing", "key"), ("encryption", "key"), ("master", "key"), ("client", "key"),
        ("license", "key"), ("hmac", "key"), ("secret", "key"), ("recovery", "code"), ("recovery", "codes"),
        ("backup", "code"), ("backup", "codes"), ("seed", "phrase"), ("session", "id"), ("security", "code"),
        ("security", "answer"), ("auth", "header"), ("auth", "code"), ("auth", "string"), ("x", "auth"),
    })
    secret_substrings: tuple[str, ...] = (
        "password", "passwd", "apikey", "privatekey", "accesskey", "secretkey", "passhash", "pwhash",
        "pwdhash", "pinhash", "authtoken", "accesstoken", "refreshtoken", "bearertoken",
    )
    max_tables: int = 30
    max_rows: int = 200
    max_file_bytes: int = 5_000_000
    max_log_bytes: int = 20_000_000
    max_item_chars: int = 500_000
    max_cell_chars: int = 20_000

    def __post_init__(self) -> None:
        for name in ("max_tables", "max_rows", "max_file_bytes", "max_log_bytes", "max_item_chars", "max_cell_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Policy.{name} must be a positive integer, got {value!r}")
        compiled = tuple(
            (label, tuple(n.lower() for n in needles),
             tuple((not p.startswith("!"), re.compile(p.removeprefix("!"))) for p in patterns))
            for label, needles, patterns in self.secret_patterns
        )
        object.__setattr__(self, "_secret_res", compiled)

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
        """What key material a text holds (a private key block, ...), or None (``secret_content``)."""
        lower = text.lower()
        for label, needles, regexes in getattr(self, "_secret_res"):
            if needles and not any(n in lower for n in needles):
                continue
            if all(bool(r.search(text)) is wanted for wanted, r in regexes):
                return label
        return None

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
        ``message_templates``, ``event_plans``, ``backlog``, ``logistics`` are not.
        """
        tokens = name_tokens(name)
        if any(t in self.journal_words for t in tokens):
            return True
        for head in self._heads(tokens):
            if head in self.journal_heads:
                return True
            if any(head.endswith(s) and len(head) > len(s) for s in self.journal_suffixes):
                return True
        return False

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
        ``password_hash``, ``api_key`` are; ``pinned``, ``spinner``, ``shipping``, ``tokens_used``,
        ``max_tokens``, ``pass_rate``, ``tokenizer`` are not.
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
        if any(pair in self.secret_pairs for pair in zip(tokens, tokens[1:])):
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
        encoding: the encoding it was decoded from (``utf_8``, ``cp1251``, ``utf_16_le``, ...).
        reason: why the data is binary (None for text).
    """

    text: str | None
    encoding: str | None = None
    reason: str | None = None


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


def decode_text(data: bytes, encodings: Sequence[str] | None = None) -> Decoded:
    """Decode the bytes of a file that may be text in any of ``encodings`` (H1), or say why not.

    In order: a byte-order mark (UTF-8/16/32) decides; a known binary signature (PNG, ZIP, PDF,
    ...) is binary; valid UTF-8 without NUL bytes is UTF-8 text; otherwise charset-normalizer
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
