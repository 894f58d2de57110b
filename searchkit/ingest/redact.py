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
* secrets in file names (``redact_file_name``: ``password=attsecret55.txt``).

A value after a key word is replaced only when it looks like a secret: after ``:`` or ``=`` any
value but a status word (``Password: changed``); after a word or a space only a value with
letters and digits, symbols, or (for a password or PIN) four or more digits. Versions, dates,
task ids, numbers with units, file names and URLs are never values. Full-width forms
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
    min max minimum maximum least most approx
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
    ``expired``, ``required``, ``истёк``, ``未発行``; not ``secret`` or ``password``, which people
    set), a number of fewer than four digits (``PASSWORD_MIN_LENGTH=12``) or a technical word
    (``bcrypt``, ``sha256``). ``Policy.secret_assignments`` leaves such values alone."""
    v = value.strip().strip("\"'`").strip()
    low = v.lower()
    if low in _STATUS_WORDS_RU_JA or low in _TECH_WORDS:
        return True
    if low in _STATUS_WORDS and low not in _KEY_WORDS_AS_VALUES and v.isascii():
        return True
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

PW, PIN, TOKEN, KEY, SECRETW, PHRASE = "password", "pin", "token", "key", "secret", "passphrase"

_SHORT = frozenset({"pw", "p/w", "pswd", "psw", "pword", "pass"})
"""Short key words that are also ordinary words or abbreviations (``my pass expired``, ``PW-2``):
a value must follow a separator (``:``, ``=``, ``is``…, never a bare space) and have the shape of
a secret (letters and digits, a symbol, or four or more digits; digits alone never after ``pass``,
where they count tests), never a word alone."""

_EN_KEYWORDS = (
    # (regex, family); matched case-insensitively, at a word start and a word end
    (r"(?:(?:db|database|root|admin|user|app|master|account|login|wifi|wi-fi|ssh|smtp|mail|sudo|vault|"
     r"bind|ldap|redis|postgres|mysql|keystore|truststore)[ _\-]?)?(?:password|passwd|pass[ _\-]?word)", PW),
    (r"(?:wallet[ _\-]|seed[ _\-]|recovery[ _\-]|mnemonic[ _\-])?pass[ _\-]?phrase|(?:seed|recovery|mnemonic)[ _\-]phrase", PHRASE),
    (r"pwd", PW),
    (r"pass[ _\-]?code|one[ _\-]time[ _\-]code|otp(?:[ _\-]code)?|recovery[ _\-]code|backup[ _\-]code", PW),
    (r"pin(?:[ _\-]?(?:code|number))?", PIN),
    (r"(?:(?:api|access|auth|oauth|refresh|id|bearer|session|bot|app|personal[ _\-]access|deploy|github|"
     r"gitlab|slack|npm|pypi|registry|service|webhook|csrf|jwt|sso)[ _\-]?)?token", TOKEN),
    (r"(?:api|access|secret|private|auth|signing|encryption|license|licence|master|client|app|ssh|"
     r"service[ _\-]account|subscription|consumer|developer|admin)[ _\-]?key", KEY),
    (r"apikey|x-api-key", KEY),
    (r"(?:(?:client|app|api|shared|webhook|consumer|jwt|oauth|session)[ _\-]?)?secret(?:[ _\-]?access[ _\-]?key)?", SECRETW),
    (r"credentials?", SECRETW),
    (r"pw|p/w|pswd|psw|pword|pass", PW),  # short: never before a bare space, never a word alone (_SHORT)
)
_RU_KEYWORDS = (
    (r"парол(?:ь|я|ю|ем|е|и|ей|ям|ями|ях)", PW),
    (r"код(?:а|ом)?\s+доступа|одноразов\w+\s+код\w*", PW),
    (r"пин(?:[\-\s]?код(?:а|у|ом|е|ы|ов)?)?|pin[\-\s]?код(?:а|у|ом|е|ы|ов)?", PIN),
    (r"(?:API[\-\s]?|апи[\-\s]?)?токен(?:а|у|ом|е|ы|ов|ам|ами|ах)?(?:\s+(?:доступа|бота|API))?", TOKEN),
    (r"(?:API[\-\s]|апи[\-\s]?|секретн\w+\s+|приватн\w+\s+|закрыт\w+\s+)?ключ(?:а|у|ом|е|и|ей|ам|ами|ах)?"
     r"(?:\s+(?:API|апи|доступа|шифрования|подписи|лицензии))?", KEY),
    (r"секрет(?:а|у|ом|е|ы|ов)?", SECRETW),
    (r"(?:кодов|парольн)(?:ая|ой|ую)\s+фраз(?:а|ы|е|у|ой)|кодов(?:ое|ого|ым)\s+слов(?:о|а|ом)", PHRASE),
)
_JA_KEYWORDS = (
    (r"パスフレーズ", PHRASE),
    (r"(?:管理者|ルート|Wi-?Fi|wifi|WiFi|DB|データベース|ログイン|メール|アカウント)?(?:パスワード|合言葉)", PW),
    (r"ワンタイムパスワード|パスコード|認証コード|確認コード|リカバリーコード|ワンタイムコード", PW),
    (r"暗証番号|PIN(?:コード|番号)|ピン(?:コード|番号)", PIN),
    (r"(?:(?:アクセス|API|リフレッシュ|認証|ボット|Bot|BOT|デプロイ)\s?)?トークン", TOKEN),
    (r"(?:API|アクセス|シークレット|秘密|認証|暗号化|ライセンス|プライベート|署名)\s?(?:キー|鍵)", KEY),
    (r"(?:クライアント)?シークレット", SECRETW),
)

_GLUED_KEYWORDS = (("PASSWORD|PASSWD|PWD", PW), ("TOKEN", TOKEN), ("APIKEY|SECRETKEY", KEY),
                   ("SECRET", SECRETW))
"""Key words at the end of an upper-case name with no separator (``PGPASSWORD=…``), case-sensitive."""

_KEYWORD_RE = re.compile(
    "|".join(
        [rf"(?:(?<![A-Za-z0-9])|(?=[^\x00-\x7f]))(?:{rx})(?![ァ-ヺー])" for rx, _ in _JA_KEYWORDS]
        + [rf"(?<![а-яёА-ЯЁA-Za-z])(?i:{rx})(?![а-яёА-ЯЁ])" for rx, _ in _RU_KEYWORDS]
        # at a word start, or where a camelCase name turns (`awsSecretAccessKey`, `newPassword`)
        + [rf"(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z]))(?i:{rx})(?![A-Za-z0-9_])" for rx, _ in _EN_KEYWORDS]
        # the end of an upper-case name (`PGPASSWORD`, `DBPASS`, `ADMINTOKEN`)
        + [rf"(?<=[A-Z0-9])(?:{rx})(?![A-Za-z0-9_])" for rx, _ in _GLUED_KEYWORDS]
    )
)
_FAMILY_RES = [
    (re.compile(rf"(?i:{rx})\Z"), fam) for rx, fam in (*_EN_KEYWORDS, *_RU_KEYWORDS, *_JA_KEYWORDS, *_GLUED_KEYWORDS)
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
            return not _is_exempt(v) and v.lower() not in _STATUS_WORDS and words <= 6
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
        if not any(c.isalpha() for c in v) or v.lower() in _STATUS_WORDS:
            return False
        if "=" in sep and not sep.strip(" \t\"'`=") and v.isascii():
            return True  # password=hunter
        return _clause_ends(text, end)
    return False


_KEYWORD_HINT_RE = re.compile(
    r"(?i)pass|pwd|pw|p/w|psw|phrase|pin|otp|code|token|key|secret|cred|парол|пин|код|токен|ключ|секрет"
    r"|パス|合言葉|暗証|コード|番号|トークン|キー|鍵|シークレット"
)
"""A cheap test: a text without any of these has no key word (most texts)."""


def _keyword_edits(text: str) -> Iterator[Edit]:
    if not _KEYWORD_HINT_RE.search(text):
        return
    for km in _KEYWORD_RE.finditer(text):
        word = km.group(0)
        family = _family(word.strip())
        edit = _value_after(text, km.end(), family, word)
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
    return (start, end, SECRET) if _secret_shape(text[start:end], family) else None


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


def _value_after(text: str, pos: int, family: str, word: str) -> Edit | None:
    short = word.lower() in _SHORT
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
    return None


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
        if v.isascii():
            # Japanese runs straight into the value: keep only its trailing ASCII part
            pass
        else:
            am = re.search(r"[!-~]+\Z", v)
            if not am:
                continue
            start += am.start()
        while end > start and text[end - 1] in _TRAIL:
            end -= 1
        kw = _KEYWORD_RE.match(text, m.end())
        family = _family(kw.group(0).strip()) if kw else SECRETW
        if end > start and _looks_secret(text, start, end, family=family, strength=MEDIUM,
                                         qualified=False, quoted=False, sep=""):
            yield start, end, SECRET


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
