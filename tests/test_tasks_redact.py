"""Redaction of indexed text (SPEC T2): secrets and e-mail addresses never reach the index."""
import pytest
from hypothesis import given, settings, strategies as st

from searchkit.ingest.redact import EMAIL, RULES, SECRET, redact, redact_counted

SECRETS = [
    # (text, the raw secret that must disappear, rule expected to fire)
    ("key: sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "4f9a8b7c6d5e4f3a2b1c", "token_prefix"),
    ("sk-proj-AbCdEfGhIjKlMnOpQrStUv123", "AbCdEfGhIjKlMnOpQrStUv123", "token_prefix"),
    ("use ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123 now", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123", "token_prefix"),
    ("slack xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012", "token_prefix"),
    ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "token_prefix"),
    ("Authorization: Bearer abcDEF123456789xyz.ok", "abcDEF123456789xyz", "bearer"),
    ("password=Hunter2!Secret も更新して", "Hunter2!Secret", "key_value"),
    ("token: s3cr3t-value", "s3cr3t-value", "key_value"),
    ('api_key = "abc def ghi"', "abc def ghi", "key_value"),
    ("パスワード: ひみつ123。", "ひみつ123", "key_value"),
    ("пароль=qwerty123", "qwerty123", "key_value"),
    ("連絡は ops@acme.example まで", "ops@acme.example", "email"),
    ("キーは4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5cです", "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "long_hex"),
    ("aws secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ok", "wJalrXUtnFEMI/K7MDENG", "long_base64"),
    ("https://bob:pa55word@host.example.com/x", "pa55word", "url_credentials"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow", "private_key"),
]


@pytest.mark.parametrize("text,secret,rule", SECRETS)
def test_secret_is_removed_and_rule_named(text, secret, rule):
    out, counts = redact_counted(text)
    assert secret not in out
    assert SECRET in out or EMAIL in out
    assert rule in counts


def test_key_value_keeps_the_key():
    assert redact("password=hunter2 and token: abc") == f"password={SECRET} and token: {SECRET}"


def test_email_placeholder():
    assert redact("mail a.b+c@example.co.jp please") == f"mail {EMAIL} please"


@pytest.mark.parametrize(
    "text",
    [
        "src/components/LoginForm2/index.tsx/AbcDef",
        "internationalization_and_localization_module_names",
        "Bearer tokens are now issued by the vault.",
        "login session token handling unchanged",
        "朔望月の周期はおよそ 29.53 日",
        "version 2026-06-20T10:00:00Z build 12345",
    ],
)
def test_ordinary_text_is_kept(text):
    assert redact(text) == text


def test_rule_names_are_unique():
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_redaction_is_idempotent(text):
    once = redact(text)
    assert redact(once) == once
