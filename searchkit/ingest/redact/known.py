"""Secret values known in a workspace, redacted wherever they appear again (issue 39 item 4 (a); SPEC T2, H2).

A value the rules redact once (``Кодовое слово проекта — Незабудка``) is a secret wherever it is
written again, also where no rule would see it (``Записал: Незабудка`` in the next message). A load
collects the values its rules redacted (``found_values``) and ``KnownSecrets`` redacts them in every
text of their scope. Only salted digests are kept (``KnownSecrets.digests``): what is saved beside an
index or in a task store never holds a value. A load keeps the values themselves in memory only
(``KnownSecrets.add``), to find them fast; a reader of a saved set (a live read) finds exactly the same
spans through the digests, only slower.

**Scope** (privacy first: nothing a caller may not see may change what that caller gets). A value is
redacted only in texts that everyone able to read them could read the text it was found in too: a
value found in a shared record of a space in every record of that space; a value found in a personal
record (a personal chat, the digests of its turns) only in that owner's personal records of that
space. Otherwise a member could plant a guess in a shared note and learn from the redaction that it
is someone's password in a personal chat.

**What matches.** A text is read as tokens (``_TOKEN_RE``: runs between spaces and ``:=/,;"'`` and
brackets, the punctuation at either end left out; full-width forms folded, case folded). A value of
one or more tokens matches the same tokens in a row (``lunar tide marble``; ``4417-9920``); each
token of a value of several that is shaped like a secret (letters and digits, ``4417-9920`` of a list
of recovery codes) is a value alone too. A value of one token holding kana or kanji matches anywhere
inside a token (Japanese has no spaces: ``つばめで入れました``), unless a letter or digit of another
script joins it at an end. Too little to be a secret is never a value: a token of fewer than four
characters (three for kana and kanji), more than ``MAX_TOKENS`` tokens, more than ``MAX_CHARS``.
"""
from __future__ import annotations

import hashlib
import os
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, TypeVar

from searchkit.ingest.redact.shapes import SECRET

MAX_TOKENS = 6
"""A value of more tokens is never a known value (a key block is redacted by its own rule)."""
MAX_CHARS = 200
MIN_CHARS = 4
MIN_CJK_CHARS = 3
SALT_BYTES = 16
DIGEST_BYTES = 16
FORMAT = "searchkit.known-secrets"
FORMAT_VERSION = 1
_T = TypeVar("_T")

_FOLD = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_TOKEN_RE = re.compile(r"[^\s:=/,;'\"`()\[\]{}<>|、。，：；「」『』（）【】〈〉《》・→]+")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]")
_STRONG_RE = re.compile(r"(?=.*\d)(?=.*[^\W\d_])|\d{4,}")
_FRAG_RE = re.compile(r"[^\W_]+")


def _cjk(ch: str) -> bool:
    return bool(_CJK_CHAR.match(ch))


def _word(ch: str) -> bool:
    """A letter or digit of a script written with spaces (it would join a value to a word)."""
    return ch.isalnum() and not _cjk(ch)


def _core(start: int, end: int, text: str) -> tuple[int, int]:
    """``text[start:end]`` without the characters at either end that are not letters or digits."""
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return start, end


def _tokens(folded: str) -> list[tuple[int, int, str]]:
    """``(start, end, key)`` of each token of a folded text (its core; empty cores left out)."""
    out = []
    for m in _TOKEN_RE.finditer(folded):
        s, e = _core(m.start(), m.end(), folded)
        if s < e:
            out.append((s, e, folded[s:e].casefold()))
    return out


