"""What an error message or a shown URL may hold of a credential (SPEC H16; re-exported
by ``searchkit.index.embedders``): ``shown_url`` (a URL with its secrets masked), ``url_secrets`` (the
secret parts of a URL) and ``scrub`` (a message with keys, token shapes and secrets removed), shared
with every HTTP client of searchkit and with the config's checks (a layer below ``searchkit.config``
and ``searchkit.index``, above ``searchkit.ingest``, whose redaction it reuses).
"""
from __future__ import annotations

import re
import urllib.parse
from typing import Sequence

from searchkit.ingest.redact import redact


EXCERPT_CHARS = 120
"""The most characters of an endpoint's answer an error message quotes (after scrubbing)."""


def _excerpt(raw: bytes, limit: int = EXCERPT_CHARS) -> str:
    """A short excerpt of an answer body for a message. Scrubbed twice: here of token shapes (so a
    cut never leaves half a token), and again with the key in ``_fail``."""
    text = " ".join(raw[:4096].decode("utf-8", "replace").split())
    text = scrub(text, ())
    return text if len(text) <= limit else text[:limit] + "…"


# --------------------------------------------------------------------------- secrets in messages

_SECRET_NAME = re.compile(r"key|token|secret|pass|pwd|auth|sig|credential|session|bearer", re.IGNORECASE)
_SCHEME_WORD = re.compile(r"\b(Bearer|Basic|Digest|ApiKey)\s+(?!\[redacted\])[^\s\"',;}\]]+", re.IGNORECASE)
_USERINFO = re.compile(r"(?<=://)[^/\s@]*@")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-+/=.~]{20,}")
_REDACTED = "[redacted]"
_EXCEPTION_NAME = re.compile(r"(?:[a-z_][a-z0-9_]*\.)*(?:[A-Z]+[a-z]+)+(?:Error|Exception|Warning)\.?")
"""An exception's class name, after its dotted module path or not (``ConnectionRefusedError``,
``urllib3.exceptions.NewConnectionError``): CamelCase words, no digit, ending in Error, Exception or
Warning. A message keeps it (issue 39 item 12c): it says what failed and is no credential."""
_MIN_KEY_PIECE = 6
"""A piece of the configured key this long or longer is removed wherever it appears (an endpoint
may echo part of it)."""


def shown_url(url: str) -> str:
    """``url`` as an error or a log line may show it: without ``user:password@``, with every query
    value replaced by ``…`` (names kept) and no fragment (SPEC: errors never carry credentials)."""
    try:
        parts = urllib.parse.urlsplit(str(url))
    except ValueError:
        return "<a URL that cannot be parsed>"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    names = [pair.split("=", 1)[0] for pair in parts.query.split("&") if pair]
    query = "&".join(f"{_TOKEN_RUN.sub(_REDACTED, n)[:40]}=…" for n in names)
    path = "/".join(seg if len(seg) < 20 or _plain_word(seg) else _REDACTED for seg in parts.path.split("/"))
    return urllib.parse.urlunsplit((parts.scheme, netloc, path, query, ""))


def url_secrets(url: str) -> list[str]:
    """What in ``url`` is a credential, each as a phrase naming it and never its value: a user name
    or password (``user:password@``), a query parameter whose name says key, token, secret, password,
    auth, signature or session. Empty when the URL holds none."""
    try:
        parts = urllib.parse.urlsplit(str(url))
    except ValueError:
        return []
    out = []
    if "@" in parts.netloc:
        out.append("a user name or password (user:password@)")
    for pair in parts.query.split("&"):
        name = pair.split("=", 1)[0]
        if name and _SECRET_NAME.search(name):
            out.append(f"a secret in its query string ({name[:40]}=…)")
    # issue 27 item 5, round 3: `;jsessionid=…` path parameters, `#access_token=…`, a token as a path segment
    for seg in parts.path.split("/"):
        for param in seg.split(";")[1:]:
            name = param.split("=", 1)[0]
            if name and _SECRET_NAME.search(name):
                out.append(f"a secret in its path ({_TOKEN_RUN.sub(_REDACTED, name)[:40]}=…)")
        if redact(seg.split(";")[0]) != seg.split(";")[0]:
            out.append("a token in its path")
    for pair in re.split(r"[&;]", parts.fragment):
        name = pair.split("=", 1)[0] if "=" in pair else ""
        if name and _SECRET_NAME.search(name):
            out.append(f"a secret in its fragment ({_TOKEN_RUN.sub(_REDACTED, name)[:40]}=…)")
    return out


def _url_secret_parts(url: str) -> list[str]:
    """The values a message must not repeat: the userinfo, its user and password, every query value."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    out = []
    if "@" in parts.netloc:
        info = parts.netloc.rsplit("@", 1)[0]
        out += [info, *info.split(":", 1)]
    for pair in parts.query.split("&"):
        if "=" in pair:
            value = pair.split("=", 1)[1]
            out += [value, urllib.parse.unquote(value)]
    return [s for s in out if s]


def _plain_word(run: str) -> bool:
    """A long run that is not token-shaped: letters only (with ``-_./``), no digits."""
    return not any(c.isdigit() for c in run) and not (any(c.isupper() for c in run) and any(c.islower() for c in run)
                                                      and "-" not in run and "/" not in run and "." not in run)


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with no credential left in it, for an error message: each of ``secrets`` (and any
    piece of one of at least ``_MIN_KEY_PIECE`` characters) removed, a URL's ``user:password@``,
    the word after ``Bearer``/``Basic``/``Digest``/``ApiKey``, what :func:`searchkit.ingest.redact.redact`
    finds, and every long run of token characters that holds a digit (or mixes cases) replaced by
    ``[redacted]``, but for an exception's class name (``ConnectionRefusedError``: ``_EXCEPTION_NAME``),
    which is kept unless it is one of ``secrets``."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = _remove_pieces(text, secret)
    text = _USERINFO.sub(_REDACTED + "@", text)
    text = _SCHEME_WORD.sub(lambda m: f"{m.group(1)} {_REDACTED}", text)
    text = redact(text)
    return _TOKEN_RUN.sub(lambda m: m.group() if _kept_run(m.group()) else _REDACTED, text)


def _kept_run(run: str) -> bool:
    """A long run of token characters a message keeps: a plain word, or an exception's class name."""
    return _plain_word(run) or _EXCEPTION_NAME.fullmatch(run) is not None


def _remove_pieces(text: str, secret: str) -> str:
    """``text`` with ``secret`` and every piece of it at least ``_MIN_KEY_PIECE`` long removed."""
    text = text.replace(secret, _REDACTED)
    n = min(_MIN_KEY_PIECE, len(secret))
    spans: list[list[int]] = []
    for i in range(len(secret) - n + 1):
        piece = secret[i:i + n]
        start = text.find(piece)
        while start >= 0:
            spans.append([start, start + n])
            start = text.find(piece, start + 1)
    if not spans:
        return text
    spans.sort()
    merged = [spans[0]]
    for a, b in spans[1:]:
        if a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out, last = [], 0
    for a, b in merged:
        out += [text[last:a], _REDACTED]
        last = b
    return "".join(out + [text[last:]])
