"""The shapes people write secrets in (issue 27 item 2): a generator for the redaction corpus.

An audit found that of 25 realistic phrasings 16 survived redaction in history cards and 11 in task
excerpts (``password: Summer-2026``, ``password: Hunter_2``, ``token: TOKENJA_99``, ``export
DB_PASS=Autumn-2025``, ``ключ API: КЛЮЧ_API_88``, ``PASSWORD =\\n value``), while the corpus of
``corpus.py`` reported none: its values were all ``hunter2xyz``-like. This module composes

* **values** of the kinds people choose (``VALUE_KINDS``): words with digits, a capitalised word
  and a year, words joined by ``_`` or ``-`` with a number, Cyrillic and Japanese values, values
  that mix scripts;
* **shapes** (``SHAPE_TEMPLATES``): a key word and the value in ru/ja/en prose, environment
  assignments (``export X_PASS=…``, ``DB_PASSWORD=…``, ``SECRET_KEY="…"``, ``docker run -e``),
  configuration lines (YAML, INI, ``.env``, TOML, JSON, PHP/Go/XML), multi-line blocks (the key
  on one line, the value on the next, a YAML ``|`` block) and mixed scripts;
* **ordinary lines** of the same shapes without a secret (``ORDINARY_SHAPE_TEMPLATES``):
  ``password: changed``, ``token: see vault``, ``export PATH=/usr/bin``, ``ключ API: в хранилище``,
  ``PASSWORD_MIN_LENGTH=12``, ``api_key: ${API_KEY}`` — so the false-redaction rate is measured
  on text that resembles the new shapes, not only on prose.

Held out: every third template of each shape and language, a quarter of the key words and
variable names (never seen in ``dev``), other base words for the values, and another seed make
the ``heldout`` split; the rules were fixed on ``dev`` alone (``README.md`` gives both figures).

Plain data and functions (no dataclasses): ``corpus.py`` loads this file by path and wraps the
tuples. All text is synthetic; no real secret. MIT, like the project.
"""
from __future__ import annotations

import random
import re
import string
from typing import Callable

# ---------------------------------------------------------------------------------------------
# Held-out discipline: a part of every vocabulary appears only in ``heldout``
# ---------------------------------------------------------------------------------------------


def _part(items: list[str], split: str) -> list[str]:
    """Every fourth item is held out: ``heldout`` draws from all, ``dev`` never sees those."""
    return list(items) if split == "heldout" else [x for i, x in enumerate(items) if i % 4 != 3]


def _templates(templates: list[str], split: str) -> list[str]:
    """Every third template is held out; ``dev`` gets the others."""
    return [t for i, t in enumerate(templates) if (i % 3 == 2) == (split == "heldout")]


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------

_BASE = {
    "dev": {
        "en": ["summer", "hunter", "autumn", "winter", "falcon", "orange", "tiger", "rocket", "maple", "cobalt"],
        "ru": ["лето", "зима", "ключ", "пароль", "москва", "солнце", "кот", "ракета", "берёза", "секрет"],
        "ja": ["夏休み", "ひみつ", "さくら", "サクラ", "ねこ", "秘密のカギ", "トークン", "やま", "ふじ", "ゆき"],
    },
    "heldout": {
        "en": ["spring", "dragon", "monday", "harbor", "violet", "panther", "meadow", "comet", "ember", "lotus"],
        "ru": ["весна", "осень", "дракон", "звезда", "река", "пароход", "пингвин", "облако", "клён", "щука"],
        "ja": ["はる", "こはく", "ソラ", "つばさ", "うみ", "ほし", "あおぞら", "カエデ", "もみじ", "みどり"],
    },
}
_SEASONS = {"dev": ["Summer", "Autumn", "Winter", "Hunter", "Falcon"],
            "heldout": ["Spring", "Monday", "October", "Dragon", "Harbor"]}


def _d(rng: random.Random, lo: int = 1, hi: int = 3) -> str:
    return "".join(rng.choice(string.digits) for _ in range(rng.randint(lo, hi)))


