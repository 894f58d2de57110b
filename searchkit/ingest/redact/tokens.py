"""Token shapes a secret scanner knows (SPEC T2; part of ``searchkit.ingest.redact``).

Private key blocks, credentials in URLs, ``Authorization`` headers, vendor tokens, Azure keys, JWTs,
e-mail addresses (internationalised ones too) and secrets on a command line; the detect-secrets plugins
were the reference (long random-looking hex/base64 strings and detect-secrets' own plugins: ``detector``).
"""
from __future__ import annotations

import re
from typing import Iterator

from searchkit.ingest.redact.shapes import EMAIL, Edit, SECRET, _has_letter_and_digit, _random_looking


_PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    r"|PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:\s*\S+|\Z)",
    re.S,
)

_URL_CREDENTIALS_RE = re.compile(r"(?<=://)[^\s/@:]*:[^\s/@]+(?=@)|(?<=://)(?P<tok>[A-Za-z0-9_\-.~]{16,})(?=@)")


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
# Secrets on a command line (long random-looking strings: ``detector``, detect-secrets' measures)
# --------------------------------------------------------------------------------------------

_CLI_RE = re.compile(
    r"(?<!\S)(?:-u|--user)[ =]+[^\s:]+:(?P<v>[^\s\"']+)"  # curl -u user:pass
    r"|(?<![\w-])(?:mysql|mysqldump|mariadb)\b[^\n]*?\s-p(?P<v2>[^\s\"']+)"  # mysql -ppass
    r"|(?<![\w-])sshpass\s+-p\s*(?P<v3>\S+)"
    # docker / podman / helm ... login -p pass (a registry's password on the command line)
    r"|(?<![\w-])(?:docker|podman|nerdctl|buildah|skopeo|oras|helm(?:\s+registry)?|oc|cf)\s+login\b[^\n]*?"
    r"\s(?:-p|--password)(?:\s+|=)(?P<v4>[^\s\"'-][^\s\"']*)"
)


def _cli_edits(text: str) -> Iterator[Edit]:
    for m in _CLI_RE.finditer(text):
        for g in ("v", "v2", "v3", "v4"):
            if m.group(g):
                yield m.start(g), m.end(g), SECRET
