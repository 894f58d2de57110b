"""Redaction of secrets and e-mail addresses in text that goes into an index (SPEC T2).

Each rule is a named entry of ``RULES``; ``redact`` applies them in order. A redacted span
becomes ``[redacted]`` (``[email]`` for an address); where a key word introduces the secret
the key word stays and only the value is replaced, so ``password=hunter2`` reads
``password=[redacted]`` and ``パスワードは hunter2xyz です`` reads ``パスワードは [redacted] です``.

What is found:

* token shapes a secret scanner knows (the detect-secrets plugins were the reference): private
  key blocks, credentials in URLs, ``Authorization`` headers, vendor tokens (AWS, GitHub, GitLab,
  Slack, Stripe, Twilio, SendGrid, Mailchimp, npm, PyPI, Square, Telegram, Discord, Hugging Face,
  OpenAI/Anthropic, Google), JWTs, ``curl -u user:pass`` / ``mysql -ppass`` on a command line,
  and long random-looking hex/base64 strings;
* e-mail addresses, internationalised ones too (``ivan@пример.рф``, ``用户@例子.广告``);
* secrets introduced by a key word in English, Russian or Japanese (password, passcode, PIN,
  token, API key, secret, пароль/пароля/паролем…, токен…, ключ…, ключ API, API-ключ,
  パスワード, 暗証番号, トークン, APIキー, シークレット, …), after ``:``/``=``/``：``, a word
  (``is``, ``это``, ``は…です``, ``—``, ``to``, ``на``) or a space, also with a short qualifier
  between (``the password for the staging db is …``, ``пароль от почты: …``), and the reverse
  forms (``use X as the password``, ``X をパスワードに設定``, ``X がパスワードです``);
* the forms an audit found (issues 7-8): a bracket quote right after the key word
  (``サーバーのパスワード「…」です``, ``パスワードの「…」``), the value alone on the next line
  (``パスワード\n…``), the possessive (``password's …``), short key words (``PW: …``, ``pw=…``,
  ``my pass is …``; only after a separator and only a value shaped like a secret, so ``PW-2 is the
  second phase`` and ``my pass expired`` stay) and pass phrases of plain words (``passphrase:
  correct horse battery staple``, ``кодовая фраза: …``, ``パスフレーズ：…``);
* the shapes of issue 27: values people choose (``password: Summer-2026``, ``token: TOKENJA_99``,
  ``ключ API: КЛЮЧ_API_88``, ``パスワードは もみじ_57 です``), environment and configuration lines
  (``export DB_PASS=…``, ``PGPASSWORD=…``, ``awsSecretAccessKey: …``, ``<password>…</password>``),
  the value on the next line or in a YAML block (``PASSWORD =\n value``, ``password: |\n  value``)
  and key words glossed in another script (``password (пароль): …``, ``token для CI — …``);
* plain words and names as values (issue 27 item 2, follow-up; privacy first: any doubt redacts):
  after an explicit separator (``:``, ``=``, ``：``, ``→``) any value but a status or placeholder
  word or a word of a sentence (``пароль: Солнышко``, ``パスワード：さくら``, ``password: hunter-2``;
  ``password: see vault``, ``пароль: см. хранилище`` stay); after ``is``/``это``/``—``/``は…です``
  one value alone in its clause, or a capitalised one (``the password is Sunshine``, ``パスワードは
  さくら です``; ``the password is required``, ``パスワードは必須です`` stay) — ``_bare_value``;
* more key words (``deploy key``, ``ssh key``, ``access code``, ``secret phrase``, ``код доступа``,
  ``пин-код``, ``合言葉``, ``認証コード``, …), compound names (``db_pass``, ``adminPwd``, ``пароль_бд``,
  ``管理者PW``: ``_compound_edits``) and the password of a login/password pair after ``creds``,
  ``credentials``, ``логин/пароль``, ``учётные данные``, ``ID/PW``, ``ログイン情報``
  (``creds: admin / Summer-2026``: ``_creds_edits``);
* secrets in file names (``redact_file_name``: ``password=attsecret55.txt``).

A value after a key word is replaced only when it looks like a secret or is a plain value as
above: after a bare space only a value with letters and digits, symbols, or (for a password or
PIN) four or more digits. Versions, dates, task ids, numbers with units, file names, URLs and
model names (``gpt-4o``) are never values. Full-width forms
(``ＡＰＩキー：``) read as their ASCII counterparts. Deterministic; regexes only, linear in the text.

``evals/redaction/corpus.py`` measures the rules on synthetic planted secrets and ordinary sentences.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

SECRET = "[redacted]"
EMAIL = "[email]"

Edit = tuple[int, int, str]
"""A replacement: ``text[start:end]`` becomes the string."""

_FOLD = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
"""Full-width ASCII to ASCII, the ideographic space to a space: one character for one."""


@dataclass(frozen=True)
class Rule:
    """One redaction rule: ``find(text)`` yields the edits (ascending, non-overlapping)."""

    name: str
    find: Callable[[str], Iterable[Edit]]

    def apply(self, text: str) -> tuple[str, int]:
        """Apply the rule's edits; return the new text and how many spans changed.

        The rule reads a copy of ``text`` with full-width ASCII folded to ASCII (``ＡＰＩキー：``
        reads ``APIキー:``); the copy has the same length, so its spans apply to ``text``.
        """
        parts: list[str] = []
        pos = n = 0
        for start, end, rep in self.find(text.translate(_FOLD)):
            if start < pos or text[start:end] == rep:
                continue
            parts.append(text[pos:start])
            parts.append(rep)
            pos = end
            n += 1
        if not n:
            return text, 0
        parts.append(text[pos:])
        return "".join(parts), n


def _regex(
    pattern: re.Pattern[str],
    replacement: str = SECRET,
    group: str | int = 0,
    keep: Callable[[re.Match[str]], bool] | None = None,
) -> Callable[[str], Iterator[Edit]]:
    """Edits replacing ``group`` of each match of ``pattern`` (unless ``keep(match)``)."""

    def find(text: str) -> Iterator[Edit]:
        for m in pattern.finditer(text):
            if keep is not None and keep(m):
                continue
            start, end = m.span(group)
            if start < end:
                yield start, end, replacement

    return find


# --------------------------------------------------------------------------------------------
# What a value looks like
# --------------------------------------------------------------------------------------------

_SYMBOLS = set("!@#$%^&*+=?~|\\")

_TECH_WORDS = frozenset(
    """
    base16 base32 base58 base62 base64 base64url sha1 sha224 sha256 sha384 sha512 sha3 md4 md5
    hmac256 hs256 hs384 hs512 rs256 rs384 rs512 es256 es384 ps256 ed25519 x25519 p256 rsa2048
    rsa4096 aes128 aes256 utf8 utf16 utf32 latin1 cp1251 cp932 iso8859 oauth1 oauth2 oidc2 http1
    http2 http3 ipv4 ipv6 tls12 tls13 x86 x64 x86_64 amd64 arm64 aarch64 i386 win32 win64 s3 ec2
    argon2 argon2i argon2d argon2id pbkdf2 bcrypt scrypt yescrypt blake2 blake2b blake2s blake3 chacha20 poly1305 x509
    pkcs1 pkcs7 pkcs8 pkcs11 pkcs12 aes128gcm aes256gcm gcm128 ed448 secp256k1 secp256r1 p384 p521
    1password e2e i18n l10n a11y k8s k3s 2fa 3ds p2p b2b b2c h264 h265 mp3 mp4 md2 py2 py3 python3 es5 es6
    es2015 es2020 gpt4 gpt4o gpt35 o1 o3 cuda12 cu121 fp16 fp32 bf16 int8 int4 v1 v2 v3 v4 v5 1st
    2nd 3rd 4th 5th 6th 7th 8th 9th 10th 24h 12h 7d 30d 1h 2h 401 403 404 500 502 503
    """.split()
)

_STATUS_WORDS = frozenset(
    """
    a an the is are was were be been it this that these those here there see same below above
    none null nil n/a na tbd todo unknown unset empty blank hidden masked redacted omitted removed
    required optional missing invalid valid wrong incorrect correct expired revoked rotated
    changed unchanged updated reset resets renewed regenerated recreated created deleted stored
    saved sent shared attached pending needed ok okay yes no true false not in on at by from via
    for to of and or with without new old default same ask check use set change rotate update
    renew enter type paste copy send share read write disabled enabled active inactive locked
    unlocked blocked works working broken fine done later soon tomorrow today yesterday never
    always already still again only also just please thanks thank must should will can cannot
    does doesn't didn't isn't wasn't won't don't field fields form policy length strength hash
    hashed encrypted plaintext rules rule format manager vault store stored protected mandatory
    min max minimum maximum least most approx bearer basic digest opaque
    password passwd passwords secret secrets token tokens key keys pin passcode credentials
    пароль токен ключ секрет パスワード トークン キー
    """.split()
)

_STATUS_WORDS_RU_JA = frozenset(
    """
    сменён сменен изменён изменен истёк истек отозван удалён удален обновлён обновлен скрыт скрыто задан
    указан нужен нужна нет есть не см выдан выдаётся отключён отключен включён включен любой прежний
    変更済み 期限切れ 未設定 未発行 要確認 設定済み 発行済み 失効 失効済み なし 不要 必須 無効 有効 非公開
    """.split()
)
"""Status words in Russian and Japanese (``токен: истёк``, ``APIキー：未発行``)."""

_KEY_WORDS_AS_VALUES = frozenset(
    "password passwd secret".split()
)
"""Status words that are also weak passwords people set (``PASSWORD=secret``)."""


def plain_value(value: str) -> bool:
    """Whatever name it is assigned to, ``value`` is not a secret: a status word (``changed``,
    ``expired``, ``required``, ``истёк``, ``未発行``, ``обязателен``, ``なし``; not ``secret`` or
    ``password``, which people set), punctuation alone (``-``, ``?``), a number of fewer than four
    digits (``PASSWORD_MIN_LENGTH=12``) or a technical word (``bcrypt``, ``sha256``).
    ``Policy.secret_assignments`` leaves such values alone."""
    v = value.strip().strip("\"'`").strip()
    low = v.lower()
    if low in _KEY_WORDS_AS_VALUES:
        return False
    if low in _STATUS_WORDS_RU_JA or low in _TECH_WORDS:
        return True
    if low in _STATUS_WORDS and v.isascii():
        return True
    if not any(c.isalnum() for c in v):
        return True  # `password: -`, `password: ?`
    if not v.isascii() and not any(c.isspace() for c in v) and _ordinary_word(v, alone=True):
        return True  # `пароль: обязателен`, `パスワード：なし` (``_ordinary_word``)
    if _CJK_RE.search(v) and not any(c.isdigit() for c in v) and _ja_prose(v):
        return True  # `パスワード: 管理者に確認`, `パスワード: 別紙参照`
    return v.isdigit() and len(v) < 4


_EXEMPT_RE = re.compile(
    r"""(?x)
      [vV]?\d+(?:\.\d+){1,3}(?:(?:[-+]|\.?(?=[a-z]))[A-Za-z0-9.]+)?  # v2.3.1, 1.26.4, 2.3.0+cu121, 3.11rc1
    | [vV]\d+(?:-?(?:alpha|beta|rc|dev|pre|post|a|b)\.?\d*)?  # v2, v1-beta
    | \d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?(?:[T_ ]?\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?
    | \d{1,2}[./-]\d{1,2}[./-]\d{2,4}                        # 20.06.2026
    | \d{1,2}:\d{2}(?::\d{2})?(?:[ap]m)?                     # 10:30
    | [\#№]\d+                                               # #412
    | [-+]?\d{1,3}(?:[,\s]\d{3})+(?:\.\d+)?                  # 1,000,000
    | [-+]?\d+(?:[.,]\d+)?(?:%|[kKmMgGtT]?[bB]|ms|s|sec|min|h|hrs?|d|px|pt|em|rem|x|k|K|M|rpm|rps|qps|fps|Hz|kHz|MHz|GHz|°C?)
    | [\w.\-/~]*\.(?:py|pyc|js|mjs|ts|tsx|jsx|json|jsonl|ya?ml|toml|ini|cfg|conf|md|rst|txt|csv|tsv
                  |html?|css|scss|xml|pdf|docx?|xlsx?|pptx?|png|jpe?g|gif|svg|webp|zip|gz|tar|tgz
                  |sql|sqlite|db|log|sh|bash|ps1|bat|go|rs|java|kt|rb|php|c|h|cpp|hpp|cs|swift
                  |ipynb|parquet|pkl|bin|onnx|pt|whl|lock|env|pem|key|crt|cer|p12)(?::\d+)?
    | (?:https?|ftp|s3|gs|file)://[^\s@]*                    # a URL without credentials
    | (?:\.{1,2}|~)?/[\w.\-/]*                              # /usr/local/bin, ./x, ~/x
    | \#[0-9a-fA-F]{3,8}                                     # a colour
    | [a-z_][a-z_\-]*(?::[a-z0-9_\-{}*]+)+                    # cache keys: user:42:profile
    | <[^<>]*> | \$\{[^{}]*\} | \{\{[^{}]*\}\} | %\(?\w*\)?s | \$[A-Z_][A-Z0-9_]*
    | \*{3,} | [xX]{3,} | \.{3,} | … | -+ | _+
    """
)

_UNIT_AFTER_RE = re.compile(
    r"""(?xi)\s*(?:
        文字|桁|回|件|年|か月|ヶ月|月|日|時間|時|分|秒|人|個|円|ドル|ページ|行|%|％
      | chars?\b|characters?\b|digits?\b|times?\b|days?\b|hours?\b|minutes?\b|mins?\b|seconds?\b
      | secs?\b|bits?\b|bytes?\b|tokens?\b|words?\b|users?\b|requests?\b|calls?\b|rows?\b|items?\b
      | символ|знак|цифр|раз\b|раза\b|дн|день|час|минут|секунд|бит|байт|лет\b|год|г\.|токен|руб
      | штук|запрос|строк|слов|пользовател
    )"""
)

_YEAR_RE = re.compile(r"(?:19|20)\d\d")


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character of ``s``."""
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_NAME_PART_RE = re.compile(r"[a-z]{2,}\d{1,2}")
_SHORT_PART_RE = re.compile(r"\d{1,2}|\d{1,3}[a-z]{1,2}|[a-z]{1,2}\d{1,2}")
"""Short parts of a hyphenated name: ``gpt-4o``, ``llama-3-8b``, ``t5-small``, ``ru-2``."""


_TASK_ID_RE = re.compile(r"\#?(?:[A-Z]{1,4}|[a-z]{1,4})\d?(?:-\d+)+")
"""A task id: a short prefix in one case and numbers (``ATL-1655``, ``DOC-2026-117``, ``atl-100``);
``Summer-2026``, ``TIGER-77`` and ``Hunter-2`` are not ids."""


def _is_exempt(v: str) -> bool:
    """Values that are never secrets: versions, dates, task ids, numbers with units, files, URLs,
    names (``_name_like``)…"""
    if _EXEMPT_RE.fullmatch(v):
        return True
    if v.lower() in _TECH_WORDS:
        return True
    return bool(_TASK_ID_RE.fullmatch(v)) or _name_like(v)


def _name_like(v: str) -> bool:
    """A name of parts joined by ``-``/``_``/``.`` (``gpt-4o``, ``llama-3-8b``, ``t5-small``,
    ``Qwen3-Embedding-8B``, ``customer_id``), not words and a number joined as people make
    passwords: ``Hunter_2``, ``TOKENJA_99``, ``КЛЮЧ_API_88`` (a number joined by ``_``, or a name
    with a number outside ASCII), ``tiger-hunter-1`` (two words and a number), ``Falcon-98`` (a
    capitalised or upper-case word and a number: ``ROCKET-36``), two capitalised words and a number
    (``Delta-5-Alpha``)."""
    if any(c in _SYMBOLS for c in v):
        return False
    raw = [p for p in re.split(r"[-_.]", v) if p]
    if len(raw) < 2:
        return False
    if any(p.isdigit() for p in raw):
        if "_" in v or not v.isascii():
            return False
        words = [p for p in raw if p.isalpha() and len(p) >= 4]
        if raw[-1].isdigit() and (len(words) >= 2 or raw[0] in words and raw[0][0].isupper()):
            return False
        if sum(w[0].isupper() for w in words) >= 2:
            return False  # Delta-5-Alpha
    parts = [p.lower() for p in raw]
    many = len(parts) >= 3 and any(p.isalpha() and len(p) >= 4 for p in parts)  # Qwen3-Embedding-8B
    return (
        all(p.isalpha() or p in _TECH_WORDS or _SHORT_PART_RE.fullmatch(p) or many and _NAME_PART_RE.fullmatch(p)
            for p in parts)
        and any(p.isalpha() and len(p) >= 2 for p in parts)
    )


_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")
_CJK_VALUE_RE = re.compile(r"[^\W\d_]{1,12}[-_.]?\d{2,6}[!#$%&*?+]?")


def _script(c: str) -> str:
    if "\u3040" <= c <= "\u309f":
        return "hiragana"
    if "\u30a0" <= c <= "\u30ff" or "\uff66" <= c <= "\uff9f":
        return "katakana"
    if "\u3400" <= c <= "\u9fff":
        return "kanji"
    return "cyrillic" if "\u0400" <= c <= "\u052f" else "latin"


def _cjk_word_and_number(v: str) -> bool:
    """A Japanese word and then a number (``やま2025``, ``サクラ_83``, ``ひみつmaple15``): one or two
    changes of script in the word, not a clause (``忘れた場合はATL-1655``)."""
    m = _CJK_VALUE_RE.fullmatch(v)
    if not m:
        return False
    word = re.match(r"[^\W\d_]+", v)
    scripts = [_script(c) for c in word.group(0)] if word else []
    return sum(a != b for a, b in zip(scripts, scripts[1:])) <= 2


def _word_and_number(v: str) -> bool:
    """A value outside ASCII that reads as a word and a number (``Берёза14``, ``Москва-2027``,
    ``Летоautumn57``; in Japanese only a word and then the number: ``やま2025``, ``サクラ_83``), not
    prose with a number in it (``忘れた場合はATL-1655を参照``)."""
    if _CJK_RE.search(v):
        return _cjk_word_and_number(v)
    return _has_letter_and_digit(v)


def _has_letter_and_digit(v: str) -> bool:
    return any(c.isalpha() for c in v) and any(c.isdigit() for c in v)


def _mixed_case_random(s: str) -> bool:
    """Letters only, but case switching like a generated string (``hJkLmNoPqRsT``)."""
    if len(s) < 10 or not s.isascii() or not s.isalpha():
        return False
    switches = sum(1 for a, b in zip(s, s[1:]) if a.isupper() != b.isupper())
    return switches >= len(s) // 3


def _random_looking(s: str, *, min_len: int = 20) -> bool:
    """A string of letters and digits that reads like a generated key, not an identifier."""
    core = s.rstrip("=")
    if len(core) < min_len:
        return False
    digits = sum(c.isdigit() for c in core)
    upper = sum(c.isupper() for c in core)
    lower = sum(c.islower() for c in core)
    if not (digits and upper and lower):
        return False
    if len(core) >= 32:
        return _entropy(core) >= 4.2
    # 20..31 characters: random strings switch case often and repeat little.
    switches = sum(
        1 for a, b in zip(core, core[1:]) if a.isalpha() and b.isalpha() and a.isupper() != b.isupper()
    )
    return digits >= 2 and upper >= 3 and lower >= 3 and switches >= len(core) // 5 and (
        _entropy(core) >= math.log2(len(core)) - 0.6
    )


# --------------------------------------------------------------------------------------------
# Token shapes (after the detect-secrets plugins)
# --------------------------------------------------------------------------------------------

_PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    r"|PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:\s*\S+|\Z)",
    re.S,
)

