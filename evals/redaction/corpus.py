"""Synthetic corpora that measure redaction of indexed task text (SPEC T2, issue 7 item 10).

Two corpora, both generated deterministically from templates and vocabularies with a fixed seed:

* **planted**: sentences in English, Russian and Japanese, each carrying one or more planted
  secrets in one of the forms in ``FORMS`` (a key word and a value, an e-mail address, a vendor
  token, a private key…). Every planted secret must be gone after redaction.
* **ordinary**: sentences of the same kind of conversation without a secret: the words
  password, token, ключ, パスワード… in their ordinary senses, numbers, dates, versions like
  v2.3.1, task ids like ATL-1655, file names, URLs without credentials. Redaction must leave
  them as they are (at most 1% may change).

Each form has several templates; the last template of every form (and a different seed) makes
the ``heldout`` split, which the rules were not tuned on. All text is synthetic (no real
secret, address or person); MIT, like the rest of the project.

Run ``python evals/redaction/corpus.py`` to print the figures.
"""
from __future__ import annotations

import base64
import random
import string
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

SEEDS = {"dev": 20261107, "heldout": 7100251}
ISSUE_EXAMPLE = ("本番のパスワードは hunter2xyz です。APIキー: abcd1234efgh。пароль qwerty987. "
                 "the api key = keyval12345")
GENERATED = tuple(SEEDS)
SPLITS = (*GENERATED, "handwritten", "handwritten27", "handwritten27b", "handwritten27c", "everyday39", "everyday39h")
HANDWRITTEN = tuple(s for s in SPLITS if s not in GENERATED)
"""The splits of hand-written lines (no generated forms)."""


def _lang(text: str) -> str:
    if any("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in text):
        return "ja"
    return "ru" if any("а" <= c.lower() <= "я" or c in "ёЁ" for c in text) else "en"


@dataclass(frozen=True)
class Planted:
    text: str
    secrets: tuple[str, ...]
    form: str
    lang: str
    kind: str = ""
    """How the value looks (``shapes.VALUE_KINDS``), for the shapes of issue 27; empty for the rest."""


@dataclass(frozen=True)
class Ordinary:
    text: str
    form: str
    lang: str


# ---------------------------------------------------------------------------------------------
# Secret values
# ---------------------------------------------------------------------------------------------

_WORDS = ["hunter", "dragon", "sunset", "falcon", "winter", "orange", "matrix", "shadow", "rocket",
          "silver", "tiger", "summer", "monkey", "cobalt", "nebula", "quartz", "maple", "zephyr"]
_SYMS = "!@#$%&*?+"


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _word_digits(rng: random.Random) -> str:
    w = rng.choice(_WORDS)
    if rng.random() < 0.3:
        w = w.capitalize()
    return w + _rand(rng, string.digits, rng.randint(1, 4)) + (_rand(rng, "xyzqk", rng.randint(0, 3)))


def _alnum(rng: random.Random) -> str:
    n = rng.randint(8, 20)
    s = _rand(rng, string.ascii_letters + string.digits, n - 2)
    return s + rng.choice(string.digits) + rng.choice(string.ascii_lowercase)


def _with_symbol(rng: random.Random) -> str:
    w = rng.choice(_WORDS).capitalize()
    return w + _rand(rng, string.digits, 2) + rng.choice(_SYMS) + _rand(rng, string.ascii_letters, 3)


def _lower_digits(rng: random.Random) -> str:
    return _rand(rng, string.ascii_lowercase, rng.randint(4, 8)) + _rand(rng, string.digits, rng.randint(3, 6))


def _hex(rng: random.Random, n: int = 32) -> str:
    return _rand(rng, "0123456789abcdef", n)


def password_value(rng: random.Random) -> str:
    return rng.choice([_word_digits, _alnum, _with_symbol, _lower_digits])(rng)


def pin_value(rng: random.Random) -> str:
    while True:
        v = _rand(rng, string.digits, rng.choice([4, 4, 6, 6, 8]))
        if not (len(v) == 4 and v[:2] in ("19", "20")):
            return v


def vendor_token(rng: random.Random) -> tuple[str, str]:
    a = string.ascii_letters + string.digits
    kinds: list[tuple[str, Callable[[], str]]] = [
        ("aws", lambda: rng.choice(["AKIA", "ASIA"]) + _rand(rng, string.ascii_uppercase + string.digits, 16)),
        ("github", lambda: rng.choice(["ghp_", "gho_", "ghs_"]) + _rand(rng, a, 36)),
        ("github_pat", lambda: "github_pat_" + _rand(rng, a + "_", 50)),
        ("gitlab", lambda: "glpat-" + _rand(rng, a + "-_", 20)),
        ("slack", lambda: rng.choice(["xoxb-", "xoxp-"]) + _rand(rng, string.digits, 12) + "-"
         + _rand(rng, string.digits, 12) + "-" + _rand(rng, a, 24)),
        ("stripe", lambda: rng.choice(["sk_live_", "rk_live_", "sk_test_"]) + _rand(rng, a, 24)),
        ("twilio", lambda: rng.choice(["AC", "SK"]) + _hex(rng, 32)),
        ("sendgrid", lambda: "SG." + _rand(rng, a + "-_", 22) + "." + _rand(rng, a + "-_", 43)),
        ("npm", lambda: "npm_" + _rand(rng, a, 36)),
        ("google", lambda: "AIza" + _rand(rng, a + "-_", 35)),
        ("openai", lambda: rng.choice(["sk-proj-", "sk-ant-api03-", "sk-"]) + _rand(rng, a, 40)),
        ("huggingface", lambda: "hf_" + _rand(rng, a, 34)),
        ("telegram", lambda: _rand(rng, string.digits, 10) + ":AA" + _rand(rng, a + "_-", 33)),
        ("mailchimp", lambda: _hex(rng, 32) + "-us" + str(rng.randint(1, 20))),
        ("square", lambda: "sq0csp-" + _rand(rng, a + "-_", 43)),
        ("pypi", lambda: "pypi-AgEIcHlwaS5vcmc" + _rand(rng, a + "-_", 70)),
    ]
    name, make = rng.choice(kinds)
    return name, make()


def jwt_value(rng: random.Random) -> str:
    def seg(obj: str) -> str:
        return base64.urlsafe_b64encode(obj.encode()).decode().rstrip("=")
    header = seg('{"alg":"HS256","typ":"JWT"}')
    body = seg('{"sub":"%d","name":"user%d","iat":%d}' % (rng.randint(1, 10**6), rng.randint(1, 999),
                                                          rng.randint(10**9, 2 * 10**9)))
    sig = _rand(rng, string.ascii_letters + string.digits + "-_", 43)
    return f"{header}.{body}.{sig}"


def private_key_block(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", "", "DSA "])
    body = "\n".join(
        base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode() for _ in range(rng.randint(2, 4))
    )
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----", body.split("\n")[0]


def high_entropy(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return _hex(rng, rng.choice([32, 40, 64]))
    while True:
        s = base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.choice([24, 30, 33])))).decode()
        if any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s):
            return s


_LOCAL = {"en": ["alice", "bob.smith", "ops-team", "j.doe+ci", "sales", "m.garcia"],
          "ru": ["ivan", "иван", "маша.петрова", "support", "олег-к", "a.sidorov"],
          "ja": ["taro", "用户", "山田", "hanako.s", "しごと", "yamada-t"]}
_DOMAINS = {"en": ["example.com", "acme.example", "mail.example.org", "bücher.example", "corp.example.co.uk"],
            "ru": ["пример.рф", "почта.рус", "example.ru", "компания.онлайн", "mail.example.su"],
            "ja": ["例子.广告", "例え.jp", "example.co.jp", "会社.コム", "テスト.みんな"]}


def email(rng: random.Random, lang: str) -> str:
    return f"{rng.choice(_LOCAL[lang])}@{rng.choice(_DOMAINS[lang])}"


# ---------------------------------------------------------------------------------------------
# Planted templates: form -> lang -> templates; {kw} a key word, {v} the value
# ---------------------------------------------------------------------------------------------

