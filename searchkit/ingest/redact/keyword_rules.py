"""The rules that start from a key word (SPEC T2; part of ``searchkit.ingest.redact``).

``key_value`` (``password: …``, ``パスワードは … です``), ``compound_key`` (``db_pass: …``, ``adminPwd = …``),
``credential_pair`` (``creds: admin / …``, ``логин/пароль: …``, ``ID/PW：…``) and ``value_then_key`` (the
reverse forms: ``use … as the password``, ``… をパスワードに設定``, ``… — это пароль``).
"""
from __future__ import annotations

import re
from typing import Iterator

from searchkit.ingest.redact.keywords import (
    CREDS, MEDIUM, PIN, PW, SECRETW, WEAK, _AMBIGUOUS_KEY_WORDS_RE, _CREDS_RE, _Intro, _KEYWORD_HINT_RE,
    _KEYWORD_RE, _LINE_SEP, _SEPS, _SHORT, _family, _quals,
)
from searchkit.ingest.redact.shapes import Edit, SECRET, _never_a_value
from searchkit.ingest.redact.values import _TRAIL, _bare_value, _looks_secret, _value_after, _value_at
from searchkit.ingest.redact.words import (
    _BARE_STOP_JA, _CJK_RE, _JA_COPULA_RE, _JA_PROSE_END_RE, _JA_WORD_RE, _ends_clause, _next_word,
    _ordinary_word, _plain_alone,
)


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


_ATTRIBUTE_RE = re.compile(
    r"""(?i)(?<![\w-])(?:key|name|id|setting)[ \t]*=[ \t]*(["'])(?P<k>[^"'\n<>]{1,80})\1[ \t]+"""
    r"""(?:value|val|content)[ \t]*=[ \t]*(["'])(?P<v>[^"'\n]+)\3"""
)
"""A setting as attributes (``<add key="DbPassword" value="…" />``, ``<Setting Name="ApiToken" Value="…"/>``)."""


def _attribute_edits(text: str) -> Iterator[Edit]:
    """The ``value`` of an element whose ``key``/``name`` attribute names a secret (issue 27 item 2,
    round 3: app.config / web.config / settings XML): the name judged as compound names are."""
    if not _KEYWORD_HINT_RE.search(text):
        return
    for m in _ATTRIBUTE_RE.finditer(text):
        parts = [p.lower() for p in re.split(r"[\W_]+|(?<=[a-z0-9])(?=[A-Z])", m.group("k")) if p]
        joined = "".join(parts)
        secret = any(p in _COMPOUND_PARTS for p in parts) or any(
            w in joined for w in ("apikey", "accesskey", "secretkey", "privatekey", "connectionstring", "credential"))
        if not secret or any(p in _ABOUT_PARTS for p in parts):
            continue
        v = m.group("v").strip()
        if v and not _never_a_value(v) and not re.fullmatch(r"\$\{[^}]*\}|\{\{[^}]*\}\}|\*+", v):
            yield m.start("v"), m.end("v"), SECRET


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
