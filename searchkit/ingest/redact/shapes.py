"""What a value looks like (SPEC T2; part of ``searchkit.ingest.redact``).

The replacement strings (``SECRET``, ``EMAIL``) and the ``Edit`` a rule yields, and the shape tests
every rule shares: shapes that are never a secret (versions, dates, task ids, numbers with units,
files, URLs, model names: ``_never_a_value``, ``_is_exempt``), values that read as a word and a
number, random-looking strings, and ``plain_value`` (a value that is not a secret whatever name it
is assigned to).
"""
from __future__ import annotations

import math
import re
from collections import Counter

from searchkit.ingest.redact.words import (
    _CJK_RE, _KEY_WORDS_AS_VALUES, _STATUS_WORDS, _STATUS_WORDS_RU_JA, _TECH_WORDS, _ja_prose,
    _ordinary_word,
)

SECRET = "[redacted]"
EMAIL = "[email]"

Edit = tuple[int, int, str]
"""A replacement: ``text[start:end]`` becomes the string."""


_SYMBOLS = set("!@#$%^&*+=?~|\\")


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
    a chosen value such as ``hunter-2``, ``tiger-12``, ``秘密のカギ-500`` (such names are ASCII) or
    ``autumn_maple_403`` (a number among the technical words, an HTTP status, names no model)."""
    parts = [p.lower() for p in re.split(r"[-_.]", v) if p]
    return len(parts) >= 2 and v.isascii() and (
        parts[0] in _MODEL_FAMILIES
        or any((p in _TECH_WORDS and not p.isdigit()) or p in _MODEL_SIZES or re.fullmatch(r"\d+(?:\.\d+)?[bmk]", p)
               for p in parts)
    )


def _never_a_value(v: str) -> bool:
    """Shapes that are never a value, whatever introduces them: versions, dates, task ids, numbers
    with units, files, URLs, placeholders (``_EXEMPT_RE``), technical words and model names."""
    return bool(_EXEMPT_RE.fullmatch(v)) or v.lower() in _TECH_WORDS or bool(_TASK_ID_RE.fullmatch(v)) \
        or _model_name(v)
