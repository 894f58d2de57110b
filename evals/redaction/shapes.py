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


# ---------------------------------------------------------------------------------------------
# Issue 27 item 2, follow-up: plain words as values, key words the lists did not hold, compound
# names, login/password pairs (``BARE_TEMPLATES``), written before the rules that catch them
# ---------------------------------------------------------------------------------------------

BARE_WORDS = {
    "en": ["sunshine", "Sunshine", "dragon", "princess", "football", "letmein", "Welcome", "monkey", "shadow",
           "Starlight", "butterfly", "chocolate", "Pumpkin", "rainbow", "Marmalade", "lighthouse", "Waterfall",
           "cupcake", "Snowflake", "pineapple", "bluebird", "Kingfisher", "dolphin", "Avalanche"],
    "ru": ["Солнышко", "котик", "Ромашка", "зайка", "Ласточка", "Чебурашка", "колобок", "Пельмень", "матрёшка",
           "Кузнечик", "одуванчик", "Черёмуха", "бегемот", "Снежинка", "воробей", "Журавль"],
    "ja": ["さくら", "ひまわり", "たんぽぽ", "サクラ", "ヒマワリ", "やまかわ", "こもれび", "うさぎ", "山川", "富士山",
           "かざぐるま", "ミカン", "あじさい", "コスモス", "ゆうやけ", "ホタル"],
}
"""Plain words people set as passwords (a quarter of each list only in ``heldout``)."""


def _bare_word(rng: random.Random, split: str, lang: str) -> str:
    return rng.choice(_part(BARE_WORDS[lang], split))


def _lower_hyphen(rng: random.Random, split: str) -> str:
    """A lower-case word, ``-`` and a short number (``hunter-2``), or two words (``blue-sky``)."""
    words = [w.lower() for w in _part(BARE_WORDS["en"], split)] + _BASE[split]["en"]
    if rng.random() < 0.75:
        return rng.choice(words) + "-" + _d(rng, 1, 2)
    return "-".join(rng.sample(words, 2))


def _any_lang(make: Callable[[random.Random, str], str]) -> Callable[[random.Random, str, str], str]:
    """A value kind that does not depend on the sentence's language."""
    return lambda rng, split, _lang: make(rng, split)


BARE_VALUE_KINDS: dict[str, Callable[[random.Random, str, str], str]] = {
    "bare_word": _bare_word,
    "lower_hyphen": _any_lang(_lower_hyphen),
    **{kind: _any_lang(make) for kind, make in VALUE_KINDS.items()},
}
"""The values of the follow-up forms: a plain word, ``hunter-2``, and every kind of ``VALUE_KINDS``."""

FIRM_KEYWORDS = {
    "en": ["password", "Password", "PASSWORD", "passcode", "token", "API key", "access token", "client secret",
           "secret key", "db password", "wifi password", "admin password", "auth token", "app password",
           "master password", "refresh token", "root password", "bot token", "login password", "account password"],
    "ru": ["пароль", "Пароль", "ПАРОЛЬ", "пароль от почты", "токен", "ключ API", "API-ключ", "секретный ключ",
           "токен доступа", "пароль админа", "пароль от Wi-Fi", "пароль root", "ключ доступа", "пароль от роутера",
           "токен бота", "Токен"],
    "ja": ["パスワード", "トークン", "APIキー", "アクセストークン", "管理者パスワード", "シークレットキー", "パスコード",
           "Wi-Fiパスワード", "ログインパスワード", "認証トークン", "合言葉", "DBパスワード"],
}
"""Key words that name a secret (no other sense), for plain-word values."""