def _year(rng: random.Random) -> str:
    return str(rng.choice([2023, 2024, 2025, 2026, 2027]))


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def _word_digits(rng: random.Random, split: str) -> str:
    w = rng.choice(_BASE[split]["en"])
    w = _cap(w) if rng.random() < 0.5 else w
    return w + _d(rng, 1, 4) + rng.choice(["", "", "x", "!", "#", "k"])


def _capital_year(rng: random.Random, split: str) -> str:
    return rng.choice(_SEASONS[split]) + rng.choice(["-", "_", ".", "", "-"]) + _year(rng) + rng.choice(["", "", "!"])


def _underscored(rng: random.Random, split: str) -> str:
    base = _BASE[split]["en"]
    shapes: list[Callable[[], str]] = [
        lambda: _cap(rng.choice(base)) + "_" + _d(rng, 1, 2),                          # Hunter_2
        lambda: rng.choice(base).upper() + rng.choice(["JA", "RU", "EN", "X", ""]) + "_" + _d(rng, 2, 2),  # TOKENJA_99
        lambda: "_".join(rng.sample(base, 2)) + "_" + _d(rng, 2, 3),                    # orange_tiger_42
        lambda: "_".join(_cap(w) for w in rng.sample(base, 2)) + "_" + _d(rng, 1, 2),  # Orange_Tiger_7
    ]
    return rng.choice(shapes)()


def _hyphenated(rng: random.Random, split: str) -> str:
    base = _BASE[split]["en"]
    shapes: list[Callable[[], str]] = [
        lambda: _cap(rng.choice(base)) + "-" + _d(rng, 1, 2),                           # Hunter-2
        lambda: "-".join(rng.sample(base, 2)) + "-" + _d(rng, 1, 2),                    # blue-falcon-9
        lambda: rng.choice(base).upper() + "-" + _d(rng, 2, 3) + rng.choice(["", "!"]),  # TIGER-77
    ]
    return rng.choice(shapes)()


def _cyrillic(rng: random.Random, split: str) -> str:
    base = _BASE[split]["ru"]
    shapes: list[Callable[[], str]] = [
        lambda: _cap(rng.choice(base)) + "-" + _year(rng),                              # Лето-2026
        lambda: rng.choice(base).upper() + "_" + rng.choice(["API", "БД", "ПРОД", "X"]) + "_" + _d(rng, 2, 2),
        lambda: _cap(rng.choice(base)) + _d(rng, 2, 4),                                 # Пароль123
        lambda: "".join(_cap(w) for w in rng.sample(base, 2)) + _d(rng, 1, 2),          # ЗимаЛето7
        lambda: rng.choice(base) + "_" + _d(rng, 2, 3),                                 # секрет_42
        lambda: _cap(rng.choice(base)) + _year(rng) + "!",                              # Москва2026!
    ]
    return rng.choice(shapes)()


def _japanese(rng: random.Random, split: str) -> str:
    base = _BASE[split]["ja"]
    shapes: list[Callable[[], str]] = [
        lambda: rng.choice(base) + _year(rng),                                          # 夏休み2026
        lambda: rng.choice(base) + "_" + _d(rng, 2, 2),                                 # ひみつ_99
        lambda: rng.choice(base) + _year(rng) + "!",                                    # サクラ2026!
        lambda: rng.choice(base) + "-" + _d(rng, 2, 3),                                 # ねこ-77
    ]
    return rng.choice(shapes)()


def _mixed(rng: random.Random, split: str) -> str:
    en, ru, ja = (_BASE[split][k] for k in ("en", "ru", "ja"))
    shapes: list[Callable[[], str]] = [
        lambda: _cap(rng.choice(ru)) + rng.choice(en) + _d(rng, 2, 3),                  # Парольhunter123
        lambda: rng.choice(en).upper() + "_" + rng.choice(ru).upper() + "_" + _d(rng, 2, 2),  # TOKEN_ЛЕТО_77
        lambda: rng.choice(ja) + rng.choice(en) + _d(rng, 2, 2),                        # ひみつhunter99
        lambda: rng.choice(en) + _cap(rng.choice(ru)) + "-" + _d(rng, 2, 2),            # hunterЛето-42
    ]
    return rng.choice(shapes)()


