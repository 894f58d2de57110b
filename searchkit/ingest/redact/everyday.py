"""Everyday shapes of secrets (issue 39 item 4; SPEC T2; part of ``searchkit.ingest.redact``).

An audit of issue 39 found these on every path: a short key word made firm by its owner (``my pass:
…``, ``мой пасс: …``, ``自分のパス：…``, ``Wi-Fiのパスは …``), a labelled login followed by its password
(``login admin / pass …``, ``user: deploy pass: …``, ``логин: petrov, пароль …``, ``ユーザー名 sato パスワード
…``), a pass phrase after a qualified key word (``passphrase for the gpg key: …``, ``кодовая фраза для
ключа gpg: …``), a value after a key word, a short qualifier and a space (``пароль к wifi …``, ``пин-код
карты 7351``, ``код подтверждения из смс …``), lists of recovery and backup codes (``recovery codes: 4417-9920
8812-3301``, ``резервные коды: …``, ``リカバリーコード：…``), the code of something that locks (``the code for
the office safe is …``, ``the locker combination is …``, ``код от сейфа — …``, ``金庫の番号は …``), and
credential files' lines: ``.pgpass`` (``host:port:database:user:password``) and ``.netrc`` (``machine h login
u password p``).

Each rule yields the span of the value (``Edit``); what is never a value (versions, dates, task ids,
units, files, URLs: ``_never_a_value``; status and function words: ``_pair_value``, ``_ordinary_word``)
stays.
"""
from __future__ import annotations

import re
from typing import Iterator

from searchkit.ingest.redact.keyword_rules import _pair_value
from searchkit.ingest.redact.keywords import PW, STRONG, _quals
from searchkit.ingest.redact.shapes import SECRET, Edit, _UNIT_AFTER_RE, _never_a_value, plain_value
from searchkit.ingest.redact.values import _phrase_at, _value_after, _value_at
from searchkit.ingest.redact.words import (
    _CJK_RE, _JA_PROSE_END_RE, _RU_VERB_RE, _ends_clause, _next_word, _ordinary_word,
)

_QWORD_RE = re.compile(
    r"[ \t]+(?:(?i:at|in|on|of|for|to|from|the|my|our|your|от|к|для|на|из|в|у|с)[ \t]+)?(?=[^\s:=：。、,;()（）「」]*[^\W\d_])"
    r"[^\s:=：。、,;()（）「」]{1,30}"
    r"|[ \t]*の[^\s\d:=：。、,;()（）「」のはが]{1,12}"
)
"""One word of a qualifier between a key word and its value (``for my GitHub``, ``к wifi``, ``карты``, ``の金庫``)."""
_VALUE_SEP_RE = re.compile(
    r"[ \t]*[:=：][ \t]*|[ \t]+(?i:is|are|was|это)[ \t]+|[ \t]*[—–][ \t]*|[ \t]*は[ \t　]*|[ \t　]+"
)


def _value_starts(text: str, pos: int, max_words: int) -> Iterator[tuple[int, str]]:
    """Where a value may start after the key word ending at ``pos``: after no qualifier, then after
    one, two… up to ``max_words`` words of one (``the code for the office safe is``), each with the
    separator before it and the qualifier's text."""
    start = pos
    for _ in range(max_words + 1):
        sm = _VALUE_SEP_RE.match(text, pos)
        if sm:
            yield sm.end(), text[start:pos]
        qm = _QWORD_RE.match(text, pos)
        if not qm or "\n" in qm.group(0):
            return
        pos = qm.end()


_LAST_LOWER: tuple[str, str] = ("", "")


def _lower(text: str) -> str:
    """``text.lower()``, kept for the next rule (each rule of a text reads the same text)."""
    global _LAST_LOWER
    last = _LAST_LOWER
    if last[0] == text:
        return last[1]
    low = text.lower()
    _LAST_LOWER = (text, low)
    return low


