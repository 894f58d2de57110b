"""The workspace loader and its never-index policy after the audit of issues 7-8 (H1, H2, H15).

1. journal / message-history tables named in Russian or Japanese, and their channel / sender / text
   columns, never reach the index (while ``шаблоны_сообщений`` / ``メッセージテンプレート`` stay);
2. secret columns in ru/ja and ``*_key`` / ``*_url`` / ``dsn`` by what they unlock; cell contents are
   sniffed: key material is left out, other secrets are redacted, the report names TABLE.COLUMN#ROW;
3. secrets inside files (``KEY=`` URLs, dotenv files by any name, docker-compose, database.yml,
   wp-config.php, JWTs, webhooks) are skipped or redacted, never shown; ordinary text is untouched;
4. a hard-linked file is never read (``hard_link``), wherever the loader reads;
5. reading a workspace writes nothing into it (WAL-mode ``app.sqlite`` included), and data in an
   existing ``-wal`` is still read;
6. ISO-2022-JP text is decoded; UTF-8 with a stray byte is read with U+FFFD, binaries stay out;
7. a ``users.json`` that cannot be read is reported once.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchkit.ingest.policy import DEFAULT_POLICY, RULES, decode_text, name_tokens
from searchkit.ingest.workspace import load_workspace

P = DEFAULT_POLICY
ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
HASHING = ROOT / "tests" / "data" / "hashing.json"


def write(root: Path, rel: str, content) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
    return path


def space(root: Path, slug: str, members=("u-anna",), **extra) -> Path:
    write(root, f"{slug}/.space/space.json", {"slug": slug, "title": slug, "members": list(members), **extra})
    return root / slug


def load(root: Path):
    result = load_workspace(root)
    for s in result.report.skips + result.report.notes:
        assert s.rule in RULES
    return result


def blob(result) -> str:
    return "\n".join(r.text + "\n" + r.title + "\n" + json.dumps(dict(r.fields), default=str, ensure_ascii=False)
                     for r in result.records)


def report_text(result) -> str:
    return json.dumps(result.report.to_dict(), ensure_ascii=False)


def entries(result, rule: str) -> dict[str, str]:
    return {s.path_or_table: s.detail for s in result.report.skips + result.report.notes if s.rule == rule}


def _db(path: Path, tables: dict[str, list[str]], rows: dict[str, list[tuple]] | None = None,
        wal: bool = False) -> sqlite3.Connection | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=wal")
    for name, cols in tables.items():
        defs = ", ".join(f'"{c}" TEXT' for c in cols)
        conn.execute(f'CREATE TABLE "{name}" (id INTEGER PRIMARY KEY, {defs}, updated_at TEXT)')
        for i, row in enumerate((rows or {}).get(name, [tuple(f"{name} {c} value" for c in cols)]), start=1):
            marks = ", ".join("?" for _ in cols)
            conn.execute(f'INSERT INTO "{name}" (id, {", ".join(chr(34) + c + chr(34) for c in cols)}, updated_at) '
                         f'VALUES (?, {marks}, ?)', (i, *row, "2026-10-01"))
    conn.commit()
    conn.close()
    return None


# == 1. ru/ja journal and message-history tables ==================================================

RU_JA_JOURNALS = [
    "сообщения", "история", "журнал", "メッセージ", "履歴", "チャット", "ログ", "監査", "переписка", "чат", "события",
    "аудит", "архив_сообщений", "сообщения_архив", "личные_сообщения", "сообщения_клиентов", "история_заказов",
    "журнал_изменений", "лог_ошибок", "чаты_2024", "старые_чаты", "клиент_чаты", "входящие", "уведомления",
    "комментарии", "チャット履歴", "メッセージ履歴", "監査ログ", "操作ログ", "送信履歴", "アーカイブメッセージ",
    "メッセージアーカイブ", "メッセージ_旧", "ﾒｯｾｰｼﾞ", "ダイレクトメッセージ", "通知", "会話", "コメント", "イベント",
    "DMログ", "СообщенияV2", "業務日誌",
]
RU_JA_DATA = [
    "шаблоны_сообщений", "шаблон_сообщения", "статусы_сообщений", "настройки_уведомлений", "календарь_событий",
    "задачи", "клиенты", "сделки", "счета", "товары", "отчёты", "данные", "メッセージテンプレート", "イベント計画",
    "ログイン設定", "カタログ", "商品カタログ", "ブログ", "バックログ", "履歴書", "タスク", "顧客", "通知設定",
    "メールアドレス", "売上",
]


@pytest.mark.parametrize("name", RU_JA_JOURNALS)
def test_ru_ja_journal_tables_are_skipped(name):
    assert P.table_skip(name, ["id", "updated_at"])[0] == "journal_table", name


@pytest.mark.parametrize("name", RU_JA_DATA)
def test_ru_ja_data_tables_stay(name):
    assert P.table_skip(name, ["id", "title", "updated_at"]) is None, name


RU_HEADS = ["сообщения", "сообщение", "история", "чат", "чаты", "диалоги", "переписка", "события", "уведомления",
            "комментарии", "письма", "логи", "треды"]
RU_GENITIVES = ["сообщений", "событий", "уведомлений", "чатов", "комментариев", "писем", "диалогов"]
RU_COMPLEMENTS = ["клиентов", "команды", "заказов", "поддержки", "пользователей"]
RU_LEADING = ["личные", "старые", "архивные", "клиентские", "групповые", "входящие", "все"]
RU_TRAILING = ["архив", "копия", "бэкап", "2024", "v2", "old", "тест", "выгрузка"]
RU_DATA_HEADS = ["шаблоны", "шаблон", "статусы", "настройки", "типы", "категории", "планы", "правила", "теги",
                 "счётчики", "календарь", "лимиты"]
JA_PREFIXES = ["", "送信", "受信", "顧客", "社内", "旧", "アーカイブ", "チーム", "サポート"]
JA_HEADS = ["メッセージ", "履歴", "ログ", "チャット", "会話", "通知", "コメント", "スレッド", "トーク", "チャットログ",
            "やり取り", "監査ログ", "ダイレクトメッセージ"]
JA_TRAILING = ["", "アーカイブ", "バックアップ", "一覧", "_2024", "_old", "_v2", "コピー", "データ"]
JA_MESSAGEY_PREFIXES = ["メッセージ", "チャット", "イベント", "通知", "ログイン", "メール", "コメント"]
JA_DATA_HEADS = ["テンプレート", "設定", "計画", "種別", "分類", "タグ", "ルール", "アドレス", "件名", "カタログ", "担当者"]


@settings(max_examples=300, deadline=None)
@given(lead=st.lists(st.sampled_from(RU_LEADING), max_size=1), head=st.sampled_from(RU_HEADS),
       tail=st.lists(st.sampled_from(RU_COMPLEMENTS), max_size=1),
       mods=st.lists(st.sampled_from(RU_TRAILING), max_size=2), sep=st.sampled_from(["_", "-", " "]))
def test_any_russian_message_like_name_is_skipped(lead, head, tail, mods, sep):
    name = sep.join(lead + [head] + tail + mods)
    assert P.journal_table(name), name


@settings(max_examples=200, deadline=None)
@given(mod=st.sampled_from(["архив", "копия", "бэкап", "выгрузка", "экспорт", "дамп"]),
       genitive=st.sampled_from(RU_GENITIVES), sep=st.sampled_from(["_", "-"]))
def test_a_russian_archive_of_messages_is_skipped(mod, genitive, sep):
    assert P.journal_table(f"{mod}{sep}{genitive}")


@settings(max_examples=300, deadline=None)
@given(head=st.sampled_from(RU_DATA_HEADS), genitive=st.lists(st.sampled_from(RU_GENITIVES), max_size=1),
       mods=st.lists(st.sampled_from(["архив", "2024", "v2"]), max_size=1), sep=st.sampled_from(["_", "-"]))
def test_russian_data_tables_about_messages_stay(head, genitive, mods, sep):
    # шаблоны_сообщений is "message templates": kept, as message_templates is
    name = sep.join([head] + genitive + mods)
    assert P.table_skip(name, ["id", "title", "updated_at"]) is None, name


@settings(max_examples=300, deadline=None)
@given(prefix=st.sampled_from(JA_PREFIXES), head=st.sampled_from(JA_HEADS), trail=st.sampled_from(JA_TRAILING),
       width=st.sampled_from(["full", "nfkd"]))
def test_any_japanese_message_like_name_is_skipped(prefix, head, trail, width):
    name = prefix + head + trail
    if width == "nfkd":  # the same name in another Unicode form (half-width kana read as full-width)
        import unicodedata
        name = unicodedata.normalize("NFKD", name)
    assert P.journal_table(name), name


@settings(max_examples=300, deadline=None)
@given(prefix=st.sampled_from(JA_MESSAGEY_PREFIXES), head=st.sampled_from(JA_DATA_HEADS),
       sep=st.sampled_from(["", "_"]))
def test_japanese_data_tables_about_messages_stay(prefix, head, sep):
    name = prefix + sep + head
    assert P.table_skip(name, ["id", "title", "updated_at"]) is None, name


CHANNELS = ["канал", "канал_id", "id_канала", "чат_id", "チャンネル", "チャンネルID", "チャネル", "ルームID", "スレッドID"]
SENDERS = ["автор", "отправитель", "id_автора", "пользователь_id", "送信者", "送信者ID", "差出人", "投稿者", "ユーザーID"]
TEXTS = ["текст", "сообщение", "содержание", "本文", "内容", "メッセージ", "テキスト", "メッセージ本文"]


@settings(max_examples=200, deadline=None)
@given(channel=st.sampled_from(CHANNELS), sender=st.sampled_from(SENDERS), text=st.sampled_from(TEXTS),
       extra=st.lists(st.sampled_from(["создано", "статус", "作成日時", "既読"]), max_size=2, unique=True))
def test_ru_ja_message_history_columns(channel, sender, text, extra):
    cols = ["id", channel, sender, text, *extra, "updated_at"]
    assert P.table_skip("записи", cols)[0] == "message_history_table", cols
    assert P.table_skip("records", [c for c in cols if c != text]) is None  # two of three is not a history


def test_ru_ja_message_tables_never_reach_the_index(tmp_path):
    space(tmp_path, "s")
    tables = {name: ["текст"] for name in ["сообщения", "история_заказов", "メッセージ", "チャット履歴", "監査ログ",
                                            "архив_сообщений"]}
    tables["задачи_чата"] = ["канал", "автор", "текст"]
    tables["投稿"] = ["チャンネル", "送信者", "本文"]
    tables["шаблоны_сообщений"] = ["текст"]
    tables["メッセージテンプレート"] = ["本文"]
    _db(tmp_path / "s/.space/app.sqlite", tables)
    result = load(tmp_path)
    kept = {r.fields["table"] for r in result.records if r.kind == "app"}
    assert kept == {"шаблоны_сообщений", "メッセージテンプレート"}, kept
    skipped = {k.rsplit(":", 1)[-1]: v for k, v in
               {s.path_or_table: s.rule for s in result.report.skips if "app.sqlite:" in s.path_or_table}.items()}
    assert skipped["задачи_чата"] == skipped["投稿"] == "message_history_table"
    for name in ["сообщения", "история_заказов", "メッセージ", "チャット履歴", "監査ログ", "архив_сообщений"]:
        assert skipped[name] == "journal_table", name


def test_name_tokens_normalise_and_split_scripts():
    assert name_tokens("ＡＰＩキー") == ("api", "キー")
    assert name_tokens("ﾁｬﾝﾈﾙID") == ("チャンネル", "id")
    assert name_tokens("メッセージ履歴") == ("メッセージ", "履歴")
    assert name_tokens("ИсторияСообщений") == ("история", "сообщений")
    assert name_tokens("chat_messages_v2") == ("chat", "messages", "v", "2")


# == 2. secret columns, and secrets inside cells ===================================================

SECRET_COLUMNS = [
    "пароль", "токен", "ключ_api", "api_ключ", "секрет", "хеш_пароля", "пин_код", "ключ_доступа", "секретный_ключ",
    "строка_подключения", "パスワード", "トークン", "暗証番号", "シークレット", "APIキー", "ＡＰＩキー", "秘密鍵",
    "ログインパスワード", "アクセストークン", "stripe_key", "aws_key", "secret_key", "private_key", "signing_key",
    "db_url", "database_url", "connection_string", "dsn", "webhook_url", "sentry_dsn", "redis_url", "mongo_uri",
    "slack_webhook_url", "StripeKey", "AWS_KEY", "dbUrl",
]
ORDINARY_COLUMNS = [
    "primary_key", "foreign_key", "sort_key", "key_name", "public_key", "partition_key", "cache_key", "idempotency_key",
    "key", "ключ", "количество_токенов", "лимит_токенов", "トークン数", "トークン上限", "ключевые_слова", "キーワード",
    "url", "website_url", "image_url", "callback_url", "автор", "название", "секретарь", "ピン留め", "パス", "tokens_used",
    "max_tokens", "key_result", "hotkey", "monkey", "turnkey",
]


@pytest.mark.parametrize("column", SECRET_COLUMNS)
def test_secret_columns_in_every_language(column):
    assert P.secret_column(column), column


@pytest.mark.parametrize("column", ORDINARY_COLUMNS)
def test_ordinary_columns_stay(column):
    assert not P.secret_column(column), column


STYLES = st.sampled_from(["snake", "upper", "camel", "kebab"])


def _join(words, style):
    if style == "snake":
        return "_".join(words)
    if style == "upper":
        return "_".join(w.upper() for w in words)
    if style == "kebab":
        return "-".join(words)
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])


@settings(max_examples=300, deadline=None)
@given(prefix=st.lists(st.sampled_from(["user", "prod", "old", "my"]), max_size=1),
       owner=st.sampled_from(["stripe", "aws", "secret", "private", "signing", "api", "github", "openai", "hmac",
                              "encryption", "master", "license", "ssh", "webhook", "app", "service"]),
       style=STYLES)
def test_a_key_named_by_what_it_unlocks_is_secret(prefix, owner, style):
    assert P.secret_column(_join(prefix + [owner, "key"], style))


@settings(max_examples=300, deadline=None)
@given(prefix=st.lists(st.sampled_from(["user", "order", "table", "row"]), max_size=1),
       kind=st.sampled_from(["primary", "foreign", "sort", "partition", "cache", "public", "publishable",
                             "idempotency", "lookup", "unique", "composite", "natural", "row", "hash", "group"]),
       suffix=st.lists(st.sampled_from(["id", "name", "type", "value"]), max_size=1), style=STYLES)
def test_a_structural_key_is_not_secret(prefix, kind, suffix, style):
    assert not P.secret_column(_join(prefix + [kind, "key"] + suffix, style))


@settings(max_examples=200, deadline=None)
@given(owner=st.sampled_from(["db", "database", "postgres", "mysql", "redis", "mongo", "amqp", "broker", "webhook",
                              "connection"]),
       word=st.sampled_from(["url", "uri", "dsn"]), style=STYLES)
def test_a_connection_url_column_is_secret(owner, word, style):
    assert P.secret_column(_join([owner, word], style))


PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1x2Zk8c3PvZ0qW7vQeXw1yK3aB9eZ6mN2oL4pQ8rS0tU1vW2\n"
       "xY3zA4bC5dE6fG7hI8jK9lM0nO1pQ2rS3tU4vW5xY6zA7bC8dE9fG0hI1jK2lM3n\n-----END RSA PRIVATE KEY-----")


def test_secret_cells_are_dropped_or_redacted_and_reported_by_place(tmp_path):
    space(tmp_path, "s")
    rows = [
        ("deploy key", PEM),
        ("prod db", "connect with postgres://admin:Sup3rS3cretPw@db.acme.local/prod for the nightly job"),
        ("stripe", "live key sk_live_4eC39HqLyjWDarjtT1zdp7dcXQ for billing"),
        ("plain", "Обычная заметка о выгрузке отчёта ATL-707"),
        ("стенд", "пароль от стенда: Qw3rtyStend987, менять раз в квартал"),
    ]
    _db(tmp_path / "s/.space/app.sqlite", {"notes": ["title", "body"]}, {"notes": rows})
    result = load(tmp_path)
    text = blob(result)
    for secret in ("MIIEowIBAAKCAQEA1x2Zk8c3", "Sup3rS3cretPw", "sk_live_4eC39HqLyjWDarjtT1zdp7dcXQ", "Qw3rtyStend987"):
        assert secret not in text and secret not in report_text(result)
    cards = {r.fields["row_id"]: r.text for r in result.records if r.kind == "app"}
    assert set(cards) == {1, 2, 3, 4, 5}
    # key material (a private key, a provider token) is left out of its row, as such a file is skipped
    assert "body:" not in cards[1] and "deploy key" in cards[1]
    assert "body:" not in cards[3] and "stripe" in cards[3]
    # any other secret is redacted in place
    assert "postgres://[redacted]@db.acme.local/prod" in cards[2] and "nightly job" in cards[2]
    assert "пароль от стенда: [redacted]" in cards[5] and "раз в квартал" in cards[5]
    assert "Обычная заметка о выгрузке отчёта ATL-707" in cards[4] and "[redacted]" not in cards[4]
    where = "s/.space/app.sqlite:notes.body#"
    assert set(entries(result, "secret_content")) == {where + "1", where + "3"}
    assert set(entries(result, "redacted")) == {where + "2", where + "5"}


# == 3. secrets inside files: skipped or redacted, never shown ======================================

def _value(rng: random.Random) -> str:
    letters = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"
    core = "".join(rng.choice(letters + "23456789") for _ in range(rng.randint(10, 20)))
    return rng.choice(letters) + core + rng.choice("23456789")


FORMS = {
    "dotenv line in prose": lambda v: f"Настройки стенда.\nDATABASE_URL=postgres://admin:{v}@db.acme.local/prod\nСм. ATL-707.",
    "KEY= line": lambda v: f"Deploy notes\nSECRET_KEY={v}\nRestart after editing.",
    "export line": lambda v: f"#!/bin/sh\nexport API_TOKEN=\"{v}\"\n./run.sh --fast\n",
    "docker-compose": lambda v: ("services:\n  db:\n    image: postgres:16\n    environment:\n"
                                 f"      POSTGRES_PASSWORD: {v}\n      POSTGRES_DB: app\n"),
    "database.yml": lambda v: f"production:\n  adapter: postgresql\n  username: app\n  password: {v}\n  host: db\n",
    "php define": lambda v: f"<?php\n// database\ndefine('DB_PASSWORD', '{v}');\ndefine('DB_HOST', 'localhost');\n",
    "json key": lambda v: f'{{"name": "billing", "api_key": "{v}", "retries": 3}}',
    "ru keyword": lambda v: f"Доступ к серверу: логин admin, пароль: {v}. Сменить до пятницы.",
    "ja keyword": lambda v: f"本番サーバーのパスワード: {v} です。金曜までに変更。",
    "url in prose": lambda v: f"Mirror: https://deploy:{v}@git.acme.local/repo.git (read only)",
    "stripe token": lambda v: f"billing uses sk_live_{v}{v} since October",
    "slack webhook": lambda v: f"alerts go to https://hooks.slack.com/services/T0123ABCD/B0456EFGH/{v}xyz",
    "jwt": lambda v: f"token for tests eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ{v}In0.{v}dozjgNryP4J3jVmNHl0w5N",
    "stripe_key assignment": lambda v: f"STRIPE_KEY={v}\nDEBUG=false",
}
NAMES = ["config/settings.txt", "notes/deploy.md", "env.production", "prod.env", "app.yaml", "docker-compose.yml",
         "config/database.yml", "scripts/setup.sh", "notes/стенд.txt", "メモ.txt"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(form=st.sampled_from(sorted(FORMS)), name=st.sampled_from(NAMES), seed=st.integers(0, 2**32 - 1))
def test_a_secret_in_a_file_is_never_shown(tmp_path_factory, form, name, seed):
    root = tmp_path_factory.mktemp("ws")
    space(root, "s")
    value = _value(random.Random(seed))
    write(root, f"s/{name}", FORMS[form](value))
    result = load(root)
    assert value not in blob(result), (form, name)
    assert value not in report_text(result)
    where = f"s/{name}"
    skipped = {s.path_or_table: s.rule for s in result.report.skips}
    if skipped.get(where) is None:  # indexed: with the secret redacted and a note naming the rule
        assert where in entries(result, "redacted"), (form, name)
        assert "[redacted]" in next(r.text for r in result.records if r.ref == name)
    else:
        assert skipped[where] in ("secret_content", "credential_file"), (form, name, skipped[where])


@pytest.mark.parametrize("name, content, outcome", [
    ("config/settings.txt", ("Стенд: db.acme.local\nDATABASE_URL=postgres://admin:Sup3rS3cret@db.acme.local/prod\n"
                             "Ответственный: Борис"), "redacted"),
    ("env.production", "# prod\nSECRET_KEY=django-insecure-8f7a6s5d4f3g\nDEBUG=False\n", "secret_content"),
    ("prod.env", "SECRET_KEY=Sup3rS3cret\n", "secret_content"),
    ("deploy/stage.env", "export DB_PASSWORD='Sup3rS3cret'\nHOST=db\n", "secret_content"),
    ("docker-compose.yml", "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: Sup3rS3cret\n", "redacted"),
    ("config/database.yml", "production:\n  password: Sup3rS3cret\n", "redacted"),
    ("app.yaml", "env_variables:\n  DB_PASSWORD: 'Sup3rS3cret'\n", "redacted"),
    ("wp-config.php", "<?php\ndefine('DB_PASSWORD', 'Sup3rS3cret');\n", "credential_file"),
    ("notes/jwt.txt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJTdXAzclMzY3JldCJ9.Sup3rS3cretSignature_abc", "redacted"),
    ("notes/alerts.md", "Alerts: https://hooks.slack.com/services/T000/B000/Sup3rS3cretXXXXXXXX", "redacted"),
])
def test_each_audited_secret_file(tmp_path, name, content, outcome):
    space(tmp_path, "s")
    write(tmp_path, f"s/{name}", content)
    result = load(tmp_path)
    assert "Sup3rS3cret" not in blob(result) and "Sup3rS3cret" not in report_text(result)
    where = f"s/{name}"
    if outcome == "redacted":
        assert where in entries(result, "redacted")
        assert any(r.ref == name for r in result.records)
    else:
        assert {s.path_or_table: s.rule for s in result.report.skips}[where] == outcome


def test_secrets_in_chats_pages_sources_and_digests_are_redacted(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/.space/chats/ses_a.json", {"ses_id": "ses_a", "title": "доступы", "messages": [
        {"role": "user", "ts": "2026-10-21T10:00:00+03:00", "text": "пароль от стенда: Sup3rS3cret9, не теряйте"}]})
    write(tmp_path, "s/.space/digests/t1.json", {"turn_id": "t1", "ses_id": "ses_a", "ts": "2026-10-21T10:00:00+03:00",
                                               "asked": "доступ к базе", "done": "DB_PASSWORD=Sup3rS3cret9 выдан"})
    write(tmp_path, "s/.space/pages/p1.json", {"uuid": "p1", "title": "Dashboards",
                                               "body": "API key: sk_live_Sup3rS3cret9Sup3rS3cret9"})
    write(tmp_path, "s/.space/sources.jsonl", json.dumps(
        {"uuid": "src1", "title": "Mirror", "url": "https://bot:Sup3rS3cret9@git.acme.local/x.git"}) + "\n")
    result = load(tmp_path)
    assert {r.kind for r in result.records} == {"chat", "digest", "page", "source"}
    assert "Sup3rS3cret9" not in blob(result) and "Sup3rS3cret9" not in report_text(result)
    assert set(entries(result, "redacted")) == {"s/.space/chats/ses_a.json", "s/.space/digests/t1.json",
                                                "s/.space/pages/p1.json", "s/.space/sources.jsonl:1"}


ORDINARY_FILES = {
    "notes/policy.md": "The password policy requires 12 characters; rotate deploy keys monthly.",
    "notes/limits.yaml": "max_tokens: 4096\ntemperature: 0.2\nmodel: qwen3\n",
    "notes/ru.md": "Ключевые показатели: выручка 12 млн ₽, PIN-код карты не храним. Код задачи ATL-707.",
    "notes/ja.md": "トークン数の上限は 4096 です。パスワードは各自で管理してください。",
    "config/app.env.md": "HOST=db.acme.local\nPORT=5432\nDEBUG=false\n",
    "docker-compose.yml": "services:\n  web:\n    image: nginx:1.27\n    ports:\n      - \"8080:80\"\n",
    "notes/links.md": "Docs: https://docs.acme.local/guide and image_url: https://cdn.acme.local/a.png",
    "notes/contacts.md": "Пишите anna@acme.example, Борис — boris@acme.example.",
}


def test_ordinary_files_are_indexed_untouched(tmp_path):
    space(tmp_path, "s")
    for rel, text in ORDINARY_FILES.items():
        write(tmp_path, f"s/{rel}", text)
    result = load(tmp_path)
    files = {r.ref: r.text for r in result.records if r.kind == "file"}
    for rel, text in ORDINARY_FILES.items():
        assert files.get(rel) == text.strip(), rel
    assert not entries(result, "redacted") and not entries(result, "secret_content")


def test_the_demo_workspace_has_nothing_to_redact():
    result = load(DEMO)
    assert not entries(result, "redacted") and not entries(result, "hard_link")


# == 4. hard links are never read ==================================================================

HARD_LINKED = {
    "chats/ses_x.json": {"ses_id": "ses_x", "title": "t", "visibility": "personal", "owner": "u-vera",
                         "messages": [{"role": "user", "ts": "2026-10-21T10:00:00+03:00", "text": "HARDLINKED-9f"}]},
    "pages/p.json": {"uuid": "p-x", "title": "page", "body": "HARDLINKED-9f"},
    "sources.jsonl": json.dumps({"uuid": "src-x", "title": "HARDLINKED-9f"}) + "\n",
    "files.json": {"notes/a.md": "2026-10-01T00:00:00Z"},
}


@pytest.mark.parametrize("rel", sorted(HARD_LINKED) + ["digests/t.json", "../notes/a.md", "../log.md", "app.sqlite",
                                                       "space.json"])
def test_a_hard_link_is_never_read(tmp_path, rel):
    other = space(tmp_path, "other", members=["u-vera"])
    mine = space(tmp_path, "mine", members=["u-anna"])
    write(tmp_path, "mine/notes/ok.md", "a note of my own")
    write(tmp_path, "other/.space/chats/ses_x.json", HARD_LINKED["chats/ses_x.json"])
    source = other / ".space" / rel
    if rel == "app.sqlite":
        _db(source, {"deals": ["title"]}, {"deals": [("HARDLINKED-9f",)]})
    elif rel == "digests/t.json":
        write(other, ".space/digests/t.json", {"turn_id": "t", "ses_id": "ses_x", "asked": "HARDLINKED-9f"})
        write(mine, ".space/chats/ses_x.json", {**HARD_LINKED["chats/ses_x.json"], "owner": "u-anna", "messages": [
            {"role": "user", "ts": "2026-10-21T10:00:00+03:00", "text": "my own chat"}]})
    elif rel == "space.json":
        source = other / ".space" / "space.json"
    elif rel not in ("chats/ses_x.json",):
        write(other, f".space/{rel}", HARD_LINKED.get(rel, "HARDLINKED-9f log and note"))
    target = mine / ".space" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    os.link(source, target)
    result = load(tmp_path)
    mine_records = [r for r in result.records if r.space == "mine"]
    assert all("HARDLINKED-9f" not in r.text for r in mine_records)
    linked = {s.path_or_table: s.rule for s in result.report.skips if s.rule == "hard_link"}
    expected = os.path.normpath(f"mine/.space/{rel}")
    assert expected in linked, (expected, linked)
    assert os.path.normpath(f"other/.space/{rel}") in linked  # both names of the file: neither is read
    if rel == "space.json":
        assert "mine" not in result.spaces
    else:
        assert any(r.ref == "notes/ok.md" for r in mine_records)  # the rest of the space loads


def test_a_hard_linked_users_json_is_skipped_once(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "users.json", [{"id": "u-anna", "name": "Анна"}])
    os.link(tmp_path / "users.json", tmp_path / "s" / "users-copy.txt")
    result = load(tmp_path)
    assert [s.rule for s in result.report.skips if s.path_or_table == "users.json"] == ["hard_link"]


# == 5. reading a workspace writes nothing into it =================================================

def _snapshot(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root) + "/"] = "dir"
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _wal_workspace(root: Path, keep_open: bool) -> sqlite3.Connection | None:
    space(root, "s", members=["u-anna"])
    write(root, "s/notes/a.md", "заметка")
    db = root / "s/.space/app.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("CREATE TABLE deals (id INTEGER PRIMARY KEY, title TEXT, updated_at TEXT)")
    conn.execute("INSERT INTO deals VALUES (1, 'checkpointed deal', '2026-10-01')")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if not keep_open:
        conn.close()
        return None
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("INSERT INTO deals VALUES (2, 'deal only in the wal Globex', '2026-10-02')")
    conn.commit()
    assert (root / "s/.space/app.sqlite-wal").stat().st_size > 0
    return conn


@pytest.mark.parametrize("keep_open", [False, True], ids=["wal-mode, no -wal", "data in an existing -wal"])
def test_loading_writes_nothing_into_the_workspace(tmp_path, keep_open):
    root = tmp_path / "ws"
    conn = _wal_workspace(root, keep_open)
    try:
        before = _snapshot(root)
        result = load(root)
        assert _snapshot(root) == before
        titles = {r.text.splitlines()[1] for r in result.records if r.kind == "app"}
        expected = {"title: checkpointed deal"} | ({"title: deal only in the wal Globex"} if keep_open else set())
        assert titles == expected
    finally:
        if conn is not None:
            conn.close()


def test_index_and_history_write_nothing_into_the_workspace(tmp_path):
    root = tmp_path / "ws"
    conn = _wal_workspace(root, keep_open=True)
    try:
        before = _snapshot(root)
        exe = Path(sys.executable).parent / "searchkit"
        env = {**os.environ, "SEARCHKIT_CACHE": str(tmp_path / "cache.sqlite")}
        for args in (["index", "--workspace", str(root), "--out", str(tmp_path / "idx"), "--quiet"],
                     ["history", "Globex deal", "--workspace", str(root), "--caller", "u-anna", "--space", "s",
                      "--json"]):
            p = subprocess.run([str(exe), *args, "--config", str(HASHING)], capture_output=True, text=True,
                               env=env, timeout=300, cwd=tmp_path, check=False)
            assert p.returncode == 0, p.stderr
            assert _snapshot(root) == before, args
        assert "deal only in the wal Globex" in p.stdout
    finally:
        conn.close()


# == 6. encodings ================================================================================

JA_TEXT = st.text(alphabet=st.sampled_from(list("会議は明日ですの件報告書日本語カタカナテストひらがな、。ABC 123\n")),
                  min_size=1, max_size=300)


@settings(max_examples=200, deadline=None)
@given(text=JA_TEXT)
def test_iso_2022_jp_text_is_decoded(text):
    data = text.encode("iso2022_jp")
    decoded = decode_text(data)
    if b"\x1b" not in data:  # plain ASCII: it is ASCII
        assert decoded.text == text
        return
    assert decoded.text == text and decoded.encoding.startswith("iso2022_jp"), decoded


def test_an_iso_2022_jp_file_is_indexed_as_japanese(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "s/notes/jis.txt", "会議の議事録：ATL-707 は金曜に出荷。".encode("iso2022_jp"))
    result = load(tmp_path)
    record = next(r for r in result.records if r.ref == "notes/jis.txt")
    assert record.text == "会議の議事録：ATL-707 は金曜に出荷。"
    assert "iso2022_jp" in entries(result, "decoded")["s/notes/jis.txt"]


BODY = st.text(alphabet=st.sampled_from(list("Привет мир отчёт выгрузка 会議は明日です hello world ATL-707 .,\n")),
               min_size=60, max_size=600)


@settings(max_examples=300, deadline=None)
@given(text=BODY, stray=st.sampled_from([b"\xff", b"\xfe", b"\xc3", b"\x80", b"\xe3\x81"]), where=st.floats(0, 1))
def test_utf8_with_one_stray_byte_is_text(text, stray, where):
    data = text.encode("utf-8")
    if all(ord(ch) < 0x80 for ch in text):
        data = "отчёт ".encode() + data  # some valid multi-byte UTF-8, as real text has
    cut = int(where * len(data))
    damaged = data[:cut] + stray + data[cut:]
    decoded = decode_text(damaged)
    assert decoded.text is not None, decoded
    assert decoded.encoding == "utf_8" and decoded.replaced >= 1
    assert "\ufffd" in decoded.text
    kept = damaged.decode("utf-8", "replace").replace("\ufffd", "")
    assert decoded.text.replace("\ufffd", "") == kept


def test_a_damaged_utf8_file_is_indexed_and_noted(tmp_path):
    space(tmp_path, "s")
    text = "Итоги квартала: выручка выросла на 12%. ATL-707 закрыта. " * 5
    data = text.encode()
    write(tmp_path, "s/notes/q3.md", data[:40] + b"\xff" + data[40:])
    result = load(tmp_path)
    record = next(r for r in result.records if r.ref == "notes/q3.md")
    assert "ATL-707 закрыта" in record.text
    assert "replaced" in entries(result, "decoded")["s/notes/q3.md"]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(200, 4000), share=st.sampled_from([0.03, 0.1, 0.3]))
def test_damaged_utf8_needs_99_percent_valid_bytes(seed, size, share):
    # bytes broken in many places are never read as "UTF-8 with a few stray bytes" (the rest of the
    # decoder judges them, as before), and random bytes stay binary
    rng = random.Random(seed)
    text = bytearray(("отчёт готов " * (size // 12 + 1)).encode()[:size])
    spots = sorted(rng.sample(range(0, size, 12), max(2, int(size * share / 12) + 1, size // 100 + 1)))
    for spot in spots:  # 0xFF is never valid in UTF-8; spots are 12 bytes apart: many damaged places
        text[spot] = 0xFF
    assert decode_text(bytes(text)).replaced == 0
    assert decode_text(bytes(rng.randrange(256) for _ in range(size))).text is None


def test_legacy_8bit_text_is_not_read_as_damaged_utf8():
    decoded = decode_text("Café crème, résumé and naïve façade — all in one note.".encode("cp1252"))
    assert decoded.replaced == 0 and "Café crème" in decoded.text


# == 7. users.json that cannot be read is reported once =============================================

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_users_json_is_reported_once(tmp_path):
    space(tmp_path, "s")
    os.mkfifo(tmp_path / "users.json")
    result = load(tmp_path)
    assert [s.rule for s in result.report.skips if s.path_or_table == "users.json"] == ["special_file"]


def test_a_linked_users_json_is_reported_once(tmp_path):
    space(tmp_path, "s")
    write(tmp_path, "elsewhere.json", [{"id": "u-anna", "name": "Анна"}])
    (tmp_path / "users.json").symlink_to(tmp_path / "elsewhere.json")
    result = load(tmp_path)
    assert [s.rule for s in result.report.skips if s.path_or_table == "users.json"] == ["symlink"]
