"""H1/H2 never-index rules by name parts and by content (searchkit.ingest.policy), tested as classes.

Issue 7 items 6, 7, 15, 16: journal and message-history tables with a prefix or suffix, FTS shadow
tables, credential files and columns outside H2's literal list, key material found by content, and
text files in encodings other than UTF-8 — each in both directions (what must be skipped, and what
must stay).
"""
from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchkit.ingest.policy import DEFAULT_POLICY, RULES, Policy, decode_text, name_tokens

P = DEFAULT_POLICY


def _join(words: list[str], style: str) -> str:
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(words)
    if style == "upper":
        return "_".join(w.upper() for w in words)
    if style == "camel":
        return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])
    return "".join(w[:1].upper() + w[1:] for w in words)  # Pascal


STYLES = st.sampled_from(["snake", "kebab", "upper", "camel", "pascal"])

# -- tables: journal and message history by name parts (items 6 and 15) ------------------------------

MESSAGEY = [
    "messages", "message", "msg", "msgs", "chat", "chats", "conversation", "conversations", "dm", "dms",
    "inbox", "thread", "threads", "comments", "history", "histories", "events", "event", "transcripts", "log",
    "logs", "sms", "emails", "slack", "telegram", "notifications", "mailbox", "replies",
]
MODIFIERS = ["archive", "backup", "old", "bak", "copy", "tmp", "export", "dump", "raw", "legacy", "2024", "2",
             "v2", "archived", "snapshot", "prev"]
PREFIXES = ["chat", "user", "team", "client", "deal", "support", "archived", "old", "channel", "direct", "q3"]
DATA_HEADS = [
    "templates", "plans", "settings", "tasks", "deals", "clients", "products", "invoices", "orders",
    "experiments", "observers", "projects", "contacts", "metrics", "reports", "budgets", "campaigns", "types",
    "categories", "tags", "rules", "catalog", "backlog", "logistics", "posts", "accounts", "users", "teams",
    "prices", "items", "labels", "scores",
]


@pytest.mark.parametrize("name", [
    # item 6: prefixes and suffixes
    "messages_archive", "chat_messages_v2", "history_old", "old_history", "ArchivedMessages", "deal-history-2024",
    # item 15: what holds a channel's message history, and its copies
    "messages_backup", "messages2", "msg_archive", "slack_export", "dm", "chat", "chats", "conversations",
    "inbox", "threads", "comments", "telegram_dump", "DirectMessages", "usermessages", "messages_by_day",
    "chathistory", "messages_fts",
])
def test_message_and_journal_tables_by_parts(name):
    assert P.table_skip(name, ["id", "updated_at"])[0] in ("journal_table", "shadow_table")


@settings(max_examples=400, deadline=None)
@given(
    prefix=st.lists(st.sampled_from(PREFIXES), max_size=2),
    head=st.sampled_from(MESSAGEY),
    suffix=st.lists(st.sampled_from(MODIFIERS), max_size=3),
    style=STYLES,
)
def test_any_message_like_name_with_modifiers_is_skipped(prefix, head, suffix, style):
    name = _join(prefix + [head] + suffix, style)
    assert P.journal_table(name), name


@settings(max_examples=400, deadline=None)
@given(
    prefix=st.lists(st.sampled_from(MESSAGEY + PREFIXES), max_size=2),
    head=st.sampled_from(DATA_HEADS),
    style=STYLES,
)
def test_data_tables_stay_whatever_their_prefix(prefix, head, style):
    name = _join(prefix + [head], style)
    if any(t in P.journal_words for t in name_tokens(name)):
        return  # audit/journal/changelog anywhere in a name is a journal (not generated here)
    assert P.table_skip(name, ["id", "title", "updated_at"]) is None, name


@pytest.mark.parametrize("name, virtual", [
    ("messages_fts_content", ["messages_fts"]), ("messages_fts_data", ["messages_fts"]),
    ("messages_fts_idx", ["messages_fts"]), ("messages_fts_docsize", ["messages_fts"]),
    ("messages_fts_config", ["messages_fts"]), ("docs_segments", ["docs"]), ("docs_segdir", ["docs"]),
    ("docs_stat", ["docs"]), ("Notes_Content", ["notes"]), ("places_node", ["places"]),
    ("search_fts5_data", []),  # a full-text index by its name, even without its virtual table
])
def test_shadow_tables_of_any_virtual_table(name, virtual):
    assert P.table_skip(name, ["id", "updated_at"], virtual)[0] == "shadow_table"