def value_keys(value: str) -> list[tuple[str, ...] | str]:
    """The keys a redacted value is known by: a tuple of token keys (matched as tokens in a row), a
    string (a value of one token holding kana or kanji, matched inside a token), or nothing when the
    value is too little or too much to be one."""
    folded = value.translate(_FOLD).strip()
    if not folded or len(folded) > MAX_CHARS or folded == SECRET:
        return []
    toks = [key for _, _, key in _tokens(folded)]
    if not toks or len(toks) > MAX_TOKENS:
        return []
    if len(toks) == 1:
        key = toks[0]
        if _CJK_CHAR.search(key):
            return [key] if len(key) >= MIN_CJK_CHARS else []
        return [(key,)] if len(key) >= MIN_CHARS else []
    keys: list[tuple[str, ...] | str] = []
    if sum(len(t) for t in toks) >= MIN_CHARS + 2:
        keys.append(tuple(toks))
    for t in toks:  # recovery codes of a list, a password beside its user in a URL
        if len(t) >= MIN_CHARS and _STRONG_RE.search(t) and not _CJK_CHAR.search(t):
            keys.append((t,))
    return keys


def _digest(salt: bytes, key: tuple[str, ...] | str) -> bytes:
    data = ("s\0" + key) if isinstance(key, str) else ("t\0" + "\x1f".join(key))
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), key=salt, digest_size=DIGEST_BYTES).digest()


@dataclass
class _Scope:
    """The values of one scope: their digests and the shapes to look for (token counts, lengths);
    with ``plain`` the keys themselves too (in memory only, never saved)."""

    digests: set[bytes] = field(default_factory=set)
    counts: set[int] = field(default_factory=set)
    lengths: set[int] = field(default_factory=set)
    plain: set[tuple[str, ...] | str] | None = None
    firsts: set[str] | None = None
    frags: set[str] | None = None
    """With ``plain``: the longest run of letters or digits of each token key (a text holding none of
    them holds no token key: ``spans`` skips it), in memory only."""
    inner: set[str] | None = None
    """With ``plain``: the keys matched inside a token (kana, kanji), in memory only."""


def _copy(values: set[_T] | None) -> set[_T] | None:
    """A copy of a set that may be None (a ``_Scope`` known by its digests only)."""
    return None if values is None else set(values)


def scope_of(space: str, owner: str | None = None, visibility: str = "shared") -> str:
    """The scope of a record: its space, and its owner when it is personal."""
    return f"{space}\0{owner or ''}" if visibility == "personal" else f"{space}\0"


def scopes_for(space: str, owner: str | None = None, visibility: str = "shared") -> tuple[str, ...]:
    """The scopes whose values a record's text is redacted for: its space's shared values, and
    for a personal record its owner's too (a shared record never takes a personal value)."""
    shared = scope_of(space)
    own = scope_of(space, owner, visibility)
    return (shared,) if own == shared else (shared, own)


