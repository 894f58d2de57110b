"""Key words that introduce a secret, and what may stand between a key word and its value (SPEC T2;
part of ``searchkit.ingest.redact``).

The key words in English, Russian and Japanese by family (password, PIN, token, key, secret, pass
phrase, credentials), the separators by strength (``:``/``=`` strong, ``is``/``это``/``は`` medium,
a bare space weak), the qualifiers allowed before a separator (``the password for prod: …``) and
``_Intro``, how a value was introduced.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


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
                r"(?:[|>][-+]?[1-9]?[ \t]*(?=\n))?(?:\n[ \t]*){0,2}"
                r"(?:(?i:теперь|сейчас|now)[ \t]+(?=\S))?"), STRONG),  # `пароль: теперь Жираф2027`
    (re.compile(
        r"(?i)[ \t]+(?:(?:has\s+been|is|was|will\s+be|got|gets)\s+(?:set|changed|reset|updated)\s+to|is\s+now|is\s+still|"
        r"(?:set|changed|reset|updated)\s+to|is|was|are|equals|to|becomes|это|—|–|-|равен|равна|на|"
        r"теперь|будет|стал|стала|сейчас|(?:по|у)?ставил[аи]?|установлен|задал[аи]?|задан)"
        r"[ \t]*:?(?:[ \t]+|[ \t]*\n(?:[ \t]*\n)?[ \t]*)"
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


_KEYWORD_HINT_RE = re.compile(
    r"(?i)pass|pwd|pw|p/w|psw|phrase|pin|otp|code|token|key|secret|cred|answer|word|psk|u/p|l/p"
    r"|парол|пин|код|токен|ключ|секрет|логин|уч[её]т|доступ|кред|ответ|слов|фраз"
    r"|パス|合言葉|合い言葉|あいことば|暗証|コード|番号|トークン|キー|鍵|シークレット|情報|言葉|答え"
)
"""A cheap test: a text without any of these has no key word (most texts)."""


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

_AMBIGUOUS_KEY_WORDS_RE = re.compile(r"(?i)ключ\w*|секрет\w*|secrets?|keys?")
"""Key words with an ordinary sense (``Ключ к решению — кэширование``, ``the secret is patience``,
``Секрет успеха прост: тесты``): a plain word is their value only after an explicit separator
and no qualifier (``секрет: Солнышко``)."""

_EXPLICIT, _DASH, _WORD, _PARTICLE = "explicit", "dash", "word", "particle"
_CHANGE_RE = re.compile(r"(?i)\b(?:set|changed?|reset|updated?|rotated?)\b|(?<![а-яё])(?:по|с|из|за|об|у)?(?:меня|мени|"
                        r"станови|ставил|ставь|обнови)[а-яё]*")
"""A verb of setting before ``to``/``на`` (``set the password to …``, ``пароль поменял на …``)."""


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
