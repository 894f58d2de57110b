"""Words that are prose, not values, after a key word (SPEC T2; part of ``searchkit.ingest.redact``).

The vocabulary the value rules consult: technical and status words (``sha256``, ``expired``, ``истёк``,
``未発行``), stop words of English, Russian and Japanese, the endings that mark a verb, adjective or
adverb, and the tests built on them (``_ordinary_word``, ``_ja_prose``, ``_ends_clause``).
"""
from __future__ import annotations

import re

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
    min max minimum maximum least most approx bearer basic digest opaque accepted rejected declined cleared
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


_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")


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
    return w is not None and w.group(1).lower() in _TAILS and _ends_clause(text, end + w.end())


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