_URL_CREDENTIALS_RE = re.compile(r"(?<=://)[^\s/@:]+:[^\s/@]+(?=@)|(?<=://)(?P<tok>[A-Za-z0-9_\-.~]{16,})(?=@)")


def _url_keep(m: re.Match[str]) -> bool:
    tok = m.group("tok")
    return tok is not None and not (_has_letter_and_digit(tok) or _random_looking(tok, min_len=16))


_AUTH_HEADER_RE = re.compile(
    r"(?i)(?P<hdr>\b(?:proxy-)?authorization\s*[:=]\s*[\"']?)?"
    r"(?P<key>\b(?:bearer|basic|token|digest|negotiate))[ \t]+"
    r"(?P<v>[A-Za-z0-9\-._~+/]{8,}=*)"
)


def _auth_keep(m: re.Match[str]) -> bool:
    if m.group("hdr"):
        return False
    v = m.group("v")
    scheme = m.group("key").lower()
    if scheme in {"token", "digest", "negotiate"}:
        return True  # only inside an Authorization header
    return not (_has_letter_and_digit(v) or "=" in v or "+" in v or _random_looking(v, min_len=16))


_VENDOR_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-(?:ant-(?:api\d+-)?|proj-|live-|test-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"  # OpenAI / Anthropic
    r"|gh[pousr]_[A-Za-z0-9_]{20,}"  # GitHub
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas|glrtr)-[A-Za-z0-9_\-]{20,}"  # GitLab
    r"|GR1348941[A-Za-z0-9_\-]{20,}"
    r"|xox[abposrec]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|xapp-\d+-[A-Za-z0-9\-]{10,}"
    r"|(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}"  # AWS key ids
    r"|AIza[0-9A-Za-z_\-]{35}"  # Google API keys
    r"|ya29\.[0-9A-Za-z_\-]{20,}"  # Google OAuth access tokens
    r"|(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"  # Stripe secret / restricted keys
    r"|whsec_[0-9A-Za-z]{24,}"  # Stripe webhook secrets
    r"|(?:AC|SK)[0-9a-f]{32}"  # Twilio
    r"|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"  # SendGrid
    r"|[0-9a-f]{32}-us\d{1,2}"  # Mailchimp
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|pypi-AgE[A-Za-z0-9_\-]{50,}"  # PyPI
    r"|sq0(?:csp|atp|idp)-[0-9A-Za-z_\-]{20,}"  # Square
    r"|EAAA[0-9A-Za-z_\-]{40,}"
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"  # Shopify
    r"|dop_v1_[a-f0-9]{64}"  # DigitalOcean
    r"|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"  # Grafana
    r"|AKC[a-zA-Z0-9]{60,}"  # Artifactory
    r"|\d{8,10}:AA[0-9A-Za-z_\-]{33}"  # Telegram bot tokens
    r"|[MNO][A-Za-z\d_\-]{23,25}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,}"  # Discord bot tokens
    r"|https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]+"  # Slack webhooks
    r"|https://discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]+"
    r")"
)