KW = {
    "en": ["password", "Password", "PASSWORD", "passcode", "token", "Token", "API key", "api key", "API_KEY",
           "secret", "access token", "client secret", "passphrase", "Api-Key", "auth token", "db password"],
    "ru": ["пароль", "Пароль", "ПАРОЛЬ", "токен", "Токен", "ключ", "ключ API", "API-ключ", "секретный ключ",
           "токен доступа", "секрет", "ключ доступа"],
    "ja": ["パスワード", "トークン", "APIキー", "シークレット", "アクセストークン", "パスコード", "API キー",
           "ＡＰＩキー", "秘密鍵", "管理者パスワード"],
}
KW_INFLECTED_RU = [
    ("войти с паролем {v}", "паролем"), ("смена пароля на {v}", "пароля"), ("значение токена: {v}", "токена"),
    ("по ключу API {v} всё работает", "ключ"), ("проверь API-ключ {v} ещё раз", "API-ключ"),
    ("с токеном {v} запрос проходит", "токеном"), ("к паролю {v} добавили цифру", "паролю"),
    ("в пароле {v} есть ошибка", "пароле"), ("ключом {v} подписан релиз", "ключом"),
]

PLANTED_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "kw_colon": {
        "en": ["{kw}: {v}", "New {kw}: {v} (rotate after the demo)", "staging {kw}={v}", "{kw} = {v}, thanks",
               "Here it is — {kw}:{v}"],
        "ru": ["{kw}: {v}", "Новый {kw}: {v}, не теряйте", "{kw}={v}", "Вот {kw} — {v}", "{kw} : {v} (до пятницы)"],
        "ja": ["{kw}：{v}", "{kw}: {v} です", "新しい{kw}={v}", "{kw}:{v}（本番用）", "【{kw}】{v}"],
    },
    "kw_word": {
        "en": ["the {kw} is {v}", "The {kw} was changed to {v} yesterday", "{kw} is now {v}",
               "I set the {kw} to {v}.", "ok so the {kw} is {v} for now"],
        "ru": ["{kw} это {v}", "{kw} — {v}", "{kw} теперь {v}", "{kw} поменяли на {v}", "наш {kw} сейчас {v}"],
        "ja": ["{kw}は {v} です", "{kw}は{v}です。", "{kw}を {v} に変更しました", "{kw}が {v} になりました",
               "{kw}は、{v} でお願いします"],
    },
    "kw_space": {
        "en": ["{kw} {v}", "use {kw} {v} for now", "{kw} {v} works", "login admin {kw} {v}", "try {kw} {v}"],
        "ru": ["{kw} {v}", "держи {kw} {v}", "логин admin {kw} {v}", "{kw} {v} подходит", "вот {kw} {v} для теста"],
        "ja": ["{kw} {v}", "{kw} {v} を使ってください", "ログイン admin {kw} {v}", "仮の{kw} {v} です",
               "{kw} {v} で入れます"],
    },
    "kw_quoted": {
        "en": ['the {kw} is "{v}"', "{kw}: '{v}'", 'set {kw} to "{v}"', '"{kw}": "{v}"', "the {kw} is `{v}`"],
        "ru": ["{kw} «{v}»", "{kw}: \"{v}\"", "{kw} — «{v}»", "\"{kw}\": \"{v}\"", "{kw} это '{v}'"],
        "ja": ["{kw}は「{v}」です", "{kw}：『{v}』", "{kw}は \"{v}\" です", "{kw}を「{v}」に設定", "{kw}は“{v}”"],
    },
    "kw_qualified": {
        "en": ["the {kw} for the staging db is {v}", "{kw} for prod: {v}", "the {kw} we use is {v}",
               "{kw} (prod): {v}", "the {kw} to the wiki is {v}"],
        "ru": ["{kw} от почты: {v}", "{kw} от базы — {v}", "{kw} для стенда: {v}", "{kw} (прод): {v}",
               "{kw} от сервера это {v}"],
        "ja": ["{kw}は以下です: {v}", "{kw}（本番）: {v}", "{kw}は次の通り：{v}", "{kw}（検証環境）：{v}",
               "{kw}は下記です：{v}"],
    },
    "kw_reverse": {
        "en": ["use {v} as the {kw}", "{v} is the new {kw}", "{v} is the {kw}", "take {v} as your {kw}",
               "{v} was the old {kw}"],
        "ru": ["{v} — это {kw}", "{v} это новый {kw}", "используй {v} как {kw}", "{v} в качестве {kw}a",
               "{v} — это наш {kw}"],
        "ja": ["{v} を{kw}に設定しました", "{v}を新しい{kw}として登録", "{v} を{kw}に変更", "{v}を{kw}として使用",
               "{v} を仮の{kw}に"],
    },
    "pin": {
        "en": ["PIN: {v}", "the PIN is {v}", "pin code {v}", "PIN {v} for the office door", "Card PIN: {v}"],
        "ru": ["ПИН-код {v}", "пин-код: {v}", "PIN-код карты — {v}", "ПИН {v}", "пин {v} от сейфа"],
        "ja": ["暗証番号は {v} です", "暗証番号：{v}", "暗証番号 {v}", "PINコードは{v}です", "金庫の暗証番号は{v}"],
    },
    "email": {
        "en": ["write to {v} please", "cc {v} on the report", "{v} owns this", "contact: {v}", "<{v}> sent it"],
        "ru": ["пишите на {v}", "копию на {v}", "{v} отвечает за отчёт", "контакт: {v}", "адрес {v} в рассылке"],
        "ja": ["{v} まで連絡してください", "連絡先：{v}", "担当は {v} です", "{v}に送付済み", "CC: {v}"],
    },
    "vendor_token": {
        "en": ["use {v} for the deploy", "export GH={v}", "the bot uses {v}", "{v}", "leaked {v} in the log"],
        "ru": ["вот {v} для деплоя", "в логе {v}", "используй {v}", "переменная X={v}", "засветился {v}"],
        "ja": ["{v} をデプロイに使用", "ログに {v} が出ていた", "{v}", "環境変数 X={v}", "{v}を設定済み"],
    },
    "jwt": {
        "en": ["Authorization header had {v}", "jwt {v}", "cookie session={v}", "sample {v}", "got {v} back"],
        "ru": ["в заголовке {v}", "jwt {v}", "кука session={v}", "пример {v}", "вернулся {v}"],
        "ja": ["ヘッダーに {v}", "jwt {v}", "クッキー session={v}", "例 {v}", "{v} が返ってきた"],
    },
    "private_key": {
        "en": ["here is the key:\n{v}", "{v}", "id_rsa:\n{v}\nthanks", "pasted {v}", "key {v}"],
        "ru": ["вот ключ:\n{v}", "{v}", "id_rsa:\n{v}\nспасибо", "вставил {v}", "файл {v}"],
        "ja": ["鍵です:\n{v}", "{v}", "id_rsa:\n{v}\nよろしく", "貼り付け {v}", "ファイル {v}"],
    },
    "url_credentials": {
        "en": ["clone https://{u}:{v}@git.example.com/r.git", "db at postgres://{u}:{v}@db.example:5432/app",
               "proxy http://{u}:{v}@proxy.example:3128", "see https://{u}:{v}@ci.example/job", "ftp://{u}:{v}@files.example"],
        "ru": ["клонируй https://{u}:{v}@git.example.com/r.git", "база postgres://{u}:{v}@db.example:5432/app",
               "прокси http://{u}:{v}@proxy.example:3128", "смотри https://{u}:{v}@ci.example/job", "ftp://{u}:{v}@files.example"],
        "ja": ["https://{u}:{v}@git.example.com/r.git をクローン", "DB は postgres://{u}:{v}@db.example:5432/app",
               "プロキシ http://{u}:{v}@proxy.example:3128", "https://{u}:{v}@ci.example/job を参照", "ftp://{u}:{v}@files.example"],
    },
    "high_entropy": {
        "en": ["checksum-free blob {v}", "the value was {v}", "{v}", "paste: {v}", "copied {v} from the console"],
        "ru": ["значение {v}", "строка {v} из консоли", "{v}", "вставка: {v}", "скопировал {v}"],
        "ja": ["値は {v}", "コンソールから {v}", "{v}", "貼り付け: {v}", "{v} をコピー"],
    },
    "config_line": {
        "en": ["DB_PASSWORD={v}", "export GITHUB_TOKEN={v}", '{{"api_key": "{v}"}}', "Authorization: Bearer {v}",
               "client_secret: {v}"],
        "ru": ["DB_PASSWORD={v} в .env", "export API_TOKEN={v}", '{{"password": "{v}"}}', "Authorization: Bearer {v}",
               "secret_key = '{v}'"],
        "ja": ["DB_PASSWORD={v} を設定", "export SLACK_BOT_TOKEN={v}", '{{"token": "{v}"}}',
               "Authorization: Bearer {v}", "aws_secret_access_key = {v}"],
    },
    "kw_inflected": {"ru": [t for t, _ in KW_INFLECTED_RU]},
}