NEW_KEYWORDS = {
    "en": ["deploy key", "ssh key", "SSH key", "access code", "secret phrase", "security code", "verification code",
           "door code", "alarm code", "wifi key", "network key", "recovery key", "unlock code", "gate code",
           "code word", "secret word", "security answer", "Deploy key", "WPA key", "safe code", "master key",
           "keyphrase", "signing secret", "Access code"],
    "ru": ["код доступа", "пин-код", "код подтверждения", "кодовое слово", "секретное слово", "код от домофона",
           "код безопасности", "код разблокировки", "мастер-пароль", "SSH-ключ", "ключ деплоя", "Код доступа",
           "код от сейфа", "ответ на секретный вопрос", "фраза-пароль", "код из СМС"],
    "ja": ["合言葉", "認証コード", "セキュリティコード", "アクセスコード", "確認コード", "合い言葉", "解除コード",
           "暗証コード", "デプロイキー", "SSHキー", "SSH鍵", "マスターパスワード", "マスターキー", "秘密の言葉",
           "秘密の質問の答え", "共通鍵"],
}
"""Key words the lists of the first fix did not hold (a quarter only in ``heldout``)."""

COMPOUND_KEYS = {
    "en": ["db_pass", "admin_pw", "root_pwd", "smtp_passwd", "dbPass", "adminPwd", "mysql_pass", "ftp_pw",
           "wifi_pass", "pass_db", "userPass", "SMTP_PWD", "vpn_pass", "mail_pw", "redis_pass", "ldapPwd"],
    "ru": ["пароль_бд", "пароль_админа", "бд_пароль", "пароль-бд", "токен_бота", "ключ_апи", "пароль_почты",
           "пароль_root"],
    "ja": ["パスコード", "DBパスワード", "管理者PW", "初期パスワード", "仮パスワード", "共通パスワード", "rootパスワード",
           "メールパスワード"],
}
"""Names that join a key word to another part (``db_pass``, ``пароль_бд``, ``DBパスワード``)."""

CREDS_USERS = ["admin", "root", "ivan", "deploy", "taro", "app", "ci-bot", "i.petrov", "yamada", "ops", "svc_backup",
               "anna.k"]
"""User names in login/password pairs (a quarter only in ``heldout``)."""