def test_shadow_rule_needs_the_virtual_table():
    assert P.table_skip("deals_data", ["id", "updated_at"], ["notes"]) is None
    assert P.table_skip("client_config", ["id", "updated_at"], []) is None


# -- columns: secrets outside the literal list; harmless columns stay (items 6 and 16) ----------------

SECRET_COLUMNS = [
    "password", "pass", "pw", "pwd", "passwd", "passcode", "pin", "pin_code", "pincode", "token", "access_token",
    "refresh_token", "jwt", "bearer", "authorization", "auth", "cookie", "session_cookie", "salt", "password_hash",
    "pass_hash", "pw_hash", "pwhash", "hashed_password", "api_key", "apiKey", "secret", "client_secret",
    "private_key", "otp", "csrf_token", "x_api_key", "auth_header", "recovery_codes", "seed_phrase", "cvv",
    "stripe_secret_key", "mfa_secret", "bearerToken",
]
ORDINARY_COLUMNS = [
    "id", "name", "status", "score", "deadline", "updated_at", "pinned", "spinner", "shipping", "tokens_used",
    "max_tokens", "input_tokens", "output_tokens", "token_count", "total_tokens", "pass_rate", "passage",
    "tokenizer", "author", "authority", "keyboard", "primary_key", "opinion", "compass", "bypass_reason",
    "pinyin", "passenger", "content_hash", "channel", "sender", "salary", "key_result", "passes",
]


@pytest.mark.parametrize("column", SECRET_COLUMNS)
def test_secret_columns_by_parts(column):
    assert P.secret_column(column), column


@pytest.mark.parametrize("column", ORDINARY_COLUMNS)
def test_harmless_columns_stay(column):
    assert not P.secret_column(column), column


@settings(max_examples=300, deadline=None)
@given(
    prefix=st.lists(st.sampled_from(["user", "db", "admin", "stripe", "github", "old", "new", "primary"]), max_size=2),
    secret=st.sampled_from(["password", "pass", "pw", "pin", "token", "jwt", "bearer", "authorization", "cookie",
                            "salt", "api_key", "secret", "private_key", "passcode", "otp"]),
    suffix=st.sampled_from([[], ["enc"], ["encrypted"], ["v2"], ["value"], ["hash"], ["2"]]),
    style=STYLES,
)
def test_any_secret_column_with_prefix_or_suffix_is_dropped(prefix, secret, suffix, style):
    words = prefix + secret.split("_") + suffix
    assert P.secret_column(_join(words, style)), words


@settings(max_examples=300, deadline=None)
@given(
    prefix=st.lists(st.sampled_from(["user", "order", "team", "monthly", "avg"]), max_size=2),
    column=st.sampled_from(ORDINARY_COLUMNS),
    style=STYLES,
)
def test_harmless_columns_stay_with_any_prefix(prefix, column, style):
    words = prefix + [column]
    assert not P.secret_column(_join(words, style)), words


# -- credential files by name (item 16) ----------------------------------------------------------

CREDENTIAL_PATHS = [
    "id_rsa", ".ssh/id_ed25519", "keys/id_ecdsa", "certs/server.pem", "tls/server.key", "certs/client.p12",
    "certs/client.pfx", ".npmrc", ".netrc", ".pgpass", ".aws/credentials", "home/.aws/config", ".git-credentials",
    ".docker/config.json", "kubeconfig", "deploy/prod.kubeconfig", ".kube/config", "config/secrets.yaml",
    "secrets.json", "app.secret", ".htpasswd", "gcp/service-account.json", "client_secret_123.apps.json",
    "infra/terraform.tfstate", "prod.tfvars", ".pypirc", "credentials", "credentials.yml", "aws_credentials.ini",
    "home/.config/gcloud/application_default_credentials.json", ".gnupg/private-keys-v1.d/key.key",
]


@pytest.mark.parametrize("path", CREDENTIAL_PATHS)
def test_credential_files_by_name(path):
    ruled = P.path_skip(path)
    assert ruled is not None and ruled[0] in ("credential_file", "excluded_file"), path


