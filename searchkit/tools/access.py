"""Who may see what, read when the search runs (H14, H15; issue 28 item 2).

An index holds the text of a workspace's records; it never decides who may see them. Each history
search asks an *access source* for the spaces as they are now (members, the ``history_search``
switch, the language) and, for the chats of the spaces it searches, each chat's owner and
visibility as they are now. ``WorkspaceAccess`` reads them from the workspace folder the index was
built from, re-reading a file only when it changed (its size, times or inode differ), so an index
built before a member left, before a space switched history search off or before a chat was
deleted or made personal shows nothing of it from then on. ``StaticAccess`` is for an index made
in memory from given spaces (a dataset in the eval harness): those spaces and the records' own
owners decide. ``UnknownAccess`` is an index that does not say where its workspace is: every
search is refused.

Any doubt resolves to not showing: a space whose settings cannot be read is not searched (skipped
as ``access_unknown``); a chat whose file cannot be read, is claimed twice or is gone hides the
chat and the digests of its turns; a workspace folder that cannot be read at all refuses the
search (a ``ResourceError`` with reason ``access``). A record is shown only when both the index's copy and the workspace now
allow it, so narrowing access (a member removed, a chat made personal) takes effect at once and
widening it (a personal chat made shared) at the next ``index --update``.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping, Protocol

from searchkit.errors import ResourceError
from searchkit.ingest.policy import DEFAULT_POLICY
from searchkit.ingest.workspace import (  # the workspace's own readers: who may see what is read as indexing reads it
    _MISSING, SpaceInfo, _as_text, _chat_problem, _Collector, _lkind, _read_json, _Space, _space_problem, _str, _utf8,
)

ACCESS_UNKNOWN = "access_unknown"
"""The skip reason of a space whose settings could not be read when the search ran."""

SPACE_LANGS: tuple[str, ...] = ("ru", "en", "ja")
DEFAULT_SPACE_LANG = "ru"
"""A space's language when ``space.json`` names none (the seed's: Russian)."""


@dataclass(frozen=True)
class ChatAccess:
    """A chat's owner and visibility as the workspace has them now (H15)."""

    owner: str | None
    visibility: str

    def allows(self, caller: str | None) -> bool:
        """A shared chat is seen by every member; a personal one by its owner only, never by a
        shared container (``caller`` None)."""
        if self.visibility == "shared":
            return True
        return caller is not None and self.owner is not None and self.owner == caller


@dataclass(frozen=True)
class Access:
    """One search's view of the spaces.

    Args:
        spaces: slug -> ``SpaceInfo`` of every space whose settings could be read.
        doubtful: slugs of space folders whose settings exist but could not be read or used.
        langs: slug -> the space's language (``space.json`` ``lang``), where it names one.
    """

    spaces: Mapping[str, Any]
    doubtful: frozenset[str] = frozenset()
    langs: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spaces", MappingProxyType(dict(self.spaces)))
        object.__setattr__(self, "doubtful", frozenset(self.doubtful))
        object.__setattr__(self, "langs", MappingProxyType(dict(self.langs)))

    def lang(self, slug: str) -> str:
        """The language of space ``slug``: its ``lang`` setting, else Russian (the seed's)."""
        return self.langs.get(slug) or DEFAULT_SPACE_LANG


class AccessSource(Protocol):
    """Where a search reads who may see what."""

    @property
    def live_chats(self) -> bool:
        """True when ``chats`` reads the chats' owners and visibility now; False when the index's
        records decide (their own ``owner`` and ``visibility``)."""

    def snapshot(self) -> Access:
        """The spaces now; raises ``ResourceError`` (reason ``access``) when they cannot be read at all."""

    def chats(self, slug: str) -> Mapping[str, ChatAccess | None] | None:
        """ses_id -> the chat's access now (None: in doubt) for space ``slug``; a chat that is not
        listed is gone. None when the space's chats cannot be read at all (every chat in doubt)."""


@dataclass(frozen=True)
class StaticAccess:
    """The spaces given when the index was made in memory; the records' owners decide (H15)."""

    spaces: Mapping[str, Any]
    live_chats: bool = False

    def snapshot(self) -> Access:
        return Access(self.spaces)

    def chats(self, slug: str) -> Mapping[str, ChatAccess | None] | None:  # pragma: no cover - not live
        raise NotImplementedError("StaticAccess has no live chats; the index's records decide")


@dataclass(frozen=True)
class UnknownAccess:
    """An index that does not say which workspace it was built from: nothing can be checked."""

    reason: str
    live_chats: bool = True

    def snapshot(self) -> Access:
        raise ResourceError(self.reason, reason="access")

    def chats(self, slug: str) -> Mapping[str, ChatAccess | None] | None:  # noqa: ARG002 - every chat in doubt
        return None