# Forms an adversarial audit found missing (issues 7-8 audit): a bracket quote right after the key
# word, short key words (PW, pass), the value on the next line, the Japanese reverse form
# (`X がパスワードです`), the English possessive (`password's X`) and pass phrases of plain words.
# Generated with their own random stream, so the sentences above are unchanged.
SHORT_KW = ["PW", "pw", "Pw", "P/W", "pass", "Pass", "PASS", "pwd", "psw"]
PHRASE_KW = {"en": ["passphrase", "Passphrase", "pass phrase", "seed phrase", "recovery phrase"],
             "ru": ["кодовая фраза", "Кодовая фраза", "парольная фраза", "seed phrase"],
             "ja": ["パスフレーズ", "seed phrase", "パスフレーズ"]}
_PHRASE_WORDS = ["correct", "horse", "battery", "staple", "velvet", "anchor", "prairie", "lantern", "orbit",
                 "willow", "copper", "meadow", "glacier", "harbor", "pepper", "violet", "canyon", "thistle",
                 "walrus", "juniper", "saffron", "tundra"]

AUDIT_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "kw_bracket": {
        "en": ["{kw} “{v}”", "new {kw} «{v}» for prod", "the {kw}: “{v}”", "{kw} «{v}»"],
        "ru": ["{kw}«{v}»", "новый {kw} — «{v}»", "{kw}: «{v}», не теряй", "{kw} „{v}“"],
        "ja": ["サーバーの{kw}「{v}」です", "{kw}「{v}」でログインできます", "{kw}の「{v}」を使ってください",
               "本番{kw}『{v}』", "Wi-Fi の{kw}は「{v}」", "{kw}『{v}』（検証用）"],
    },
    "short_kw": {
        "en": ["{skw}: {v}", "{skw}={v}", "my {skw} is {v}", "user admin / {skw}: {v}", "{skw} → {v}",
               "the wifi {skw} is {v} btw"],
        "ru": ["{skw}: {v}", "логин admin, {skw}: {v}", "{skw}={v} для стенда", "{skw} — {v}", "мой {skw}: {v}"],
        "ja": ["{skw}：{v}", "{skw}: {v} です", "{skw}={v} で入れます", "ID admin / {skw}：{v}", "{skw}は {v} です"],
    },
    "next_line": {
        "en": ["{kw}\n{v}", "{kw}:\n\n{v}", "Here is the {kw}\n{v}\nthanks", "new {kw}\n  {v}", "{kw} is\n{v}"],
        "ru": ["{kw}\n{v}", "вот {kw}\n{v}", "{kw}:\n{v}\nспасибо", "новый {kw}\n\n{v}", "{kw} —\n{v}"],
        "ja": ["{kw}\n{v}", "{kw}は\n{v}\nです", "新しい{kw}\n{v}", "{kw}：\n\n{v}", "本番の{kw}\n{v}\nよろしくお願いします"],
    },
    "reverse_more": {
        "en": ["{v} is my pass", "{v} is the PW", "{v} is our wifi pass", "{v} is the passphrase"],
        "ja": ["{v} が{kw}です", "{v}が新しい{kw}です。", "{v} は本番の{kw}です", "{v}が今の{kw}です",
               "{v} が{kw}になります"],
    },
    "possessive": {
        "en": ["{kw}'s {v}", "the {kw}'s {v} now", "{kw}’s {v}", "wifi {kw}'s {v}", "ok the {kw}'s {v}"],
    },
    "passphrase": {
        "en": ["{pkw}: {p}", "the {pkw} is {p}", "{pkw} — {p}", "wallet {pkw}: {p}", "{pkw} =\n{p}",
               "our {pkw} is {p}."],
        "ru": ["{pkw}: {p}", "{pkw} — {p}", "{pkw} это {p}", "{pkw}: {p}, не теряй", "{pkw}:\n{p}"],
        "ja": ["{pkw}：{p}", "{pkw}は {p} です", "{pkw}: {p}（金庫用）", "ウォレットの{pkw}: {p}", "{pkw}は\n{p}"],
    },
}

def _load_shapes(stem: str = "shapes"):
    """``shapes.py`` (or ``STEM.py``) beside this file (this file is loaded by path, so not a package import)."""
    import importlib.util

    name = f"redaction_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{stem}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


shapes = _load_shapes()
everyday = _load_shapes("everyday")
FORMS = tuple(PLANTED_TEMPLATES) + tuple(AUDIT_TEMPLATES) + shapes.SHAPE_FORMS + shapes.BARE_FORMS


