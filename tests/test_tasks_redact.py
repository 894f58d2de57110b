"""Redaction of indexed text (SPEC T2): secrets and e-mail addresses never reach the index.

Issue 7 item 10: secrets written in words (``パスワードは hunter2xyz です``, ``пароль qwerty987``,
``the api key = keyval12345``), internationalised addresses and the token shapes a secret scanner
knows must be redacted, measured on a synthetic corpus (``evals/redaction/corpus.py``), while
ordinary sentences that use the same words stay as they are.
"""
import importlib.util
import string
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from searchkit.ingest.redact import EMAIL, RULES, SECRET, redact, redact_counted, redact_file_name
from searchkit.ingest.tasks import indexed_text

ROOT = Path(__file__).resolve().parents[1]


def _load_corpus():
    spec = importlib.util.spec_from_file_location("redaction_corpus", ROOT / "evals" / "redaction" / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("redaction_corpus", module)
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()

SECRETS = [
    # (text, the raw secret that must disappear, rule expected to fire)
    ("key: sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "4f9a8b7c6d5e4f3a2b1c", "token_prefix"),
    ("sk-proj-AbCdEfGhIjKlMnOpQrStUv123", "AbCdEfGhIjKlMnOpQrStUv123", "token_prefix"),
    ("use ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123 now", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123", "token_prefix"),
    ("slack xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012", "token_prefix"),
    ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "token_prefix"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc ok", "4eC39HqLyjWDarjtT1zdp7dc", "token_prefix"),
    ("twilio AC0123456789abcdef0123456789abcdef", "AC0123456789abcdef0123456789abcdef", "token_prefix"),
    ("gitlab glpat-xR3bN9qL2mZ7vK4tY8wP", "glpat-xR3bN9qL2mZ7vK4tY8wP", "token_prefix"),
    ("SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq", "ABCDEFGHIJKLMNOPQRSTUVWXYZab",
     "token_prefix"),
    ("bot 1234567890:AAHk3jdkEJdkw93kdkeLLdkwk39dkdkekdm", "AAHk3jdkEJdkw93kdkeLLdkwk39dkdkekdm", "token_prefix"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "dozjgNryP4J3jVmNHl0w5N", "jwt"),
    ("Authorization: Bearer abcDEF123456789xyz.ok", "abcDEF123456789xyz", "bearer"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "bearer"),
    ("password=Hunter2!Secret も更新して", "Hunter2!Secret", "key_value"),
    ("token: s3cr3t-value", "s3cr3t-value", "key_value"),
    ('api_key = "abc def ghi"', "abc def ghi", "key_value"),
    ("パスワード: ひみつ123。", "ひみつ123", "key_value"),
    ("пароль=qwerty123", "qwerty123", "key_value"),
    ("use hunter2xyz as the password", "hunter2xyz", "value_then_key"),
    ("curl -u admin:hunter2xyz https://api.example.com", "hunter2xyz", "command_line"),
    ("連絡は ops@acme.example まで", "ops@acme.example", "email"),
    ("キーは4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5cです", "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "long_hex"),
    ("aws wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ok", "wJalrXUtnFEMI/K7MDENG", "long_base64"),
    ("https://bob:pa55word@host.example.com/x", "pa55word", "url_credentials"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow", "private_key"),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF",
     "private_key"),
]


@pytest.mark.parametrize("text,secret,rule", SECRETS)
def test_secret_is_removed_and_rule_named(text, secret, rule):
    out, counts = redact_counted(text)
    assert secret not in out
    assert SECRET in out or EMAIL in out
    assert rule in counts


def test_issue_example_through_indexed_text():
    body = "本番のパスワードは hunter2xyz です。APIキー: abcd1234efgh。пароль qwerty987. the api key = keyval12345"
    out = indexed_text({"kind": "request", "body": body})
    for secret in ("hunter2xyz", "abcd1234efgh", "qwerty987", "keyval12345"):
        assert secret not in out
    # the key words stay, only the values go
    assert out == (f"本番のパスワードは {SECRET} です。APIキー: {SECRET}。пароль {SECRET}. "
                   f"the api key = {SECRET}")


WORDED = [
    # English
    ("the password is hunter2xyz", "the password is [redacted]"),
    ("Password: hunter", "Password: [redacted]"),
    ("PASSWORD = Tr0ub4dor&3", "PASSWORD = [redacted]"),
    ("passcode 48213", "passcode [redacted]"),
    ("the PIN is 4821", "the PIN is [redacted]"),
    ("token — tok3nValue9", "token — [redacted]"),
    ("My secret is 'blue moon rising'", "My secret is '[redacted]'"),
    ("API Key: abcd1234efgh", "API Key: [redacted]"),
    ("the password for the staging db is hunter2xyz", "the password for the staging db is [redacted]"),
    ("The token was changed to mulitu424 yesterday", "The token was changed to [redacted] yesterday"),
    ('{"client_secret": "abc123def456"}', '{"client_secret": "[redacted]"}'),
    ("export GITHUB_TOKEN=s3cr3tT0k3n", "export GITHUB_TOKEN=[redacted]"),
    # Russian, inflected forms
    ("пароль qwerty987", "пароль [redacted]"),
    ("Пароль — qwerty987", "Пароль — [redacted]"),
    ("пароль это qwerty987", "пароль это [redacted]"),
    ("войти с паролем qwerty987", "войти с паролем [redacted]"),
    ("смена пароля на qwerty987", "смена пароля на [redacted]"),
    ("значение токена: abc123xyz", "значение токена: [redacted]"),
    ("ключ API — ab12cd34ef56", "ключ API — [redacted]"),
    ("API-ключ ab12cd34ef56", "API-ключ [redacted]"),
    ("ТОКЕН: abc123xyz", "ТОКЕН: [redacted]"),
    ("пароль от почты: Qwerty123!", "пароль от почты: [redacted]"),
    ("ПИН-код 4821", "ПИН-код [redacted]"),
    ("секрет «sunset monkey quartz»", "секрет «[redacted]»"),
    # Japanese
    ("パスワードは hunter2xyz です", "パスワードは [redacted] です"),
    ("パスワードはhunter2xyzです", "パスワードは[redacted]です"),
    ("パスワード：hunter2xyz", "パスワード：[redacted]"),
    ("暗証番号は 4821 です", "暗証番号は [redacted] です"),
    ("トークン=abcd1234efgh", "トークン=[redacted]"),
    ("APIキーは「abcd1234efgh」です", "APIキーは「[redacted]」です"),
    ("シークレットは abcd1234efgh です", "シークレットは [redacted] です"),
    ("ＡＰＩキー：ａｂｃｄ１２３４", "ＡＰＩキー：[redacted]"),
    ("hunter2xyz をパスワードに設定しました", "[redacted] をパスワードに設定しました"),
    ("【トークン】EJ9mbK86w", "【トークン】[redacted]"),
]


@pytest.mark.parametrize("text,expected", WORDED)
def test_secret_written_in_words_keeps_the_key_word(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize(
    "address",
    ["ivan@пример.рф", "маша.петрова@почта.рус", "用户@例子.广告", "taro@例え.jp", "hanako@会社.コム",
     "müller@bücher.example", "a.b+c@example.co.jp", "ops-team@mail.example.org"],
)
def test_internationalised_addresses(address):
    for text in (f"write to {address} please", f"пишите на {address}.", f"連絡先：{address}", address):
        out = redact(text)
        assert address not in out and EMAIL in out, out


def test_japanese_address_without_spaces_keeps_the_sentence():
    assert redact("連絡は用户@例子.广告まで") == f"連絡は{EMAIL}まで"


def test_email_placeholder():
    assert redact("mail a.b+c@example.co.jp please") == f"mail {EMAIL} please"


def test_key_value_keeps_the_key():
    assert redact("password=hunter2 and token: abc") == f"password={SECRET} and token: {SECRET}"


@pytest.mark.parametrize(
    "text",
    [
        "src/components/LoginForm2/index.tsx/AbcDef",
        "internationalization_and_localization_module_names",
        "Bearer tokens are now issued by the vault.",
        "bearer authentication is the default",
        "login session token handling unchanged",
        "朔望月の周期はおよそ 29.53 日",
        "version 2026-06-20T10:00:00Z build 12345",
        # the key words in their ordinary senses
        "Please reset the password for Anna before 2026-06-20.",
        "The password policy now requires 12 characters.",
        "Token usage was 4096 tokens on 2026-07-01.",
        "token count: 4096",
        "Max tokens set to 8192 for the summarizer.",
        "The API key rotation is planned for v2.3.1 (ATL-1655).",
        "Password: changed by Boris on 2026-06-20.",
        "Pin numpy to 1.26.4 until ATL-1655 is fixed.",
        "The token for GPT-4o is cheaper.",
        "The password manager is 1Password.",
        "API key: see ATL-1655",
        "the token `audit` is a journal name",
        "Пароль должен быть не короче 8 символов.",
        "Ключ к решению — кэширование.",
        "Ключ кэша — user:42:profile.",
        "Токен истёк, задача ATL-1655.",
        "Ключевой момент: релиз v2.3.1.",
        "Пароль: сменён 20.06.2026.",
        "Коммит 44ed012 перевёл хэширование паролей на argon2id.",
        "パスワードを変更してください（ATL-1655）。",
        "パスワードは 12 文字以上にしてください。",
        "パスワードは英数字8文字以上です。",
        "トークンはGPT-4oで数えます。",
        "パスワード：変更済み",
        "暗証番号は4桁です。",
        "トークンの上限は 128000 です。",
        "パスワードを忘れた場合はATL-1655を参照。",
        "Docs: https://wiki.example.org/Password_policy and file passwords_policy.pdf",
    ],
)
def test_ordinary_text_is_kept(text):
    assert redact(text) == text


def test_rule_names_are_unique():
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))


# ---------------------------------------------------------------------------------------------
# Classes of inputs (hypothesis)
# ---------------------------------------------------------------------------------------------

KEYWORDS = {
    "en": ["password", "Password", "PASSWORD", "passcode", "token", "Token", "API key", "api_key", "secret",
           "access token", "client secret", "passphrase", "Api-Key"],
    "ru": ["пароль", "Пароль", "ПАРОЛЬ", "паролем", "пароля", "токен", "токена", "ключ", "ключ API",
           "API-ключ", "секрет", "токен доступа"],
    "ja": ["パスワード", "トークン", "APIキー", "シークレット", "アクセストークン", "パスコード", "API キー"],
}
SEPARATORS = {
    "en": ["{k}: {v}", "{k}={v}", "{k} = {v}", "the {k} is {v}", "{k} {v}", "{k} — {v}", "{k}: \"{v}\"",
           "{k} is now {v}", "set the {k} to {v}", "use {v} as the {k}", "{k} for prod: {v}"],
    "ru": ["{k}: {v}", "{k}={v}", "{k} — {v}", "{k} это {v}", "{k} {v}", "{k} «{v}»", "{k} от почты: {v}",
           "{k} теперь {v}", "{k}：{v}"],
    "ja": ["{k}は {v} です", "{k}は{v}です", "{k}：{v}", "{k}: {v}", "{k} {v}", "{k}は「{v}」です",
           "{k}を {v} に変更", "{v} を{k}に設定", "{k}={v}"],
}

secret_values = st.builds(
    lambda letters, digits, tail, order: (letters + digits + tail) if order else (digits + letters + tail),
    st.text(string.ascii_letters, min_size=3, max_size=10),
    st.text(string.digits, min_size=1, max_size=5),
    st.text(string.ascii_letters + string.digits + "!@#$%", max_size=6),
    st.booleans(),
).filter(lambda v: not v[0].isdigit() or any(c.isalpha() for c in v[1:]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lang=st.sampled_from(sorted(KEYWORDS)), data=st.data(), value=secret_values)
def test_any_keyword_any_separator_any_value_is_redacted(lang, data, value):
    keyword = data.draw(st.sampled_from(KEYWORDS[lang]))
    template = data.draw(st.sampled_from(SEPARATORS[lang]))
    text = template.format(k=keyword, v=value)
    out = redact(text)
    assert value not in out, (text, out)
    assert keyword in out, (text, out)  # the key word stays


@settings(max_examples=200, deadline=None)
@given(
    keyword=st.sampled_from(["PIN", "pin code", "ПИН-код", "пин-код", "暗証番号", "PINコード"]),
    sep=st.sampled_from([": ", " ", " is ", " — ", "は", "：", "=", "は "]),
    pin=st.text(string.digits, min_size=4, max_size=8).filter(lambda p: not p.startswith(("19", "20"))),
)
def test_any_pin_is_redacted(keyword, sep, pin):
    out = redact(f"{keyword}{sep}{pin}")
    assert pin not in out and keyword in out


LABEL = st.text(
    st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789абвгдежзиклмнопрстуфхцчшщэюяпримерテスト例子用户会社"),
    min_size=1, max_size=10,
)
TLD = st.sampled_from(["com", "org", "example", "ru", "jp", "рф", "рус", "онлайн", "广告", "中国", "コム", "みんな"])


@settings(max_examples=300, deadline=None)
@given(local=LABEL, labels=st.lists(LABEL, min_size=1, max_size=3), tld=TLD,
       frame=st.sampled_from(["{a}", "mail {a} please", "пишите на {a}.", "連絡先：{a}", "<{a}>", "({a})"]))
def test_any_address_is_redacted(local, labels, tld, frame):
    address = f"{local}@{'.'.join(labels)}.{tld}"
    out = redact(frame.format(a=address))
    assert address not in out and EMAIL in out, out


ordinary_values = st.one_of(
    st.builds(lambda a, b, c: f"v{a}.{b}.{c}", st.integers(0, 20), st.integers(0, 99), st.integers(0, 99)),
    st.builds(lambda a, b: f"{a}.{b}", st.integers(0, 20), st.integers(0, 99)),
    st.builds(lambda y, m, d: f"{y}-{m:02d}-{d:02d}", st.integers(1990, 2099), st.integers(1, 12), st.integers(1, 28)),
    st.builds(lambda d, m, y: f"{d:02d}.{m:02d}.{y}", st.integers(1, 28), st.integers(1, 12), st.integers(1990, 2099)),
    st.builds(lambda p, n: f"{p}-{n}", st.sampled_from(["ATL", "DOC", "OPS", "PR", "SEC", "atl"]),
              st.integers(1, 99999)),
    st.builds(lambda n: f"#{n}", st.integers(1, 9999)),
    st.builds(lambda n, u: f"{n}{u}", st.integers(1, 9999), st.sampled_from(["ms", "MB", "GB", "%", "px", "KB"])),
    st.builds(lambda n, ext: f"{n}.{ext}", st.sampled_from(["report_2026", "export", "tasks_v2", "token_usage"]),
              st.sampled_from(["csv", "py", "json", "md", "pdf", "ipynb"])),
    st.sampled_from(["https://example.com/docs/auth", "http://localhost:8080/health", "/usr/local/bin",
                     "gpt-4o", "Qwen3-Embedding-8B", "sha256", "base64", "utf-8", "argon2id", "OAuth2"]),
)
ordinary_frames = st.sampled_from([
    "the password policy changed in {x}", "see {x} for the token rotation", "токен истёк, см. {x}",
    "пароль сменили {x}", "パスワード変更は {x} で対応済みです", "トークンは {x} から仕様が変わりました",
    "the token is {x}", "password {x}", "ключ {x}", "APIキーは {x} です", "パスワード：{x}", "API key: {x}",
    "Token limit {x}", "пароль: {x}", "the secret is in {x}",
])


@settings(max_examples=400, deadline=None)
@given(frame=ordinary_frames, x=ordinary_values)
def test_versions_dates_ids_units_files_urls_are_never_values(frame, x):
    text = frame.format(x=x)
    assert redact(text) == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_redaction_is_idempotent(text):
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_redaction_is_deterministic_and_total(text):
    assert redact(text) == redact(text)


# ---------------------------------------------------------------------------------------------
# Measured on the synthetic corpora
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("split", corpus.GENERATED)
def test_corpus_no_planted_secret_survives_and_ordinary_text_stays(split):
    m = corpus.measure(redact, split)
    assert m["planted_secrets"] >= 100
    assert m["planted_forms"] >= 10
    assert m["planted_langs"] == 3
    assert m["surviving"] == 0, [(i.text, s) for i, s in m["survivors"]][:10]
    assert m["ordinary_sentences"] >= 300
    assert m["falsely_redacted"] <= 0.01 * m["ordinary_sentences"], [i.text for i in m["false_positives"]][:10]


def test_handwritten_sentences():
    m = corpus.measure(redact, "handwritten")
    assert m["planted_langs"] == 3
    assert m["surviving"] == 0, [(i.text, s) for i, s in m["survivors"]]
    assert m["falsely_redacted"] <= 0.01 * m["ordinary_sentences"], [i.text for i in m["false_positives"]]


def test_corpus_is_deterministic_and_splits_differ():
    assert corpus.planted("dev") == corpus.planted("dev")
    assert corpus.ordinary("heldout") == corpus.ordinary("heldout")
    dev = {p.text for p in corpus.planted("dev")}
    held = {p.text for p in corpus.planted("heldout")}
    assert dev & held <= {corpus.ISSUE_EXAMPLE}
    assert not {o.text for o in corpus.ordinary("dev")} & {o.text for o in corpus.ordinary("heldout")}


def test_redaction_is_fast_on_long_text_without_spaces():
    text = "満月の周期の計算をパスワードはトークンで" * 2000 + "пароль от почты " * 2000
    start = time.perf_counter()
    redact(text)
    assert time.perf_counter() - start < 5.0  # linear, not quadratic, in the length


# ---------------------------------------------------------------------------------------------
# Forms an adversarial audit found (issues 7-8 audit, item 1): each failed before the fix
# ---------------------------------------------------------------------------------------------


AUDIT_SECRETS = [
    # (text, the secret, the key word that stays)
    ("サーバーのパスワード「jpquote99x」です", "jpquote99x", "パスワード"),
    ("パスワードの「jpquote99x」を使って", "jpquote99x", "パスワード"),
    ("APIキー『abcd1234efgh』", "abcd1234efgh", "APIキー"),
    ("PW: pwsecret88x", "pwsecret88x", "PW"),
    ("pw=pwsecret88x", "pwsecret88x", "pw"),
    ("P/W：Hunter2!x", "Hunter2!x", "P/W"),
    ("パスワード\nhunter2xyz", "hunter2xyz", "パスワード"),
    ("password:\n\nhunter2xyz", "hunter2xyz", "password"),
    ("Here is the token\nabc123def456\nthanks", "abc123def456", "token"),
    ("пароль\nqwerty987", "qwerty987", "пароль"),
    ("hunter2xyz がパスワードです", "hunter2xyz", "パスワード"),
    ("hunter2xyzが新しいパスワードです。", "hunter2xyz", "パスワード"),
    ("abcd1234efgh は本番のAPIキーです", "abcd1234efgh", "APIキー"),
    ("my pass is hunter2xyz", "hunter2xyz", "pass"),
    ("hunter2xyz is our wifi pass", "hunter2xyz", "pass"),
    ("password's hunter2xyz", "hunter2xyz", "password"),
    ("the token’s abc123def456 now", "abc123def456", "token"),
    ("passphrase: correct horse battery staple", "horse battery staple", "passphrase"),
    ("the passphrase is sunset monkey quartz", "sunset monkey quartz", "passphrase"),
    ("seed phrase: velvet-anchor-prairie-lantern", "velvet-anchor-prairie-lantern", "seed phrase"),
    ("кодовая фраза: blue whale friday", "blue whale friday", "кодовая фраза"),
    ("パスフレーズは orbit willow copper です", "orbit willow copper", "パスフレーズ"),
]


@pytest.mark.parametrize("text,secret,keyword", AUDIT_SECRETS)
def test_audit_forms_are_redacted_and_keep_the_key_word(text, secret, keyword):
    out = redact(text)
    assert secret not in out and SECRET in out, out
    for word in secret.split():
        assert word not in out, out
    assert keyword in out, out


AUDIT_ORDINARY = [
    "PW-2 is the second phase",
    "PW-2 is the second phase of ATL-1655.",
    "my pass expired",
    "My pass expired on 2026-06-20, I'll renew it.",
    "パスワードを変更してください",
    "pass: 1024 tests",
    "Pass: 12, Fail: 0",
    "FAIL: 2, PASS: 30",
    "the PW is 5 mm",
    "we pass it to v2",
    "pass=True in the config",
    "The boarding pass is in my inbox.",
    "Pass the token to the worker in export.py.",
    "The password's length is 12",
    "The token's scope is read-only.",
    "The API key's owner is Anna.",
    "Please reset your password\nThanks",
    "Password\nReset link sent",
    "Token\n3000 per day",
    "パスワードは\n8文字以上です",
    "Пароль\nне менее 8 символов",
    "Пароль:\nсм. вики",
    "パスワード「変更」ボタン",
    "パスワードの「表示」アイコンを追加しました。",
    "APIキーの「Authorization」ヘッダー",
    "トークンの「max_tokens」設定",
    "SSO はパスワードです",
    "2FA がパスワードより安全です",
    "パスワードが違います",
    "the passphrase is stored in the vault",
    "passphrase: must be 4 words",
    "The passphrase is case sensitive.",
    "Passphrase: changed by Boris on 2026-06-20.",
    "the seed phrase is twelve words",
    "Кодовая фраза должна быть не короче 4 слов.",
    "Пароль «по умолчанию» отключён в v2.7.3.",
    "The “show password” toggle is back in v2.3.1.",
    "PW: see the vault entry for ATL-1655.",
]


@pytest.mark.parametrize("text", AUDIT_ORDINARY)
def test_audit_ordinary_sentences_are_kept(text):
    assert redact(text) == text


SHORT_KEYWORDS = ["PW", "pw", "Pw", "P/W", "pass", "Pass", "PASS", "pswd", "psw"]


@settings(max_examples=300, deadline=None)
@given(kw=st.sampled_from(SHORT_KEYWORDS), value=secret_values,
       frame=st.sampled_from(["{k}: {v}", "{k}={v}", "{k} = {v}", "my {k} is {v}", "the wifi {k} is {v}",
                              "{k}：{v}", "{k}は {v} です", "{k} → {v}", "user admin / {k}: {v}", "{k} — {v}",
                              "{v} is my {k}"]))
def test_short_key_words_any_separator_any_value(kw, value, frame):
    text = frame.format(k=kw, v=value)
    out = redact(text)
    assert value not in out and kw in out, (text, out)


@settings(max_examples=200, deadline=None)
@given(kw=st.sampled_from(SHORT_KEYWORDS),
       word=st.sampled_from(["expired", "renewed", "green", "closed", "second", "board", "rate", "through",
                             "valid", "ok", "it", "tests"]),
       frame=st.sampled_from(["my {k} {w}", "{k} {w}", "{k}-2 is {w}", "the {k} is {w}", "{k}: {w}",
                              "{k} {n} {w}", "{k}: {n} {w}"]),
       n=st.integers(0, 99999))
def test_short_key_words_before_ordinary_words_and_counts(kw, word, frame, n):
    text = frame.format(k=kw, w=word, n=n)
    if kw.lower() != "pass" and frame == "{k}: {n} {w}" and n >= 1000:
        return  # `PW: 4821 …` is a password by design; `pass: 1024 tests` is a count
    assert redact(text) == text


ANY_KEYWORD = {lang: words + (["PW", "pw"] if lang == "en" else []) for lang, words in KEYWORDS.items()}


@settings(max_examples=300, deadline=None)
@given(lang=st.sampled_from(sorted(ANY_KEYWORD)), data=st.data(), value=secret_values,
       frame=st.sampled_from(["{k}\n{v}", "{k}:\n{v}", "{k}:\n\n{v}", "{k}\n\n{v}\n", "new {k}\n  {v}\nthanks",
                              "{k} is\n{v}", "{k}：\n{v}"]))
def test_value_on_the_next_line(lang, data, value, frame):
    kw = data.draw(st.sampled_from(ANY_KEYWORD[lang]))
    text = frame.format(k=kw, v=value)
    out = redact(text)
    assert value not in out and kw in out, (text, out)


@settings(max_examples=200, deadline=None)
@given(kw=st.sampled_from(["password", "Password", "token", "API key", "パスワード", "トークン", "пароль", "Токен"]),
       line=st.sampled_from(["Reset link sent", "Thanks", "see ATL-1655", "v2.3.1", "2026-06-20", "変更済みです",
                             "8文字以上です", "не менее 8 символов", "3000 per day", "is required", "admin",
                             "https://example.com/docs/auth", "report_2026-06.csv"]))
def test_a_next_line_without_a_secret_is_kept(kw, line):
    for text in (f"{kw}\n{line}", f"Please reset your {kw}\n{line}"):
        assert redact(text) == text


JA_KEYWORDS = ["パスワード", "トークン", "APIキー", "シークレット", "アクセストークン", "パスコード", "暗証番号", "管理者パスワード"]


@settings(max_examples=300, deadline=None)
@given(kw=st.sampled_from(JA_KEYWORDS), value=secret_values,
       frame=st.sampled_from(["サーバーの{k}「{v}」です", "{k}「{v}」", "{k}の「{v}」", "{k}は「{v}」", "本番{k}『{v}』",
                              "{k}『{v}』（検証用）", "{v} が{k}です", "{v}が新しい{k}です。", "{v} は本番の{k}です",
                              "{v}が{k}になります", "これは{v}が{k}です"]))
def test_japanese_brackets_and_reverse_forms(kw, value, frame):
    if kw == "暗証番号" and not value.isdigit():
        value = "".join(c for c in value if c.isdigit()).ljust(4, "7")  # a PIN is digits
    text = frame.format(k=kw, v=value)
    out = redact(text)
    assert value not in out and kw in out, (text, out)


@settings(max_examples=150, deadline=None)
@given(kw=st.sampled_from(JA_KEYWORDS),
       word=st.sampled_from(["変更", "表示", "リセット", "再設定", "有効期限", "Authorization", "max_tokens", "reset",
                             "v2.3.1", "ATL-1655", "8文字以上"]),
       frame=st.sampled_from(["{k}「{w}」ボタン", "{k}の「{w}」を確認", "{w} が{k}の代わりです", "SSO が{k}です"]))
def test_japanese_brackets_and_reverse_forms_without_a_secret(kw, word, frame):
    text = frame.format(k=kw, w=word)
    assert redact(text) == text


PHRASE_WORDS = ["correct", "horse", "battery", "staple", "velvet", "anchor", "prairie", "lantern", "orbit", "willow",
                "copper", "meadow", "glacier", "harbor", "pepper", "violet", "canyon", "thistle", "walrus", "juniper"]


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(PHRASE_WORDS), min_size=3, max_size=6, unique=True),
       joiner=st.sampled_from([" ", " ", "-", "_"]),
       kw=st.sampled_from(["passphrase", "Passphrase", "pass phrase", "seed phrase", "recovery phrase",
                           "кодовая фраза", "парольная фраза", "パスフレーズ"]),
       frame=st.sampled_from(["{k}: {p}", "{k} = {p}", "the {k} is {p}", "{k} — {p}", "{k}:\n{p}", "{k}: {p}.",
                              "{k}は {p} です", "{k}：{p}（金庫用）", "{k} это {p}"]))
def test_any_pass_phrase_is_redacted_whole(words, joiner, kw, frame):
    phrase = joiner.join(words)
    text = frame.format(k=kw, p=phrase)
    out = redact(text)
    assert not any(w in out for w in words), (text, out)
    assert kw in out


@settings(max_examples=200, deadline=None)
@given(kw=st.sampled_from(["password", "token", "API key", "secret", "access token", "client secret"]),
       value=secret_values, frame=st.sampled_from(["{k}'s {v}", "the {k}'s {v} now", "{k}’s {v}", "ok the {k}'s {v}"]))
def test_possessive(kw, value, frame):
    text = frame.format(k=kw, v=value)
    out = redact(text)
    assert value not in out and kw in out, (text, out)


# --- file names (T2: attachments add their names; item 3 of the audit) ---

@settings(max_examples=300, deadline=None)
@given(kw=st.sampled_from(["password", "passwd", "token", "api_key", "API-KEY", "secret", "pin", "パスワード", "пароль",
                           "access_token", "pw"]),
       joiner=st.sampled_from(["=", "_", "-", ":", "="]),
       value=secret_values.filter(lambda v: v[-1].isalnum()),
       ext=st.sampled_from([".txt", ".pdf", ".png", ".tar.gz", ".json", ""]),
       folder=st.sampled_from(["", "docs/", "C:\\tmp\\"]))
def test_secret_in_a_file_name_is_redacted_and_the_extension_kept(kw, joiner, value, ext, folder):
    if kw == "pin":
        value = "".join(c for c in value if c.isdigit()).rjust(6, "3")
    if kw == "pw" and joiner in "_-":
        return  # `pw-…` / `pw_…` is too often a name part (pw_hash, pw-2)
    name = f"{kw}{joiner}{value}{ext}"
    out = redact_file_name(name)
    assert value not in out and out.endswith(ext), (name, out)
    text = store_indexed_text(["x/" + folder + name if folder else name])
    assert value not in text and "attachments:" in text, (name, text)


def store_indexed_text(attachments):
    return indexed_text({"kind": "request", "body": "添付します", "attachments": attachments})


@pytest.mark.parametrize("name", ["report_2026-06.csv", "password_policy_v2.pdf", "token_usage.ipynb",
                                  "login-screen.png", "backup_v2.tar.gz", "passwords_2026.xlsx", "password.txt",
                                  "README", ".env", "secret-sauce-recipe.md", "api_key_rotation_plan.md",
                                  "pin_numpy_to_1.26.txt", "PW-2_phase_plan.docx", "Qwen3-Embedding-8B.json"])
def test_ordinary_file_names_are_kept(name):
    assert redact_file_name(name) == name
    assert store_indexed_text([name]) == f"添付します\nattachments: {name}"


def test_attachment_name_from_the_audit():
    out = store_indexed_text(["docs/password=attsecret55.txt", "login-screen.png"])
    assert out == f"添付します\nattachments: password={SECRET}.txt, login-screen.png"


def test_new_corpus_forms_are_in_both_generated_splits():
    for split in corpus.GENERATED:
        forms = {p.form for p in corpus.planted(split)}
        assert set(corpus.AUDIT_TEMPLATES) <= forms, split
        assert "audit_ordinary" in {o.form for o in corpus.ordinary(split)}
    assert len(corpus.FORMS) == 30  # 15 forms + kw_inflected + 6 from the audit + 5 shapes of issue 27 + 4 follow-up forms