_AZURE_RE = re.compile(r"(?i)(?:AccountKey|SharedAccessKey|sig)=(?P<v>[A-Za-z0-9+/%]{20,}={0,2})")

_JWT_RE = re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")

# --------------------------------------------------------------------------------------------
# E-mail addresses, internationalised ones too
# --------------------------------------------------------------------------------------------

_CJK_TLDS = (
    "广告 中国 中國 公司 网络 網絡 网址 網址 在线 在線 移动 商城 商店 商标 游戏 遊戲 企业 集团 我爱你 香港 台湾 台灣 "
    "新加坡 中文网 政务 公益 佛山 广东 时尚 微博 手机 信息 购物 みんな コム ストア セール ファッション ポイント "
    "クラウド グーグル 닷컴 닷넷 한국 삼성"
).split()
_EMAIL_RE = re.compile(
    r"(?<![\w.%+\-])"
    r"(?P<local>(?:[^\W_]|[_.%+\-])+)"  # local part
    r"@(?:[^\W_](?:[\w\-]{0,61}[^\W_])?\.)+"  # domain labels
    r"(?:[A-Za-z]{2,24}(?![A-Za-z0-9\-])|xn--[a-z0-9\-]{2,59}(?![\w\-])|[^\W\d_A-Za-z\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{2,24}(?![\w\-])"
    + "|" + "|".join(sorted(_CJK_TLDS, key=len, reverse=True)) + ")"
)

_HIRA_THEN_OTHER_RE = re.compile(r".*[\u3040-\u309f](?=[^\u3040-\u309f])")


def _email_edits(text: str) -> Iterator[Edit]:
    """Addresses; in Japanese written without spaces (``連絡は用户@…``) the local part starts
    after the last hiragana that is followed by something else (a particle ends the sentence)."""
    for m in _EMAIL_RE.finditer(text):
        start = m.start()
        local = m.group("local")
        cut = _HIRA_THEN_OTHER_RE.match(local)
        if cut:
            start += cut.end()
        yield start, m.end(), EMAIL


# --------------------------------------------------------------------------------------------
# Secrets introduced by a key word
# --------------------------------------------------------------------------------------------

PW, PIN, TOKEN, KEY, SECRETW, PHRASE, CREDS = "password", "pin", "token", "key", "secret", "passphrase", "credentials"

_SHORT = frozenset({"pw", "p/w", "pswd", "psw", "pword", "pass"})
"""Short key words that are also ordinary words or abbreviations (``my pass expired``, ``PW-2``):
a value must follow a separator (``:``, ``=``, ``is``…, never a bare space) and have the shape of
a secret (letters and digits, a symbol, or four or more digits; digits alone never after ``pass``,
where they count tests), never a word alone."""

_EN_KEYWORDS = (
    # (regex, family); matched case-insensitively, at a word start and a word end
    (r"(?:(?:db|database|root|admin|user|app|master|account|login|wifi|wi-fi|ssh|smtp|mail|sudo|vault|"
     r"bind|ldap|redis|postgres|mysql|keystore|truststore)[ _\-]?)?(?:password|passwd|pass[ _\-]?word)", PW),
    (r"(?:wallet[ _\-]|seed[ _\-]|recovery[ _\-]|mnemonic[ _\-])?pass[ _\-]?phrase|(?:seed|recovery|mnemonic)[ _\-]phrase"
     r"|secret[ _\-]phrase|(?:secret|recovery|seed)[ _\-]words|pass[ _\-]?sentence|keyphrase", PHRASE),
    (r"pwd", PW),
    (r"pass[ _\-]?code|one[ _\-]time[ _\-]code|otp(?:[ _\-]code)?|recovery[ _\-]code|backup[ _\-]code", PW),
    # codes and words that open something (issue 27 item 2: `access code: …`, `code word: …`)
    (r"(?:access|security|verification|confirmation|auth|authentication|authorization|unlock|door|gate|alarm|"
     r"safe|lock|entry|sms|2fa|mfa|totp|activation|login|wifi|wi-fi|garage|keypad|intercom)[ _\-]code"
     r"|code[ _\-]?word|safe[ _\-]?word|secret[ _\-](?:word|answer|question[ _\-]answer)|security[ _\-]answer"
     r"|memorable[ _\-]word", PW),
    (r"pin(?:[ _\-]?(?:code|number))?", PIN),
    (r"(?:(?:api|access|auth|oauth|refresh|id|bearer|session|bot|app|personal[ _\-]access|deploy|github|"
     r"gitlab|slack|npm|pypi|registry|service|webhook|csrf|jwt|sso)[ _\-]?)?token", TOKEN),
    (r"(?:api|access|secret|private|auth|signing|encryption|license|licence|master|client|app|ssh|"
     r"service[ _\-]account|subscription|consumer|developer|admin|deploy|deployment|wifi|wi-fi|network|wpa2?|"
     r"pre[ _\-]?shared|recovery|backup|decryption|unlock|activation|product|registration|gpg|pgp|kms|hmac|"
     r"root|vault|bitlocker|filevault)[ _\-]?key|psk", KEY),
    (r"apikey|x-api-key", KEY),
    (r"(?:(?:client|app|api|shared|webhook|consumer|jwt|oauth|session|signing|hmac|encryption|master|root|admin|"
     r"db|database|cookie|csrf|django|flask|rails|auth|bot|github|stripe|vault)[ _\-]?)?secret"
     r"(?:[ _\-]?access[ _\-]?key)?", SECRETW),
    (r"pw|p/w|pswd|psw|pword|pass", PW),  # short: never before a bare space, never a word alone (_SHORT)
)
_RU_KEYWORDS = (
    (r"парол(?:ь|я|ю|ем|е|и|ей|ям|ями|ях)", PW),
    (r"код(?:а|ом|у|е)?\s+(?:доступа|подтверждения|безопасности|разблокировки|активации|входа|"
     r"из\s+(?:СМС|смс|SMS)|от\s+[а-яё]{3,20})|одноразов\w+\s+код\w*"
     r"|секретн(?:ое|ого|ым|ому)\s+слов(?:о|а|ом|у)|ответ\s+на\s+секретный\s+вопрос|фраз(?:а|ы|у|ой)[\-\s]парол\w+", PW),
    (r"пин(?:[\-\s]?код(?:а|у|ом|е|ы|ов)?)?|pin[\-\s]?код(?:а|у|ом|е|ы|ов)?", PIN),
    (r"(?:API[\-\s]?|апи[\-\s]?)?токен(?:а|у|ом|е|ы|ов|ам|ами|ах)?(?:\s+(?:доступа|бота|API))?", TOKEN),
    (r"(?:API[\-\s]|апи[\-\s]?|SSH[\-\s]?|мастер[\-\s]?|секретн\w+\s+|приватн\w+\s+|закрыт\w+\s+)?"
     r"ключ(?:а|у|ом|е|и|ей|ам|ами|ах)?"
     r"(?:\s+(?:API|апи|доступа|шифрования|подписи|лицензии|деплоя|развёртывания|развертывания|активации|"
     r"продукта|SSH|восстановления))?", KEY),
    (r"секрет(?:а|у|ом|е|ы|ов)?", SECRETW),
    (r"(?:кодов|парольн)(?:ая|ой|ую)\s+фраз(?:а|ы|е|у|ой)|кодов(?:ое|ого|ым)\s+слов(?:о|а|ом)", PHRASE),
)
_JA_KEYWORDS = (
    (r"パスフレーズ", PHRASE),
    (r"(?:管理者|ルート|Wi-?Fi|wifi|WiFi|DB|データベース|ログイン|メール|アカウント|マスター)?(?:パスワード|合言葉)"
     r"|合い言葉|あいことば|秘密の(?:言葉|答え|質問の答え)", PW),
    (r"ワンタイムパスワード|パスコード|認証コード|確認コード|リカバリーコード|ワンタイムコード|セキュリティコード"
     r"|アクセスコード|解除コード|暗証コード|認証番号|確認番号|承認コード", PW),
    (r"暗証番号|PIN(?:コード|番号)|ピン(?:コード|番号)", PIN),
    (r"(?:(?:アクセス|API|リフレッシュ|認証|ボット|Bot|BOT|デプロイ)\s?)?トークン", TOKEN),
    (r"(?:API|アクセス|シークレット|秘密|認証|暗号化?|復号|ライセンス|プライベート|署名|デプロイ|SSH|マスター|共通|"
     r"リカバリー|回復|プロダクト|アクティベーション|Wi-?Fi)\s?(?:キー|鍵)", KEY),
    (r"(?:クライアント)?シークレット", SECRETW),
)

_CREDS_KEYWORDS = (
    (r"creds|credentials?|(?:user(?:[ _\-]?name)?|login|account|id)[ \t]*(?:/|&|\+|,|\band\b)[ \t]*(?:pass(?:word)?|pwd|pw)"
     r"|u/p|l/p", CREDS),
    (r"логин[ \t]*(?:/|-|–|&|,|\+|\bи\b)[ \t]*пароль|уч[её]тн(?:ые|ых|ым)[ \t]+данн(?:ые|ых|ым)|уч[её]тк[аиуе]|доступы?|креды", CREDS),
    (r"ログイン情報|認証情報|アカウント情報|ID[ \t]*[/／・][ \t]*(?:PW|PASS|パスワード|パス)"
     r"|ユーザー(?:名|ID)?[ \t]*[/／・][ \t]*パスワード", CREDS),
)
"""Words that introduce a login and its password (``creds: admin / …``, ``логин/пароль: …``,
``ID/PW：…``): ``_creds_edits`` redacts the password of the pair (or a lone value)."""

_GLUED_KEYWORDS = (("PASSWORD|PASSWD|PWD", PW), ("TOKEN", TOKEN), ("APIKEY|SECRETKEY", KEY),
                   ("SECRET", SECRETW))
"""Key words at the end of an upper-case name with no separator (``PGPASSWORD=…``), case-sensitive."""

_CREDS_RE = re.compile(
    "|".join(rf"(?<![A-Za-z0-9а-яёА-ЯЁ])(?i:{rx})(?![A-Za-z0-9а-яёА-ЯЁ_ァ-ヺー])" for rx, _ in _CREDS_KEYWORDS)
)

