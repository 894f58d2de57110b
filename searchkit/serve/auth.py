"""Bearer tokens of the HTTP transport (issue 30): each maps to one ``Session``.

The tokens file is JSON, owner-only (0600: refused when group or others may read or write it)::

    {"format": "searchkit.serve-tokens", "tokens": [
      {"sha256": "<hex digest of the token>", "caller": "u-anna", "space": "acme",
       "current_task": 12, "container": "personal", "name": "anna's assistant"}]}

Only the sha256 of each token is stored (``searchkit serve-token`` makes a token, prints it once and
adds its hash). A request's token is hashed and compared with every stored hash in constant time
(``hmac.compare_digest``, no early exit). The file is read again when it changes (a revoked token
stops working without a restart); a file that becomes unusable refuses every token until fixed.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from searchkit.errors import DataError, ParameterError
from searchkit.serve.session import Session
from searchkit.util import atomic_write_text, read_json_file

FORMAT = "searchkit.serve-tokens"
MAX_TOKENS_BYTES = 1 << 20
_FIELDS = ("sha256", "caller", "container", "space", "current_task", "lang", "name")


@dataclass(frozen=True)
class Entry:
    """One token: the sha256 of the token (hex) and the session it stands for."""

    digest: str
    session: Session
    name: str = ""


def token_digest(token: str) -> str:
    """The hex sha256 of a token, as the tokens file stores it."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def load_tokens(path: str | os.PathLike[str]) -> tuple[Entry, ...]:
    """The entries of a tokens file; ``DataError`` naming the path and the problem (never a
    token or a hash)."""
    p = Path(path)
    _check_private(p)
    try:
        data = read_json_file(p, limit=MAX_TOKENS_BYTES)
    except OSError as exc:
        raise DataError(f"{p}: cannot read the tokens file ({exc.strerror or type(exc).__name__})") from None
    except ValueError:
        raise DataError(f"{p}: not a JSON tokens file") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("tokens"), list):
        raise DataError(f"{p}: expected {{\"format\": \"{FORMAT}\", \"tokens\": [...]}}")
    entries = tuple(_entry(p, i, item) for i, item in enumerate(data["tokens"]))
    digests = [e.digest for e in entries]
    if len(set(digests)) != len(digests):
        raise DataError(f"{p}: the same token is listed twice")
    return entries


def _check_private(p: Path) -> None:
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise DataError(f"{p}: no such tokens file (make one with `searchkit serve-token --tokens {p} ...`)") from None
    except OSError as exc:
        raise DataError(f"{p}: cannot read the tokens file ({exc.strerror or type(exc).__name__})") from None
    if not stat.S_ISREG(st.st_mode):
        raise DataError(f"{p}: the tokens file is not a regular file")
    if st.st_mode & 0o077:
        raise DataError(f"{p}: the tokens file may be read or written by others (mode {stat.S_IMODE(st.st_mode):04o}); "
                          f"make it owner-only: chmod 600 {p}")


def _entry(p: Path, i: int, item: object) -> Entry:
    where = f"{p}: tokens[{i}]"
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected an object")
    unknown = sorted(set(item) - set(_FIELDS))
    if unknown:
        raise DataError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; valid: {', '.join(_FIELDS)}")
    digest = item.get("sha256")
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise DataError(f"{where}: sha256 must be the 64 lower-case hex digits of the token's sha256")
    try:
        session = Session(caller=item.get("caller"), container=item.get("container", "personal"),
                          space=item.get("space"), current_task=item.get("current_task"), lang=item.get("lang"))
    except ParameterError as exc:
        raise DataError(f"{where}: {exc}") from None
    name = item.get("name", "")
    return Entry(digest, session, name if isinstance(name, str) else "")


class Tokens:
    """The tokens of a file, read again whenever the file changes; ``session(token)`` is the
    session a presented token stands for, or None; ``lookup(token)`` says why not (the 401's log
    line: issue 41 item 4)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._sig: tuple[int, ...] | None = None
        self._entries: tuple[Entry, ...] = ()
        self._known: tuple[Entry, ...] = ()
        """The entries of the last usable file (only to name a token refused while the file is not)."""
        self._problem: str | None = None
        self.reload(strict=True)

    def reload(self, *, strict: bool = False) -> None:
        """Read the file now; with ``strict``, a problem raises ``DataError``, else every token
        is refused until the file is usable again (``problem`` says why)."""
        try:
            sig = _signature(self.path)
            entries = load_tokens(self.path)
        except DataError as exc:
            if strict:
                raise
            with self._lock:
                self._entries, self._problem, self._sig = (), str(exc), None
            return
        with self._lock:
            self._entries, self._known, self._problem, self._sig = entries, entries, None, sig

    @property
    def problem(self) -> str | None:
        """Why every token is refused now (the file became unusable), else None."""
        return self._problem

    def check(self) -> str | None:
        """The file read again if it changed; ``problem`` then (readiness: issue 41 item 4)."""
        if _signature(self.path) != self._sig:
            self.reload()
        return self._problem

    def session(self, token: str | None) -> Session | None:
        """The session of ``token``; None for no token, an unknown one, or an unusable file."""
        return self.lookup(token)[0]

    def lookup(self, token: str | None) -> tuple[Session | None, str | None, str]:
        """``(session, name, reason)`` of ``token``: its session (None: refused), the name its entry
        gives it (only a token a usable file listed; never for an unknown one) and ``ok``,
        ``no_token``, ``unknown_token`` or ``tokens_unusable``. Every entry is compared."""
        self.check()
        if not token:
            return None, None, "no_token"
        digest = token_digest(token)
        with self._lock:
            entries, known, problem = self._entries, self._known, self._problem
        found = _find(digest, entries)
        if found is not None:
            return found.session, found.name or None, "ok"
        if problem is not None:
            was = _find(digest, known)
            return None, (was.name or None) if was is not None else None, "tokens_unusable"
        return None, None, "unknown_token"


def _find(digest: str, entries: tuple[Entry, ...]) -> Entry | None:
    found = None
    for e in entries:  # every entry compared, in constant time: no early exit
        if hmac.compare_digest(digest, e.digest) and found is None:
            found = e
    return found


def _signature(p: Path) -> tuple[int, ...] | None:
    try:
        st = os.stat(p)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def add_token(path: str | os.PathLike[str], session: Session, name: str = "") -> str:
    """A new random token for ``session``: its sha256 is added to the tokens file (created
    owner-only when missing, written atomically), and the token itself is returned, to be shown
    once. An existing file must be usable (``DataError`` otherwise)."""
    p = Path(path)
    entries: list[dict[str, Any]] = []
    if p.exists():
        load_tokens(p)  # usable: private, well formed
        entries = list(read_json_file(p, limit=MAX_TOKENS_BYTES)["tokens"])
    token = secrets.token_urlsafe(32)
    item: dict[str, Any] = {"sha256": token_digest(token), "caller": session.caller}
    for key, value in (("container", session.container if session.container != "personal" else None),
                       ("space", session.space), ("current_task", session.current_task), ("lang", session.lang),
                       ("name", name or None)):
        if value is not None:
            item[key] = value
    entries.append(item)
    atomic_write_text(p, json.dumps({"format": FORMAT, "tokens": entries}, ensure_ascii=False, indent=2) + "\n")
    os.chmod(p, 0o600)
    return token


def bearer(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else None."""
    value = headers.get("authorization") or ""
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None