class KnownSecrets:
    """Salted digests of the secret values known in a workspace (or a task store), by scope.

    ``add`` takes a value (found by the rules) into a scope; ``redact`` replaces every occurrence of a
    value of the given scopes in a text by ``[redacted]``. ``to_dict`` / ``from_dict`` save and read
    the digests (never a value); a set read back redacts exactly what the set it was saved from did.
    """

    def __init__(self, salt: bytes | None = None) -> None:
        self.salt = salt if salt is not None else os.urandom(SALT_BYTES)
        self._scopes: dict[str, _Scope] = {}

    # -- building ---------------------------------------------------------------------------
    def add(self, scope: str, value: str) -> bool:
        """Take ``value`` into ``scope``; False when it is not a value (too little, too much)."""
        keys = value_keys(value)
        if not keys:
            return False
        sc = self._scopes.setdefault(scope, _Scope(plain=set(), firsts=set(), frags=set(), inner=set()))
        for key in keys:  # a scope read back from digests (``plain`` None) takes digests only
            sc.digests.add(_digest(self.salt, key))
            if isinstance(key, str):
                sc.lengths.add(len(key))
            else:
                sc.counts.add(len(key))
            if sc.plain is not None and sc.firsts is not None and sc.frags is not None and sc.inner is not None:
                sc.plain.add(key)
                if isinstance(key, str):
                    sc.firsts.add(key[0])
                    sc.inner.add(key)
                else:
                    sc.frags.add(max(_FRAG_RE.findall(key[0]) or [key[0]], key=len))
        return True

    def merge(self, other: "KnownSecrets") -> None:
        """Take ``other``'s digests (made with the same salt; another salt's are left out)."""
        if other.salt != self.salt:
            return
        for name, theirs in other._scopes.items():
            sc = self._scopes.setdefault(name, _Scope(plain=set(), firsts=set()))
            sc.digests |= theirs.digests
            sc.counts |= theirs.counts
            sc.lengths |= theirs.lengths
            sc.plain = sc.firsts = sc.frags = sc.inner = None  # what we hold now is known by its digests only

    def with_values(self, scope: str, values: Iterable[str]) -> "KnownSecrets":
        """A copy of this set with ``values`` added to ``scope`` (this set unchanged)."""
        values = list(values)
        if not values:
            return self
        out = KnownSecrets(self.salt)
        for name, sc in self._scopes.items():
            out._scopes[name] = _Scope(set(sc.digests), set(sc.counts), set(sc.lengths), _copy(sc.plain),
                                       _copy(sc.firsts), _copy(sc.frags), _copy(sc.inner))
        for value in values:
            out.add(scope, value)
        return out

    def forget_values(self) -> "KnownSecrets":
        """A copy holding the digests only (what a reader of a saved set has)."""
        out = KnownSecrets.from_dict(self.to_dict())
        assert out is not None  # to_dict's JSON always reads back
        return out

    def __bool__(self) -> bool:
        return any(sc.digests for sc in self._scopes.values())

    def scopes(self) -> tuple[str, ...]:
        return tuple(sorted(n for n, sc in self._scopes.items() if sc.digests))

    # -- finding ----------------------------------------------------------------------------
    def spans(self, text: str, scopes: Iterable[str]) -> list[tuple[int, int]]:
        """The spans of ``text`` that hold a value of ``scopes`` (ascending, non-overlapping)."""
        chosen = [self._scopes[s] for s in scopes if s in self._scopes and self._scopes[s].digests]
        if not chosen or not text:
            return []
        folded = text.translate(_FOLD)
        if all(sc.frags is not None and sc.inner is not None for sc in chosen) and not _may_hold(folded, chosen):
            return []  # the values are known in memory (a load): none can be in this text
        toks = _tokens(folded)
        counts = sorted({k for sc in chosen for k in sc.counts}, reverse=True)
        lengths = sorted({n for sc in chosen for n in sc.lengths}, reverse=True)
        out: list[tuple[int, int]] = []
        matched = [False] * len(toks)
        if counts:
            i = 0
            while i < len(toks):
                for k in counts:
                    if i + k <= len(toks) and self._has(chosen, tuple(t[2] for t in toks[i:i + k])):
                        for j in range(i, i + k):
                            out.append(toks[j][:2])
                            matched[j] = True
                        i += k
                        break
                else:
                    i += 1
        if lengths:
            for j, (s, e, key) in enumerate(toks):
                if not matched[j] and _CJK_CHAR.search(key):
                    out.extend(self._inside(chosen, folded, s, e, lengths))
        out.sort()
        return out

    def _has(self, chosen: list[_Scope], key: tuple[str, ...] | str) -> bool:
        d: bytes | None = None
        for sc in chosen:
            if sc.plain is not None:
                if key in sc.plain:
                    return True
                continue
            if d is None:
                d = _digest(self.salt, key)
            if d in sc.digests:
                return True
        return False

    def _inside(self, chosen: list[_Scope], folded: str, start: int, end: int, lengths: list[int]) -> Iterator[tuple[int, int]]:
        """Values of kana or kanji inside the token ``folded[start:end]``, leftmost then longest."""
        firsts: set[str] | None = set()
        for sc in chosen:
            if sc.firsts is None or firsts is None:
                firsts = None
            else:
                firsts |= sc.firsts
        pos = start
        while pos < end:
            if firsts is not None and folded[pos].casefold()[:1] not in firsts:
                pos += 1
                continue
            for n in lengths:
                stop = pos + n
                if stop > end:
                    continue
                window = folded[pos:stop]
                if not _CJK_CHAR.search(window):
                    continue
                if _word(window[0]) and pos > start and _word(folded[pos - 1]):
                    continue
                if _word(window[-1]) and stop < end and _word(folded[stop]):
                    continue
                if self._has(chosen, window.casefold()):
                    yield pos, stop
                    pos = stop
                    break
            else:
                pos += 1

    def redact(self, text: str, scopes: Iterable[str]) -> tuple[str, int]:
        """``text`` with each value of ``scopes`` replaced by ``[redacted]``, and how many."""
        spans = self.spans(text, scopes)
        if not spans:
            return text, 0
        parts: list[str] = []
        pos = n = 0
        for s, e in spans:
            if s < pos:
                continue
            if text[s:e] == SECRET:
                continue
            parts += [text[pos:s], SECRET]
            pos = e
            n += 1
        parts.append(text[pos:])
        return "".join(parts), n

    # -- saving -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The digests by scope, as JSON (sorted: the same values give the same bytes). No value."""
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION, "salt": self.salt.hex(),
            "scopes": {name: {"digests": sorted(d.hex() for d in sc.digests), "counts": sorted(sc.counts),
                              "lengths": sorted(sc.lengths)}
                       for name, sc in sorted(self._scopes.items()) if sc.digests},
        }

    @classmethod
    def from_dict(cls, data: object) -> "KnownSecrets | None":
        """A set read back from ``to_dict``'s JSON; None when ``data`` is not one."""
        if not isinstance(data, Mapping) or data.get("format") != FORMAT or data.get("format_version") != FORMAT_VERSION:
            return None
        try:
            salt = bytes.fromhex(data["salt"])
            scopes = data["scopes"]
            out = cls(salt)
            for name, d in scopes.items():
                sc = _Scope(digests={bytes.fromhex(x) for x in d["digests"]},
                            counts={int(k) for k in d["counts"]}, lengths={int(n) for n in d["lengths"]})
                if not isinstance(name, str) or any(len(x) != DIGEST_BYTES for x in sc.digests):
                    return None
                if any(k < 1 or k > MAX_TOKENS for k in sc.counts) or any(n < 1 or n > MAX_CHARS for n in sc.lengths):
                    return None
                out._scopes[name] = sc
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return out if len(salt) == SALT_BYTES else None