def _phrase(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    words = rng.sample(_PHRASE_WORDS, rng.randint(3, 5))
    if rng.random() < 0.25:
        p = rng.choice("-_").join(words)
        return p, (p,)
    return " ".join(words), tuple(words)


def _audit_planted(split: str, per_form_lang: int) -> list[Planted]:
    rng = random.Random(SEEDS[split] + 2)
    out: list[Planted] = []
    for form, by_lang in AUDIT_TEMPLATES.items():
        for lang, templates in by_lang.items():
            tpls = _split_templates(templates, split)
            for i in range(per_form_lang):
                tpl = tpls[i % len(tpls)]
                fmt = {"kw": rng.choice(KW[lang]), "skw": rng.choice(SHORT_KW), "pkw": rng.choice(PHRASE_KW[lang])}
                if form == "passphrase":
                    fmt["p"], secrets = _phrase(rng)
                else:
                    fmt["v"] = password_value(rng)
                    secrets = (fmt["v"],)
                out.append(Planted(tpl.format(**fmt), secrets, form, lang))
    return out


def _split_templates(templates: list[str], split: str) -> list[str]:
    return templates[-1:] if split == "heldout" else templates[:-1]


def planted(split: str = "dev", per_form_lang: int = 8) -> list[Planted]:
    """The planted-secret corpus of ``split`` (``dev``, ``heldout`` or ``handwritten``)."""
    if split == "handwritten":
        return [Planted(text, (secret,), "handwritten", lang) for text, secret, lang in HANDWRITTEN_PLANTED]
    if split == "handwritten27":
        return [Planted(text, (secret,), "handwritten27", lang) for text, secret, lang in HANDWRITTEN27_PLANTED]
    if split == "handwritten27b":
        return [Planted(text, tuple(secret.split()), "handwritten27b", lang)
                for text, secret, lang in HANDWRITTEN27B_PLANTED]
    if split == "handwritten27c":
        return [Planted(text.replace("\\n", "\n"), (secret,), "handwritten27c", lang)
                for text, secret, lang in HANDWRITTEN27C_PLANTED]
    if split in everyday.SPLITS:
        return [Planted(text, secrets, split, lang) for text, secrets, lang in everyday.SPLITS[split][0]]
    rng = random.Random(SEEDS[split])
    out: list[Planted] = []
    for form, by_lang in PLANTED_TEMPLATES.items():
        for lang, templates in by_lang.items():
            tpls = _split_templates(templates, split)
            for i in range(per_form_lang):
                tpl = tpls[i % len(tpls)]
                kw = rng.choice(KW[lang])
                secrets: tuple[str, ...]
                fmt: dict[str, str] = {"kw": kw}
                if form in ("kw_colon", "kw_word", "kw_space", "kw_qualified", "kw_reverse", "kw_inflected"):
                    v = password_value(rng)
                    secrets = (v,)
                elif form == "kw_quoted":
                    v = password_value(rng) if rng.random() < 0.7 else " ".join(rng.sample(_WORDS, 3))
                    secrets = (v,)
                elif form == "pin":
                    v = pin_value(rng)
                    secrets = (v,)
                elif form == "email":
                    v = email(rng, lang)
                    secrets = (v,)
                elif form == "vendor_token":
                    v = vendor_token(rng)[1]
                    secrets = (v,)
                elif form == "jwt":
                    v = jwt_value(rng)
                    secrets = (v,)
                elif form == "private_key":
                    v, line = private_key_block(rng)
                    secrets = (line,)
                elif form == "url_credentials":
                    v = password_value(rng)
                    fmt["u"] = rng.choice(["deploy", "admin", "ci", "ivan", "taro"])
                    secrets = (v,)
                elif form == "high_entropy":
                    v = high_entropy(rng)
                    secrets = (v,)
                elif form == "config_line":
                    v = password_value(rng) if rng.random() < 0.6 else _rand(rng, string.ascii_letters + string.digits, 32)
                    secrets = (v,)
                else:  # pragma: no cover
                    raise ValueError(form)
                fmt["v"] = v
                out.append(Planted(tpl.format(**fmt), secrets, form, lang))
    # mixed sentences with several secrets, the issue's own example among them
    out.append(Planted(ISSUE_EXAMPLE, ("hunter2xyz", "abcd1234efgh", "qwerty987", "keyval12345"), "mixed", "ja"))
    for _ in range(per_form_lang):
        a, b, c = password_value(rng), pin_value(rng), email(rng, "ru")
        out.append(Planted(f"Логин {rng.choice(['admin', 'ivan'])}, пароль: {a}, ПИН-код {b}, почта {c}",
                           (a, b, c), "mixed", "ru"))
    return out + _audit_planted(split, per_form_lang) + _shape_planted(split) + _bare_planted(split)


def _shape_planted(split: str) -> list[Planted]:
    """The shapes of issue 27 (``shapes.py``): their own seed and templates, the above unchanged."""
    return [Planted(text, secrets, form, lang, kind)
            for text, secrets, form, lang, kind in shapes.planted_shapes(split, SEEDS[split] + 4)]


def _bare_planted(split: str) -> list[Planted]:
    """The follow-up forms of issue 27 item 2 (``shapes.BARE_TEMPLATES``: plain words, new key words,
    compound names, login/password pairs): their own seed, the above unchanged."""
    return [Planted(text, secrets, form, lang, kind)
            for text, secrets, form, lang, kind in shapes.bare_planted(split, SEEDS[split] + 6)]


# ---------------------------------------------------------------------------------------------
# Ordinary sentences
# ---------------------------------------------------------------------------------------------

_NAMES = {"en": ["Anna", "Boris", "Maria", "Ken", "Yuki", "Oleg"], "ru": ["Анна", "Борис", "Мария", "Олег", "Ирина"],
          "ja": ["田中さん", "佐藤さん", "山田さん", "鈴木さん", "高橋さん"]}
_FILES = ["report_2026-06.csv", "export.py", "notes/old-cp1251.txt", "config.yaml", "README.md",
          "src/LoginForm2/index.tsx", "data/tasks.jsonl", "backup_v2.tar.gz", "token_usage.ipynb", "passwords_policy.pdf"]
_URLS = ["https://example.com/docs/auth", "https://git.example.com/acme/api/pull/88", "http://localhost:8080/health",
         "https://wiki.example.org/Password_policy", "https://status.example.com/incidents/412"]


def _slots(rng: random.Random, lang: str) -> dict[str, str]:
    y = rng.choice([2025, 2026, 2027])
    return {
        "n": str(rng.choice([3, 8, 12, 16, 20, 30, 90, 128, 512, 1024, 4096, 8192, 32000, 128000])),
        "date": f"{y}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "rudate": f"{rng.randint(1, 28):02d}.{rng.randint(1, 12):02d}.{y}",
        "year": str(y),
        "time": f"{rng.randint(0, 23):02d}:{rng.choice(['00', '15', '30', '45'])}",
        "ver": f"v{rng.randint(0, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
        "ver2": f"{rng.randint(1, 3)}.{rng.randint(0, 30)}",
        "task": f"{rng.choice(['ATL', 'DOC', 'OPS', 'PR', 'SEC'])}-{rng.randint(10, 9999)}",
        "issue": f"#{rng.randint(1, 999)}",
        "file": rng.choice(_FILES),
        "url": rng.choice(_URLS),
        "name": rng.choice(_NAMES[lang]),
        "pct": f"{rng.randint(1, 99)}%",
        "money": f"{rng.randint(1, 999)},{rng.randint(0, 999):03d}",
        "size": f"{rng.randint(1, 512)}{rng.choice(['MB', 'GB', 'ms', 'KB'])}",
        "sha": _hex(rng, 7),
    }


ORDINARY_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "keyword_ordinary": {
        "en": ["Please reset the password for {name} before {date}.",
               "The password policy now requires {n} characters.",
               "Token usage was {n} tokens on {date}.",
               "The API key rotation is planned for {ver} ({task}).",
               "We store the token in the vault, see {url}.",
               "Password reset emails go out at {time}.",
               "The secret to fast builds is caching, {pct} faster.",
               "Pin numpy to {ver2} until {task} is fixed.",
               "The token expired again, see {issue}.",
               "Forgot password flow is broken on {ver}.",
               "Password: changed by {name} on {date}.",
               "The access token lifetime is 15 minutes now.",
               "Do not paste the API key in chat, use the secret manager.",
               "Secret rotation finished at {time}, no errors.",
               "The token limit is {n} per request.",
               "Passcode screens were redesigned in {task}.",
               "Token: expired, we requested a new one.",
               "The password field is hidden on mobile since {ver}.",
               "Max tokens set to {n} for the summarizer.",
               "Each API key belongs to one project."],
        "ru": ["Сбросьте пароль для {name} до {rudate}.",
               "Пароль должен быть не короче {n} символов.",
               "Ключ к решению — кэширование.",
               "Ключ от офиса у {name}.",
               "Токен истёк, задача {task}.",
               "Ключевой момент: релиз {ver}.",
               "Сортировка по ключу created_at работает.",
               "Обновили токен доступа, см. {task}.",
               "Пароль: сменён {rudate}.",
               "Ключ API хранится в секретах, не в коде.",
               "Смена пароля раз в {n} дней.",
               "Токенизатор режет текст на {n} токенов.",
               "Пароль от почты {name} восстановил сам.",
               "Секрет успеха прост: тесты и ревью.",
               "Ключ — в сейфе у охраны.",
               "ПИН-код теперь не нужен, вход по карте.",
               "Токен бота перенесли в хранилище {rudate}.",
               "Пароли храним только в хэшированном виде.",
               "Ключ шифрования ротируется каждые {n} дней.",
               "Пароль это не то место, где можно экономить."],
        "ja": ["パスワードを変更してください（{task}）。",
               "パスワードは {n} 文字以上にしてください。",
               "トークンの有効期限は {n} 日です。",
               "APIキーのローテーションは {date} に実施します。",
               "暗証番号の入力画面を修正しました。",
               "シークレットの管理は Vault に移行済みです。",
               "パスワード：変更済み（{name}）",
               "トークン数が {n} を超えるとエラーになります。",
               "APIキーはチャットに貼らないでください。",
               "パスワードリセットのメールは {time} に送信されます。",
               "トークンが失効したので再発行しました。",
               "パスワードは管理者に確認してください。",
               "暗証番号は本人にしか分かりません。",
               "アクセストークンの更新処理を {ver} で直しました。",
               "パスワードポリシーの資料は {url} にあります。",
               "シークレットは環境変数から読み込みます。",
               "APIキーの発行手順を {file} にまとめました。",
               "トークンは {n} 個までです。",
               "パスワードの桁数は {n} 桁です。",
               "秘密鍵は各自のマシンにのみ置いてください。"],
    },
    "numbers_ids": {
        "en": ["Release {ver} shipped on {date} at {time}.", "Fixed in {task}, see {issue} and commit {sha}.",
               "Revenue grew {pct} to ${money} in {year}.", "Latency dropped to {size} after {task}.",
               "Upgrade pandas to {ver2} and rerun {file}.", "{task} and {issue} are duplicates.",
               "Build {n} passed on {date}.", "Moved {file} under data/ in {ver}."],
        "ru": ["Релиз {ver} вышел {rudate} в {time}.", "Исправлено в {task}, см. {issue}.",
               "Выручка выросла на {pct} за {year} год.", "Задержка упала до {size} после {task}.",
               "Обновите pandas до {ver2} и перезапустите {file}.", "{task} дублирует {issue}.",
               "Сборка {n} прошла {rudate}.", "Файл {file} перенесли в {ver}."],
        "ja": ["{ver} を {date} の {time} にリリースしました。", "{task} で修正済みです（{issue}）。",
               "売上は {year} 年に {pct} 伸びました。", "{task} の後、レイテンシは {size} まで下がりました。",
               "pandas を {ver2} に上げて {file} を再実行してください。", "{task} と {issue} は重複です。",
               "ビルド {n} は {date} に成功しました。", "{file} を {ver} で移動しました。"],
    },
    "urls_files": {
        "en": ["Docs are at {url}.", "Open {file} and check line {n}.", "The dashboard {url} is green.",
               "Attached {file} for {name}.", "Compare {url} with {file}."],
        "ru": ["Документация: {url}.", "Откройте {file}, строка {n}.", "Дашборд {url} зелёный.",
               "Приложил {file} для {name}.", "Сравните {url} и {file}."],
        "ja": ["資料は {url} です。", "{file} の {n} 行目を見てください。", "ダッシュボード {url} は正常です。",
               "{name}向けに {file} を添付しました。", "{url} と {file} を比較してください。"],
    },
    "tech_prose": {
        "en": ["Set LOG_LEVEL=debug and WORKERS={n} in {file}.",
               "The tokenizer splits the query into {n} tokens before BM25.",
               "Run `pytest -k redact -q` after changing {file}.",
               "HttpClient2Factory now retries {n} times.",
               "The embedding model is Qwen3-Embedding-8B behind an API.",
               "We pass the auth token in a header, never in the URL.",
               "Commit {sha} moved the password hashing to argon2id.",
               "Use gpt-4o-mini for the summaries, it costs {pct} less.",
               "Key rotation for ATL-1655 is tracked in {issue}.",
               "The secret name is prod/db, the value lives in Vault.",
               "Token counts per language: ru {n}, ja {n}, en {n}.",
               "Password hashes use bcrypt with cost 12 since {ver}.",
               "The access key ID is shown in the console, the secret only once.",
               "Our API token budget is {n} calls per minute.",
               "pin the base image to python:3.12-slim"],
        "ru": ["Задайте LOG_LEVEL=debug и WORKERS={n} в {file}.",
               "Токенизатор делит запрос на {n} токенов перед BM25.",
               "После правки {file} запустите pytest -k redact.",
               "Коммит {sha} перевёл хэширование паролей на argon2id.",
               "Ключ идемпотентности передаём в заголовке Idempotency-Key.",
               "Ключ партиции — customer_id, см. {task}.",
               "У ключа API квота {n} запросов в минуту.",
               "Пароль сменили {rudate} в {time}.",
               "Токен действителен 24 часа.",
               "Секрет хранится в Vault по пути kv/prod/db.",
               "Версия токенизатора — {ver}.",
               "API-ключ выдаёт администратор по заявке {task}.",
               "Пароль и логин вводятся на странице /login.",
               "Токены считаем через tiktoken {ver2}.",
               "Ключ к успеху релиза {ver} — тесты."],
        "ja": ["{file} に LOG_LEVEL=debug と WORKERS={n} を設定してください。",
               "トークナイザーはクエリを {n} トークンに分割します。",
               "{file} を変更したら pytest -k redact を実行してください。",
               "コミット {sha} でパスワードのハッシュを argon2id に変更しました。",
               "パスワード変更は {task} で対応済みです。",
               "トークン上限は {n} です。",
               "APIキーの期限は {date} です。",
               "シークレットキーは Vault にあります。",
               "パスワードは 2 回間違えるとロックされます。",
               "PIN を 3 回間違えるとロックされます。",
               "トークンは {ver} から仕様が変わりました。",
               "APIキーは設定画面の「開発者」タブから発行できます。",
               "パスワードは英数字8文字以上です。",
               "トークンはGPT-4oで数えます。",
               "パスワードを忘れた場合は{task}を参照してください。"],
    },
    "plain": {
        "en": ["{name} asked to move the standup to {time}.", "Let's keep the login screen as it is.",
               "The report for {year} is ready for review.", "We decided to drop the legacy importer.",
               "Meeting notes from {date} are in the wiki."],
        "ru": ["{name} просит перенести созвон на {time}.", "Экран входа оставляем как есть.",
               "Отчёт за {year} готов к ревью.", "Решили отказаться от старого импортёра.",
               "Заметки со встречи {rudate} лежат в вики."],
        "ja": ["{name}から朝会を {time} に移したいと依頼がありました。", "ログイン画面はそのままにしてください。",
               "{year} 年のレポートはレビュー待ちです。", "古いインポーターは廃止すると決めました。",
               "満月の周期の計算は {file} にあります。"],
    },
}