VALUE_KINDS: dict[str, Callable[[random.Random, str], str]] = {
    "word_digits": _word_digits,
    "capital_year": _capital_year,
    "underscored": _underscored,
    "hyphenated": _hyphenated,
    "cyrillic": _cyrillic,
    "japanese": _japanese,
    "mixed_script": _mixed,
}
"""How a value looks: every planted sentence draws one kind at random."""


# ---------------------------------------------------------------------------------------------
# Key words and names
# ---------------------------------------------------------------------------------------------

KEYWORDS = {
    "en": ["password", "Password", "PASSWORD", "token", "Token", "api key", "API key", "API_KEY", "secret",
           "client secret", "access token", "passcode", "db password", "Wi-Fi password", "root password",
           "auth token", "secret key", "bot token", "app password", "refresh token", "master password",
           "signing key", "session secret", "admin password"],
    "ru": ["пароль", "Пароль", "ПАРОЛЬ", "токен", "ключ API", "API-ключ", "секрет", "токен доступа",
           "пароль от БД", "ключ доступа", "секретный ключ", "пароль админа", "токен бота", "пароль root",
           "API ключ", "пароль от Wi-Fi"],
    "ja": ["パスワード", "トークン", "APIキー", "シークレット", "アクセストークン", "管理者パスワード", "API キー",
           "秘密鍵", "パスコード", "DBパスワード", "ボットトークン", "Wi-Fiパスワード", "認証トークン",
           "シークレットキー", "ログインパスワード", "リフレッシュトークン"],
}
"""Key words that introduce a value in prose (a quarter of each list only in ``heldout``)."""

ENV_NAMES = ["DB_PASS", "DB_PASSWORD", "X_PASS", "PGPASSWORD", "POSTGRES_PASSWORD", "REDIS_PASSWORD",
             "SECRET_KEY", "MYSQL_ROOT_PASSWORD", "JWT_SECRET", "API_KEY", "OPENAI_API_KEY", "DJANGO_SECRET_KEY",
             "GITHUB_TOKEN", "AUTH_TOKEN", "SMTP_PASS", "SLACK_BOT_TOKEN", "ADMIN_PASSWORD", "SESSION_SECRET",
             "ACCESS_TOKEN", "MAIL_PASSWORD", "APP_SECRET", "CLIENT_SECRET", "DB_PWD", "STRIPE_SECRET_KEY"]
"""Environment variables that hold a secret (a quarter only in ``heldout``)."""

CONFIG_KEYS = ["password", "db_password", "api_key", "apiKey", "secret", "token", "auth_token", "dbPassword",
               "secret_key", "client_secret", "access_token", "secretAccessKey", "passwd", "pwd", "api-key",
               "clientSecret", "admin_password", "bot_token", "private_token", "appPassword"]
"""Keys of configuration lines that hold a secret (a quarter only in ``heldout``)."""


# ---------------------------------------------------------------------------------------------
# Planted shapes: form -> lang -> templates ({kw} key word, {env} variable, {ck} config key, {v} value)
# ---------------------------------------------------------------------------------------------

