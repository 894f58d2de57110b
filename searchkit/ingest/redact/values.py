"""The value after a key word (SPEC T2; part of ``searchkit.ingest.redact``).

Where the value starts and ends (``_value_at``), whether it reads as a secret (``_looks_secret``,
``_secret_shape``), a pass phrase of plain words (``_phrase_at``), a quoted value right after the key
word (``_adjacent_quoted``) and a plain word as a value (``_bare_value``; privacy first, any doubt
redacts); ``_value_after`` tries them in turn for one key word.
"""
from __future__ import annotations

import re

from searchkit.ingest.redact.keywords import (
    MEDIUM, PHRASE, PIN, PW, STRONG, TOKEN, WEAK, _AMBIGUOUS_KEY_WORDS_RE, _DASH, _EXPLICIT, _Intro, _LINE_SEP,
    _PARTICLE, _SEPS, _SHORT, _quals,
)
from searchkit.ingest.redact.shapes import (
    EMAIL, Edit, SECRET, _CJK_VALUE_RE, _SYMBOLS, _UNIT_AFTER_RE, _YEAR_RE, _cjk_word_and_number,
    _has_letter_and_digit, _is_exempt, _mixed_case_random, _name_like, _never_a_value, _word_and_number,
)
from searchkit.ingest.redact.words import (
    _BARE_STOP_JA, _CJK_RE, _EN_ADJ_RE, _JA_COPULA_AFTER_RE, _JA_COPULA_RE, _JA_PROSE_END_RE, _JA_WORD_RE,
    _KEY_WORDS_AS_VALUES, _STATUS_WORDS, _ends_clause, _next_word, _ordinary_word, _plain_alone,
)

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
                                or strength >= MEDIUM and len(v) <= 24 and _word_and_number(v)
                                or family in (PW, PHRASE, TOKEN) and not qualified and len(v) <= 24
                                and _word_and_number(v)):
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
            v = text[start:end]
            if (strength == STRONG and not qualified and not quoted and sm.group(0) in ("=", ":")
                    and v.isascii() and _has_letter_and_digit(v) and _name_like(v) and not _never_a_value(v)):
                return start, end, SECRET  # `pass=Title_Pw09`: joined words and digits right after `=`
            if short and not _secret_shape(v, family, digits=word.lower() != "pass"):
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