# Ordinary sentences around the audit's forms: PW and pass in their ordinary senses, key words at the
# end of a line, quotes after a key word that hold no secret, possessives, pass-phrase policy.
AUDIT_ORDINARY_TEMPLATES: dict[str, dict[str, list[str]]] = {
    "audit_ordinary": {
        "en": ["PW-2 is the second phase of {task}.", "My pass expired on {date}, I'll renew it.",
               "Pass: {n} tests, fail: 0.", "The boarding pass is in my inbox.",
               "The passphrase must be at least {n} characters.", "The passphrase is case sensitive.",
               "Passphrase: changed by {name} on {date}.", "The password's length is checked since {ver}.",
               "The token's scope is read-only.", "PW: see the vault entry for {task}.",
               "Pass the token to the worker in {file}.", "Please reset your password\nThe link expires at {time}.",
               "The seed phrase is stored offline, see {task}.", "The API key's owner is {name}.",
               "The PW board draws 45W since {ver}.", "We pass {n} requests per second to the API.",
               "Pass rate: {pct} on {date}.", "my pass is valid until {date}",
               "The password's hash uses argon2id.", "Recovery phrase backup is documented in {file}.",
               "Token\n{n} used today.", "The password is\nnot stored anywhere.",
               "Use a “strong” password for {task}.", "The “show password” toggle is back in {ver}."],
        "ru": ["PW-2 — вторая фаза проекта {task}.", "Мой пропуск истёк {rudate}.",
               "Пароль\nСменить можно в профиле.", "Кодовая фраза должна быть не короче {n} слов.",
               "Кодовое слово знает только {name}.", "Пароль от Wi-Fi на стенде, см. {task}.",
               "Токен\nистёк {rudate}, перевыпустили.", "pass rate {pct} за {rudate}",
               "PW: см. хранилище, {task}.", "Пароль —\nсм. {url}.",
               "Кодовая фраза: не менее {n} слов.", "Ключ «{task}» в трекере означает задачу.",
               "Пароль «по умолчанию» отключён в {ver}.", "Токен\n{ver}", "Pass/fail: {n}/0."],
        "ja": ["パスワードを変更してください（{task}）。", "パスワード「変更」ボタンの位置を直しました。",
               "パスワードの「表示」アイコンを追加しました。", "パスフレーズは {n} 語以上にしてください。",
               "ログインがパスワードの代わりになります。", "SSO がパスワードより安全です。",
               "パスワード\n変更済みです。", "PW-2 フェーズは {date} に開始します。",
               "新しいパスワードが必要です。", "トークンが期限切れです。",
               "APIキー「発行」ボタンは {ver} で追加されました。", "パスワードの「{n} 文字以上」ルールを確認してください。",
               "パスフレーズ：変更済み（{name}）", "トークン\n{n} 個まで", "パスワードは\n管理者に確認してください。",
               "「パスワードを忘れた」リンクを {file} に追加。"],
    },
}


def ordinary(split: str = "dev", per_form_lang: int = 40) -> list[Ordinary]:
    """The ordinary-sentence corpus of ``split``: nothing in it may be redacted."""
    if split == "handwritten":
        return [Ordinary(text, "handwritten", _lang(text)) for text in HANDWRITTEN_ORDINARY]
    if split == "handwritten27":
        return [Ordinary(text, "handwritten27", _lang(text)) for text in HANDWRITTEN27_ORDINARY]
    if split == "handwritten27b":
        return [Ordinary(text, "handwritten27b", _lang(text)) for text in HANDWRITTEN27B_ORDINARY]
    if split == "handwritten27c":
        return [Ordinary(text, "handwritten27c", _lang(text)) for text in HANDWRITTEN27C_ORDINARY]
    if split in everyday.SPLITS:
        return [Ordinary(text, split, _lang(text)) for text in everyday.SPLITS[split][1]]
    rng = random.Random(SEEDS[split] + 1)
    out: list[Ordinary] = []
    for form, by_lang in ORDINARY_TEMPLATES.items():
        for lang, templates in by_lang.items():
            # held-out: every fifth template; dev: the rest
            tpls = [t for i, t in enumerate(templates) if (i % 5 == 4) == (split == "heldout")]
            for i in range(per_form_lang):
                out.append(Ordinary(tpls[i % len(tpls)].format(**_slots(rng, lang)), form, lang))
    rng = random.Random(SEEDS[split] + 3)  # the audit's templates: their own stream, the above unchanged
    for form, by_lang in AUDIT_ORDINARY_TEMPLATES.items():
        for lang, templates in by_lang.items():
            tpls = [t for i, t in enumerate(templates) if (i % 5 == 4) == (split == "heldout")]
            for i in range(per_form_lang):
                out.append(Ordinary(tpls[i % len(tpls)].format(**_slots(rng, lang)), form, lang))
    # lines of the shapes of issue 27 without a secret (password: changed, export PATH=...)
    out += [Ordinary(text, form, lang) for text, form, lang in shapes.ordinary_shapes(split, SEEDS[split] + 5, _slots)]
    # lines like the follow-up forms without a secret (the password is required, пароль: см. хранилище)
    out += [Ordinary(text, form, lang) for text, form, lang in shapes.bare_ordinary(split, SEEDS[split] + 7, _slots)]
    return out