class WorkspaceAccess:
    """Spaces and chats read from the workspace folder at ``root`` whenever a search runs; a file
    is parsed again only when its ``lstat`` signature changed. Reads go through the same guards
    as indexing (no link followed, no FIFO opened, nothing outside the space read, size caps)."""

    live_chats = True

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.abspath(root))
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[tuple[int, ...], Any]] = {}
        self._tables: dict[str, tuple[tuple[tuple[str, tuple[int, ...]], ...], Any]] = {}
        """A chats folder -> the signatures of its files and the table read from them."""

    def __repr__(self) -> str:
        return f"WorkspaceAccess({str(self.root)!r})"

    # -- spaces -----------------------------------------------------------------------------
    def snapshot(self) -> Access:
        try:
            names = sorted(os.listdir(self.root))
        except OSError as exc:
            raise ResourceError(
                f"cannot check who may see what: the workspace this index was built from ({self.root}) "
                f"cannot be read ({exc.strerror or type(exc).__name__}); nothing was searched. If it moved, "
                "point the index at it with `searchkit index --workspace DIR --out INDEX --update`", reason="access"
            ) from None
        spaces: dict[str, Any] = {}
        doubtful: set[str] = set()
        langs: dict[str, str] = {}
        for name in names:
            entry = self.root / name
            if not _utf8(name) or _lkind(entry) != "dir" or DEFAULT_POLICY.dir_skip(name):
                continue  # not a space (the loader skips it the same way)
            meta = entry / ".space"
            kind = _lkind(meta)
            if kind == "missing":
                continue
            if kind != "dir":
                doubtful.add(name)
                continue
            path = meta / "space.json"
            if _lkind(path) == "missing":
                continue
            read = self._cached(path, lambda p=path, n=name: _read_space(self.root, n, p))
            if read is None:
                doubtful.add(name)
                continue
            info, lang = read
            spaces[name] = info
            if lang:
                langs[name] = lang
        return Access(spaces, frozenset(doubtful), langs)

    # -- chats ------------------------------------------------------------------------------
    def chats(self, slug: str) -> Mapping[str, ChatAccess | None] | None:
        folder = self.root / slug / ".space" / "chats"
        kind = _lkind(folder)
        if kind == "missing":
            return {}
        if kind != "dir":
            return None
        where = str(folder)
        # every file's lstat signature now: this runs for every chat of the space at every search,
        # so it is one lstat each, relative to the folder opened once (no walk of the whole path)
        try:
            fd = os.open(where, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            names = sorted(n for n in os.listdir(fd) if n.endswith(".json"))
            sigs = tuple((name, _signature(name, fd)) for name in names)
        except OSError:
            return None
        finally:
            os.close(fd)
        with self._lock:
            last = self._tables.get(where)
        if last is not None and last[0] == sigs:
            return last[1]  # not one file changed since that table was read: the same table
        claims: dict[str, list[ChatAccess | None]] = {}
        for name, sig in sigs:
            path = folder / name
            for ses_id, access in self._cached(path, lambda p=path: _read_chat(self.root, slug, p), sig):
                claims.setdefault(ses_id, []).append(access)
        # an id claimed by two chat files (or by an unusable one) is in doubt: no winner (H15)
        table = MappingProxyType({ses: found[0] if len(found) == 1 else None for ses, found in claims.items()})
        if all(sig for _, sig in sigs):  # a file that could not be stat'ed is read again next time
            with self._lock:
                self._tables[where] = (sigs, table)
        return table

    # -- plumbing ---------------------------------------------------------------------------
    def _cached(self, path: Path, read: Callable[..., Any], sig: tuple[int, ...] | None = None) -> Any:
        key = str(path)
        if sig is None:
            sig = _signature(key)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and sig and hit[0] == sig:
            return hit[1]
        value = read()
        if sig:
            with self._lock:
                self._cache[key] = (sig, value)
        return value


def _signature(path: str, dir_fd: int | None = None) -> tuple[int, ...]:
    """A file's ``lstat`` signature (inode, size, times, mode); ``()`` when it cannot be read: a
    file is parsed again whenever this changes. ``dir_fd``: ``path`` is a name in that open folder."""
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return ()
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def _collector() -> Any:
    return _Collector(DEFAULT_POLICY)


def _space_dir(root: Path, slug: str) -> Any:
    return _Space(slug=slug, folder=root / slug, real=os.path.join(os.path.realpath(root), slug))


def _read_space(root: Path, slug: str, path: Path) -> tuple[Any, str | None] | None:
    """``(SpaceInfo, lang)`` from ``SLUG/.space/space.json`` as the loader reads it, else None."""
    data = _read_json(path, f"{slug}/.space/space.json", _collector(), _space_dir(root, slug).real)
    if data is _MISSING or _space_problem(data):
        return None
    title = _as_text(data.get("title"))
    info = SpaceInfo(
        slug=slug, title=title if title and _utf8(title) else slug, members=tuple(data.get("members") or ()),
        container=data.get("container", "shared"), history_search=data.get("history_search", True),
    )
    lang = data.get("lang")
    return info, (lang if lang in SPACE_LANGS else None)


def _read_chat(root: Path, slug: str, path: Path) -> tuple[tuple[str, ChatAccess | None], ...]:
    """The ids a chat file claims and the access each gets: the chat's own, or None (in doubt)
    when the file is unusable (it claims its file name and any ``ses_id`` it names)."""
    data = _read_json(path, f"{slug}/.space/chats/{path.name}", _collector(), _space_dir(root, slug).real)
    if data is _MISSING or _chat_problem(data):
        named = _str(data.get("ses_id")) if isinstance(data, dict) else None
        claimed = {path.stem} if named is None else {path.stem, named}
        return tuple((sid, None) for sid in sorted(claimed))
    owner = data.get("owner")
    visibility = data.get("visibility") or ("personal" if owner else "shared")
    return ((data.get("ses_id") or path.stem, ChatAccess(owner, visibility)),)