SHAPE_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "shape_keyword": {
        "en": ["{kw}: {v}", "{kw} = {v}", "{kw} is {v}", "new {kw}: {v} (rotate later)", "{kw} — {v}",
               "the {kw} for staging is {v}", "ok, {kw}: {v}, thanks", "{kw}={v}", "Your {kw} is {v}.",
               "{kw} set to {v}", "{kw} - {v}", "FYI {kw}: {v}"],
        "ru": ["{kw}: {v}", "{kw} — {v}", "{kw} = {v}", "новый {kw}: {v}", "{kw} теперь {v}",
               "{kw} от стенда: {v}", "{kw} поменял на {v}", "держи {kw}: {v}", "{kw} для бота — {v}"],
        "ja": ["{kw}：{v}", "{kw}: {v}", "{kw}は {v} です", "新しい{kw}：{v}", "{kw} = {v}", "{kw}は「{v}」です",
               "{kw}を {v} に変更しました", "本番の{kw}：{v}（共有厳禁）", "{kw}は{v}です。"],
    },
    "shape_env": {
        "en": ["export {env}={v}", "{env}={v}", "{env}=\"{v}\"", "set {env}={v}", "$env:{env} = \"{v}\"",
               "export {env}='{v}' && ./deploy.sh", "docker run -e {env}={v} app:latest", "env {env}={v} python app.py",
               "  {env}: {v}"],
        "ru": ["запусти так: export {env}={v}", "в .env добавь {env}={v}", "{env}={v} — для стенда",
               "export {env}=\"{v}\"", "поставил {env}={v} в CI", "docker run -e {env}={v} app"],
        "ja": ["export {env}={v} を実行してください", ".env に {env}={v} を追加", "{env}={v}（本番）",
               "export {env}=\"{v}\"", "CI の変数 {env}={v} を設定しました", "docker run -e {env}={v} app"],
    },
    "shape_config": {
        "en": ["{ck}: {v}", "  {ck}: {v}", "db:\n  user: app\n  {ck}: {v}\n  host: db.internal",
               "[database]\nuser = app\n{ck} = {v}", "{ck} = \"{v}\"", "\"{ck}\": \"{v}\"",
               "{{\"user\": \"admin\", \"{ck}\": \"{v}\"}}", "{ck} = '{v}'", "'{ck}' => '{v}',",
               "{ck} := \"{v}\"", "<{ck}>{v}</{ck}>", "{ck} = \"{v}\"  # rotate monthly"],
        "ru": ["в конфиге: {ck}: {v}", "добавил в settings.py: {ck} = '{v}'", "в .ini:\n[db]\n{ck} = {v}",
               "JSON: {{\"{ck}\": \"{v}\"}}", "строка в yaml — {ck}: {v}", "в config.toml: {ck} = \"{v}\""],
        "ja": ["設定ファイル：{ck}: {v}", "settings.py に {ck} = '{v}' を追加", "config.yaml:\n  {ck}: {v}",
               "{{\"{ck}\": \"{v}\"}} を送信", "[db]\n{ck} = {v}\nを追記", "config.toml の {ck} = \"{v}\""],
    },
    "shape_multiline": {
        "en": ["{kw}:\n{v}", "{kw} =\n  {v}", "{ck}: |\n  {v}", "\"{ck}\":\n  \"{v}\"", "the {kw} is:\n\n{v}",
               "{kw} ->\n{v}", "{env}=\n{v}", "{ck}: >-\n  {v}\nhost: db"],
        "ru": ["{kw}:\n{v}", "{kw} =\n  {v}", "{kw} —\n{v}", "новый {kw}:\n\n{v}", "{ck}: |\n  {v}",
               "{kw}:\n  {v}\nлогин: admin"],
        "ja": ["{kw}：\n{v}", "{kw} =\n  {v}", "{kw}は\n{v}\nです", "新しい{kw}：\n\n{v}", "{ck}: |\n  {v}",
               "{kw}:\n  {v}\nユーザー: admin"],
    },
    "shape_mixed_script": {
        "en": ["password (пароль): {v}", "パスワード (password): {v}", "token / токен: {v}", "api key (APIキー)：{v}",
               "the Wi-Fi пароль is {v}", "DB パスワード: {v}"],
        "ru": ["password от стенда: {v}", "новый password: {v}", "token для бота — {v}", "api key: {v} (не свети)",
               "пароль (password): {v}", "Пароль/password: {v}"],
        "ja": ["password は {v} です", "APIキー (api key): {v}", "token：{v}", "新しい password：{v}",
               "パスワード/password: {v}", "api key は {v} です"],
    },
}

SHAPE_FORMS = tuple(SHAPE_TEMPLATES)


def _value_secrets(text: str, value: str) -> tuple[str, ...]:
    """What must be gone: the value, and each of its parts of four or more characters (split at
    ``-_.!``) that the rest of the sentence does not hold (a part left behind is a leak too)."""
    rest = text.replace(value, " ")
    parts = [p for p in re.split(r"[-_.!#]+", value) if len(p) >= 4 and p not in rest and p != value]
    return (value, *parts)