@pytest.mark.parametrize("path", [
    "notes/keys.md", "notes/ssh-setup.md", "notes/secretary.md", "scripts/key_results.py", "docs/pem-format.md",
    "notes/credentials-howto.md", "tokens.json", "notes/password-policy.md", "id_rsa_rotation.md", "keynote.txt",
])
def test_ordinary_files_are_not_credentials(path):
    assert P.path_skip(path) is None, path


# -- key material by content (item 16) -----------------------------------------------------------

PEM_BODY = "MIIEowIBAAKCAQEA1x2Zk8c3PvZ0qW7vQeXw1yK3aB9eZ6mN2oL4pQ8rS0tU1vW2\nxY3zA4bC5dE6fG7hI8jK9lM0nO1pQ2rS3tU4vW5xY6zA7bC8dE9fG0hI1jK2lM3n\n"
KEY_FILES = {
    "rsa private key": f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----\n",
    "pkcs8 key": f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}-----END PRIVATE KEY-----\n",
    "encrypted key": f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{PEM_BODY}-----END ENCRYPTED PRIVATE KEY-----\n",
    "openssh key": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}-----END OPENSSH PRIVATE KEY-----\n",
    "ec key": f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}-----END EC PRIVATE KEY-----\n",
    "pgp key": f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{PEM_BODY}-----END PGP PRIVATE KEY BLOCK-----\n",
    "key pasted into a note": f"# Server notes\n\nThe deploy key:\n\n-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}"
                              "-----END OPENSSH PRIVATE KEY-----\n\nRotate monthly.\n",
    "gcp service account": '{"type": "service_account", "project_id": "demo", "private_key_id": "abc123",'
                           ' "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQ...\\n-----END PRIVATE KEY-----\\n",'
                           ' "client_email": "x@demo.iam.gserviceaccount.com"}',
    "gcp service account, key elided": '{"type":"service_account","private_key_id":"0123abcd","private_key":"..."}',
    "aws credentials": "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    "netrc": "machine api.example.com login anna password s3cr3t-pass\n",
    "netrc, multi-line": "machine api.example.com\n  login anna\n  password s3cr3t-pass\n",
    "npmrc": "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789\n",
    "git credentials": "https://anna:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com\n",
    "htpasswd": "anna:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/\nboris:$2y$05$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ0123\n",
    "pgpass": "# pg\ndb.example.com:5432:sales:anna:s3cr3t\n*:*:*:postgres:hunter2\n",
    "docker config": '{"auths": {"https://index.docker.io/v1/": {"auth": "YW5uYTpzM2NyM3QtcGFzcw=="}}}',
    "kubeconfig": "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-key-data: "
                  "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB\n",
    "jwk": '{"kty": "RSA", "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAt", "e": "AQAB",'
           ' "d": "X4cTteJY_gn4FYPsXB8rdXix5vwsg1FLN5E3EaG6RJoVH-HLLKD9M7dx5oo7GURknchnrRweUkC7hT5fJLM0WbFAKNLWY2v"}',
    "github token in a script": 'import os\nTOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"\n',
    "slack token": "SLACK_BOT=xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx\n",
    "putty key": "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: anna\nPublic-Lines: 2\nAAAA\nAAAA\n"
                 "Private-Lines: 1\nAAAA\n",
}


@pytest.mark.parametrize("label", sorted(KEY_FILES))
def test_key_material_is_found_by_content(label):
    assert P.secret_content(KEY_FILES[label]), label


@pytest.mark.parametrize("text", [
    "# Как выгрузить отчёт\n\nЗапустите scripts/export_report.py; пароль спросите у Бориса.\n",
    "We use ed25519 keys; the file starts with a BEGIN OPENSSH PRIVATE KEY line. Never paste it here.\n",
    "machine learning notes: login flow, password reset page\n",
    "10:30:00 standup\n11:00 review\n",
    "Public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl anna@laptop\n",
    '{"type": "dashboard", "private": false}',
    "See https://example.com/login for the portal; user anna.\n",
    "api_key: <set in the vault>\n",
])
def test_ordinary_text_is_not_key_material(text):
    assert P.secret_content(text) is None


# -- text in any supported encoding (item 7, H1) ---------------------------------------------------------