# Hand-written sentences, written after the rules and never used to tune them (their first run:
# 0 of 29 secrets survived, 0 of 60 ordinary sentences changed). The ``handwritten`` split.
HANDWRITTEN_PLANTED: tuple[tuple[str, str, str], ...] = (
    ('Password for Jenkins: J3nk!ns2026', 'J3nk!ns2026', 'en'),
    ('the root password is now Xq7#pL2m', 'Xq7#pL2m', 'en'),
    ('token=ya29.a0AfH6SMBx7fakefakefakefake123', 'a0AfH6SMBx7fakefakefakefake123', 'en'),
    ('my passcode: 889123', '889123', 'en'),
    ('PIN: 0451', '0451', 'en'),
    ('pwd: s3cretPass', 's3cretPass', 'en'),
    ('Пароль от Jenkins — J3nk1ns2026', 'J3nk1ns2026', 'ru'),
    ('пароль администратора: Adm1nPass!', 'Adm1nPass', 'ru'),
    ('новый токен: t0k3nV4lue99', 't0k3nV4lue99', 'ru'),
    ('ключ доступа — AbC123dEf456', 'AbC123dEf456', 'ru'),
    ('ключ: 7f3a9b2c1d4e', '7f3a9b2c1d4e', 'ru'),
    ('секрет = Zz9yY8xX7', 'Zz9yY8xX7', 'ru'),
    ('ПИН 0451', '0451', 'ru'),
    ('пароль 7391', '7391', 'ru'),
    ('パスワードは J3nk1ns2026 です', 'J3nk1ns2026', 'ja'),
    ('パスワード：Adm1nPass!', 'Adm1nPass', 'ja'),
    ('トークンは t0k3nV4lue99 です', 't0k3nV4lue99', 'ja'),
    ('APIキー ab12cd34ef56gh78', 'ab12cd34ef56gh78', 'ja'),
    ('暗証番号：0451', '0451', 'ja'),
    ('シークレット：Zz9yY8xX7', 'Zz9yY8xX7', 'ja'),
    ('admin password: correct-horse-battery-staple', 'correct-horse-battery-staple', 'en'),
    ('DATABASE_URL=postgres://app:Sup3rS3cret@db:5432/app', 'Sup3rS3cret', 'en'),
    ('aws_access_key_id = AKIAIOSFODNN7EXAMPL2', 'AKIAIOSFODNN7EXAMPL2', 'en'),
    ('aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzEXAMPLEKEY', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzEXAMPLEKEY', 'en'),
    ('hf token hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567', 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567', 'en'),
    ('npm token npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', 'npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789', 'en'),
    ('send to петр@компания.рф', 'петр@компания.рф', 'ru'),
    ('mail: taro.yamada@例え.jp', 'taro.yamada@例え.jp', 'ja'),
    ('お問い合わせ：用户@例子.广告', '用户@例子.广告', 'ja'),
)
HANDWRITTEN_ORDINARY: tuple[str, ...] = (
    'The keynote covered passkeys replacing passwords.',
    'After the password change, SSO logins failed for 3 users.',
    'We hit the token rate limit at 14:05 UTC.',
    'Rotate secrets quarterly per SEC-204.',
    'API key scopes: read, write, admin.',
    'The secret ballot closes on Friday.',
    'Token-level F1 improved from 0.71 to 0.78.',
    'Use the refresh token flow from RFC 6749.',
    'Private key material must never be logged.',
    'Password hints are disabled in v4.0.0.',
    'A PIN pad was installed at the reception.',
    'Passphrase strength meter uses zxcvbn 4.4.2.',
    'The token bucket refills 10 tokens per second.',
    'Session tokens expire after 30 min of inactivity.',
    'Keys and secrets are listed in docs/security.md.',
    'Token: see the runbook, step 3.',
    'Access key IDs start with AKIA, but do not paste them.',
    'Store the API key in an env var named SERVICE_API_KEY.',
    'Our password rules follow NIST 800-63B.',
    'Forgot your PIN? Call the helpdesk at ext. 4410.',
    'Пароль администратора хранится в сейфе.',
    'Сменить пароль можно в профиле, раздел «Безопасность».',
    'Токены доступа живут 15 минут.',
    'Ключи от склада у кладовщика, звоните после 9:00.',
    'Ключ продукта указан на коробке.',
    'Пароль не должен совпадать с логином.',
    'Вход по токену включили в версии 3.2.',
    'Секреты передаём только через Vault.',
    'Ключ к пониманию задачи — метрика nDCG@10.',
    'Токенизация японского текста — через SudachiPy 0.6.8.',
    'ПИН-код карты никому не сообщайте.',
    'Пароль от гостевого Wi-Fi висит на стене.',
    'Ключ шардирования — tenant_id, см. DOC-2026-117.',
    'Ключ API лежит в переменной окружения OPENAI_API_KEY.',
    'Токен обновляется автоматически каждые 55 минут.',
    'Пароли пользователей хэшируются через bcrypt.',
    'Секретарь принесёт ключи в 10:30.',
    'Нужен новый ключ для стенда ATL-1700.',
    'Токен истёк 2026-06-20, перевыпустили.',
    'Пароль должен содержать заглавные буквы и цифры.',
    'パスワードの有効期限は90日です。',
    'パスワードを入力してログインしてください。',
    'トークンが無効です（エラー 401）。',
    'APIキーを再発行しました。詳細はATL-1655。',
    '暗証番号を3回間違えるとカードがロックされます。',
    'シークレットはGitHub Actionsの設定に登録済みです。',
    'パスワードマネージャーは 1Password を使います。',
    'トークン数は平均 512 です。',
    '秘密鍵の置き場所は社内Wikiを参照。',
    'パスワード変更画面のUIを v2.3.1 で刷新しました。',
    'APIキーの権限は読み取り専用です。',
    'トークンの形式は JWT です。',
    'パスワードリセット機能のテストを追加しました。',
    '暗証番号の桁数を4桁から6桁に変更。',
    'シークレット情報はチャットに書かないでください。',
    'パスワード：要確認',
    'トークン：期限切れ',
    'APIキー：未発行',
    '鍵の受け渡しは 2026年6月20日 です。',
    'トークン消費量のグラフを dashboard.html に追加。',
)


# Issue 27: written after the rules had been fixed on ``dev`` (and on what the first run of
# ``heldout`` found), in the shapes of that issue but not from its templates, and never used to tune
# them. The ``handwritten27`` split; its first run is in README.md.
HANDWRITTEN27_PLANTED: tuple[tuple[str, str, str], ...] = (
    ("db creds → user: app / password: Tr0ub4dor&3", "Tr0ub4dor&3", "en"),
    ("login is admin, pw is Winter_2026", "Winter_2026", "en"),
    ("PASSWORD: 'Quebec-1999'", "Quebec-1999", "en"),
    ("here's the token:\n\n    Kilo_Echo_55\n\nplease don't share", "Kilo_Echo_55", "en"),
    ("set MY_APP_SECRET to Nova-2031 in the dashboard", "Nova-2031", "en"),
    ("environment:\n  - POSTGRES_PASSWORD=Blue_Whale_8", "Blue_Whale_8", "en"),
    ("my wifi password is Coffee4Life", "Coffee4Life", "en"),
    ("the admin password got reset to Spring2026!", "Spring2026", "en"),
    ('apiKey: "Sierra_Nine_9"', "Sierra_Nine_9", "en"),
    ("token = Zulu-4477", "Zulu-4477", "en"),
    ("ENV DJANGO_SECRET_KEY=Gamma_Ray_12", "Gamma_Ray_12", "en"),
    ('secrets.toml:\napi_token = "Delta-5-Alpha"', "Delta-5-Alpha", "en"),
    ("пароль от роутера: Котик_2025", "Котик_2025", "ru"),
    ("Логин admin, пароль — Зима2026!", "Зима2026", "ru"),
    ("токен:\nАБВ_ГДЕ_77", "АБВ_ГДЕ_77", "ru"),
    ("в .env: DB_PASSWORD=Весна-2027", "Весна-2027", "ru"),
    ("новый пароль Rostov_1961, не забудь", "Rostov_1961", "ru"),
    ("API-ключ выглядит так: Kvant-7-Alpha", "Kvant-7-Alpha", "ru"),
    ("пароль к почте — Solnce_77", "Solnce_77", "ru"),
    ('секретный ключ = "Omega_2028"', "Omega_2028", "ru"),
    ("export API_TOKEN=Медведь_42", "Медведь_42", "ru"),
    ("パスワード：Fuji_San_3776", "Fuji_San_3776", "ja"),
    ("APIキーは Sakura-2026 です", "Sakura-2026", "ja"),
    ("トークン\nKAMINARI_88", "KAMINARI_88", "ja"),
    ("管理者パスワード = Tokyo2026!", "Tokyo2026", "ja"),
    ("DBのパスワードは「Yama-Kawa-9」です", "Yama-Kawa-9", "ja"),
    ("export SECRET_KEY=ひかり_2026 を設定", "ひかり_2026", "ja"),
    ("パスワードは ねこ_2026 にしました", "ねこ_2026", "ja"),
    ("ログイン情報：ID admin／パスワード Hikari_77", "Hikari_77", "ja"),
    ("пароль для staging: Staging_Пароль_1", "Staging_Пароль_1", "ru"),
    ("password は Osaka_1970 です", "Osaka_1970", "ja"),
    ("token для CI — Ci_Token_2026", "Ci_Token_2026", "ru"),
)
HANDWRITTEN27_ORDINARY: tuple[str, ...] = (
    "password: reset link sent", "token: rotated last week", "API key: ask Maria", "export EDITOR=vim",
    "SECRET_KEY is read from the environment", "password_policy: strict", "Token budget: 4096",
    "auth_method: token", "The password field must not be empty.", "pw: n/a", "DB_PASSWORD=${DB_PASSWORD:-}",
    "password:\n  - at least 12 chars\n  - one digit", "secret: see 1Password", "token_type: bearer",
    "пароль: см. в 1Password", "токен: отозван вчера", "export GOPATH=$HOME/go", "ключ API: запросить у Марии",
    "пароль — минимум 12 символов", "секрет: хранится в Vault", "Пароль:\nне задан",
    "パスワード：リセット済み", "トークン：再発行してください", "APIキー：田中さんに確認", "export GOPATH=$HOME/go を追加",
    "パスワードは 12 文字以上です", "シークレット：なし", "パスワード：\n未設定",
)

# Issue 27 item 2, follow-up: written after the rules for plain words, new key words, compound names
# and login/password pairs had been fixed on ``dev`` (and on what the first run of ``heldout`` found),
# not from the templates of ``shapes.BARE_TEMPLATES``, and never used to tune them. The
# ``handwritten27b`` split; its first run is in README.md.
HANDWRITTEN27B_PLANTED: tuple[tuple[str, str, str], ...] = (
    ("vpn creds: jsmith / Marigold", "Marigold", "en"),
    ("credentials for the NAS — backup / tulip-77", "tulip-77", "en"),
    ("your new password is Gardenia", "Gardenia", "en"),
    ("Password: lavender (all lowercase)", "lavender", "en"),
    ("the door code is 8812", "8812", "en"),
    ("alarm code → 5590", "5590", "en"),
    ("gate code: Albatross", "Albatross", "en"),
    ("deploy key = walrus-3", "walrus-3", "en"),
    ("security answer: Rex", "Rex", "en"),
    ("smtp_pass: nightingale", "nightingale", "en"),
    ("mysqlPass = 'thunder'", "thunder", "en"),
    ("secret phrase: amber falcon river", "amber falcon river", "en"),
    ("login/password — root / Kestrel", "Kestrel", "en"),
    ("the recovery key is Bumblebee", "Bumblebee", "en"),
    ("пароль: Незабудка", "Незабудка", "ru"),
    ("новый пароль — ландыш", "ландыш", "ru"),
    ("токен теперь Вертолёт", "Вертолёт", "ru"),
    ("код от домофона: 4417", "4417", "ru"),
    ("кодовое слово — Сирень", "Сирень", "ru"),
    ("логин/пароль: ivanov / Гладиолус", "Гладиолус", "ru"),
    ("учётные данные: admin / rowan-5", "rowan-5", "ru"),
    ("пароль_админа = Фиалка", "Фиалка", "ru"),
    ("секретное слово: Барсук", "Барсук", "ru"),
    ("Пароль от сервера это Лимонад", "Лимонад", "ru"),
    ("код подтверждения — 771204", "771204", "ru"),
    ("ключ деплоя: kolibri-9", "kolibri-9", "ru"),
    ("パスワードは つばめ です", "つばめ", "ja"),
    ("合言葉：かもめ", "かもめ", "ja"),
    ("新しいパスワード：スズラン", "スズラン", "ja"),
    ("ID/PW：tanaka / ひばり", "ひばり", "ja"),
    ("ログイン情報は guest / ミモザ です", "ミモザ", "ja"),
    ("認証コード：launch-4", "launch-4", "ja"),
    ("パスコードは 花火 です", "花火", "ja"),
    ("管理者PW：こがね", "こがね", "ja"),
    ("SSHキー：orca_12", "orca_12", "ja"),
    ("アクセスコードは「うぐいす」です", "うぐいす", "ja"),
)
HANDWRITTEN27B_ORDINARY: tuple[str, ...] = (
    "The password is mandatory for every account.", "password: reset by the helpdesk", "creds: ask in #ops",
    "the access code changes weekly", "deploy key: revoked after the incident", "door code: posted at reception",
    "the secret phrase must be four words", "credentials: same as last sprint", "login/password: via SSO only",
    "security answer: never share it", "Password - see the onboarding doc", "the token is stale",
    "пароль: обязательно сменить", "логин/пароль: в менеджере паролей", "код доступа выдаёт охрана",
    "кодовое слово: спросите у Марии", "пароль — не короче 12 символов", "учётные данные: обновлены вчера",
    "токен: выдаётся на 24 часа", "Пароль неверный", "ключ деплоя: только чтение",
    "パスワードは再設定が必要です", "合言葉は毎週変わります", "ログイン情報：担当者に確認してください",
    "認証コード：メールを確認", "パスワードは忘れずに変更してください", "ID/PW：社内ポータル参照", "パスコード：6桁",
    "アクセスコードは受付で配布", "パスワードは安全に保管してください",
)

# Issue 27 item 2, round 3 audit: written blind by an auditor (new phrasings, not from any template
# or earlier split), run once before any rule was changed for them; 16 of the planted secrets
# survived on the tasks path and 12 on the history path at that first run (README.md). The
# ``handwritten27c`` split.
HANDWRITTEN27C_PLANTED: tuple[tuple[str, str, str], ...] = (
    ("cache at redis://:RedisPass99@cache:6379/0", "RedisPass99", "en"),
    ("secret: blueberry-muffin", "blueberry-muffin", "en"),
    ("Pass: 12345678", "12345678", "en"),
    ("password: kumo-99", "kumo-99", "en"),
    ("password -> Kumo_99x", "Kumo_99x", "en"),
    ('<add key="DbPassword" value="AppSettingPw_3" />', "AppSettingPw_3", "en"),
    ('<Setting Name="ApiToken" Value="tok_xml_77"/>', "tok_xml_77", "en"),
    ("docker login -u bob -p DockerPw_12 registry.local", "DockerPw_12", "en"),
    ("Set-Cookie: session=s3ss10nV4lue; HttpOnly", "s3ss10nV4lue", "en"),
    ("Cookie: JSESSIONID=ABCDEF0123456789", "ABCDEF0123456789", "en"),
    ("DATABASE_URL=postgres://admin:Tr0ub4dor@db.internal:5432/prod", "Tr0ub4dor", "en"),
    ("Server=tcp:x.database.windows.net;User ID=sa;Password=Pa55w0rd!;", "Pa55w0rd!", "en"),
    ("jdbc:mysql://db:3306/app?user=app&password=JdbcPw_99", "JdbcPw_99", "en"),
    ("host=db port=5432 user=app password=LibpqPw12", "LibpqPw12", "en"),
    ("pass = Xyzzy42", "Xyzzy42", "en"),
    ("PASSWORD:\n  Lantern-77", "Lantern-77", "en"),
    ("пароль поставил Жираф2025", "Жираф2025", "ru"),
    ("установил пароль Жираф2026", "Жираф2026", "ru"),
    ("сменил пароль: теперь Жираф2027", "Жираф2027", "ru"),
    ("пароль -> Ромашка_55", "Ромашка_55", "ru"),
    ("пароль — Qwerty12", "Qwerty12", "ru"),
    ("логин admin пароль Qwe12345", "Qwe12345", "ru"),
    ("Пароль:\nЗвезда_77", "Звезда_77", "ru"),
    ("パスワード → kumo-99", "kumo-99", "ja"),
    ("パスワード→tsuki_55", "tsuki_55", "ja"),
    ("パスワード：abc123", "abc123", "ja"),
    ("パスワード変更: hoshi-88", "hoshi-88", "ja"),
    ("新しいパスワードはsakura2026にしました", "sakura2026", "ja"),
    ("Deploy notes 0 pass=Title_Pw09", "Title_Pw09", "en"),
    ("кодовое слово Тюльпан88", "Тюльпан88", "ru"),
    ("токен Берёза14 для бота", "Берёза14", "ru"),
)
HANDWRITTEN27C_ORDINARY: tuple[str, ...] = (
    "the redis URL is redis://cache:6379/0", '<add key="LogLevel" value="Debug" />',
    "docker login -u bob --password-stdin < token.txt", "psql -h db -p 5432 -U app", "Set-Cookie header is missing",
    "secret: none", "Cookie: accepted", "ssh -p 2222 deploy@host", "пароль поставили на сброс вчера",
    "установил пароль по инструкции", "パスワード変更画面を修正", "パスワード → 再設定のリンクを送付",
)

# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------

def history_redact() -> Callable[[str], str]:
    """What history search indexes (``Policy.redact_secrets``: the same rules, e-mail addresses kept,
    and ``NAME=value`` assignments to secret-like names), as a text-to-text function."""
    from searchkit.ingest.policy import Policy

    policy = Policy()
    return lambda text: policy.redact_secrets(text)[0]


def _is_email(secret: str) -> bool:
    return "@" in secret


def measure(redact: Callable[[str], str], split: str = "dev", *, emails: bool = True,
            forms: tuple[str, ...] | None = None) -> dict:
    """Counts for ``split``: planted secrets and how many survive; ordinary sentences and how many change.

    ``emails=False`` leaves e-mail addresses out of the planted secrets (history search shows them);
    ``forms`` keeps only the planted and ordinary items of those forms (``None``: all)."""
    p = [item for item in planted(split) if forms is None or item.form in forms]
    kept = [(item, s) for item in p for s in item.secrets if emails or not _is_email(s)]
    survivors = [(item, s) for item, s in kept if s in redact(item.text)]
    o = [item for item in ordinary(split) if forms is None or item.form in forms]
    changed = [item for item in o if redact(item.text) != item.text]
    by_lang = {}
    for lang in ("en", "ru", "ja"):
        n_p = sum(1 for item, _ in kept if item.lang == lang)
        n_o = sum(1 for item in o if item.lang == lang)
        if n_p or n_o:
            by_lang[lang] = {"planted": n_p, "surviving": sum(1 for item, _ in survivors if item.lang == lang),
                             "ordinary": n_o, "changed": sum(1 for item in changed if item.lang == lang)}
    return {
        "split": split,
        "by_lang": by_lang,
        "planted_sentences": len({id(item) for item, _ in kept}),
        "planted_secrets": len(kept),
        "planted_forms": len({item.form for item, _ in kept}),
        "planted_langs": len({item.lang for item, _ in kept}),
        "surviving": len(survivors),
        "survivors": survivors,
        "ordinary_sentences": len(o),
        "falsely_redacted": len(changed),
        "false_positives": changed,
    }


SHAPES = shapes.SHAPE_FORMS + ("shape_ordinary",)
"""The forms of issue 27 (planted and ordinary), also reported on their own."""
BARE = shapes.BARE_FORMS + ("bare_ordinary",)
"""The follow-up forms of issue 27 item 2 (planted and ordinary), also reported on their own."""


def _lang_line(by_lang: dict) -> str:
    """``en 0/48 0/31 · ru ...``: per language, surviving / planted secrets and changed / ordinary lines."""
    return "  ".join(f"{lang} {c['surviving']}/{c['planted']} surviving, {c['changed']}/{c['ordinary']} changed"
                     for lang, c in by_lang.items())


def echo_pairs(split: str) -> list[tuple[str, str, str, str]]:
    """The echo pairs of ``split`` (``everyday.py``): ``(first, then, secret, lang)``."""
    return list(everyday.SPLITS[split][2]) if split in everyday.SPLITS else []


def redact_records(texts: list[str], path: str) -> list[str]:
    """``texts`` as records of one scope of a workspace (``history``) or of one space of a task store
    (``tasks``): each redacted by the path's rules, then every value the rules redacted in any of them
    redacted wherever it appears again (``searchkit.ingest.redact.known``), as ingest and the task
    import do. Before issue 39 there was no such pass: each text alone."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from searchkit.ingest.tasks.model import redact_text

    try:
        from searchkit.ingest.redact.known import KnownSecrets, found_values
    except ImportError:  # the rules before issue 39
        return [redact_text(t) if path == "tasks" else history_redact()(t) for t in texts]
    fn = redact_text if path == "tasks" else history_redact()
    known = KnownSecrets()
    outs = []
    for text in texts:
        with found_values() as found:
            outs.append(fn(text))
        for rule, value in found:
            if rule != "email":
                known.add("space", value)
    return [known.redact(out, ["space"])[0] for out in outs]


def measure_echo(path: str, split: str) -> dict:
    """Echo pairs of ``split`` read as two records of one workspace (or task store) on ``path``:
    how many of the secrets redacted in the first record survive in the second."""
    pairs = echo_pairs(split)
    survivors = []
    for first, then, secret, lang in pairs:
        shown = redact_records([first, then], path=path)
        if secret in shown[1]:
            survivors.append((then, secret, lang, shown[1]))
    return {"pairs": len(pairs), "surviving": len(survivors), "survivors": survivors,
            "by_lang": {lang: (sum(1 for *_x, secret, lg in pairs if lg == lang),
                               sum(1 for _t, _s, lg, _r in survivors if lg == lang)) for lang in ("en", "ru", "ja")}}


def main(argv: list[str] | None = None) -> int:
    """``corpus.py [-v] [--split NAME]...``: the figures of every split (or of the named ones)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from searchkit.ingest.tasks.model import redact_text as redact

    args = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in args
    chosen = [args[i + 1] for i, a in enumerate(args) if a == "--split" and i + 1 < len(args)]
    unknown = [s for s in chosen if s not in SPLITS]
    if unknown:
        print(f"unknown split {unknown[0]!r}; the splits are {', '.join(SPLITS)}", file=sys.stderr)
        return 2
    worst = 0
    paths = (("tasks", redact, True), ("history", history_redact(), False))
    for path, fn, emails in paths:
        print(f"== {path} ({'searchkit.ingest.tasks.model.redact_text' if path == 'tasks' else 'Policy.redact_secrets, e-mail addresses kept'})")
        totals = {"planted": 0, "surviving": 0, "ordinary": 0, "changed": 0}
        for split in chosen or SPLITS:
            for forms, label in ((None, split), (SHAPES, f"{split}/shapes"), (BARE, f"{split}/bare")):
                if forms is not None and split in HANDWRITTEN:
                    continue
                m = measure(fn, split, emails=emails, forms=forms)
                if forms is None:
                    totals["planted"] += m["planted_secrets"]
                    totals["surviving"] += m["surviving"]
                    totals["ordinary"] += m["ordinary_sentences"]
                    totals["changed"] += m["falsely_redacted"]
                rate = m["falsely_redacted"] / m["ordinary_sentences"]
                print(f"{label:18s} planted secrets: {m['planted_secrets']} in {m['planted_sentences']} sentences, "
                      f"{m['planted_forms']} forms, {m['planted_langs']} languages; surviving: {m['surviving']}; "
                      f"ordinary: {m['ordinary_sentences']}, falsely redacted: {m['falsely_redacted']} ({rate:.2%})")
                if forms is None:
                    print(f"{'':18s} {_lang_line(m['by_lang'])}")
                if verbose and forms is None:
                    for item, s in m["survivors"]:
                        print(f"   SURVIVED {item.form}/{item.lang}/{item.kind}: {s!r} in {fn(item.text)!r}")
                    for item in m["false_positives"]:
                        print(f"   CHANGED {item.form}/{item.lang}: {item.text!r} -> {fn(item.text)!r}")
                worst = max(worst, int(m["surviving"] > 0 or rate > 0.01))
            if echo_pairs(split):
                e = measure_echo(path, split)
                langs = "  ".join(f"{lang} {s}/{n}" for lang, (n, s) in e["by_lang"].items())
                print(f"{split + '/echo':18s} secrets echoed in another record: {e['pairs']}; surviving: "
                      f"{e['surviving']} ({langs})")
                if verbose:
                    for _then, secret, lang, shown in e["survivors"]:
                        print(f"   ECHO SURVIVED {lang}: {secret!r} in {shown!r}")
                worst = max(worst, int(e["surviving"] > 0))
        if not chosen:
            print(f"{'total':18s} planted secrets: {totals['planted']}, surviving: {totals['surviving']}; ordinary "
                  f"sentences: {totals['ordinary']}, falsely redacted: {totals['changed']} "
                  f"({totals['changed'] / totals['ordinary']:.2%})")
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