def _may_hold(folded: str, chosen: list[_Scope]) -> bool:
    """Whether ``folded`` could hold a key of ``chosen`` (all known in memory): a token key's longest
    run of letters or digits is one of the text's, or a key of kana or kanji is in it. Never False
    where ``spans`` would find something: a token equal to a key has the key's runs."""
    low = folded.casefold()
    runs: set[str] | None = None
    for sc in chosen:
        assert sc.frags is not None and sc.inner is not None
        if any(k in low for k in sc.inner):
            return True
        if sc.frags:
            if runs is None:
                runs = set(_FRAG_RE.findall(low))
            if not runs.isdisjoint(sc.frags):
                return True
    return False


def salt_for(name: str) -> bytes:
    """A salt of its own for a workspace (``name``: its folder's real path), the same at every load,
    so that a fresh index and an updated one of the same workspace save the same bytes."""
    return hashlib.blake2b(f"searchkit.known-secrets\0{name}".encode("utf-8", "surrogatepass"),
                           digest_size=SALT_BYTES).digest()


# --------------------------------------------------------------------------------------------
# The values a rule redacted
# --------------------------------------------------------------------------------------------

_FOUND: ContextVar[list[tuple[str, str]] | None] = ContextVar("searchkit_found_values", default=None)


def note_found(rule: str, value: str) -> None:
    """A rule replaced ``value`` (called by the rules; kept only inside ``found_values``)."""
    found = _FOUND.get()
    if found is not None:
        found.append((rule, value))


@contextmanager
def found_values() -> Iterator[list[tuple[str, str]]]:
    """``(rule, value)`` of every span the rules replace inside the block (in memory only)."""
    found: list[tuple[str, str]] = []
    token = _FOUND.set(found)
    try:
        yield found
    finally:
        _FOUND.reset(token)