_KEYWORD_RE = re.compile(
    "|".join(
        # first, so that `логин/пароль` and `user/password` are read whole (``_creds_edits`` reads them)
        [_CREDS_RE.pattern]
        + [rf"(?:(?<![A-Za-z0-9])|(?=[^\x00-\x7f]))(?:{rx})(?![ァ-ヺー])" for rx, _ in _JA_KEYWORDS]
        + [rf"(?<![а-яёА-ЯЁA-Za-z])(?i:{rx})(?![а-яёА-ЯЁ])" for rx, _ in _RU_KEYWORDS]
        # at a word start, or where a camelCase name turns (`awsSecretAccessKey`, `newPassword`)
        + [rf"(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z]))(?i:{rx})(?![A-Za-z0-9_])" for rx, _ in _EN_KEYWORDS]
        # the end of an upper-case name (`PGPASSWORD`, `DBPASS`, `ADMINTOKEN`)
        + [rf"(?<=[A-Z0-9])(?:{rx})(?![A-Za-z0-9_])" for rx, _ in _GLUED_KEYWORDS]
    )
)
_FAMILY_RES = [
    (re.compile(rf"(?i:{rx})\Z"), fam)
    for rx, fam in (*_CREDS_KEYWORDS, *_EN_KEYWORDS, *_RU_KEYWORDS, *_JA_KEYWORDS, *_GLUED_KEYWORDS)
]


def _family(word: str) -> str:
    for rx, fam in _FAMILY_RES:
        if rx.match(word):
            return fam
    return SECRETW


STRONG, MEDIUM, WEAK = 3, 2, 1

_LINE_SEP = re.compile(r"[ \t]*\n(?:[ \t]*\n)?[ \t]*")
"""The key word ends its line and the value is the whole next line (``パスワード\nhunter2xyz``)."""

_SEPS: tuple[tuple[re.Pattern[str], int], ...] = (
    # `password: x`, `password =\n  x`, `password: |\n  x` (a YAML block), `<password>x</password>`
    (re.compile(r"[\"'`」』”’»]?[ \t]*(?::=|=>|->|:(?!//)|[=＝：→】]|>(?=[^<>\n]{1,128}</))[ \t]*"
                r"(?:[|>][-+]?[1-9]?[ \t]*(?=\n))?(?:\n[ \t]*){0,2}"), STRONG),
    (re.compile(
        r"(?i)[ \t]+(?:(?:has\s+been|is|was|will\s+be|got|gets)\s+(?:set|changed|reset|updated)\s+to|is\s+now|is\s+still|"
        r"(?:set|changed|reset|updated)\s+to|is|was|are|equals|to|becomes|это|—|–|-|равен|равна|на|"
        r"теперь|будет|стал|стала|сейчас)[ \t]*:?(?:[ \t]+|[ \t]*\n(?:[ \t]*\n)?[ \t]*)"
    ), MEDIUM),
    (re.compile(r"(?i)['’]s[ \t]+(?:now[ \t]+|still[ \t]+)?"), MEDIUM),  # password's hunter2xyz
    (re.compile(r"[ \t]*[—–][ \t]*"), MEDIUM),
    (re.compile(r"[ \t]*(?:は|が|を|も|に|として|で)[、,]?[ \t]*\n?[ \t]*"), MEDIUM),
    (_LINE_SEP, MEDIUM),
    (re.compile(r"[ \t]+"), WEAK),
)

# Between a key word and the separator: a few words (`for the staging db`, `от почты`, `(prod)`).
_EN_QUAL_RE = re.compile(
    r"(?i)(?:[ \t]*\([^()\n]{1,30}\)|[ \t]+(?:for|of|on|to|from|in|at|we|you|i|they|that|which|used|here|"
    r"you'll|we'll|needed|required)(?:[ \t]+[^\s\d:=：,;。、()\"'`]{1,30}){0,3}?)(?=[ \t]*(?:[:=：]|is\b|was\b|to\b|—|–))"
)
_RU_QUAL_RE = re.compile(
    r"(?:[ \t]*\([^()\n]{1,30}\)|(?:[ \t]+[^\s\d:=：,;.。、()\"'`—–]{1,30}){1,4}?)(?=[ \t]*(?:[:=：]|это\b|—|–|-[ \t]|на\b|теперь\b))"
)
_RU_PREP_QUAL_RE = re.compile(r"[ \t]+(?:от|к|для|на)[ \t]+[^\s\d:=：,;.。、()\"'`—–]{2,30}(?=[ \t]+\S)")
_JA_QUAL_RE = re.compile(r"(?:[ \t]*[（(][^（）()\n]{1,20}[）)]|[^\s\d:=：。、「」]{1,16}?)(?=[ \t]*[:：=])")
_CYR_QUAL_RE = re.compile(
    r"[ \t]+[а-яёА-ЯЁ][^\s\d:=：,;.。、()\"'`—–]{0,29}(?:[ \t]+[^\s\d:=：,;.。、()\"'`—–]{1,30}){0,2}?"
    r"(?=[ \t]*(?:[:=：]|это\b|—|–|-[ \t]|теперь\b))"
)
"""Russian words after a Latin key word (``password от стенда: …``)."""
_GLOSS_RE = re.compile(r"[ \t]*[（(][^（）()\n]{1,30}[）)]\Z")
"""A qualifier that is only a bracket (``password (пароль): …``, ``APIキー (api key)：…``, ``(prod)``):
the value after it is still the key word's own."""

_OPEN_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "«": "»", "「": "」", "『": "』", "„": "“"}
_BARE_RE = re.compile(r"[^\s\"'`“”‘’«»「」『』（）()<>\[\]{}、。，；,;]{1,160}")
_MAX_VALUE = 128
"""A longer run after a key word is prose or a blob (the shape rules see blobs), not a value."""
_ASCII_RUN_RE = re.compile(r"[!-~\u00c0-\u024f\u0370-\u03ff\u0400-\u052f]{1,160}")
_HIRAGANA_RE = re.compile(r"[\u3040-\u309f]")
"""A value that starts in Latin runs on through Cyrillic and Greek (``MAPLE_СЕКРЕТ_35``) and stops
where Japanese starts (``パスワード：hunter2です``)."""
_TRAIL = ".,:;)"


def _value_at(text: str, pos: int) -> tuple[int, int, bool] | None:
    """The value starting at ``pos``: (start, end, quoted) or None."""
    if pos >= len(text):
        return None
    ch = text[pos]
    close = _OPEN_QUOTES.get(ch)
    if close is not None:
        end = text.find(close, pos + 1, pos + 122)
        if end > pos + 1 and "\n" not in text[pos + 1 : end]:
            return pos + 1, end, True
        pos += 1
        if pos >= len(text):
            return None
    m = _BARE_RE.match(text, pos)
    if not m:
        return None
    start, end = m.span()
    if not _CJK_RE.match(text, start):
        # Latin or Cyrillic runs into Japanese without a space: `パスワードはПароход589です`
        a = _ASCII_RUN_RE.match(text, start, start + 160)
        end = min(end, a.end()) if a else start
    else:
        # a Japanese word and a number, then a particle: `パスワードはもみじ_57です`
        j = _CJK_VALUE_RE.match(text, start, end)
        if j and _HIRAGANA_RE.match(text, j.end()) and _cjk_word_and_number(j.group(0)):
            end = j.end()
    if end - start > _MAX_VALUE:
        return None
    while end > start and text[end - 1] in _TRAIL:
        end -= 1
    return (start, end, False) if end > start else None


def _clause_ends(text: str, end: int) -> bool:
    """True when nothing but punctuation, a line end or non-Latin text follows the value."""
    rest = text[end : end + 40]
    m = re.match(r"[ \t]*(\S?)", rest)
    nxt = m.group(1) if m else ""
    if not nxt or nxt in ".,;:!?)」』。、\n" or not nxt.isascii():
        return True
    # Another key word follows (`user: admin password: x`) or the value ended a `key=value`.
    return bool(re.match(r"[ \t]*(?:and|or|и|а|/|\|)?[ \t]*\S*(?:[:=])", rest))


_PASSPHRASE_RE = re.compile(r"[A-Za-z]{3,}(?:[-_][A-Za-z]{3,}){2,}[0-9!]*")
_QUOTED_STOP = frozenset(
    """
    a an the of to in on for by with and or not no is are be my your our show hide forgot forgotten
    reset change remember new old default по в во на для не и или с со от до из без при как по-умолчанию
    умолчанию забыли сменить показать скрыть новый старый
    """.split()
)
"""Words that make a quoted run of words a phrase of the interface or the text, not a secret."""


def _looks_secret(
    text: str, start: int, end: int, *, family: str, strength: int, qualified: bool, quoted: bool, sep: str
) -> bool:
    quote = text[start - 1] if quoted else ""
    v = text[start:end]
    if not v.strip() or SECRET in v or EMAIL in v or v.startswith("[") and v.endswith("]"):
        return False
    if quoted:
        words = len(v.split())
        if words > 1 and any(w.lower() in _QUOTED_STOP for w in v.split()):
            return False  # `Пароль «по умолчанию» отключён`, `the "show password" toggle`
        if not qualified and (strength >= MEDIUM or 2 <= words <= 4 and quote != "`"):
            # `the password is "hunter"`, `секрет «sunset monkey quartz»`
            return not _never_a_value(v) and v.lower() not in _STATUS_WORDS and words <= 6
        if words > 1:
            return False
    if strength == STRONG and not qualified and _PASSPHRASE_RE.fullmatch(v):
        return True  # password: correct-horse-battery-staple
    if _is_exempt(v):
        return False
    if not v.isascii() and not (quoted or strength == STRONG and not qualified and len(v) <= 24
                                or strength >= MEDIUM and len(v) <= 24 and _word_and_number(v)):
        # Japanese or Russian prose after `は`/`это` (`パスワードは英数字8文字以上です`); a value of
        # letters and digits stays a value (`токен теперь Берёза14`, `пароль root — Москва-2027`)
        return False
    if not v.isascii() and any(_UNIT_AFTER_RE.match(v, i + 1) for i, c in enumerate(v) if c.isdigit()):
        return False  # `パスワード：英数字8文字以上`
    unit_after = bool(_UNIT_AFTER_RE.match(text, end))
    if v.isdigit() or (v.isascii() and v.replace("-", "").replace(" ", "").isdigit() and family == PIN):
        digits = v.replace("-", "").replace(" ", "")
        if unit_after or len(digits) < 4:
            return False
        if family in (PW, PIN):
            return not (strength == WEAK and len(digits) == 4 and _YEAR_RE.fullmatch(digits))
        return strength == STRONG and not qualified and len(digits) >= 6
    if family == PIN:
        return False  # a PIN is digits; `pin numpy to 1.26` is not one
    if len(v) < 4 and not (strength == STRONG and not qualified and len(v) >= 3):
        return False
    if _has_letter_and_digit(v) or any(c in _SYMBOLS for c in v):
        if qualified and strength == WEAK:
            return len(v) >= 6
        return len(v) >= 4 or strength == STRONG
    if _mixed_case_random(v):
        return True
    if strength == STRONG and not qualified:
        if not v.isascii():
            return False  # `パスワード：変更済み`, `пароль: сменён`
        if not any(c.isalpha() for c in v) or v.lower() in _STATUS_WORDS or _plain_alone(v):
            return False  # `Token: Bearer`, `SSH key: added`
        if "=" in sep and not sep.strip(" \t\"'`=") and v.isascii():
            return True  # password=hunter
        if _CJK_RE.match(text, end) and not re.match(r"です|でした|だ|。", text[end:end + 3]):
            return False  # `認証コード：SMSで送信`: a word of a Japanese sentence
        return _clause_ends(text, end)
    return False


