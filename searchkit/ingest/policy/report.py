"""What a load left out, and why (SPEC H2; part of ``searchkit.ingest.policy``).

``RULES`` names every rule a refusal can cite; a ``Skip`` is one refusal (or one fallback), and an
``IndexingReport`` lists them all with the counts, the time and the caps of the load.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

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
    known_secrets: Any = field(default=None, compare=False, repr=False)
    """The salted digests of the secret values the load redacted, by scope
    (``searchkit.ingest.redact.known.KnownSecrets``; issue 39 item 4): what the index version keeps
    for live reads and the next update. Never a value; not part of ``to_dict``."""

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