SENTENCES = {
    "ru": ["Старая заметка о выгрузке отчёта по пятницам.", "Скрипт выгрузки ломает кириллицу в CSV.",
           "Клиенты просили перенести срок на понедельник.", "Проверьте цифры продаж за октябрь."],
    "ja": ["満月の周期の計算をしました。", "観測レポートを更新しました。", "埋め込みモデルを比較した結果です。",
           "来週の会議で決めます。"],
    "en": ["The export script breaks Cyrillic in CSV files.", "Churn dashboard for Q3 is ready.",
           "Nightly CRM import check passed.", "Ask for a review before Friday."],
}
ENCODINGS = {
    "ru": ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "cp1251", "koi8-r"],
    "ja": ["utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "shift_jis", "euc-jp"],
    "en": ["utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "cp1252"],
}
EXACT = {"utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"}


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_text_in_any_supported_encoding_is_text(data):
    lang = data.draw(st.sampled_from(sorted(SENTENCES)))
    text = " ".join(data.draw(st.lists(st.sampled_from(SENTENCES[lang]), min_size=2, max_size=6)))
    if data.draw(st.booleans()):
        text = text + " ATL-1655 2026-10-21"
    encoding = data.draw(st.sampled_from(ENCODINGS[lang]))
    decoded = decode_text(text.encode(encoding))
    assert decoded.text is not None, (encoding, decoded.reason)
    if encoding in EXACT or lang == "en":
        assert decoded.text == text, (encoding, decoded.encoding)
    else:  # a legacy single-byte or CJK encoding: the right one, or at least the same words
        assert decoded.text == text, (encoding, decoded.encoding, decoded.text)


def test_the_demo_cp1251_note_decodes_exactly():
    from pathlib import Path

    data = (Path(__file__).resolve().parents[1] / "datasets/demo-workspace/acme/notes/old-cp1251.txt").read_bytes()
    decoded = decode_text(data)
    assert decoded.encoding == "cp1251"
    assert decoded.text == "Старая заметка в кодировке cp1251: выгрузка по пятницам."


BINARY_HEADERS = [
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"PK\x03\x04\x14\x00\x00\x00\x08\x00", b"\x1f\x8b\x08\x00\x00\x00",
    b"SQLite format 3\x00", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00",
    b"GIF89a\x01\x00\x01\x00", b"\x7fELF\x02\x01\x01\x00",
]


@settings(max_examples=200, deadline=None)
@given(header=st.sampled_from(BINARY_HEADERS), seed=st.integers(0, 2**32 - 1), size=st.integers(0, 3000))
def test_real_binaries_stay_binary(header, seed, size):
    data = header + random.Random(seed).randbytes(size)
    assert decode_text(data).text is None


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(64, 4000))
def test_random_bytes_are_binary(seed, size):
    assert decode_text(random.Random(seed).randbytes(size)).text is None


@pytest.mark.parametrize("data", [
    b"# not really markdown\x00\x01\x02\xff\xfe binary payload",  # the demo's notes/broken.md
    b"# title\x00rest", b"abcd\x00\x00efgh\x00\x01", b"\x00" * 64, b"\x01\x02\x03\x04" * 50,
])
def test_ascii_with_nuls_or_controls_is_binary(data):
    assert decode_text(data).text is None


# -- rules and caps are data ----------------------------------------------------------------------

def test_new_rules_are_registered():
    assert {"credential_file", "secret_content", "virtual_table", "shadow_table", "duplicate_id", "bad_text",
            "load_error", "special_file", "decoded"} <= set(RULES)


@pytest.mark.parametrize("name", ["max_log_bytes", "max_item_chars", "max_cell_chars"])
@pytest.mark.parametrize("value", [0, -5, 2.5, True])
def test_new_caps_are_validated(name, value):
    with pytest.raises(ValueError, match=name):
        Policy(**{name: value})


def test_caps_are_documented_defaults():
    assert (P.max_file_bytes, P.max_log_bytes, P.max_item_chars, P.max_cell_chars) == (
        5_000_000, 20_000_000, 500_000, 20_000)
    assert re.search(r"max_item_chars", RULES["too_large"]) and re.search(r"max_cell_chars", RULES["too_large"])