_KEYWORD_HINT_RE = re.compile(
    r"(?i)pass|pwd|pw|p/w|psw|phrase|pin|otp|code|token|key|secret|cred|answer|word|psk|u/p|l/p"
    r"|парол|пин|код|токен|ключ|секрет|логин|уч[её]т|доступ|кред|ответ|слов|фраз"
    r"|パス|合言葉|合い言葉|あいことば|暗証|コード|番号|トークン|キー|鍵|シークレット|情報|言葉|答え"
)
"""A cheap test: a text without any of these has no key word (most texts)."""


def _keyword_edits(text: str) -> Iterator[Edit]:
    if not _KEYWORD_HINT_RE.search(text):
        return
    for km in _KEYWORD_RE.finditer(text):
        word = km.group(0)
        family = _family(word.strip())
        if family == CREDS:
            continue  # a login and a password: ``_creds_edits``
        # a short key word glued to a Japanese word is one name (`管理者PW`), not the word `pass`
        glued = km.start() > 0 and bool(_CJK_RE.match(text, km.start() - 1))
        edit = _value_after(text, km.end(), family, word, firm=glued)
        if edit is not None:
            yield edit


def _quals(text: str, pos: int, word: str) -> list[tuple[int, bool, bool]]:
    """After the key word at ``pos``: where each possible qualifier ends, whether a bare space
    may follow it (``пароль от почты qwerty987``) and whether it qualifies the key word (a bracket
    alone does not: ``password (пароль): …``); no qualifier first."""
    out = [(pos, True, False)]
    if re.search(r"[а-яё]", word.lower()):
        rxs: tuple[re.Pattern[str], ...] = (_RU_QUAL_RE,)
        m = _RU_PREP_QUAL_RE.match(text, pos)
        if m:
            out.append((m.end(), True, True))
    elif re.search(r"[^\x00-\x7f]", word):
        rxs = (_JA_QUAL_RE,)
    else:
        rxs = (_EN_QUAL_RE, _JA_QUAL_RE, _CYR_QUAL_RE) if word.isupper() else (_EN_QUAL_RE, _CYR_QUAL_RE)
    for rx in rxs:
        m = rx.match(text, pos)
        if m and m.end() > pos:
            out.append((m.end(), False, not _GLOSS_RE.match(text[pos:m.end()])))
    return out


def _secret_shape(v: str, family: str, *, digits: bool = True) -> bool:
    """A value that reads as a secret on its own: letters and digits, a symbol, a generated-looking
    mix of cases, or (for a password or PIN, when ``digits``) four or more digits. Never a word alone.
    Outside ASCII only letters and digits together, no number of a unit (``X_PASS=Москва-2023``)."""
    if _is_exempt(v) or len(v) < 4:
        return False
    if not v.isascii():
        return _has_letter_and_digit(v) and not any(
            _UNIT_AFTER_RE.match(v, i + 1) for i, c in enumerate(v) if c.isdigit())
    if v.isdigit():
        return digits and family in (PW, PIN)
    return _has_letter_and_digit(v) or any(c in _SYMBOLS for c in v) or _mixed_case_random(v)


_ADJACENT_QUOTE_RE = re.compile(r"(?:の|は|が|を)?(?=[「『“«])")
"""A bracket quote right after the key word, or after a particle: ``パスワード「…」``, ``パスワードの「…」``."""


def _adjacent_quoted(text: str, pos: int, family: str) -> Edit | None:
    """``サーバーのパスワード「jpquote99x」です``: the quoted value follows the key word with no separator.
    Only a value with the shape of a secret (``パスワード「変更」ボタン`` stays)."""
    m = _ADJACENT_QUOTE_RE.match(text, pos)
    if not m:
        return None
    span = _value_at(text, m.end())
    if span is None or not span[2]:
        return None
    start, end, _ = span
    if _secret_shape(text[start:end], family):
        return start, end, SECRET
    # `パスワード「さくら」`, `パスワード「さくら」です`; never a label of the interface (`パスワード「変更」ボタン`)
    v = text[start:end]
    after = text[end + 1:end + 8]
    if family == PIN or not re.match(r"[ \t]*(?:です|でした|だ(?![ぁ-ん])|[。．.、,（(]|\n|\Z)", after):
        return None
    plain = _JA_WORD_RE.fullmatch(v) and not _JA_PROSE_END_RE.search(v) or re.fullmatch(r"[^\W\d_]{2,24}", v)
    return (start, end, SECRET) if plain and not _ordinary_word(v, alone=True) and not _never_a_value(v) else None


