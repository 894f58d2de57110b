"""The never-index policy as data, and its caps (SPEC H1, H2; part of ``searchkit.ingest.policy``).

``Policy`` is a frozen dataclass: its fields are the rules (folder and file names, credential
files, key-material patterns, the vocabularies tables and columns are judged by) and the size caps
(``CAPS``); its methods for files live here, those for tables and secrets in ``TableRules`` and
``SecretRules``. ``DEFAULT_POLICY`` is the policy a build uses unless told otherwise.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from searchkit.errors import InputError
from searchkit.ingest.policy.secret_rules import SecretRules
from searchkit.ingest.policy.tables import TableRules

CAPS: tuple[str, ...] = ("max_tables", "max_rows", "max_file_bytes", "max_log_bytes", "max_item_chars",
                         "max_message_chars", "max_cell_chars", "max_depth")
"""The size caps of a ``Policy`` (H1, H2; issue 27 item 17), each a positive integer."""


@dataclass(frozen=True)
class Policy(TableRules, SecretRules):
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
                raise InputError(f"Policy.{name} must be a positive integer, got {value!r}")
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
            raise InputError(f"unknown cap {unknown[0]!r}; the caps are {', '.join(CAPS)}")
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


DEFAULT_POLICY = Policy()