def planted_shapes(split: str, seed: int, per_form_lang: int = 24) -> list[tuple[str, tuple[str, ...], str, str, str]]:
    """Planted sentences of ``split``: ``(text, secrets, form, lang, value kind)``."""
    rng = random.Random(seed)
    kinds = list(VALUE_KINDS)
    out = []
    for form, by_lang in SHAPE_TEMPLATES.items():
        for lang, templates in by_lang.items():
            tpls = _templates(templates, split)
            kws, envs, cks = _part(KEYWORDS[lang], split), _part(ENV_NAMES, split), _part(CONFIG_KEYS, split)
            for i in range(per_form_lang):
                kind = kinds[(i + rng.randrange(len(kinds))) % len(kinds)]
                value = VALUE_KINDS[kind](rng, split)
                text = tpls[i % len(tpls)].format(kw=rng.choice(kws), env=rng.choice(envs), ck=rng.choice(cks), v=value)
                out.append((text, _value_secrets(text, value), form, lang, kind))
    return out


# ---------------------------------------------------------------------------------------------
# Ordinary lines of the same shapes: nothing may change
# ---------------------------------------------------------------------------------------------

ORDINARY_SHAPE_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "shape_ordinary": {
        "en": ["password: changed", "Password: changed on {date}", "token: see vault", "Token: see {task}",
               "export PATH=/usr/bin:$PATH", "export LANG=en_US.UTF-8", "PASSWORD_MIN_LENGTH=12", "MAX_TOKENS={n}",
               "token_limit: {n}", "api_key: ${{API_KEY}}", "password: <your password>", "password: ********",
               "DB_PASSWORD=${{DB_PASSWORD}}", "password: null", "\"password\": \"\"", "api_key: required",
               "token: expired", "key: customer_id", "Sort key: created_at", "password: min. {n} characters",
               "password: at least {n} chars", "tokenizer: cl100k_base", "PIN: not set", "passcode: {n} digits",
               "secret: true", "password_hash: bcrypt", "auth: token", "password:\n(ask the admin)",
               "password: same as before", "token: in the header", "export NODE_ENV=production", "WORKERS={n}",
               "api_key: stored in Vault", "password: see {url}", "\"token\": null",
               "password = os.environ[\"DB_PASSWORD\"]", "api_key = get_secret(\"openai\")", "token: {n} per request",
               "export PYTHONPATH=src:tests", "password: {{{{ vault_db_password }}}}"],
        "ru": ["пароль: сменён {rudate}", "ключ API: в хранилище", "токен: см. {task}", "export PATH=/usr/local/bin:$PATH",
               "Пароль: не менее {n} символов", "ключ: customer_id", "Ключ API: выдаётся по заявке {task}", "токен: истёк",
               "Пароль:\nсм. хранилище", "DB_PASSWORD=${{DB_PASSWORD}}", "пароль: тот же, что раньше",
               "токен: в заголовке Authorization", "ключ сортировки: created_at", "пароль: ********", "секрет: в Vault",
               "ПИН: не задан", "пароль: у администратора", "export LANG=ru_RU.UTF-8", "MAX_TOKENS={n} в .env",
               "пароль: {n} символов минимум", "токен: {n} запросов в минуту"],
        "ja": ["パスワード：変更済み", "トークン：Vault 参照", "APIキー：環境変数から読み込み", "export PATH=/usr/bin:$PATH",
               "パスワード:\n管理者に確認", "MAX_TOKENS={n} に設定", "パスワード：********", "トークン：期限切れ（{date}）",
               "APIキー：未発行", "シークレット：Vault にあります", "パスワード：{n}文字以上", "キー：customer_id",
               "暗証番号：未設定", "DB_PASSWORD=${{DB_PASSWORD}} を .env に書く", "パスワード：前回と同じ",
               "export LANG=ja_JP.UTF-8", "トークン：{n} 件まで", "api_key: ${{API_KEY}} を使う"],
    },
}


def ordinary_shapes(split: str, seed: int, slots: Callable[[random.Random, str], dict[str, str]],
                    per_template: int = 2) -> list[tuple[str, str, str]]:
    """Ordinary lines of ``split``: ``(text, form, lang)``; ``slots`` fills ``{date}``, ``{n}``…"""
    rng = random.Random(seed)
    out = []
    for form, by_lang in ORDINARY_SHAPE_TEMPLATES.items():
        for lang, templates in by_lang.items():
            for tpl in _templates(templates, split):
                for _ in range(per_template):
                    out.append((tpl.format(**slots(rng, lang)), form, lang))
    return out