_PHRASE_WORDS_RE = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*(?:[ \t]+[A-Za-z][A-Za-z0-9'\-]*){1,9}")
_PHRASE_END_RE = re.compile(r"[ \t]*(?:[^\x00-\x7f]|[.,;:!?()\[\]\"'`]|\n|\Z)")
_PHRASE_STOP = frozenset(
    """
    a an the is are was were be been it this that these those here there to of in on at by from
    via for with without and or not no yes will can cannot should please also just only still
    but if so than then when where who what why how its into onto about after before over under
    up down out off all any each every some most more less least many much few several other
    such own very too quite really rather must may might need needs shall would could has have
    had do did being get got gets make makes made like least min max minimum maximum long longer
    short shorter strong stronger weak weaker length words word characters chars letters digits
    numbers symbols random one two three four five six seven eight nine ten twelve sixteen
    twenty case sensitive insensitive unique different secure safe easy hard simple complex good
    bad great important necessary generated given shown listed written printed kept saved
    stored found sent my your our their his her them us me you we they he she i see ask
    file docs doc wiki vault manager runbook ticket page screen settings form login account
    user users admin team everyone anyone nobody someone per each day days week weeks month
    months year years time times now later first last next previous current
    """.split()
)


def _phrase_at(text: str, pos: int, strength: int) -> tuple[int, int] | None:
    """A pass phrase of plain words after ``passphrase:`` (``correct horse battery staple``): two
    or more words after ``:``/``=``, three or more after ``is``/``—``, up to the end of the clause,
    none of them a function word or a policy word and at most one a status word (``is case
    sensitive``, ``must be four random words``, ``changed yesterday`` stay)."""
    m = _PASSPHRASE_RE.match(text, pos)  # one token of joined words: sunset-monkey-quartz
    if m and _PHRASE_END_RE.match(text, m.end()):
        if not any(w in _PHRASE_STOP for w in re.split(r"[-_]", m.group(0).lower())):
            return m.start(), m.end()
    m = _PHRASE_WORDS_RE.match(text, pos)
    if not m or not _PHRASE_END_RE.match(text, m.end()):
        return None
    words = m.group(0).split()
    if len(words) < (2 if strength == STRONG else 3):
        return None
    low = [w.lower().strip("'-") for w in words]
    if any(w in _PHRASE_STOP for w in low) or sum(w in _STATUS_WORDS for w in low) > 1:
        return None
    if not any(len(w) >= 3 for w in words):
        return None
    return m.start(), m.end()


def _alone_on_line(text: str, start: int, end: int) -> bool:  # noqa: ARG001 - a span, as its callers hold it
    """Nothing but closing punctuation follows the value on its line."""
    return re.match(r"[ \t.,;。、」』\"'`]*(?:\n|\Z)", text[end:end + 80] + "\n") is not None


# --------------------------------------------------------------------------------------------
# Plain words as values (issue 27 item 2, follow-up): `пароль: Солнышко`, `the password is
# Sunshine`, `パスワードは さくら です`, `password: hunter-2`; privacy first, any doubt redacts
# --------------------------------------------------------------------------------------------

_BARE_STOP_EN = frozenset(
    """
    a an the this that these those it its it's here there see below above same as in on at by from via for
    to of and or with without not no yes never always also just only still again already yet now then
    please thanks thank ask check use set change rotate update renew enter type paste copy send share read
    write get got keep kept put stays goes comes lives sits is are was were be been being has have had
    wrong right correct incorrect valid invalid strong weak long short good bad fine same different new old
    simple easy hard secure insecure unsafe safe unique random empty blank known unknown stale fresh ready
    live dead gone fixed temporary permanent mandatory optional required obvious important sensitive
    private public personal shared common standard default generic complex complicated lowercase uppercase
    numeric alphanumeric mixed visible invisible case-sensitive ok okay great terrible weird odd strange
    too very so quite more less much many few enough similar identical trivial tricky guessable unguessable
    expired active disabled unset configured missing present mine yours ours theirs his hers someone
    something nothing everything anything none tbd tba n/a na todo wip pending unchanged same-as-before
    string number word phrase value hash env variable placeholder secret password passwords token tokens key
    keys code codes pin passcode credentials creds sso 2fa mfa otp totp bearer basic digest opaque cvv cvc
    what which who whose whom where when why how if unless because but so such per each every all any some
    one two three four five six added generated uploaded installed deployed issued provided included emailed
    printed copied
    """.split()
) | _STATUS_WORDS
"""English words that are not a value after a key word (``the password is required``, ``token: in the
header``, ``the password is too short``)."""

_BARE_STOP_RU = frozenset(
    """
    в во на с со у к ко от до из по о об про для без при над под за через между перед и а но или не ни
    же ли бы то да нет вот только уже ещё еще даже тоже также тот та те такой такая такое такие этот эта
    это эти он она оно они мой моя моё мое наш наша ваш ваша свой своя любой любая каждый весь все всё
    сам сама см смотри смотрите спросите спроси спросить запросить уточнить уточните обязателен
    обязательна обязательно нужен нужна нужно задан задана задано указан указана есть сменён сменен
    изменён изменен истёк истек отозван отозвана удалён удален обновлён обновлен скрыт скрыта скрыто
    выдан выдана выданы выдаётся выдается отключён отключен включён включен прежний прежняя важно сложно
    просто надёжно надежно удобно безопасно опасно долго плохо хорошо легко трудно неважно необязательно
    давно недавно скоро позже потом раньше вчера сегодня завтра всегда никогда иногда пока снова опять
    стандартный стандартно строка строки число набор слово фраза комбинация последовательность значение
    ключ код пароль токен секрет хранилище хранилища хранилищем вики сейф сейфе почта почте минимум
    максимум неизвестен неизвестно отсутствует пустой пусто пустая нужно нельзя можно ок окей так как
    какой какая какое где когда что кто чей зачем почему если потому тут там здесь ниже выше далее
    одинаковый одинаковые другой другая разный разные новый новая старый старая временный временная
    верный неверный правильный неправильный короткий длинный слабый сильный простой сложный
    """.split()
) | _STATUS_WORDS_RU_JA
"""Russian words that are not a value after a key word (``пароль: см. хранилище``, ``пароль это важно``)."""

_BARE_STOP_JA = frozenset(
    """
    なし 無し ない ありません まだ こちら これ それ あれ どれ ここ そこ あちら そちら 同じ おなじ 別 別途 後日
    同上 別紙 下記 上記 以下 以上 前回 今回 次回 共通 個別 任意 必須 不要 必要 未定 未設定 設定済 設定済み 変更済
    変更済み 不明 秘密 内緒 非公開 公開 空欄 空 初期値 初期 大事 重要 簡単 複雑 安全 危険 無効 有効 期限切れ 失効
    英数字 数字 半角 全角 大文字 小文字 記号 固定 自動 手動 暗号化 社外秘 極秘 管理者 本人 各自 担当者 上長 未発行
    発行済み 要確認 確認中 準備中 再発行 再設定 廃止 削除 削除済み 不可 可能 未使用 使用中 なしです 省略 ランダム
    デフォルト リセット ブランク 大切 面倒 十分 不十分 厳重 厳格 適当 適切 未知 既定 規定 所定 変更 表示 設定 入力 確認
    登録 削除 更新 発行 認証 管理 保存 共有 送信 受信 ログイン ログアウト サインイン
    """.split()
) | _STATUS_WORDS_RU_JA
"""Japanese words that are not a value after a key word (``パスワードは必須です``, ``合言葉は秘密です``)."""

_AMBIGUOUS_KEY_WORDS_RE = re.compile(r"(?i)ключ\w*|секрет\w*|secrets?|keys?")
"""Key words with an ordinary sense (``Ключ к решению — кэширование``, ``the secret is patience``,
``Секрет успеха прост: тесты``): a plain word is their value only after an explicit separator
and no qualifier (``секрет: Солнышко``)."""

_EXPLICIT, _DASH, _WORD, _PARTICLE = "explicit", "dash", "word", "particle"
_CHANGE_RE = re.compile(r"(?i)\b(?:set|changed?|reset|updated?|rotated?)\b|(?<![а-яё])(?:по|с|из|за|об|у)?(?:меня|мени|"
                        r"станови|ставил|ставь|обнови)[а-яё]*")
"""A verb of setting before ``to``/``на`` (``set the password to …``, ``пароль поменял на …``)."""

_EN_MORPH_RE = re.compile(r"[a-z]{3,}(?:ed|ing|ly|able|ible)\Z")
"""English participles, gerunds and adverbs: prose after a key word (``token: rotated last week``)."""
_EN_ADJ_RE = re.compile(r"[a-z]{3,}(?:ive|ous|ful|less|ent|ant|ic|al|ary)\Z")
"""English adjectives: the end of a sentence after ``is`` (``the password is sensitive``)."""
_RU_VERB_RE = re.compile(
    r"[а-яё]{2,}(?:ть|ться|ти|чь|ет|ёт|ит|ут|ют|ат|ят|ется|ится|ются|ятся|ешь|ишь|ете|ите|ал|ял|ил|ел|ла|ли|"
    r"ло|лся|лась|лись|ся|сь|йте|ай|ей|и)\Z"
)
"""Russian verbs (infinitive, present, past, imperative): prose after a key word (``ключ API: запросить
у Марии``, ``секрет: хранится в Vault``), when more words follow."""
_RU_ADJ_RE = re.compile(r"[а-яё]{2,}(?:ый|ий|ой|ая|яя|ое|ее|ые|ие|ого|его|ому|ему|ым|им|ую|юю)\Z|[а-яё]{3,}[аяеё]н[аоы]?\Z")
"""Russian adjectives and short participles (``пароль: сложный``, ``учётка: заблокирована``, ``обязателен``)."""
_RU_ADVERB_RE = re.compile(r"[а-яё]{3,}(?:но|ско|жно|то|ло)\Z")

_HOLDER_VERBS = frozenset("has have had knows know holds keeps owns manages sends gives will can should must".split())
"""Verbs after a name that make it the subject of a clause (``API key: Anna has it``)."""

_TAILS = frozenset(
    """
    btw now today again too though thanks thx please lol ok okay right already yet then here there anyway
    теперь сейчас кстати пока же вроде ок спасибо да пожалуйста
    """.split()
)
"""Words that may follow a value and still leave it alone in its clause (``the password is Sunshine btw``)."""

_MODEL_FAMILIES = frozenset(
    """
    gpt bert t5 mt5 e5 bge gte llama qwen mistral mixtral gemma phi claude opus sonnet haiku roberta xlm
    deberta electra whisper clip sbert minilm mpnet labse nomic jina yi glm chatglm olmo pythia bloom opt
    vicuna alpaca utf iso cp win sha md x86 arm
    """.split()
)
_MODEL_SIZES = frozenset(
    """
    small base large mini tiny xl xxl instruct chat embedding turbo preview latest pro flash lite nano medium
    max plus vision coder uncased cased multilingual distilled
    """.split()
)


def _model_name(v: str) -> bool:
    """A model, encoding or platform name (``gpt-4o``, ``t5-small``, ``llama-3-8b``, ``utf-8``), not
    a chosen value such as ``hunter-2`` or ``tiger-12``."""
    parts = [p.lower() for p in re.split(r"[-_.]", v) if p]
    return len(parts) >= 2 and (
        parts[0] in _MODEL_FAMILIES
        or any(p in _TECH_WORDS or p in _MODEL_SIZES or re.fullmatch(r"\d+[a-z]{1,2}|[a-z]\d+", p) for p in parts)
    )


def _never_a_value(v: str) -> bool:
    """Shapes that are never a value, whatever introduces them: versions, dates, task ids, numbers
    with units, files, URLs, placeholders (``_EXEMPT_RE``), technical words and model names."""
    return bool(_EXEMPT_RE.fullmatch(v)) or v.lower() in _TECH_WORDS or bool(_TASK_ID_RE.fullmatch(v)) \
        or _model_name(v)


@dataclass(frozen=True)
class _Intro:
    """How a value was introduced: the key word, its family, the separator's strength and text, and
    whether a qualifier stood between (``password for prod: …``), the value was alone on the next line
    or the key word is a compound name (``db_pass``, ``管理者PW``: ``firm``)."""

    word: str
    family: str
    strength: int
    qualified: bool
    sep: str
    line: bool = False
    firm: bool = False
    context: str = ""
    """The text from a little before the key word to the value (``I set the password to``)."""

    @property
    def kind(self) -> str | None:
        """``explicit`` (``:``, ``=``, ``：``, ``→``), ``dash`` (``—``, `` - ``), ``word`` (``is``,
        ``это``, ``теперь``), ``particle`` (``は``, ``を``), or None (a bare space, a line break)."""
        sep = self.sep.strip(" \t\n")
        if self.line or self.strength == WEAK:
            return None
        if self.strength == STRONG:
            return _EXPLICIT
        if sep in ("—", "–", "-"):
            return _DASH
        if sep[:1] in "はがをもにとで":
            return _PARTICLE
        if sep.lower().startswith(("to", "на")):
            return _WORD if _CHANGE_RE.search(self.context) else None  # `send the password to Anna`
        return None if sep.startswith(("'", "’")) else _WORD


def _plain_alone(v: str) -> bool:
    """A word that, standing alone after a key word, is a status and not a value: a stop word
    (``_ordinary_word``) or an English participle (``added``, ``issued``)."""
    return _ordinary_word(v, alone=True) or bool(v.islower() and v.isascii() and re.fullmatch(r"[a-z]{3,}ed", v))


def _ends_clause(text: str, end: int) -> bool:
    """Nothing but punctuation, a line end, text in another script or a tail word (``btw``,
    ``теперь``) follows ``end``: a value there stands alone."""
    m = re.match(r"[ \t]*(\S?)", text[end:end + 2 + 40])
    nxt = m.group(1) if m else ""
    if not nxt or not nxt.isalnum() or _CJK_RE.match(nxt):
        return True
    w = re.match(r"[ \t]*([^\W\d_]+)", text[end:end + 40])
    return bool(w) and w.group(1).lower() in _TAILS and _ends_clause(text, end + w.end())


def _next_word(text: str, end: int) -> str:
    m = re.match(r"[ \t]*([^\W\d_]+)", text[end:end + 40])
    return m.group(1).lower() if m else ""


def _ordinary_word(v: str, *, alone: bool, nxt: str = "") -> bool:
    """``v`` reads as a word of a sentence, not a chosen value: a function or status word in English,
    Russian or Japanese, a hyphenated phrase of such words (``read-only``); when more words follow
    (``alone`` false) also a participle, verb or adverb (``rotated last week``, ``хранится в Vault``,
    ``comes from env``); when it stands alone also a lower-case Russian adjective or participle
    (``пароль: сложный``, ``обязателен``)."""
    low = v.lower().strip("'’.")
    if low in _BARE_STOP_EN or low in _BARE_STOP_RU or low in _BARE_STOP_JA:
        return True
    parts = [p for p in re.split(r"[-‐]", low) if p]
    if len(parts) > 1:  # `read-only`, `case-sensitive`; never `Пингвин-2023`, `blue-sky`
        return all(p.isalpha() for p in parts) and any(
            p in _BARE_STOP_EN or p in _BARE_STOP_RU or re.fullmatch(r"[a-z]{3,}(?:ed|ing)", p) or _EN_ADJ_RE.fullmatch(p)
            for p in parts)
    lower = v[:1].islower()
    if _RU_ADJ_RE.fullmatch(low) and (lower or not alone):
        return True
    if alone:
        return False
    if nxt in _HOLDER_VERBS or _RU_VERB_RE.fullmatch(nxt) and not _RU_VERB_RE.fullmatch(low) and nxt not in _BARE_STOP_RU:
        return True  # `API key: Anna has it`, `пароль: Борис знает`: a person, the subject of a clause
    if _EN_MORPH_RE.fullmatch(low) or _RU_VERB_RE.fullmatch(low) or _RU_ADVERB_RE.fullmatch(low):
        return True
    return low.endswith("s") and not low.endswith("ss") and nxt in _BARE_STOP_EN  # `lives in 1Password`


_JA_COPULA_RE = re.compile(r"(?:です|でした|だ|になります|になりました|にしました|に変更しました|に変更|に設定しました"
                           r"|に設定|にする|にします)[。．.!！]?\Z")
_JA_COPULA_AFTER_RE = re.compile(r"[ \t]*(?:です|でした|だ(?![ぁ-ん])|になります|[。．.！!]|\n|\Z)")
_JA_WORD_RE = re.compile(r"[\u3041-\u3096ー]{2,12}|[\u30a1-\u30faー]{2,16}|[\u3400-\u9fff々]{1,8}")
"""One Japanese word in one script: hiragana (``さくら``), katakana (``ヒマワリ``) or kanji (``山川``)."""
_JA_PROSE_END_RE = re.compile(
    r"(?:ません|ない|ます|した|する|れる|たい|よう|こと|もの|ください|てる|から|まで|より|ので|けど|など|ほど|だけ|しか)\Z"
    r"|[\u3400-\u9fff]{2,}(?:連絡|参照|確認|設定|変更|発行|送付|共有|管理|保管|記載|相談|申請|入力|登録|削除|更新|配布|通知"
    r"|対応|予定|済|中|不要|必須|禁止|厳禁)\Z"
)
"""The end of a clause, or of a compound of a noun and a verbal noun (``後日連絡``, ``別紙参照``): prose."""


def _ja_prose(v: str) -> bool:
    """Japanese text that reads as a clause, not a word: a verb or verbal-noun ending (``別紙参照``,
    ``確認してください``) or a particle between kanji words (``管理者に確認``, ``前回と同じ``)."""
    core = _JA_COPULA_RE.sub("", v)
    return bool(_JA_PROSE_END_RE.search(core) or re.search(r"[\u3400-\u9fff][にでをへと][\u3400-\u9fff]", core))


def _bare_japanese(text: str, start: int, end: int, intro: _Intro) -> tuple[int, int] | None:
    """A Japanese word after a key word: ``パスワード：さくら``, ``パスワードは さくら です``,
    ``合言葉は山川です``, ``パスワードを さくら に変更``; never a clause (``管理者に確認``), a status
    word (``必須``, ``なし``) or a word then a particle (``SMSで送信``)."""
    v = text[start:end]
    m = _JA_COPULA_RE.search(v)
    core = v[:m.start()] if m else v
    closed = bool(m) or _ends_clause(text, end)
    if intro.kind == _PARTICLE:
        particle = intro.sep.strip(" \t\n、,")
        after = v[len(core):] + text[end:end + 12].lstrip(" \t")
        if not (re.match(r"に(?:変更|設定|し|する)|へ変更", after) if particle == "を" else particle == "は" and closed):
            return None
    elif intro.kind == _DASH and not closed or intro.kind not in (_EXPLICIT, _DASH):
        return None
    if re.fullmatch(r"[^\W_]{4,40}", core) and re.search(r"[A-Za-z]", core) and re.search(r"\d", core) \
            and not re.search(r"[をにでがはへと]", core):
        return start, start + len(core)  # `秘密のカギsummer58`: scripts mixed with letters and digits
    if not core or not _JA_WORD_RE.fullmatch(core) or _JA_PROSE_END_RE.search(core) or core in _BARE_STOP_JA:
        return None
    return start, start + len(core)


def _takes_plain_value(intro: _Intro) -> bool:
    """Whether a plain value may follow this introduction at all: never after a bare space or a line
    break, ``to``/``на`` without a verb of setting, or ``pin`` (``pin: numpy<2`` pins a package); after
    a key word with an ordinary sense (``ключ``, ``secret``) only after an explicit separator and no
    qualifier (``Ключ к решению — кэширование`` stays)."""
    if intro.kind is None or intro.family == PIN and intro.word.strip().lower() in ("pin", "пин"):
        return False
    ambiguous = _AMBIGUOUS_KEY_WORDS_RE.fullmatch(intro.word.strip()) and not intro.firm
    return not ambiguous or intro.kind == _EXPLICIT and not intro.qualified


def _latin_value_closes(text: str, end: int, v: str, intro: _Intro) -> bool:
    """A Latin or Cyrillic value in Japanese text: after ``は`` it must end its clause (``は X です``;
    ``シークレットはGitHub Actionsの設定に…`` stays), and a plain word running into a Japanese particle
    is a word of the sentence (``認証コード：SMSで送信``)."""
    if intro.kind == _PARTICLE and not (intro.sep.strip(" \t\n、,") == "は" and _JA_COPULA_AFTER_RE.match(text, end)):
        return False
    glued = _CJK_RE.match(text, end) is not None
    return not glued or bool(re.match(r"(?:です|でした|だ|。)", text[end:end + 3])) or _has_letter_and_digit(v)


def _bare_with_digits(text: str, end: int, v: str, intro: _Intro) -> bool:
    """A name with a number (``hunter-2``, ``Пингвин-2023``) that ``_looks_secret`` read as a name:
    a value after an explicit separator, or alone in its clause; never a number of a unit."""
    if any(_UNIT_AFTER_RE.match(v, i + 1) for i, c in enumerate(v) if c.isdigit()) or _UNIT_AFTER_RE.match(text, end):
        return False  # `пароль: 12символов`
    return intro.kind == _EXPLICIT or _ends_clause(text, end) or _CJK_RE.match(text, end) is not None


def _bare_word(text: str, end: int, v: str, intro: _Intro) -> bool:
    """A word of letters: after an explicit separator unless a word of a sentence; after ``is``/``это``
    when alone in its clause or capitalised (not an acronym: ``the token is JWT based``)."""
    alone = _ends_clause(text, end)
    if intro.kind == _EXPLICIT and alone and v.lower() in _KEY_WORDS_AS_VALUES:
        return True  # `password: secret` is one people set
    if _ordinary_word(v, alone=alone, nxt=_next_word(text, end)) or alone and _plain_alone(v):
        return False  # `password: see vault`, `SSH key: added`
    acronym = v.isupper() and len(v) <= 4
    if not alone:  # `password: Sunshine for staging`, `the password is Sunshine and …`
        return not acronym and (intro.kind == _EXPLICIT or v[:1].isupper())
    if intro.kind != _EXPLICIT and v.islower() and v.isascii() and _EN_ADJ_RE.fullmatch(v):
        return False  # `the password is sensitive`
    return True


def _bare_value(text: str, start: int, end: int, intro: _Intro) -> tuple[int, int] | None:
    """The span of a plain value after a key word that ``_looks_secret`` leaves (privacy first): after
    an explicit separator (``:``, ``=``, ``：``, ``→``) any value but a status word, a placeholder or
    a word of a sentence (``password: Sunshine``, ``пароль: Солнышко``, ``password: hunter-2``,
    ``パスワード：さくら``); after ``is``/``это``/``—``/``は…です`` one value that stands alone in its
    clause, or a capitalised one (``the password is Sunshine``, ``токен это Бегемот``, ``パスワードは
    さくら です``). Versions, dates, task ids, units, files, URLs and model names are never values
    (``_never_a_value``); code is not one (``api_key = get_secret("openai")``)."""
    if not _takes_plain_value(intro):
        return None
    v = text[start:end]
    if not any(c.isalpha() for c in v) or SECRET in v or _never_a_value(v):
        return None
    if text[end:end + 1] in ("(", "[") and re.fullmatch(r"[A-Za-z_][\w.]*", v):
        return None  # `api_key = get_secret("openai")`: code
    if _AMBIGUOUS_KEY_WORDS_RE.fullmatch(intro.word.strip()) and not intro.firm and _is_exempt(v):
        return None  # `ключ: customer_id`
    if _CJK_RE.search(v):
        return _bare_japanese(text, start, end, intro)
    if not _latin_value_closes(text, end, v, intro):
        return None
    plain = _bare_with_digits if any(c.isdigit() for c in v) else _bare_word
    return (start, end) if plain(text, end, v, intro) else None


def _value_after(text: str, pos: int, family: str, word: str, *, firm: bool = False) -> Edit | None:
    """The value the key word ``word`` (ending at ``pos``) introduces, as an edit, or None. ``firm``:
    the word names a secret and nothing else (a compound name such as ``db_pass``, ``管理者PW``)."""
    short = word.lower() in _SHORT and not firm
    edit = _adjacent_quoted(text, pos, family)
    if edit is not None:
        return edit
    for qpos, weak_ok, qualified in _quals(text, pos, word):
        for sep_re, strength in _SEPS:
            if strength == WEAK and (short or qualified and not weak_ok):
                continue
            sm = sep_re.match(text, qpos)
            if not sm or sm.end() == qpos:
                continue
            if family == PHRASE and strength >= MEDIUM and not qualified:
                phrase = _phrase_at(text, sm.end(), strength)
                if phrase is not None:
                    return phrase[0], phrase[1], SECRET
            span = _value_at(text, sm.end())
            if span is None:
                continue
            start, end, quoted = span
            if sep_re is _LINE_SEP and not _alone_on_line(text, start, end):
                continue
            if strength == WEAK and not quoted and text[end - 1] == "=" and len(text[start:end]) < 20:
                continue  # `пароль root=…`: a name and its `=`, the value comes after
            if short and not _secret_shape(text[start:end], family, digits=word.lower() != "pass"):
                continue  # `pass: 1024 tests` is a count
            if _looks_secret(text, start, end, family=family, strength=strength, qualified=qualified,
                             quoted=quoted, sep=sm.group(0)):
                return start, end, SECRET
            if short or quoted and any(c.isspace() for c in text[start:end]):
                continue
            bare = _bare_value(text, start, end, _Intro(word, family, strength, qualified, sm.group(0),
                                                        line=sep_re is _LINE_SEP, firm=firm,
                                                        context=text[max(0, pos - len(word) - 24):sm.end()]))
            if bare is not None:
                return bare[0], bare[1], SECRET
    return None


# --------------------------------------------------------------------------------------------
# Compound names and login/password pairs (issue 27 item 2, follow-up)
# --------------------------------------------------------------------------------------------

_COMPOUND_RE = re.compile(
    r"(?<![\w.\-])(?P<name>[^\W\d_][^\W_]*(?:[_\-.][^\W_]+)+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+)(?![\w\-])"
    r"(?=[\"'`]?[ \t]*(?:[:=：→]|->|—|–|-[ \t]|は))"
)
_COMPOUND_PARTS = frozenset(
    "pass passwd password pwd pw passcode passphrase secret token apikey пароль пароля токен ключ секрет".split()
)
"""Parts that make a name hold a secret (``db_pass``, ``adminPwd``, ``пароль_бд``, ``bot_secret``)."""
_ABOUT_PARTS = frozenset(
    """
    policy policies type kind method mode scheme algorithm algo format length len min max size ttl expiry expires
    lifetime rotation hint hints field label name file path env var header prefix required enabled strength rules
    regex pattern provider store manager source count limit timeout rate rates ratio fail failed through url uri
    link page form id ids usage budget reset flow screen button input dialog prompt check test tests error
    """.split()
)
"""Parts that make a name describe a secret rather than hold it (``token_limit``, ``pass_rate``,
``password_min_length``; ``Policy``'s names that describe a secret are judged alike)."""


def _compound_edits(text: str) -> Iterator[Edit]:
    """``db_pass: Sunshine``, ``adminPwd = …``, ``пароль_бд: Весна``: a name joining a key word to another
    part is read as a firm key word (its value is any value but a status word)."""
    if not _KEYWORD_HINT_RE.search(text):
        return
    for m in _COMPOUND_RE.finditer(text):
        name = m.group("name")
        parts = [p.lower() for p in re.split(r"[_\-.]|(?<=[a-z0-9])(?=[A-Z])", name) if p]
        keys = [p for p in parts if p in _COMPOUND_PARTS]
        if not keys or any(p in _ABOUT_PARTS for p in parts):
            continue
        edit = _value_after(text, m.end(), _family(keys[-1]), name, firm=True)
        if edit is not None:
            yield edit


_PAIR_RE = re.compile(
    r"(?P<u>[^\s/／|,、;:：「」『』()（）\"'`]{1,64})"
    r"(?P<ps>[ \t]*(?:[/／|,、;]|:(?!//)|：)[ \t]*|[ \t]+(?:and|и|と)[ \t]+)"
)
_TIGHT_PAIR_RE = re.compile(r"(?P<u>[^\s/／|,、;:：「」『』()（）\"'`]{1,64})(?P<ps>[/／|]|:(?!//))(?=\S)")
"""A pair without spaces (``creds admin:Summer-2026``), the only one after a bare space."""
_SLASH_PAIR_RE = re.compile(r"(?P<u>[^\s/／|,、;:：「」『』()（）\"'`]{1,64})(?P<ps>[ \t]*[/／|][ \t]*|:(?!//)(?=\S))")
"""A pair split by ``/`` or ``|`` (``доступы: admin / …``), or ``:`` without spaces."""
_PAIR_ONLY_RE = re.compile(r"(?i)доступы?")
"""Creds words with an ordinary sense (``Доступы: VPN выдаёт Борис``): only a ``login / password``
pair after them (``/``, ``|``, ``:``), never a lone value or a list (``Доступы: VPN, CRM``)."""
_LOGIN_LABELS = frozenset("user username login id account email mail логин пользователь почта ユーザー ユーザー名".split())


def _creds_edits(text: str) -> Iterator[Edit]:
    """After ``creds``/``credentials``/``логин/пароль``/``учётные данные``/``ログイン情報``/``ID/PW``: the
    password of a ``login / password`` pair (``creds: admin / Summer-2026``, ``логин-пароль:
    admin:Лето-2026``, ``ID/PW：admin / さくら``); a lone value after them is read as after ``password``.
    A labelled pair (``user: app / password: …``) is left to the key words."""
    if not _KEYWORD_HINT_RE.search(text):
        return
    for km in _CREDS_RE.finditer(text):
        edit = _creds_value(text, km.end(), km.group(0))
        if edit is not None:
            yield edit


def _creds_value(text: str, pos: int, word: str) -> Edit | None:
    for qpos, _, qualified in _quals(text, pos, word):
        for sep_re, strength in _SEPS:
            sm = sep_re.match(text, qpos)
            if not sm or sm.end() == qpos or sep_re is _LINE_SEP:
                continue
            intro = _Intro(word, PW, strength, qualified, sm.group(0), firm=True)
            pair_only = bool(_PAIR_ONLY_RE.fullmatch(word.strip()))
            pm = (_TIGHT_PAIR_RE if strength == WEAK else _SLASH_PAIR_RE if pair_only else _PAIR_RE).match(
                text, sm.end())
            if pm:
                user = pm.group("u")
                if user.lower() in _LOGIN_LABELS and ":" in pm.group("ps") or _ordinary_word(user, alone=False):
                    return None
                span = _value_at(text, pm.end())
                if span is None:
                    continue
                start, end, _ = span
                if _pair_value(text, start, end):
                    return start, end, SECRET
                continue
            if strength == WEAK or pair_only:
                continue
            span = _value_at(text, sm.end())
            if span is None:
                continue
            start, end, quoted = span
            if _looks_secret(text, start, end, family=PW, strength=strength, qualified=qualified, quoted=quoted,
                             sep=sm.group(0)):
                return start, end, SECRET
            bare = None if quoted else _bare_value(text, start, end, intro)
            if bare is not None:
                return bare[0], bare[1], SECRET
    return None


def _pair_value(text: str, start: int, end: int) -> bool:
    """The second half of a ``login / password`` pair is a value unless a status word, a placeholder or
    a shape that is never a value (``creds: admin / see vault`` stays)."""
    v = text[start:end]
    if SECRET in v or not v.strip() or _never_a_value(v):
        return False
    core = _JA_COPULA_RE.sub("", v) if _CJK_RE.search(v) else v
    return bool(core) and not _ordinary_word(core, alone=_ends_clause(text, end), nxt=_next_word(text, end))


# `use X as the password`, `X is the new token`, `X をパスワードに設定`, `X — это пароль`
_KW_ALT = _KEYWORD_RE.pattern
_BEFORE_RE = re.compile(
    r"(?<![^\s\"'`“”«»「」『』()<>\[\]{}、。，,;])(?P<v>[^\s\"'`“”«»「」『』()<>\[\]{}、。，,;]+)(?:"
    r"(?i:[ \t]+(?:as|is|was)[ \t]+(?:(?:the|a|an|my|your|our|their|his|her|new|current|old|temporary|"
    r"temp|default|real|actual|production|prod|staging|test|wifi|wi-fi|guest|office|admin|root|login|server)"
    r"[ \t]+){0,3})"
    r"|[ \t]*を[ \t]*(?:新しい|新規の?|本番の?|仮の?)?(?=[^\n。、]{1,14}?(?:に|として))"
    r"|[ \t]*[がは][ \t]*(?:新しい|新規の?|本番の?|仮の?|今の|現在の|正しい|初期|共通の?)?"
    rf"(?=(?:{_KEYWORD_RE.pattern})[ \t]*(?:です|だ(?![ぁ-ん])|でした|になります|になりました|[。．.！!]|\n|\Z))"
    r"|(?i:[ \t]+(?:—[ \t]+)?(?:это|как|в\s+качестве)[ \t]+(?:(?:новый|новым|нового|мой|наш|текущий|временный|"
    r"временного|временным)[ \t]+){0,2})"
    rf")(?={_KW_ALT})"
)


def _before_edits(text: str) -> Iterator[Edit]:
    for m in _BEFORE_RE.finditer(text):
        start, end = m.span("v")
        v = text[start:end]
        kw = _KEYWORD_RE.match(text, m.end())
        if not v.isascii():
            # Japanese runs straight into the value: keep only its trailing ASCII part
            am = re.search(r"[!-~]+\Z", v)
            if not am:
                if kw is not None and _reverse_plain(text, (start, end), kw):
                    yield start, end, SECRET  # `さくらがパスワードです`, `Солнышко — это пароль`
                continue
            start += am.start()
        while end > start and text[end - 1] in _TRAIL:
            end -= 1
        family = _family(kw.group(0).strip()) if kw else SECRETW
        if end > start and _looks_secret(text, start, end, family=family, strength=MEDIUM,
                                         qualified=False, quoted=False, sep=""):
            yield start, end, SECRET
        elif kw is not None and end > start and _reverse_plain(text, (start, end), kw):
            yield start, end, SECRET  # `Sunshine is the password`


def _reverse_plain(text: str, span: tuple[int, int], kw: re.Match[str]) -> bool:
    """A plain word before a key word that ends its clause (``Sunshine is the password``, ``use
    Sunshine as the password.``, ``Солнышко — это пароль``, ``さくらがパスワードです``); never a status
    or function word (``SSO is the password``, ``это пароль``), nor before a key word with an ordinary
    sense (``Patience is the secret``), a short one (``my pass``) or a PIN."""
    word = kw.group(0).strip()
    if (_family(word) in (PIN, CREDS) or word.lower() in _SHORT or _AMBIGUOUS_KEY_WORDS_RE.fullmatch(word)
            or not _ends_clause(text, kw.end())):
        return False
    v = text[span[0]:span[1]]
    if SECRET in v or _never_a_value(v):
        return False
    if _CJK_RE.search(v):
        return bool(_JA_WORD_RE.fullmatch(v)) and not _JA_PROSE_END_RE.search(v) and v not in _BARE_STOP_JA
    if not re.fullmatch(r"[^\W\d_]{2,}(?:-[^\W\d_]+)*", v):
        return False
    return not _plain_alone(v) and not (v.isupper() and len(v) <= 4)


# --------------------------------------------------------------------------------------------
# High-entropy strings
# --------------------------------------------------------------------------------------------

_B64 = r"A-Za-z0-9+/_\-"
_LONG_HEX_RE = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])")
_LONG_B64_RE = re.compile(rf"(?<![{_B64}=])[{_B64}]{{20,}}={{0,2}}(?![{_B64}=])")


