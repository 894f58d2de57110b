"""The redaction rule registry and the functions that apply it (SPEC T2; ``searchkit.ingest.redact``).

``RULES`` names each rule and fixes the order they apply in; ``redact`` and ``redact_counted`` apply
them to a text, ``redact_file_name`` to an attachment's name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from searchkit.ingest.redact.keyword_rules import (
    _attribute_edits, _before_edits, _compound_edits, _creds_edits, _keyword_edits,
)
from searchkit.ingest.redact.detector import _b64_edits, _hex_edits, _plugin_edits
from searchkit.ingest.redact.everyday import (
    _code_list_edits, _lock_code_edits, _login_pair_edits, _netrc_edits, _owned_short_edits, _pgpass_edits,
    _qualified_phrase_edits, _qualified_space_edits,
)
from searchkit.ingest.redact.known import note_found
from searchkit.ingest.redact.shapes import Edit, SECRET
from searchkit.ingest.redact.tokens import (
    _AUTH_HEADER_RE, _AZURE_RE, _JWT_RE, _PRIVATE_KEY_RE, _URL_CREDENTIALS_RE, _VENDOR_RE, _auth_keep, _cli_edits,
    _email_edits, _url_keep,
)

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
            if rep == SECRET:
                note_found(self.name, text[start:end])  # for the workspace-wide pass (``known``)
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


def _merge(*edits: Iterable[Edit]) -> list[Edit]:
    """Edits of several finders in one ascending list (``Rule.apply`` drops overlaps)."""
    return sorted((e for es in edits for e in es), key=lambda e: (e[0], -e[1]))


RULES: tuple[Rule, ...] = (
    Rule("private_key", _regex(_PRIVATE_KEY_RE)),
    Rule("url_credentials", _regex(_URL_CREDENTIALS_RE, keep=_url_keep)),
    Rule("bearer", _regex(_AUTH_HEADER_RE, group="v", keep=_auth_keep)),
    Rule("token_prefix", _regex(_VENDOR_RE)),
    Rule("azure_key", _regex(_AZURE_RE, group="v")),
    Rule("jwt", _regex(_JWT_RE)),
    Rule("email", _email_edits),
    # issue 39 item 4: the everyday shapes (``everyday``), before the key words take a part of them
    Rule("credential_file", lambda t: _merge(_pgpass_edits(t), _netrc_edits(t))),
    Rule("login_pair", _login_pair_edits),
    Rule("owned_short_key", _owned_short_edits),
    Rule("qualified_phrase", _qualified_phrase_edits),
    Rule("code_list", _code_list_edits),
    Rule("lock_code", _lock_code_edits),
    Rule("qualified_value", _qualified_space_edits),
    Rule("credential_pair", _creds_edits),
    Rule("compound_key", _compound_edits),
    Rule("attribute", _attribute_edits),
    Rule("key_value", _keyword_edits),
    Rule("command_line", _cli_edits),
    Rule("value_then_key", _before_edits),
    # key-shaped values without a key word: detect-secrets' entropy measures and token plugins
    # (issue 39 item 4 (b); ``detector``: a commit SHA or a checksum its words name stays)
    Rule("long_hex", _hex_edits),
    Rule("long_base64", _b64_edits),
    Rule("detector", _plugin_edits),
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