BARE_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "bare_word": {
        "en": ["{kw}: {v}", "{kw} = {v}", "{kw} → {v}", "{kw} - {v}", "the {kw} is {v}", "{kw}: {v} (don't share)",
               "{kw}: '{v}'", "Your {kw} is {v}.", "the {kw} is {v}, thanks", "new {kw}: {v}", "{kw} -> {v}",
               "the {kw} is now {v}", "ok the {kw} is {v}", "{kw}: {v} for staging", "{kw}={v}"],
        "ru": ["{kw}: {v}", "{kw} — {v}", "{kw} это {v}", "{kw} = {v}", "новый {kw}: {v}", "{kw} теперь {v}",
               "{kw}: {v}, не теряй", "{kw} - {v}", "{kw} → {v}", "наш {kw} — {v}.", "{kw}: «{v}»",
               "{kw}: {v} (для стенда)"],
        "ja": ["{kw}は {v} です", "{kw}：{v}", "{kw}: {v}", "{kw}は{v}です", "新しい{kw}は {v} です", "{kw}は「{v}」です",
               "{kw} = {v}", "{kw}→{v}", "{kw}：{v}（共有厳禁）", "{kw}を {v} に変更しました", "{kw}は {v}。",
               "本番の{kw}：{v}"],
    },
    "bare_new_keyword": {
        "en": ["{nkw}: {v}", "the {nkw} is {v}", "{nkw} = {v}", "{nkw} - {v}", "new {nkw}: {v}", "{nkw} → {v}",
               "our {nkw} is {v}.", "{nkw}: {v} (rotate monthly)", "{nkw}={v}"],
        "ru": ["{nkw}: {v}", "{nkw} — {v}", "{nkw} это {v}", "новый {nkw}: {v}", "{nkw} = {v}", "{nkw} теперь {v}",
               "{nkw}: {v}, не теряй", "{nkw} → {v}", "{nkw} - {v}"],
        "ja": ["{nkw}は {v} です", "{nkw}：{v}", "{nkw}: {v}", "{nkw}は{v}です", "新しい{nkw}：{v}", "{nkw} = {v}",
               "{nkw}は「{v}」です", "{nkw}→{v}", "{nkw}：{v}（共有厳禁）"],
    },
    "bare_compound": {
        "en": ["{ck2}: {v}", "{ck2}={v}", "{ck2} = {v}", "  {ck2}: {v}", "\"{ck2}\": \"{v}\"", "{ck2} := \"{v}\"",
               "set {ck2}={v}", "{ck2} → {v}", "config: {ck2}={v}"],
        "ru": ["{ck2}: {v}", "{ck2}={v}", "{ck2} = {v}", "в конфиге {ck2}: {v}", "{ck2} — {v}", "\"{ck2}\": \"{v}\""],
        "ja": ["{ck2}：{v}", "{ck2}: {v}", "{ck2}は {v} です", "{ck2} = {v}", "{ck2}→{v}", "{ck2}は「{v}」です"],
    },
    "bare_creds_pair": {
        "en": ["creds: {u} / {v}", "credentials: {u}/{v}", "login/password: {u} / {v}", "creds {u}:{v}",
               "user/pass: {u}, {v}", "Credentials — {u} / {v}", "creds for staging: {u} / {v}",
               "username/password = {u} / {v}", "creds: {u} | {v}", "Creds: {u} / {v} (rotate after)",
               "login & password: {u} / {v}", "the creds are {u} / {v}"],
        "ru": ["логин/пароль: {u} / {v}", "учётные данные: {u} / {v}", "доступы: {u} / {v}", "логин-пароль: {u}:{v}",
               "учетка: {u} / {v}", "логин и пароль: {u}, {v}", "креды: {u} / {v}",
               "учётные данные от стенда — {u} / {v}", "Логин/пароль — {u}/{v}"],
        "ja": ["ログイン情報：{u} / {v}", "ID/PW：{u} / {v}", "認証情報: {u}／{v}", "ID/パスワード：{u} / {v}",
               "アカウント情報：{u}、{v}", "ユーザー名/パスワード: {u} / {v}", "ログイン情報は {u} / {v} です",
               "ID・パスワード：{u}/{v}", "認証情報（本番）：{u} / {v}"],
    },
}
"""Planted forms of the follow-up: ``{kw}`` a firm key word, ``{nkw}`` a new one, ``{ck2}`` a compound
name, ``{u}`` a user name, ``{v}`` the value (``BARE_VALUE_KINDS``)."""

BARE_FORMS = tuple(BARE_TEMPLATES)


def bare_planted(split: str, seed: int, per_form_lang: int = 24) -> list[tuple[str, tuple[str, ...], str, str, str]]:
    """Planted sentences of the follow-up forms: ``(text, secrets, form, lang, value kind)``. Half of
    the values are plain words (``bare_word``), the rest any kind; the first draw of ``bare_word`` is
    always a plain word."""
    rng = random.Random(seed)
    kinds = [k for k in BARE_VALUE_KINDS if k != "bare_word"]
    out = []
    for form, by_lang in BARE_TEMPLATES.items():
        for lang, templates in by_lang.items():
            tpls = _templates(templates, split)
            pools = {"kw": _part(FIRM_KEYWORDS[lang], split), "nkw": _part(NEW_KEYWORDS[lang], split),
                     "ck2": _part(COMPOUND_KEYS[lang], split), "u": _part(CREDS_USERS, split)}
            for i in range(per_form_lang):
                kind = "bare_word" if i % 2 == 0 else kinds[rng.randrange(len(kinds))]
                value = BARE_VALUE_KINDS[kind](rng, split, lang)
                slots = {name: rng.choice(pool) for name, pool in pools.items()}
                text = tpls[i % len(tpls)].format(v=value, **slots)
                out.append((text, _value_secrets(text, value), form, lang, kind))
    return out