def _lines(text: str, anchor: tuple[str, ...] | re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """The lines of ``text`` that hold one of the words of ``anchor`` (lower case; a rule's key words):
    each rule of this module reads one line at a time, and only the lines it could match. An anchor
    that is a pattern (``.pgpass``'s ``:5432:``) is searched as such."""
    low = _lower(text)
    if len(low) != len(text):  # a letter whose lower case is longer (rare): every line
        yield 0, len(text)
        return
    starts: set[int] = set()
    if isinstance(anchor, re.Pattern):
        for a in anchor.finditer(text):
            starts.add(text.rfind("\n", 0, a.start()) + 1)
    else:
        for word in anchor:
            pos = low.find(word)
            while pos >= 0:
                starts.add(text.rfind("\n", 0, pos) + 1)
                nl = text.find("\n", pos)
                pos = -1 if nl < 0 else low.find(word, nl + 1)
    for start in sorted(starts):
        end = text.find("\n", start)
        yield start, len(text) if end < 0 else end


def _matches(text: str, anchor: tuple[str, ...] | re.Pattern[str], pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """``pattern``'s matches in the lines that hold a word of ``anchor``."""
    for start, end in _lines(text, anchor):
        yield from pattern.finditer(text, start, end)


_LOGIN_ANCHOR = ("pass", "pwd", "pw", "парол", "пасс", "パス")
_SHORT_ANCHOR = ("pass", "pw", "psw", "pword", "пасс", "пароль", "パス")
_PHRASE_ANCHOR = ("phrase", "фраз", "フレーズ", "ニーモニック")
_RU_FIRM_ANCHOR = ("парол", "пин", "pin", "код", "шифр")
_CODE_ANCHOR = ("code", "код", "コード")
_LOCK_ANCHOR = ("code", "combination", "combo", "pin", "passcode", "код", "шифр", "комбинац", "番号", "コード")
_PGPASS_ANCHOR = re.compile(r":(?:\d{2,5}|\*):")
_NETRC_ANCHOR = ("machine", "default")
_W = r"A-Za-z0-9а-яёА-ЯЁ"
_NB = rf"(?<![{_W}_])"
"""Not after a letter or digit of a script written with spaces."""
_NA = rf"(?![{_W}_])"

# --------------------------------------------------------------------------------------------
# A labelled login, then its password (`login admin / pass …`, `ユーザー名 sato パスワード …`)
# --------------------------------------------------------------------------------------------

_LOGIN_LABEL = (r"(?i:login|user(?:[ _-]?name)?|username|account|acct|логин|пользователь|юзер)"
                r"|ユーザー(?:名|ID)?|ログイン(?:ID|名)?|アカウント(?:名)?")
_PASS_WORD = (r"(?i:pass(?:word)?|passwd|pwd|pw|пароль|пасс|парол[ья])"
              r"|パスワード|パス|PW")
_LOGIN_PAIR_RE = re.compile(
    rf"(?:{_NB}|(?<=[\u3000-\u30ff\u4e00-\u9fff]))(?:{_LOGIN_LABEL})[ \t]*(?:[:=：][ \t]*|[ \t　])[ \t　]*"
    r"(?P<u>[^\s/／|,、;:：「」()（）\"'`]{1,64})"
    r"(?:[ \t　]*[/／|,、;][ \t　]*|[ \t　]+)"
    rf"(?P<k>{_PASS_WORD}){_NA}(?![ァ-ヺー])"
    r"(?P<s>[ \t　]*[:=：][ \t　]*|[ \t　]+(?:(?i:is|это)[ \t]+)?|[ \t]*(?:は|[—–])[ \t　]*)"
)


_UP_PAIR_RE = re.compile(r"(?<![A-Za-z0-9])(?i:u|usr)[ \t]*:[ \t]*(?P<u>[^\s,;/|]{1,64})[ \t]*[,;/|]?[ \t]*(?i:p|pw)[ \t]*:[ \t]*")
"""The shorthand of a login and its password: ``u: root p: …``."""


def _login_pair_edits(text: str) -> Iterator[Edit]:
    """The password after a labelled login (``login admin / pass Quokka-55``): any value that is not a
    status, a placeholder or a word of a sentence (``login admin / pass via SSO`` stays)."""
    pairs = [*_matches(text, _LOGIN_ANCHOR, _LOGIN_PAIR_RE), *_matches(text, ("p:", "p :", "pw:"), _UP_PAIR_RE)]
    for m in sorted(pairs, key=lambda m: m.start()):
        user = m.group("u")
        if _ordinary_word(user, alone=False) or plain_value(user) and not user.isdigit() \
                or not any(c.isalpha() for c in user):
            continue  # a login has letters (`u: 5, p: 3` is a formula)
        span = _value_at(text, m.end())
        if span is None:
            continue
        start, end, _ = span
        if _CJK_RE.search(text[start:end]):
            core = re.sub(r"(?:です|でした|だ)[。．.]?\Z", "", text[start:end])
            end = start + len(core)
        if end > start and _pair_value(text, start, end):
            yield start, end, SECRET


# --------------------------------------------------------------------------------------------
# A short key word made firm by its owner (`my pass: …`, `мой пасс: …`, `自分のパス：…`)
# --------------------------------------------------------------------------------------------

_OWNED_SHORT_RE = re.compile(
    r"(?<![A-Za-zа-яёА-ЯЁ])(?:(?i:my|our|your|his|her|their)[ \t]+(?:(?i:wifi|wi-fi|new|old|admin|root|email|mail)[ \t]+)?"
    r"(?P<en>pass|pw|pwd|psw|pword)"
    r"|(?i:мой|моя|наш|твой|ваш|свой)[ \t]+(?P<ru>пасс|пароль)"
    r"|(?:自分|私|僕|俺|わたし|Wi-?Fi|wifi|WiFi|WIFI|ルーター|アカウント|管理者|ゲスト|メール|パソコン|PC|スマホ|共有)の(?P<ja>パス|PW))"
    r"(?![A-Za-zа-яёА-ЯЁァ-ヺー])"
)


def _owned_short_edits(text: str) -> Iterator[Edit]:
    """A short key word after ``my``/``мой``/``自分の``: it names a password, so any value follows it
    (``my pass: sunflower``); without the owner it stays a short key word (``pass: 1024 tests``)."""
    for m in _matches(text, _SHORT_ANCHOR, _OWNED_SHORT_RE):
        edit = _value_after(text, m.end(), PW, "password", firm=True)
        if edit is not None and not _never_a_value(text[edit[0]:edit[1]]):
            yield edit


# --------------------------------------------------------------------------------------------
# A pass phrase after a qualified key word (`passphrase for the gpg key: …`)
# --------------------------------------------------------------------------------------------

_PHRASE_KW_RE = re.compile(
    r"(?<![A-Za-z])(?i:(?:wallet[ _-]|seed[ _-]|recovery[ _-]|gpg[ _-]|pgp[ _-]|ssh[ _-]|key[ _-])?pass[ _-]?phrase"
    r"|(?:seed|recovery|mnemonic|secret)[ _-]phrase)(?![A-Za-z])"
    r"|(?<![а-яёА-ЯЁ])(?i:(?:кодов|парольн|секретн|мнемоническ)(?:ая|ой|ую)\s+фраз(?:а|ы|е|у|ой)|фраз(?:а|ы|у)[\s-]парол\w+"
    r"|сид[\s-]?фраз(?:а|ы|е|у|ой)|фраз(?:а|ы|у|ой)\s+восстановления)(?![а-яё])"
    r"|シードフレーズ|リカバリーフレーズ|復元フレーズ|ニーモニック(?:フレーズ)?|パスフレーズ"
)
_JA_PHRASE_RE = re.compile(r"[\u3041-\u30ff\u4e00-\u9fffー]{1,12}(?:[ \t　]+[\u3041-\u30ff\u4e00-\u9fffー]{1,12}){2,11}")
_JA_PHRASE_END_RE = re.compile(r"[ \t　]*(?:[。、，,.!?！？()（）「」]|\n|\Z)")
_NEW_PHRASE_KW_RE = re.compile(r"(?i)сид|мнемоническ|восстановления|シード|リカバリー|復元|ニーモニック")
"""Pass-phrase key words the key words' own rule does not know: their value is read here unqualified too."""
_PHRASE_SEP_RE = re.compile(r"[ \t]*[:=：][ \t]*|[ \t]*は[ \t　]*")
_RU_PHRASE_RE = re.compile(r"[а-яёА-ЯЁ]{2,}(?:[ \t]+[а-яёА-ЯЁ]{1,}){1,7}")
_RU_PHRASE_END_RE = re.compile(r"[ \t]*(?:[.,;:!?()\"'«»]|\n|\Z)")
_RU_PHRASE_STOP = re.compile(
    r"(?i)\A(?:должн\w*|быть|будет|слов\w*|символ\w*|минимум|максимум|см|смотр\w*|спрос\w*|уточн\w*|"
    r"менеджер\w*|хранилищ\w*|смен\w*|обязательн\w*|не|нет|задан\w*|выда\w*|храни\w*|лежит|есть|из|от|в|во|"
    r"у|по|для|это|как|только|через|сменить|менять|меняется|знает|знают|известн\w*|никому|никогда|и|или|а|но|"
    r"нужн\w*|можно|нельзя|надо|сложн\w*|длинн\w*|коротк\w*|случайн\w*)\Z"
)


def _ru_phrase_at(text: str, pos: int) -> tuple[int, int] | None:
    """Russian words to the end of the clause (``синий ветер над рекой``), none of them a word of a
    policy or a sentence about the phrase (``должна быть из четырёх слов``)."""
    m = _RU_PHRASE_RE.match(text, pos)
    if not m or not _RU_PHRASE_END_RE.match(text, m.end()):
        return None
    words = m.group(0).split()
    if any(_RU_PHRASE_STOP.match(w) for w in words):
        return None
    return m.start(), m.end()


def _ja_phrase_at(text: str, pos: int) -> tuple[int, int] | None:
    """Three or more Japanese words parted by spaces to the end of the clause (``りんご かわ いし くも``),
    none of them the end of a clause (``です``, ``してください``)."""
    m = _JA_PHRASE_RE.match(text, pos)
    if not m or not _JA_PHRASE_END_RE.match(text, m.end()):
        return None
    if any(_JA_PROSE_END_RE.search(w) or w in ("です", "ます", "でした") for w in m.group(0).split()):
        return None
    return m.start(), m.end()


def _qualified_phrase_edits(text: str) -> Iterator[Edit]:
    """The words after a pass-phrase key word, a qualifier and ``:``/``=``/``：`` (the rule of the key
    words takes a phrase only right after the key word), and after the key words only this rule knows
    (``сид-фраза``, ``シードフレーズ``) with no qualifier too."""
    for m in _matches(text, _PHRASE_ANCHOR, _PHRASE_KW_RE):
        for qpos, _, qualified in _quals(text, m.end(), m.group(0)):
            if not qualified and not _NEW_PHRASE_KW_RE.search(m.group(0)):
                continue
            sm = _PHRASE_SEP_RE.match(text, qpos)
            if not sm:
                continue
            span = _phrase_at(text, sm.end(), STRONG) or _ru_phrase_at(text, sm.end()) or _ja_phrase_at(text, sm.end())
            if span is not None:
                yield span[0], span[1], SECRET
                break


# --------------------------------------------------------------------------------------------
# A value after a key word, a short qualifier and a space (`пароль к wifi …`, `пин-код карты 7351`)
# --------------------------------------------------------------------------------------------

_RU_FIRM_KW = (r"парол(?:ь|я|ем)|пин(?:[\-\s]?код\w*)?|pin(?:[\-\s]?код\w*)?|PIN|код\w*\s+(?:подтверждения|доступа|входа)"
               r"|шифр\w*|код\w*")
_RU_FIRM_RE = re.compile(rf"(?<![а-яёА-ЯЁA-Za-z])(?i:{_RU_FIRM_KW})(?![а-яёА-ЯЁ])")
_DIGIT_CODE_RE = re.compile(r"\d{2,}(?:[-‐ ]\d{2,}){0,3}(?![\w.,:/\-])|\d{4,}(?![\w.,:/\-])|\d{4,}(?=[#])")
_LOCK_OBJECT_RU = re.compile(
    r"(?i)сейф\w*|шкафчик\w*|замк\w*|замок|домофон\w*|калитк\w*|двер\w*|ворот\w*|сигнализаци\w*|ящик\w*|гараж\w*"
    r"|подъезд\w*|карт\w*|телефон\w*|смс|sms|wi-?fi|вай-?фа\w*|роутер\w*|почт\w*|ноутбук\w*|компьютер\w*|архив\w*"
)
"""What a code or PIN in a Russian qualifier may open (``пин-код карты``, ``шифр замка на шкафчике``)."""


def _digits(v: str) -> int:
    return sum(c.isdigit() for c in v)


def _code_value(text: str, start: int) -> tuple[int, int] | None:
    """A code of digits at ``start`` (``7351``, ``4417-9920``, ``12-34-56``): four or more digits, no
    unit after it, not a date or a time."""
    m = _DIGIT_CODE_RE.match(text, start)
    if not m or _digits(m.group(0)) < 4 or _UNIT_AFTER_RE.match(text, m.end()):
        return None
    if re.fullmatch(r"(?:19|20)\d\d-\d\d-\d\d", m.group(0)) or not re.search(r"[-‐ ]", m.group(0)) \
            and _never_a_value(m.group(0)):
        return None  # a date: `2026-06-20`
    return m.start(), m.end()


def _qualified_space_edits(text: str) -> Iterator[Edit]:
    """A Russian key word of a password, PIN or code, a short qualifier (``к wifi``, ``карты``, ``от
    почты у меня``, ``из смс``) and a space, then a code of digits, or (after ``пароль``) one value that
    ends its clause and is a name or has digits (``пароль к wifi Светлячок``; ``пароль к wifi висит на
    стене`` stays)."""
    for m in _matches(text, _RU_FIRM_ANCHOR, _RU_FIRM_RE):
        kw = m.group(0).lower()
        password = kw.startswith("парол")
        named = any(w in kw for w in ("подтвержд", "доступ", "вход")) or kw.startswith(("пин", "pin"))
        for pos, qual in _value_starts(text, m.end(), 3):
            if not qual.strip():
                continue  # no qualifier: the key words' own rule
            if any(_RU_VERB_RE.fullmatch(w.lower()) for w in qual.split()):
                break  # `пароль сменили 1000ms`: a clause, not a qualifier
            if not (password or named) and not _LOCK_OBJECT_RU.search(qual):
                break  # `код ошибки 4417`: a code of nothing that locks
            filler = re.match(r"(?i)(?:у[ \t]+меня|теперь|сейчас)[ \t]+", text[pos:pos + 12])
            if filler:
                pos += filler.end()
            span = _code_value(text, pos)
            if span is not None:
                yield span[0], span[1], SECRET
                break
            if not password:
                continue
            found = _value_at(text, pos)
            if found is None:
                continue
            start, end, _ = found
            v = text[start:end]
            if not _ends_clause(text, end) or _never_a_value(v) or plain_value(v):
                continue
            if (v[:1].isupper() or any(c.isdigit() for c in v)) and any(c.isalpha() for c in v) \
                    and not _ordinary_word(v, alone=True, nxt=_next_word(text, end)):
                yield start, end, SECRET
                break


# --------------------------------------------------------------------------------------------
# Recovery and backup codes, one or a list (`recovery codes: 4417-9920 8812-3301`)
# --------------------------------------------------------------------------------------------

_CODES_KW_RE = re.compile(
    r"(?<![A-Za-z])(?i:(?:recovery|backup|back-up|2fa|mfa|one[ -]time|verification|security|login|sms|otp)[ _-]?codes?)"
    r"(?![A-Za-z])"
    r"|(?<![а-яёА-ЯЁ])(?i:(?:резервн|запасн|одноразов|разов)\w*\s+код\w*|код\w*\s+(?:восстановления|для\s+входа|из\s+смс))"
    r"(?![а-яё])"
    r"|リカバリー?コード|バックアップコード|予備(?:の)?コード|復旧コード|ワンタイムコード|認証コード|確認コード"
)
_CODE_TOKEN_RE = re.compile(r"[A-Za-z0-9]{2,}(?:[-‐][A-Za-z0-9]{2,}){0,3}")
_CODE_GAP_RE = re.compile(r"[ \t]*(?:[,、，;]|and|и)?[ \t]*")


def _code_token(v: str) -> bool:
    """A recovery code: four or more digits, or letters and digits (``8Q3K-ZP2M``), never a date,
    version or a word."""
    return (_digits(v) >= 4 or _digits(v) >= 2 and any(c.isalpha() for c in v) and len(v) >= 6) \
        and not _never_a_value(v)


def _code_list_edits(text: str) -> Iterator[Edit]:
    """After ``recovery codes``/``backup code``/``резервные коды``/``リカバリーコード`` (and a qualifier
    such as ``for my GitHub 2FA``): each code of the list that follows."""
    for m in _matches(text, _CODE_ANCHOR, _CODES_KW_RE):
        for pos, _ in _value_starts(text, m.end(), 4):
            codes = []
            while True:
                cm = _CODE_TOKEN_RE.match(text, pos)
                if not cm or not _code_token(cm.group(0)) or re.match(r"[\w./]", text[cm.end():cm.end() + 1]) and \
                        not _CJK_RE.match(text, cm.end()) or _UNIT_AFTER_RE.match(text, cm.end()):
                    break  # `認証コードは 4096 分で失効します`: a number of minutes
                codes.append((cm.start(), cm.end(), SECRET))
                gm = _CODE_GAP_RE.match(text, cm.end())
                pos = gm.end() if gm else cm.end()
            if codes:
                yield from codes
                break


# --------------------------------------------------------------------------------------------
# The code of something that locks (`the code for the office safe is …`, `金庫の番号は …`)
# --------------------------------------------------------------------------------------------

_LOCK_EN = (r"safe|locker|lockers|lock|padlock|door|gate|alarm|garage|vault|cabinet|lockbox|key[ -]?box|mailbox|"
            r"keypad|intercom|entrance|storeroom|storage")
_LOCK_CODE_RE = re.compile(
    rf"(?<![A-Za-z])(?i:(?:code|combination|combo|pin|passcode)[ \t]+(?:for|to|of|on)[ \t]+(?:(?:the|my|our|your)[ \t]+)?"
    rf"(?:[A-Za-z][\w-]*[ \t]+){{0,2}}(?:{_LOCK_EN})"
    rf"|(?:{_LOCK_EN})[ \t]+(?:code|combination|combo|pin|passcode))(?![A-Za-z])"
    r"|(?<![а-яёА-ЯЁ])(?i:(?:код|шифр|комбинаци)\w*[ \t]+(?:(?:от|к|для|на)[ \t]+)?(?:[а-яё]+[ \t]+){0,1}"
    r"(?:сейф|шкафчик|замк|замок|домофон|калитк|двер|ворот|сигнализаци|ящик|гараж|подъезд)\w*)"
    r"|(?:金庫|ロッカー|南京錠|錠|ドア|門|扉|ゲート|宅配ボックス|キーボックス|ポスト|玄関|オートロック|倉庫)"
    r"(?:の)?(?:ダイヤル|暗証)?(?:番号|コード|パスコード)"
)
def _lock_code_edits(text: str) -> Iterator[Edit]:
    """A code of digits after the code, combination or PIN of a safe, a locker, a door, a gate, an
    alarm (``the code for the office safe is 4417-9920``, ``код от сейфа в офисе — 4418``, ``金庫の番号は
    4420 です``); ``error code 4417`` and ``the code for the parser`` stay."""
    for m in _matches(text, _LOCK_ANCHOR, _LOCK_CODE_RE):
        for pos, _ in _value_starts(text, m.end(), 3):
            span = _code_value(text, pos)
            if span is not None:
                yield span[0], span[1], SECRET
                break


# --------------------------------------------------------------------------------------------
# Credential files' lines: .pgpass, .netrc
# --------------------------------------------------------------------------------------------

_PGPASS_RE = re.compile(
    r"(?:(?<=[\s:：>\"'`(])|\A|(?<=\A[^\S\n]))"
    r"(?P<host>\*|[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?):(?P<port>\*|\d{2,5}):(?P<db>\*|[\w.\-$]+):"
    r"(?P<user>\*|[\w.\-@$]+):(?P<v>[^\s:]+)(?=\s|\Z)"
)


def _pgpass_edits(text: str) -> Iterator[Edit]:
    """The password of a ``.pgpass`` line (``host:port:database:user:password``): a host with a
    letter (or ``*``), a port number (or ``*``), then three fields."""
    for m in _matches(text, _PGPASS_ANCHOR, _PGPASS_RE):
        host = m.group("host")
        if host != "*" and not re.search(r"[A-Za-z]", host):
            continue  # `10:30:00:...` is a time
        v = m.group("v")
        if v and v != SECRET:
            yield m.start("v"), m.end("v"), SECRET


_NETRC_RE = re.compile(r"(?i)\b(?:machine[ \t]+\S+|default)[ \t]+(?:login[ \t]+\S+[ \t]+)?(?:password|passwd)[ \t]+(?P<v>\S+)")


def _netrc_edits(text: str) -> Iterator[Edit]:
    """The password of a ``.netrc`` line (``machine host login user password value``)."""
    for m in _matches(text, _NETRC_ANCHOR, _NETRC_RE):
        if m.group("v") != SECRET:
            yield m.start("v"), m.end("v"), SECRET