def _b64_keep(m: re.Match[str]) -> bool:
    s = m.group(0)
    if len(s.rstrip("=")) < 32 and ("/" in s or "+" in s):
        # a path (`src/Login2Form/index`) or a sum; short base64 with / or + is left alone
        return True
    return not _random_looking(s)


_CLI_RE = re.compile(
    r"(?<!\S)(?:-u|--user)[ =]+[^\s:]+:(?P<v>[^\s\"']+)"  # curl -u user:pass
    r"|(?<![\w-])(?:mysql|mysqldump|mariadb)\b[^\n]*?\s-p(?P<v2>[^\s\"']+)"  # mysql -ppass
    r"|(?<![\w-])sshpass\s+-p\s*(?P<v3>\S+)"
)


def _cli_edits(text: str) -> Iterator[Edit]:
    for m in _CLI_RE.finditer(text):
        for g in ("v", "v2", "v3"):
            if m.group(g):
                yield m.start(g), m.end(g), SECRET


RULES: tuple[Rule, ...] = (
    Rule("private_key", _regex(_PRIVATE_KEY_RE)),
    Rule("url_credentials", _regex(_URL_CREDENTIALS_RE, keep=_url_keep)),
    Rule("bearer", _regex(_AUTH_HEADER_RE, group="v", keep=_auth_keep)),
    Rule("token_prefix", _regex(_VENDOR_RE)),
    Rule("azure_key", _regex(_AZURE_RE, group="v")),
    Rule("jwt", _regex(_JWT_RE)),
    Rule("email", _email_edits),
    Rule("credential_pair", _creds_edits),
    Rule("compound_key", _compound_edits),
    Rule("key_value", _keyword_edits),
    Rule("command_line", _cli_edits),
    Rule("value_then_key", _before_edits),
    Rule("long_hex", _regex(_LONG_HEX_RE)),
    Rule("long_base64", _regex(_LONG_B64_RE, keep=_b64_keep)),
)
"""The redaction rules, applied in this order."""