BARE_ORDINARY_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "bare_ordinary": {
        "en": ["the password is required", "The password is too short.", "the token is expired",
               "deploy key rotation is scheduled for {date}", "access code review on {date}",
               "the password is stored in the vault", "ssh key: added to GitHub", "deploy key: see {task}",
               "access code: sent by SMS", "secret phrase: ask {name}", "creds: see 1Password",
               "credentials: in the vault", "login/password: ask the admin", "the password is the same as before",
               "the password is case-sensitive", "The password is wrong, try again.",
               "security code: on the back of the card", "verification code: expired",
               "the token is valid for {n} minutes", "db_pass: ${{DB_PASS}}", "admin_pw: <set me>",
               "password - see {url}", "the password is not set", "password: hashed with bcrypt",
               "access code: {n} digits", "The password is strong enough.", "Door code changes every month.",
               "the password is correct", "creds: same as staging", "the token is invalid",
               "wifi key: on the router", "recovery key: printed and stored offline", "password: TBD",
               "the password is unknown", "Your password is weak.", "the deploy key is read-only",
               "the password is different on prod", "security answer: not needed", "password: required",
               "the access code is on the badge", "credentials: ask {name}", "the password is long",
               "user/pass: see the runbook", "the secret phrase is shared with {name}",
               "the password is there", "code word: none"],
        "ru": ["пароль: см. хранилище", "пароль — обязателен", "код доступа: у охраны", "пин-код: не нужен",
               "учётные данные: в хранилище", "доступы: у админа", "логин/пароль: запросить у {name}",
               "пароль это важно", "токен — строка из {n} символов", "ключ деплоя: добавлен в GitHub",
               "код подтверждения: придёт по SMS", "кодовое слово: знает только {name}", "пароль: обязателен",
               "секретное слово: спросите у {name}", "пароль_бд: ${{DB_PASS}}", "Пароль теперь хранится в Vault",
               "Токен: обновлён {rudate}", "SSH-ключ: ed25519", "пароль: тот же", "пароль — такой же, как раньше",
               "Пароль неверный, попробуйте ещё раз.", "пароль: сложный", "код доступа — на бейдже",
               "учетка: заблокирована", "пароль это не проблема", "пароль: по запросу", "токен: не нужен",
               "пароль: у {name}", "код безопасности: на обороте карты", "пароль: стандартный",
               "пароль теперь длиннее", "доступы: выданы {rudate}", "мастер-пароль: только у {name}",
               "пароль: смотри вики", "токен — в заголовке"],
        "ja": ["パスワードは必須です", "合言葉は秘密です", "認証コード：SMSで送信", "パスワードは同じです",
               "パスコード：未設定", "セキュリティコード：カード裏面に記載", "ログイン情報：管理者に確認",
               "ID/PW：別途連絡します", "認証情報：Vault 参照", "デプロイキー：登録済み", "SSHキー：ed25519",
               "パスワードは英数字{n}文字以上です", "パスワードは本人しか知りません", "合言葉は変更済みです",
               "アクセスコード：後日連絡", "パスワードを入力してください", "パスワードは大事です", "パスワード：なし",
               "確認コード：メールで届きます", "パスワードは前回と同じです", "パスワードは不要です",
               "トークン：再発行済み", "パスワードは各自で設定してください", "合言葉：未定", "パスワードは {n} 桁です",
               "認証コードは {n} 分で失効します", "パスワード：管理者のみ", "アクセスコード：なし",
               "パスワードは大文字と数字を含めること", "ログイン情報：別紙参照", "パスワードは空欄です",
               "パスワードはこちらから変更できます"],
    },
}
"""Ordinary lines that resemble the follow-up forms: nothing may change."""


def bare_ordinary(split: str, seed: int, slots: Callable[[random.Random, str], dict[str, str]],
                  per_template: int = 2) -> list[tuple[str, str, str]]:
    """Ordinary lines of the follow-up forms: ``(text, form, lang)``; every third template is held out."""
    rng = random.Random(seed)
    out = []
    for form, by_lang in BARE_ORDINARY_TEMPLATES.items():
        for lang, templates in by_lang.items():
            for tpl in _templates(templates, split):
                for _ in range(per_template):
                    out.append((tpl.format(**slots(rng, lang)), form, lang))
    return out