_EXTENSION_RE = re.compile(r"(?:\.tar)?\.[A-Za-z][A-Za-z0-9]{0,7}\Z")
_NAME_SEPS = str.maketrans({"_": " ", "-": " ", "+": " "})


def redact_file_name(name: str) -> str:
    """Redact a file name (an attachment's): the stem as text, its extension kept
    (``password=attsecret55.txt`` reads ``password=[redacted].txt``); and, where that finds
    nothing, the stem with ``_``/``-``/``+`` read as spaces (``api_key_abc123def.txt``,
    ``パスワード_hunter2xyz.txt``), where a key word and a secret-shaped value are joined."""
    m = _EXTENSION_RE.search(name)
    cut = m.start() if m and m.start() > 0 else len(name)
    stem, ext = name[:cut], name[cut:]
    out = redact(stem)
    if out == stem:
        spaced = stem.translate(_NAME_SEPS)
        red = redact(spaced)
        if red != spaced:  # put the separators back around what was kept
            import difflib

            parts = []
            for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, spaced, red, autojunk=False).get_opcodes():
                parts.append(stem[a0:a1] if op == "equal" else red[b0:b1])
            out = "".join(parts)
    return out + ext


def redact(text: str) -> str:
    """Return ``text`` with secrets and e-mail addresses replaced (see ``RULES``)."""
    return redact_counted(text)[0]


def redact_counted(text: str) -> tuple[str, dict[str, int]]:
    """Like ``redact``, and also return how many spans each rule replaced (rules with 0 omitted)."""
    counts: dict[str, int] = {}
    for rule in RULES:
        text, n = rule.apply(text)
        if n:
            counts[rule.name] = n
    return text, counts
