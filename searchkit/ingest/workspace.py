"""Load a workspace folder (the format of WORKSPACE.md) into Records of the seven kinds (SPEC H1).

One loader per kind; ``policy`` decides what is never indexed (H2). Bad input is reported in the
``IndexingReport`` and the load goes on: nothing else is lost. In particular:

- nothing is read through a symbolic link, and no path is read that resolves outside its own
  space folder (``symlink``); anything that is not a regular file (a FIFO, a socket, a device) is
  never opened (``special_file``), so a load cannot hang;
- every item is capped (``too_large``, ``Policy.max_*``; ``sources.jsonl`` is read line by line)
  and any error reading one item becomes a skip of that item (``load_error``, ``bad_json``,
  ``bad_text``, ...), never a failed build; a folder nested deeper than ``Policy.max_depth`` is
  skipped alone (``too_deep``), the walk goes on beside it;
- an id that names something in a ref (a chat's ``ses_id``, a digest's ``turn_id`` and
  ``ses_id``, a source's or page's ``uuid``, a table name, a row id) must be a plain token
  (``plain_id``), else the item is skipped (``bad_id``): no ``../../etc/passwd`` reaches a ref;
- what could not be read (``unreadable``, ``load_error``, ``bad_sqlite``) is a ``Doubt``: an
  update keeps the previous index's records of that part (``carry_over``), never drops them;
- an id claimed by two items is a skip for both (``duplicate_id``), never a winner: a shared chat
  cannot take over the digests of someone's personal chat by claiming its ``ses_id``;
- a file with more than one hard link is never read (``hard_link``): it may be another space's
  chat or file linked in, and privacy comes first;
- secrets never reach the index: key material is skipped whole (``secret_content``), and every
  indexed text (files, log days, chats, digests, pages, sources, table cells) is redacted
  (``Policy.redact_secrets``; noted ``redacted``, never the value);
- nothing is written into the workspace: ``app.sqlite`` is opened ``immutable``, or, when a
  ``-wal`` / ``-journal`` lies beside it, a private temporary copy is read.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import sqlite3
import stat
import tempfile
import unicodedata
from dataclasses import dataclass, replace
from datetime import date, datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

from searchkit.ingest.policy import (
    CONTAINERS,
    DEFAULT_POLICY,
    IndexingReport,
    Policy,
    Skip,
    decode_text,
)
from searchkit.records import KINDS, VISIBILITIES, Record

RUNS: tuple[str, ...] = ("chat", "scheduled", "automatic")
DIGEST_PARTS: tuple[tuple[str, str], ...] = (
    ("asked", "Asked"), ("done", "Done"), ("left", "Left"), ("decided", "Decided"),
)
LOG_HEADING = re.compile(r"^##[ \t]+(\d{4}-\d{2}-\d{2})(?![\d])[ \t]*[-—–:·|]*[ \t]*(.*?)\s*$")
TITLE_CHARS = 80
DETAIL_CHARS = 300
"""A skip's detail is cut to this many characters (an error message may echo a huge value)."""
ID_CHARS = 200
"""The longest id (``plain_id``) an item may have."""
DOUBT_RULES: tuple[str, ...] = ("unreadable", "load_error", "bad_sqlite")
"""Skips that say a part of the workspace could not be read, not that it is gone or refused."""

T = TypeVar("T")


@dataclass(frozen=True)
class SpaceInfo:
    """A space's settings from ``.space/space.json``.

    Args:
        slug: the space's folder name.
        title: display title (the slug when none is given).
        members: user ids of its members now (H14).
        container: ``personal`` or ``shared``.
        history_search: False when history search is switched off for the space (H14).
    """

    slug: str
    title: str = ""
    members: tuple[str, ...] = ()
    container: str = "shared"
    history_search: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", tuple(self.members))
        if self.container not in CONTAINERS:
            raise ValueError(f"space {self.slug!r}: container must be one of {CONTAINERS}, got {self.container!r}")


def plain_id(value: Any) -> bool:
    """Whether ``value`` may be an id that a ref names (``chat:ID``, ``digest:ID``, ``source:ID``,
    ``page:ID``, ``app:TABLE#ID``): 1-200 characters, each a letter or digit of any script (with
    its combining marks), ``_``, ``-``, ``.`` or ``:``; it starts with a letter, digit, ``_`` or
    ``-`` and holds no ``..``. So no slash, backslash, ``#``, space, control or format character
    (U+202E) and no path traversal (issue 27 item 15). Numbers (SQLite row ids) count by their text."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return False
    text = str(value)
    if not 0 < len(text) <= ID_CHARS or ".." in text or not (text[0].isalnum() or text[0] in "_-"):
        return False
    return all(ch.isalnum() or ch in "_-.:" or unicodedata.category(ch) in ("Mn", "Mc") for ch in text)


def _bad_id_detail(what: str, value: Any) -> str:
    shown = value if isinstance(value, (str, int)) and not isinstance(value, bool) else type(value).__name__
    return (f"{what} {_printable(str(shown))!r} is not a plain id (letters, digits, _ - . : ; no '..', "
            "slash, space or control character); the item is not indexed")


def _printable(text: str, limit: int = 60) -> str:
    """``text`` with control and format characters shown escaped, cut to ``limit`` characters."""
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else ascii(ch)[1:-1] for ch in text[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Doubt:
    """A part of a space this load could not read (a skip whose rule is in ``DOUBT_RULES``): what
    the previous index holds from it can be neither confirmed nor dropped, so an update keeps it
    (``carry_over``; issue 27 item 11).

    Args:
        where: the skip's label (``SLUG/path``, ``SLUG/`` for the walk of the space's files).
        space: the space slug.
        path: the space-relative source path (``Record.fields["source_path"]``): ``""`` any
            path, one ending in ``/`` a folder and everything below it, else one file.
        kinds: the record kinds it covers (empty: any).
        table: for ``.space/app.sqlite``, the one table in doubt (None: every table).
    """

    where: str
    space: str
    path: str = ""
    kinds: tuple[str, ...] = ()
    table: str | None = None

    def covers(self, record: Record) -> bool:
        """Whether ``record`` (of a previous index) comes from the part in doubt."""
        if record.space != self.space or (self.kinds and record.kind not in self.kinds):
            return False
        source = source_path(record)
        if self.path and not (source == self.path or (self.path.endswith("/") and source.startswith(self.path))):
            return False
        return self.table is None or record.fields.get("table") == self.table

    @classmethod
    def of(cls, where: str) -> "Doubt | None":
        """The part of a space a skip label names; None for what holds no records (a space's
        settings, ``users.json``): a space whose membership is unknown is left out, never kept."""
        space, sep, rest = where.partition("/")
        if not sep:
            return None
        if not rest:
            return cls(where, space, "", ("file",))
        for prefix, mark in ((".space/sources.jsonl", ":"), ("log.md", "#")):
            if rest.startswith(prefix + mark):
                return cls(where, space, prefix)
        if rest.startswith(".space/app.sqlite:"):
            return cls(where, space, ".space/app.sqlite", table=rest.split(":", 1)[1].split("#", 1)[0] or None)
        if rest in (".space/space.json", ".space/files.json"):
            return None
        return cls(where, space, rest)


_FIXED_SOURCES: Mapping[str, str] = MappingProxyType({
    "source": ".space/sources.jsonl", "app": ".space/app.sqlite", "log": "log.md",
})
_ITEM_FOLDERS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "chat": (".space/chats/", "chat:"), "digest": (".space/digests/", "digest:"), "page": (".space/pages/", "page:"),
})


def source_path(record: Record) -> str:
    """The space-relative file a record was read from (``fields["source_path"]``; for a record
    of an index built before that field, the file its kind and ref name)."""
    given = record.fields.get("source_path")
    if isinstance(given, str) and given:
        return given
    if record.kind in _FIXED_SOURCES:
        return _FIXED_SOURCES[record.kind]
    if record.kind in _ITEM_FOLDERS:
        folder, prefix = _ITEM_FOLDERS[record.kind]
        return f"{folder}{record.ref.removeprefix(prefix)}.json"
    return record.ref


@dataclass(frozen=True)
class WorkspaceLoad:
    """Everything ``load_workspace`` read.

    Args:
        records: every indexable record, ordered by space, then kind (``KINDS`` order), then key.
        spaces: the spaces by slug.
        users: user id -> display name (from ``users.json``; empty when absent).
        report: what was skipped and why, and counts per kind.
        doubts: the parts that could not be read (``Doubt``), whose previous records an update keeps.
        contested: ids that more than one item claims (none of them is indexed, nor kept).
        orphans: ids of the digests read whose chat is missing, unusable or in doubt.
    """

    records: tuple[Record, ...]
    spaces: Mapping[str, SpaceInfo]
    users: Mapping[str, str]
    report: IndexingReport
    doubts: tuple[Doubt, ...] = ()
    contested: frozenset[str] = frozenset()
    orphans: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", tuple(self.records))
        object.__setattr__(self, "doubts", tuple(self.doubts))
        object.__setattr__(self, "contested", frozenset(self.contested))
        object.__setattr__(self, "orphans", frozenset(self.orphans))
        object.__setattr__(self, "spaces", MappingProxyType(dict(self.spaces)))
        object.__setattr__(self, "users", MappingProxyType(dict(self.users)))


def load_workspace(
    path: str | os.PathLike[str],
    *,
    now: datetime | None = None,
    policy: Policy | None = None,
) -> WorkspaceLoad:
    """Read every space of a workspace folder into Records of the seven kinds (H1).

    Args:
        path: the workspace folder (``users.json`` and one folder per space slug).
        now: the time stamped on the report (default: the current UTC time).
        policy: the never-index rules and caps (H2); default ``DEFAULT_POLICY``.

    Returns:
        A ``WorkspaceLoad``. Record ids are ``SLUG/KIND:KEY`` (e.g. ``acme/chat:ses_4f2a``,
        ``acme/file:notes/a.md``, ``acme/app:tasks#57``), unique across the workspace;
        ``fields["source_key"]`` equals the id and ``fields["content_hash"]`` is the sha256 of the text.

    Raises:
        FileNotFoundError / NotADirectoryError: when ``path`` is not a folder. Everything below
        it that cannot be read is reported in ``report.skips`` instead.
    """
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"workspace folder {str(root)!r} does not exist")
    if not root.is_dir():
        raise NotADirectoryError(f"workspace {str(root)!r} is not a folder")
    out = _Collector(policy or DEFAULT_POLICY)
    root_real = os.path.realpath(root)
    users = _guard(out, "users.json", {}, _load_users, root, root_real, out)
    spaces: dict[str, SpaceInfo] = {}
    for name in sorted(os.listdir(root)):
        entry = root / name
        kind = _lkind(entry)
        if not _utf8(name):
            out.skip(name, "bad_text", "a name that is not valid UTF-8")
            continue
        if name == "users.json":  # read (or skipped, once, with its reason) by _load_users
            continue
        if kind == "link":
            out.skip(name, "symlink", "a link at the workspace's top level is never followed")
            continue
        if kind == "special":
            out.skip(name, "special_file", _special_detail(entry))
            continue
        if kind != "dir":
            out.note(name, "not_a_space", "a top-level file; ignored")
            continue
        ruled = out.policy.dir_skip(name)
        if ruled:
            out.skip(name, *ruled)
            continue
        sp = _Space(slug=name, folder=entry, real=os.path.join(root_real, name))
        info = _guard(out, name, None, _load_space_info, sp, out)
        if info is None:
            continue
        spaces[info.slug] = info
        _load_space(sp, out)
    stamp = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    records = _in_order(out.records.values())
    report = IndexingReport(skips=tuple(out.skips), notes=tuple(out.notes), counts=_counts(records), loaded_at=stamp,
                            caps=out.policy.caps())
    return WorkspaceLoad(records=tuple(records), spaces=spaces, users=users, report=report,
                         doubts=tuple(out.doubts), contested=frozenset(out.contested), orphans=frozenset(out.orphans))


def _in_order(records: Any) -> list[Record]:
    """Records by space, then kind (``KINDS`` order), each group in the order it was read."""
    order = {kind: i for i, kind in enumerate(KINDS)}
    return sorted(records, key=lambda r: (r.space, order.get(r.kind, len(order))))  # stable


def _counts(records: Sequence[Record]) -> dict[str, int]:
    counts = {kind: 0 for kind in KINDS}
    for record in records:
        counts[record.kind] = counts.get(record.kind, 0) + 1
    return counts


def carry_over(previous: Sequence[Record], load: WorkspaceLoad) -> tuple[WorkspaceLoad, int]:
    """``load`` plus the records of a previous index that come from a part this load could not
    read (``load.doubts``), and how many were kept (issue 27 item 11: a walk error in one
    subtree never makes an update drop records from elsewhere, nor from that subtree).

    A record is kept only when its space is still loaded (a space whose settings cannot be read
    is left out whole: who may see it is unknown) and its id is claimed by nothing now. The
    digests of a kept chat are kept with it; a kept digest whose chat is gone leaves (H3), and
    one whose chat was read now takes that chat's owner and visibility (H15); a digest that is
    still there but whose chat is in doubt keeps its previous record (one whose file is gone
    leaves). Each doubt that kept something is noted ``kept_previous`` in the report."""
    if not load.doubts:
        return load, 0
    now = {r.id: r for r in load.records}

    def keepable(r: Record) -> bool:
        return r.id not in now and r.id not in load.contested and r.space in load.spaces

    kept = {r.id: r for r in previous if keepable(r) and any(d.covers(r) for d in load.doubts)}
    kept_chats = {(r.space, _ses_id(r)) for r in kept.values() if r.kind == "chat"}
    for r in previous:  # a digest read now whose chat is in doubt keeps its previous record
        if r.kind == "digest" and r.id in load.orphans and keepable(r) and (r.space, r.fields.get("chat")) in kept_chats:
            kept.setdefault(r.id, r)
    chats = {(r.space, _ses_id(r)): r for r in (*now.values(), *kept.values()) if r.kind == "chat"}
    for rid, r in list(kept.items()):
        if r.kind != "digest":
            continue
        chat = chats.get((r.space, r.fields.get("chat")))
        if chat is None:
            del kept[rid]  # its chat is gone: it leaves with it
        elif chat.id in now:
            kept[rid] = replace(r, owner=chat.owner, visibility=chat.visibility)
    if not kept:
        return load, 0
    notes = list(load.report.notes)
    for doubt in load.doubts:
        n = sum(1 for r in kept.values() if doubt.covers(r))
        if n:
            notes.append(Skip(doubt.where, "kept_previous", f"{n} record{'s' if n != 1 else ''} of the previous "
                                                            "index kept: this part could not be read now"))
    records = _in_order([*load.records, *kept.values()])
    report = replace(load.report, notes=tuple(notes), counts=_counts(records))
    return replace(load, records=tuple(records), report=report), len(kept)


def _ses_id(chat: Record) -> str:
    return str(chat.fields.get("ses_id") or chat.ref.removeprefix("chat:"))


# -- plumbing ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Space:
    slug: str
    folder: Path
    real: str  # the folder's resolved path: nothing outside it is read

    @property
    def meta(self) -> Path:
        return self.folder / ".space"


def _safe(text: str, limit: int | None = None) -> str:
    """Text that can always be encoded (lone surrogates escaped), cut to ``limit`` characters."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _rel(where: str) -> str:
    """The space-relative path of an item's label (``SLUG/.space/chats/x.json`` -> ``.space/chats/x.json``)."""
    return where.partition("/")[2]


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Collector:
    """Mutable accumulator of one load (private; the result is frozen)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.records: dict[str, Record] = {}
        self.where: dict[str, str] = {}
        self.contested: set[str] = set()
        self.skips: list[Skip] = []
        self.notes: list[Skip] = []
        self.doubts: list[Doubt] = []
        self.orphans: set[str] = set()

    def skip(self, what: str, rule: str, detail: str = "") -> None:
        self.skips.append(Skip(_safe(what), rule, _safe(detail, DETAIL_CHARS)))
        if rule in DOUBT_RULES:
            doubt = Doubt.of(what)
            if doubt is not None:
                self.doubts.append(doubt)

    def note(self, what: str, rule: str, detail: str = "") -> None:
        self.notes.append(Skip(_safe(what), rule, _safe(detail, DETAIL_CHARS)))

    def add(
        self, *, kind: str, space: str, key: str, ref: str, date: str | None, title: str, text: str,
        where: str, owner: str | None = None, visibility: str = "shared", fields: Mapping[str, Any] | None = None,
    ) -> bool:
        """Add one record; False (and a skip) when it is empty, too large, not Unicode or contested."""
        text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
        if not text:
            self.skip(where, "empty", f"{kind} {key!r} has no text")
            return False
        text, counts = self.policy.redact_secrets(text)
        title, title_counts = self.policy.redact_secrets(title) if title else (title, {})
        extra = dict(fields or {})
        if isinstance(extra.get("url"), str):
            extra["url"], url_counts = self.policy.redact_secrets(extra["url"])
        else:
            url_counts = {}
        for more in (title_counts, url_counts):
            for rule, n in more.items():
                counts[rule] = counts.get(rule, 0) + n
        if counts:
            self.note(where, "redacted", _redaction_detail(counts))
        cap = self.policy.max_item_chars
        if kind != "file" and len(text) > cap:  # files are capped by max_file_bytes
            self.skip(where, "too_large", f"{kind} text of {len(text)} characters > max_item_chars {cap}")
            return False
        rid = f"{space}/{kind}:{key}"
        if rid in self.contested:
            self.skip(where, "duplicate_id", f"{kind} {key!r} is claimed by more than one item; none is indexed")
            return False
        extra["source_key"] = rid
        try:
            extra["content_hash"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
            record = Record(
                id=rid, kind=kind, space=space, date=date, title=title or key, ref=ref, text=text,
                owner=owner, visibility=visibility, fields=extra,
            )
            json.dumps(record.to_dict(), ensure_ascii=False, default=str).encode("utf-8")
        except UnicodeEncodeError as exc:
            self.skip(where, "bad_text", f"{kind} {key!r}: {exc.reason} at position {exc.start}")
            return False
        if rid in self.records:  # never a winner: both leave (H15: the more private one must not be shadowed)
            del self.records[rid]
            self.contested.add(rid)
            detail = f"{kind} {key!r} is claimed by more than one item; none is indexed"
            self.skip(self.where.pop(rid), "duplicate_id", detail)
            self.skip(where, "duplicate_id", detail)
            return False
        self.records[rid] = record
        self.where[rid] = where
        return True


def _redaction_detail(counts: Mapping[str, int]) -> str:
    """``3 secrets replaced by [redacted] (key_value 2, jwt 1)``: counts per rule, never a value."""
    total = sum(counts.values())
    per_rule = ", ".join(f"{rule} {n}" for rule, n in sorted(counts.items()))
    return f"{total} secret{'s' if total != 1 else ''} replaced by [redacted] ({per_rule})"


def _guard(out: _Collector, where: str, default: T, fn: Callable[..., T], *args: Any) -> T:
    """Run one loader; any error becomes a ``load_error`` skip of ``where`` (H2: never fails the build)."""
    try:
        return fn(*args)
    except RecursionError:
        out.skip(where, "load_error", "nested too deeply")
    except Exception as exc:  # noqa: BLE001 - one bad item never fails the whole build
        out.skip(where, "load_error", f"{type(exc).__name__}: {exc}")
    return default


_MISSING = object()


def _lkind(path: Path) -> str:
    """``missing`` | ``link`` | ``dir`` | ``file`` | ``special`` | ``error``, never following a link."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError):
        return "error"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "special"


def _special_detail(path: Path) -> str:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = 0
    what = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "not a regular file")
    return f"{what}; never opened"


def _inside(path: Path, base_real: str) -> bool:
    real = os.path.realpath(path)
    return real == base_real or real.startswith(base_real.rstrip(os.sep) + os.sep)


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def _hard_link_detail(links: int) -> str:
    return f"{links} hard links: the same file may sit in another space, so it is never read"


def _read_bytes(path: Path, where: str, out: _Collector, base_real: str, cap: int, cap_name: str) -> bytes | None:
    """The bytes of a regular file inside ``base_real``, at most ``cap``; else a skip and None.

    A link is never followed, a FIFO / socket / device is never opened (no hang), a path that
    resolves outside its space folder is refused, and a file over ``cap`` is not read.
    """
    fd = _open_item(path, where, out, base_real, cap, cap_name)
    if fd is None:
        return None
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        out.skip(where, "unreadable", str(exc.strerror or exc))
        return None
    finally:
        os.close(fd)
    if size > cap:
        out.skip(where, "too_large", f"more than {cap_name} {cap} bytes")
        return None
    return b"".join(chunks)


def _open_item(path: Path, where: str, out: _Collector, base_real: str, cap: int | None = None,
               cap_name: str = "") -> int | None:
    """A descriptor on a regular file inside ``base_real`` (of at most ``cap`` bytes when given);
    else a skip (naming the rule) and None. The caller closes it."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        out.skip(where, "unreadable", str(exc.strerror or exc))
        return None
    if stat.S_ISLNK(st.st_mode):
        out.skip(where, "symlink", "a link is never followed")
        return None
    if not stat.S_ISREG(st.st_mode):
        out.skip(where, "special_file", _special_detail(path))
        return None
    if not _inside(path, base_real):
        out.skip(where, "symlink", "resolves outside its own space folder; never read")
        return None
    if st.st_nlink > 1:
        out.skip(where, "hard_link", _hard_link_detail(st.st_nlink))
        return None
    if cap is not None and st.st_size > cap:
        out.skip(where, "too_large", f"{st.st_size} bytes > {cap_name} {cap}")
        return None
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            out.skip(where, "symlink", "a link is never followed")
        else:
            out.skip(where, "unreadable", str(exc.strerror or exc))
        return None
    try:
        fst = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        out.skip(where, "unreadable", str(exc.strerror or exc))
        return None
    if not stat.S_ISREG(fst.st_mode):
        os.close(fd)
        out.skip(where, "special_file", "not a regular file; never read")
        return None
    if fst.st_nlink > 1:
        os.close(fd)
        out.skip(where, "hard_link", _hard_link_detail(fst.st_nlink))
        return None
    return fd


def _read_text(
    path: Path, where: str, out: _Collector, base_real: str, *, rule_on_bad: str, cap: int, cap_name: str,
) -> tuple[str, str] | None:
    """``(text, encoding)`` of a text file (any supported encoding, H1), else a skip and None.

    UTF-8 with a few stray invalid bytes is read with U+FFFD in their place and noted ``decoded``.
    """
    data = _read_bytes(path, where, out, base_real, cap, cap_name)
    if data is None:
        return None
    decoded = decode_text(data, out.policy.text_encodings)
    if decoded.text is None:
        out.skip(where, rule_on_bad, decoded.reason or "not text")
        return None
    if decoded.replaced:
        out.note(where, "decoded", f"UTF-8 with {decoded.replaced} invalid byte sequence"
                                   f"{'s' if decoded.replaced != 1 else ''} replaced by U+FFFD")
    return decoded.text, decoded.encoding or "utf_8"


def _read_json(path: Path, where: str, out: _Collector, base_real: str, *, cap: int | None = None) -> Any:
    cap = cap or out.policy.max_file_bytes
    read = _read_text(path, where, out, base_real, rule_on_bad="bad_json", cap=cap,
                      cap_name="max_file_bytes" if cap == out.policy.max_file_bytes else "max_log_bytes")
    if read is None:
        return _MISSING
    return _parse_json(read[0], where, out)


def _parse_json(text: str, where: str, out: _Collector) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        out.skip(where, "bad_json", f"line {exc.lineno} column {exc.colno}: {exc.msg}")
    except RecursionError:
        out.skip(where, "bad_json", "nested too deeply")
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        out.skip(where, "bad_json", str(exc))
    return _MISSING


def _iso_day(value: Any) -> str | None:
    """The ISO day (``YYYY-MM-DD``) of an ISO date or date-time, in its own offset; else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        pass
    match = re.match(r"(\d{4}-\d{2}-\d{2})", value)
    if match:
        try:
            return date.fromisoformat(match.group(1)).isoformat()
        except ValueError:
            return None
    return None


def _short(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = re.sub(r"^(?:#{1,6}[ \t]+|[-*•>][ \t]+|\d+[.)][ \t]+)", "", line).strip()
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)):
        return "; ".join(s for s in (_as_text(v) for v in value) if s)
    return json.dumps(value, ensure_ascii=False)


def _str(value: Any) -> str | None:
    """A non-empty string, else None (fields given with a wrong type are ignored, never fatal)."""
    return value if isinstance(value, str) and value else None


def _lang(obj: Mapping[str, Any]) -> dict[str, Any]:
    lang = obj.get("lang")
    return {"lang": lang} if isinstance(lang, str) and lang else {}


def _json_files(folder: Path, where: str, out: _Collector) -> list[Path]:
    """The ``*.json`` entries of a folder, sorted; a folder that is a link is never listed."""
    kind = _lkind(folder)
    if kind == "missing":
        return []
    if kind == "link":
        out.skip(where + "/", "symlink", "a folder link is never followed")
        return []
    if kind == "special":
        out.skip(where, "special_file", _special_detail(folder))
        return []
    if kind != "dir":
        out.skip(where, "bad_shape", "expected a folder")
        return []
    try:
        names = os.listdir(folder)
    except OSError as exc:
        out.skip(where + "/", "unreadable", str(exc.strerror or exc))
        return []
    return [folder / n for n in sorted(names) if n.endswith(".json")]


# -- users and spaces -------------------------------------------------------------------------

def _load_users(root: Path, root_real: str, out: _Collector) -> dict[str, str]:
    path = root / "users.json"
    if _lkind(path) == "missing":
        return {}
    data = _read_json(path, "users.json", out, root_real)
    if data is _MISSING:
        return {}
    if not isinstance(data, list):
        out.skip("users.json", "bad_shape", "expected a list of {\"id\", \"name\"}")
        return {}
    users: dict[str, str] = {}
    for i, item in enumerate(data):
        if isinstance(item, dict) and _str(item.get("id")) and _utf8(item["id"]):
            name = _as_text(item.get("name"))
            users[item["id"]] = name if name and _utf8(name) else item["id"]
        else:
            out.skip(f"users.json[{i}]", "bad_shape", "a user needs a string \"id\"")
    return users


def _load_space_info(sp: _Space, out: _Collector) -> SpaceInfo | None:
    slug = sp.slug
    meta_kind = _lkind(sp.meta)
    if meta_kind == "missing":
        out.skip(slug, "not_a_space", "no .space/space.json")
        return None
    if meta_kind == "link":
        out.skip(f"{slug}/.space", "symlink", "the .space folder is a link; never followed")
        out.skip(slug, "bad_space", ".space is a link, so membership is unknown; the whole space is left out")
        return None
    if meta_kind != "dir":
        out.skip(slug, "bad_space", ".space is not a folder; the whole space is left out")
        return None
    path = sp.meta / "space.json"
    if _lkind(path) == "missing":
        out.skip(slug, "not_a_space", "no .space/space.json")
        return None
    data = _read_json(path, f"{slug}/.space/space.json", out, sp.real)
    if data is _MISSING:
        out.skip(slug, "bad_space", "space.json unusable; the whole space is left out")
        return None
    problem = _space_problem(data)
    if problem:
        out.skip(slug, "bad_space", f"space.json: {problem}; the whole space is left out")
        return None
    if data.get("slug") not in (None, slug):
        out.note(slug, "bad_shape", f"space.json slug {data['slug']!r} differs from the folder; using {slug!r}")
    title = _as_text(data.get("title"))
    return SpaceInfo(
        slug=slug,
        title=title if title and _utf8(title) else slug,
        members=tuple(data.get("members") or ()),
        container=data.get("container", "shared"),
        history_search=data.get("history_search", True),
    )


def _space_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "expected a JSON object"
    members = data.get("members", [])
    if not isinstance(members, list) or not all(isinstance(m, str) and _utf8(m) for m in members):
        return "members must be a list of user ids"
    container = data.get("container", "shared")
    if not isinstance(container, str) or container not in CONTAINERS:
        return f"container must be one of {CONTAINERS}, got {container!r}"
    if not isinstance(data.get("history_search", True), bool):
        return "history_search must be true or false"
    return None


def _load_space(sp: _Space, out: _Collector) -> None:
    slug = sp.slug
    file_dates = _guard(out, f"{slug}/.space/files.json", {}, _load_file_dates, sp, out)
    chats = _guard(out, f"{slug}/.space/chats/", _Chats(), _load_chats, sp, out)
    _guard(out, f"{slug}/.space/digests/", None, _load_digests, sp, chats, out)
    _guard(out, f"{slug}/log.md", None, _load_log, sp, file_dates, out)
    _guard(out, f"{slug}/", None, _load_files, sp, file_dates, out)
    _guard(out, f"{slug}/.space/sources.jsonl", None, _load_sources, sp, out)
    _guard(out, f"{slug}/.space/pages/", None, _load_pages, sp, out)
    _guard(out, f"{slug}/.space/app.sqlite", None, _load_app, sp, out)


def _load_file_dates(sp: _Space, out: _Collector) -> dict[str, str]:
    path = sp.meta / "files.json"
    if _lkind(path) == "missing":
        return {}
    where = f"{sp.slug}/.space/files.json"
    data = _read_json(path, where, out, sp.real)
    if data is _MISSING:
        return {}
    if not isinstance(data, dict):
        out.skip(where, "bad_shape", "expected {\"path\": \"ISO time\"}; using file times")
        return {}
    return {str(k).replace("\\", "/").removeprefix("./"): v for k, v in data.items() if isinstance(v, str)}


# -- chats and digests ------------------------------------------------------------------------

@dataclass(frozen=True)
class _ChatMeta:
    ses_id: str
    title: str
    owner: str | None
    visibility: str
    run: str


@dataclass
class _Chats:
    """The chats of a space whose owner and visibility are known, and the ids in doubt."""

    known: dict[str, _ChatMeta] | None = None
    contested: dict[str, int] | None = None

    def __post_init__(self) -> None:
        self.known = self.known or {}
        self.contested = self.contested or {}


def _load_chats(sp: _Space, out: _Collector) -> _Chats:
    """Load the chats; an id claimed by two chat files (or by a chat and an unusable chat file of
    that name) is loaded for neither, and their digests are left out: no winner (H15)."""
    slug = sp.slug
    candidates: list[tuple[str, dict[str, Any], str]] = []
    claims: dict[str, list[str]] = {}
    for path in _json_files(sp.meta / "chats", f"{slug}/.space/chats", out):
        where = f"{slug}/.space/chats/{path.name}"
        data = _guard(out, where, _MISSING, _read_json, path, where, out, sp.real)
        problem = "unusable" if data is _MISSING else _chat_problem(data)
        if problem:
            if data is not _MISSING:
                out.skip(where, "bad_shape", problem)
            # unusable: it may be the chat of its file name, or of the id it names; doubt stays doubt
            for claimed in {path.stem, _str(data.get("ses_id")) if isinstance(data, dict) else None} - {None}:
                claims.setdefault(claimed, []).append(where)
            continue
        ses_id = data.get("ses_id") or path.stem
        if not plain_id(ses_id):
            out.skip(where, "bad_id", _bad_id_detail("ses_id", ses_id) + ", nor its digests")
            continue
        claims.setdefault(ses_id, []).append(where)
        candidates.append((where, data, ses_id))
    chats = _Chats(contested={sid: len(ws) for sid, ws in claims.items() if len(ws) > 1})
    out.contested.update(f"{slug}/chat:{sid}" for sid in chats.contested)
    for where, data, ses_id in candidates:
        if ses_id in chats.contested:
            out.skip(where, "duplicate_id", f"chat {ses_id!r} is claimed by {chats.contested[ses_id]} chat files "
                                            f"({', '.join(sorted(claims[ses_id]))}); none is indexed, nor its digests")
            continue
        meta = _guard(out, where, None, _load_chat, slug, where, data, ses_id, out)
        if meta is not None:
            chats.known[ses_id] = meta
    return chats


def _load_chat(slug: str, where: str, data: dict[str, Any], ses_id: str, out: _Collector) -> _ChatMeta | None:
    owner = data.get("owner")
    visibility = data.get("visibility") or ("personal" if owner else "shared")
    run = data.get("run") or "chat"
    if not isinstance(run, str):
        out.note(where, "bad_shape", "run is not a string; read as \"chat\"")
        run = "chat"
    elif run not in RUNS:
        out.note(where, "bad_shape", f"run {run!r} is not one of {RUNS}; kept as given")
    if not all(_utf8(s) for s in (ses_id, owner or "", run)):
        out.skip(where, "bad_text", "ses_id, owner or run is not valid Unicode; the chat and its digests are left out")
        return None
    title = _as_text(data.get("title")) or ses_id
    chat = _ChatMeta(ses_id, title if _utf8(title) else ses_id, owner, visibility, run)
    lines = [chat.title]
    stamps: list[str] = []
    cap = out.policy.max_message_chars
    for number, msg in enumerate(data.get("messages", []), start=1):
        if not isinstance(msg, dict):
            out.note(where, "bad_shape", "a message that is not an object was left out")
            continue
        body = _as_text(msg.get("text"))
        ts = _str(msg.get("ts"))
        if ts and _iso_day(ts):
            stamps.append(ts)
        if len(body) > cap:
            out.skip(f"{where}:message {number}", "too_large",
                     f"a message of {len(body)} characters > max_message_chars {cap}; left out of the chat")
            continue
        if body:
            who = _str(msg.get("author")) or _str(msg.get("role")) or "unknown"
            lines.append(f"{who}: {body}")
    fields: dict[str, Any] = {"ses_id": ses_id, "run": run, "messages": len(lines) - 1, "source_path": _rel(where),
                              **_lang(data)}
    if stamps:
        fields["started"], fields["ts"] = stamps[0], stamps[-1]
    out.add(
        kind="chat", space=slug, key=ses_id, ref=f"chat:{ses_id}",
        date=_iso_day(stamps[-1]) if stamps else _iso_day(data.get("ts")), title=chat.title,
        text="\n".join(lines), where=where, owner=owner, visibility=visibility, fields=fields,
    )
    # The chat's owner and visibility are known even when its text was skipped (too large, bad
    # text): its digests keep them (H15).
    return chat


def _chat_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "expected a JSON object"
    if "ses_id" in data and (not isinstance(data["ses_id"], str) or not data["ses_id"]):
        return "ses_id must be a non-empty string"
    if not isinstance(data.get("messages", None), list):
        return "messages must be a list"
    owner = data.get("owner")
    if owner is not None and (not isinstance(owner, str) or not owner):
        return "owner must be a user id"
    visibility = data.get("visibility")
    if visibility is not None and (not isinstance(visibility, str) or visibility not in VISIBILITIES):
        return f"visibility must be one of {VISIBILITIES}, got {visibility!r}"
    if (visibility or ("personal" if owner else "shared")) == "personal" and not owner:
        return "a personal chat needs an owner"
    return None


def _load_digests(sp: _Space, chats: _Chats, out: _Collector) -> None:
    for path in _json_files(sp.meta / "digests", f"{sp.slug}/.space/digests", out):
        where = f"{sp.slug}/.space/digests/{path.name}"
        _guard(out, where, None, _load_digest, sp, path, where, chats, out)


def _load_digest(sp: _Space, path: Path, where: str, chats: _Chats, out: _Collector) -> None:
    data = _read_json(path, where, out, sp.real)
    if data is _MISSING:
        return
    if not isinstance(data, dict) or not _str(data.get("ses_id")):
        out.skip(where, "bad_shape", "a digest needs a JSON object with a string ses_id")
        return
    turn_id = _str(data.get("turn_id")) or path.stem
    ses_id = data["ses_id"]
    for name, value in (("turn_id", turn_id), ("ses_id", ses_id)):
        if not plain_id(value):
            out.skip(where, "bad_id", _bad_id_detail(name, value))
            return
    chat = chats.known.get(ses_id)
    if chat is None:
        out.orphans.add(f"{sp.slug}/digest:{turn_id}")
        if ses_id in chats.contested:
            out.skip(where, "orphan_digest", f"chat {ses_id!r} is claimed by {chats.contested[ses_id]} chat files; "
                                             "its owner and visibility are in doubt")
        else:
            out.skip(where, "orphan_digest", f"chat {ses_id!r} is missing or unusable")
        return
    owner, visibility = chat.owner, chat.visibility
    d_owner, d_visibility = data.get("owner"), data.get("visibility")
    if d_owner is not None or d_visibility is not None:  # a digest that says who it is for: the most private wins
        if (d_owner is not None and not _str(d_owner)) or (d_visibility is not None and d_visibility not in VISIBILITIES):
            out.skip(where, "bad_shape", "a digest's owner / visibility, when given, must be a user id / one of "
                                         f"{VISIBILITIES}")
            return
        if visibility == "personal":
            if d_owner not in (None, owner):
                out.skip(where, "bad_shape", f"the digest names owner {d_owner!r}, its personal chat {owner!r}; "
                                             "whose it is is in doubt")
                return
        elif d_visibility == "personal" or (d_visibility is None and d_owner is not None):
            owner = d_owner or owner
            if owner is None:
                out.skip(where, "bad_shape", "a personal digest needs an owner")
                return
            visibility = "personal"
    lines = [f"{label}: {_as_text(data.get(key))}" for key, label in DIGEST_PARTS if _as_text(data.get(key))]
    if not lines:
        out.skip(where, "empty", f"digest {turn_id!r} has no asked/done/left/decided")
        return
    lines.append(f"Chat: chat:{chat.ses_id}")  # H5
    fields: dict[str, Any] = {"chat": chat.ses_id, "turn": turn_id, "run": chat.run, "source_path": _rel(where),
                              **_lang(data)}
    if _str(data.get("ts")):
        fields["ts"] = data["ts"]
    out.add(
        kind="digest", space=sp.slug, key=turn_id, ref=f"digest:{turn_id}", date=_iso_day(data.get("ts")),
        title=_short(_as_text(data.get("asked"))) or chat.title, text="\n".join(lines), where=where,
        owner=owner, visibility=visibility, fields=fields,  # H15: the chat's owner and visibility
    )


# -- log.md and files -------------------------------------------------------------------------

def _file_day(path: Path, rel: str, file_dates: Mapping[str, str]) -> tuple[str | None, str | None]:
    stamp = file_dates.get(rel)
    if stamp and _iso_day(stamp):
        return _iso_day(stamp), stamp
    try:
        mtime = datetime.fromtimestamp(os.lstat(path).st_mtime, timezone.utc).isoformat(timespec="seconds")
    except (OSError, OverflowError, ValueError):
        return None, None
    return _iso_day(mtime), mtime


def _load_log(sp: _Space, file_dates: Mapping[str, str], out: _Collector) -> None:
    slug = sp.slug
    path = sp.folder / "log.md"
    where = f"{slug}/log.md"
    kind = _lkind(path)
    if kind in ("missing", "dir"):
        return
    policy = out.policy
    read = _read_text(path, where, out, sp.real, rule_on_bad="binary", cap=policy.max_log_bytes,
                      cap_name="max_log_bytes")
    if read is None:
        return
    text, encoding = read
    if encoding != "utf_8":
        out.note(where, "decoded", f"decoded from {encoding}")
    days: dict[str, list[str]] = {}
    heads: dict[str, str] = {}
    current: str | None = None
    preamble: list[str] = []
    for line in text.splitlines():
        match = LOG_HEADING.match(line)
        if match and _iso_day(match.group(1)):
            current = match.group(1)
            if current in days:
                out.note(where, "duplicate", f"## {current} appears more than once; sections merged")
                days[current].append("")
            else:
                days[current] = []
                heads[current] = match.group(2)
        if current is None:
            preamble.append(line)
        else:
            days[current].append(line)
    if not days:
        day, stamp = _file_day(path, "log.md", file_dates)
        if text.strip():
            out.note(where, "log_no_headings", "no '## YYYY-MM-DD' heading; indexed whole as one log record (ref log.md)")
        secret = policy.secret_content(text)
        if secret:
            out.skip(where, "secret_content", f"holds {secret}")
            return
        out.add(
            kind="log", space=slug, key="log.md", ref="log.md", date=day, title="log.md", text=text,
            where=where, fields={"source_path": "log.md", "whole_file": True, **({"modified": stamp} if stamp else {})},
        )
        return
    if any(ln.strip() and not ln.lstrip().startswith("#") for ln in preamble):
        out.skip(where, "log_preamble", f"{sum(1 for ln in preamble if ln.strip())} lines before the first day heading")
    for day in sorted(days):
        body = "\n".join(days[day])
        rest = "\n".join(days[day][1:])
        secret = policy.secret_content(body)
        if secret:
            out.skip(f"{where}#{day}", "secret_content", f"holds {secret}")
            continue
        out.add(
            kind="log", space=slug, key=day, ref=f"log.md#{day}", date=day,
            title=heads[day] or _short(rest) or f"log.md {day}", text=body, where=f"{where}#{day}",
            fields={"source_path": "log.md"},
        )


def _load_files(sp: _Space, file_dates: Mapping[str, str], out: _Collector) -> None:
    """Every file of the space (``.space/`` and ``log.md`` aside), folder by folder, in name order.

    The walk keeps its own stack (no recursion: a folder nested thousands of levels deep cannot
    stop it), and a folder deeper than ``Policy.max_depth`` is skipped alone (``too_deep``), as is
    one that cannot be listed (``unreadable``): the rest of the space is read all the same."""
    slug = sp.slug
    for rel_dir, names in _walk(sp, out):
        here = sp.folder / rel_dir if rel_dir else sp.folder
        for name in names:
            rel = rel_dir + name
            if rel == "log.md":
                continue
            _guard(out, f"{slug}/{rel}", None, _load_file, sp, here / name, rel, file_dates, out)


def _walk(sp: _Space, out: _Collector) -> Iterator[tuple[str, list[str]]]:
    """``(relative folder, its file names)`` for each folder of the space that is read, top down,
    the folders of each in name order (the order ``os.walk`` gives); never follows a link."""
    policy = out.policy
    slug = sp.slug
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        here = sp.folder / rel_dir if rel_dir else sp.folder
        try:
            with os.scandir(here) as entries:
                listed = sorted(e.name for e in entries)
        except OSError as exc:
            out.skip(f"{slug}/{rel_dir}", "unreadable", str(exc.strerror or exc))
            continue
        files: list[str] = []
        folders: list[str] = []
        for name in listed:
            kind = _lkind(here / name)
            if kind != "dir" and not (kind == "link" and os.path.isdir(here / name)):
                files.append(name)  # a file, a file link, or something else: judged, never opened unless regular
                continue
            if not rel_dir and name == ".space":
                continue
            ruled = policy.dir_skip(name)
            if kind == "link":
                out.skip(f"{slug}/{rel_dir}{name}/", "symlink", "a folder link is never followed")
            elif ruled:
                out.skip(f"{slug}/{rel_dir}{name}/", *ruled)
            elif depth + 1 > policy.max_depth:
                out.skip(f"{slug}/{rel_dir}{name}/", "too_deep",
                         f"a folder {depth + 1} levels deep > max_depth {policy.max_depth}; its files are not read")
            else:
                folders.append(name)
        yield rel_dir, files
        stack.extend((f"{rel_dir}{name}/", depth + 1) for name in reversed(folders))


def _load_file(sp: _Space, path: Path, rel: str, file_dates: Mapping[str, str], out: _Collector) -> None:
    slug = sp.slug
    where = f"{slug}/{rel}"
    policy = out.policy
    kind = _lkind(path)
    if kind == "link":
        out.skip(where, "symlink", "a file link is never followed")
        return
    if kind == "special":
        out.skip(where, "special_file", _special_detail(path))
        return
    if not _utf8(rel):
        out.skip(where, "bad_text", "the file's path is not valid UTF-8")
        return
    ruled = policy.path_skip(rel)
    if ruled:
        out.skip(where, *ruled)
        return
    read = _read_text(path, where, out, sp.real, rule_on_bad="binary", cap=policy.max_file_bytes,
                      cap_name="max_file_bytes")
    if read is None:
        return
    text, encoding = read
    secret = policy.secret_content(text)
    if secret:
        out.skip(where, "secret_content", f"holds {secret}")
        return
    if encoding != "utf_8" and text.strip():
        out.note(where, "decoded", f"decoded from {encoding}")
    day, stamp = _file_day(path, rel, file_dates)
    fields: dict[str, Any] = {"source_path": rel}
    if stamp:
        fields["modified"] = stamp
    out.add(
        kind="file", space=slug, key=rel, ref=rel, date=day, title=_file_title(path.name, text),
        text=text, where=where, fields=fields,
    )


def _file_title(name: str, text: str) -> str:
    lower = name.lower()
    if lower.endswith((".md", ".markdown")):
        match = re.search(r"^#[ \t]+(.+?)\s*$", text, re.MULTILINE)
        if match:
            return f"{name} · {_short(match.group(1))}"
    if lower.endswith((".html", ".htm")):
        match = re.search(r"<title[^>]*>(.*?)</title>", text[:200_000], re.IGNORECASE | re.DOTALL)
        if match and match.group(1).strip():
            return f"{name} · {_short(match.group(1))}"
    return name


# -- sources and pages ------------------------------------------------------------------------

_SNIFF_BYTES = 1 << 16
"""How much of ``sources.jsonl`` is read first to tell UTF-8 (streamed) from other encodings."""


def _load_sources(sp: _Space, out: _Collector) -> None:
    """``.space/sources.jsonl``, streamed line by line (issue 27 item 17): a line longer than
    ``max_item_chars`` is skipped without being held whole, and the lines past
    ``max_log_bytes`` of kept text are skipped together; the rest is indexed. A file not in
    UTF-8 (UTF-16, cp1251, ...) is read whole, up to ``max_log_bytes``, and decoded."""
    path = sp.meta / "sources.jsonl"
    if _lkind(path) == "missing":
        return
    where = f"{sp.slug}/.space/sources.jsonl"
    policy = out.policy
    fd = _open_item(path, where, out, sp.real)
    if fd is None:
        return
    with os.fdopen(fd, "rb") as fh:
        if not _utf8_head(fh.read(_SNIFF_BYTES)):
            fh.close()
            read = _read_text(path, where, out, sp.real, rule_on_bad="bad_json", cap=policy.max_log_bytes,
                              cap_name="max_log_bytes")
            if read is not None:
                _load_source_lines(sp.slug, where, enumerate(read[0].splitlines(), start=1), out)
            return
        fh.seek(0)
        try:
            _load_source_lines(sp.slug, where, _stream_lines(fh, where, out), out)
        except OSError as exc:
            out.skip(where, "unreadable", str(exc.strerror or exc))


def _utf8_head(head: bytes) -> bool:
    """Whether the start of a file reads as UTF-8 (a BOM allowed, a character cut at the end allowed)."""
    if b"\x00" in head or head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def _stream_lines(fh: Any, where: str, out: _Collector) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line of a UTF-8 file, read line by line. A line longer than
    ``max_item_chars`` is skipped as it is read (never held whole); once the lines kept hold more
    than ``max_log_bytes``, the rest of the file is skipped with one ``too_large``."""
    policy = out.policy
    line_cap = 4 * policy.max_item_chars  # bytes: no line of max_item_chars characters is longer
    kept = 0
    number = 0
    while True:
        raw = fh.readline(line_cap + 1)
        if not raw:
            return
        number += 1
        if len(raw) > line_cap and not raw.endswith(b"\n"):
            size = len(raw)
            while raw and not raw.endswith(b"\n"):  # the rest of that line, read and dropped
                raw = fh.readline(1 << 20)
                size += len(raw)
            out.skip(f"{where}:{number}", "too_large", f"a line of {size} bytes > max_item_chars "
                                                       f"{policy.max_item_chars} characters")
            continue
        kept += len(raw)
        if kept > policy.max_log_bytes:
            out.skip(f"{where}:{number}", "too_large", f"this line and the rest of the file: more than max_log_bytes "
                                                       f"{policy.max_log_bytes} bytes of sources")
            return
        if number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        text = _line_text(raw, f"{where}:{number}", out)
        if text is not None:
            yield number, text


def _line_text(raw: bytes, label: str, out: _Collector) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    decoded = decode_text(raw, out.policy.text_encodings)
    if decoded.text is None:
        out.skip(label, "bad_json", decoded.reason or "not text")
        return None
    if decoded.replaced:
        out.note(label, "decoded", "UTF-8 with invalid bytes replaced by U+FFFD")
    return decoded.text


def _load_source_lines(slug: str, where: str, lines: Any, out: _Collector) -> None:
    policy = out.policy
    for number, line in lines:
        if not line.strip():
            continue
        label = f"{where}:{number}"
        if len(line) > policy.max_item_chars:
            out.skip(label, "too_large", f"a line of {len(line)} characters > max_item_chars {policy.max_item_chars}")
            continue
        _guard(out, label, None, _load_source, slug, label, line, out)


def _load_source(slug: str, label: str, line: str, out: _Collector) -> None:
    item = _parse_json(line, label, out)
    if item is _MISSING:
        return
    if not isinstance(item, dict) or not _str(item.get("uuid")):
        out.skip(label, "bad_shape", "a source needs a JSON object with a string uuid")
        return
    uuid = item["uuid"]
    if not plain_id(uuid):
        out.skip(label, "bad_id", _bad_id_detail("uuid", uuid))
        return
    title, url, summary = (_as_text(item.get(k)) for k in ("title", "url", "summary"))
    fields = {"url": url} if url else {}
    out.add(
        kind="source", space=slug, key=uuid, ref=f"source:{uuid}", date=_iso_day(item.get("added")),
        title=title or url or uuid, text="\n".join(s for s in (title, url, summary) if s),
        where=label, fields={**fields, "source_path": ".space/sources.jsonl", **_lang(item)},
    )


def _load_pages(sp: _Space, out: _Collector) -> None:
    for path in _json_files(sp.meta / "pages", f"{sp.slug}/.space/pages", out):
        where = f"{sp.slug}/.space/pages/{path.name}"
        _guard(out, where, None, _load_page, sp, path, where, out)


def _load_page(sp: _Space, path: Path, where: str, out: _Collector) -> None:
    data = _read_json(path, where, out, sp.real)
    if data is _MISSING:
        return
    if not isinstance(data, dict):
        out.skip(where, "bad_shape", "a page must be a JSON object")
        return
    uuid = _str(data.get("uuid")) or path.stem
    if not plain_id(uuid):
        out.skip(where, "bad_id", _bad_id_detail("uuid", uuid))
        return
    title = _as_text(data.get("title"))
    body = data.get("body")
    body_text = body.strip() if isinstance(body, str) else _as_text(body)
    fields = {"type": _str(data.get("type")) or "page", "source_path": _rel(where), **_lang(data)}
    out.add(
        kind="page", space=sp.slug, key=uuid, ref=f"page:{uuid}", date=_iso_day(data.get("updated")),
        title=title or uuid, text="\n\n".join(s for s in (title, body_text) if s), where=where, fields=fields,
    )


# -- app.sqlite -------------------------------------------------------------------------------

def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _load_app(sp: _Space, out: _Collector) -> None:
    """Read ``.space/app.sqlite`` without writing anything into the workspace.

    SQLite opening a WAL-mode database, even read-only, creates ``-wal`` / ``-shm`` beside it. So
    a database with no ``-wal`` / ``-journal`` beside it is opened ``immutable`` (nothing is ever
    written); one with a ``-wal`` (data not yet checkpointed) or a ``-journal`` is copied, with it,
    into a private temporary folder and the copy is read (and removed afterwards).
    """
    path = sp.meta / "app.sqlite"
    kind = _lkind(path)
    if kind == "missing":
        return
    where = f"{sp.slug}/.space/app.sqlite"
    if kind == "link":
        out.skip(where, "symlink", "a link is never followed")
        return
    if kind != "file":
        out.skip(where, "special_file", _special_detail(path))
        return
    if not _inside(path, sp.real):
        out.skip(where, "symlink", "resolves outside its own space folder; never opened")
        return
    links = _links(path)
    if links > 1:
        out.skip(where, "hard_link", _hard_link_detail(links))
        return
    sides: dict[str, Path] = {}
    for suffix in ("-wal", "-shm", "-journal"):  # SQLite opens these too
        side = path.with_name(path.name + suffix)
        side_kind = _lkind(side)
        if side_kind == "link":
            out.skip(where, "symlink", f"app.sqlite{suffix} is a link; the database is not opened")
            return
        if side_kind in ("special", "dir"):
            out.skip(where, "special_file", f"app.sqlite{suffix} is not a regular file; the database is not opened")
            return
        if side_kind == "file":
            side_links = _links(side)
            if side_links > 1:
                out.skip(where, "hard_link", f"app.sqlite{suffix}: {_hard_link_detail(side_links)}; "
                                             "the database is not opened")
                return
            sides[suffix] = side
    if "-wal" not in sides and "-journal" not in sides:
        _read_app(Path(os.path.realpath(path)).as_uri() + "?mode=ro&immutable=1", sp.slug, where, out)
        return
    with tempfile.TemporaryDirectory(prefix="searchkit-app-") as tmp:
        copy = Path(tmp) / "app.sqlite"
        for src, dst in [(path, copy)] + [(sides[x], Path(tmp) / f"app.sqlite{x}") for x in ("-wal", "-journal")
                                           if x in sides]:
            problem = _copy_file(src, dst)
            if problem:
                out.skip(where, *problem)
                return
        # a private copy: SQLite may replay its -wal / -journal and write beside it, in tmp only
        _read_app(copy.as_uri(), sp.slug, where, out)


def _links(path: Path) -> int:
    try:
        return os.lstat(path).st_nlink
    except OSError:
        return 1


def _copy_file(src: Path, dst: Path) -> tuple[str, str] | None:
    """Copy a regular file (never through a link); ``(rule, detail)`` when that cannot be done."""
    try:
        fd = os.open(src, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink", f"{src.name} is a link; the database is not opened"
        return "unreadable", f"{src.name}: {exc.strerror or exc}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "special_file", f"{src.name} is not a regular file; the database is not opened"
        if st.st_nlink > 1:
            return "hard_link", f"{src.name}: {_hard_link_detail(st.st_nlink)}; the database is not opened"
        with open(dst, "wb") as target:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                target.write(chunk)
    except OSError as exc:
        return "unreadable", f"{src.name}: {exc.strerror or exc}"
    finally:
        os.close(fd)
    return None


def _read_app(uri: str, slug: str, where: str, out: _Collector) -> None:
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", str(exc))
        return
    conn.text_factory = lambda b: b.decode("utf-8", "replace")  # a cell that is not UTF-8 never fails a table
    try:
        _load_tables(conn, slug, where, out)
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", str(exc))
    finally:
        conn.close()


def _load_tables(conn: sqlite3.Connection, slug: str, where: str, out: _Collector) -> None:
    policy = out.policy
    try:
        listed = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", f"cannot list tables: {exc}")
        return
    names = [name for name, _ in listed]
    virtual = {name for name, sql in listed if isinstance(sql, str) and re.match(r"\s*CREATE\s+VIRTUAL\s", sql, re.I)}
    types: dict[str, str] = {}
    try:  # SQLite >= 3.37 names shadow tables itself
        types = {row[1]: row[2] for row in conn.execute("PRAGMA table_list") if row[0] == "main"}
    except sqlite3.Error:
        pass
    virtual |= {n for n, t in types.items() if t == "virtual"}
    columns: dict[str, list[str]] = {}
    modified: dict[str, str | None] = {}
    for table in names:
        if not plain_id(table):
            out.skip(f"{where}:{_printable(table)}", "bad_id", _bad_id_detail("table name", table))
            continue
        label = f"{where}:{table}"
        if table in virtual:
            out.skip(label, "virtual_table", "a virtual table mirrors or indexes other content; never indexed")
            continue
        if types.get(table) == "shadow":
            out.skip(label, "shadow_table", "a shadow table of a virtual table")
            continue
        try:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({_quote(table)})")]
        except sqlite3.Error as exc:
            out.skip(label, "bad_sqlite", str(exc))
            continue
        ruled = policy.table_skip(table, cols, virtual)
        if ruled:
            out.skip(label, *ruled)
            continue
        if _column(cols, "id") is None:
            out.skip(label, "no_id_column", f"columns: {cols}")
            continue
        updated = _column(cols, "updated_at")
        try:
            newest = conn.execute(f"SELECT MAX({_quote(updated)}) FROM {_quote(table)}").fetchone()[0] if updated else None
        except sqlite3.Error as exc:
            out.skip(label, "bad_sqlite", str(exc))
            continue
        if updated is None:
            out.note(label, "no_updated_at", "ranked last among tables; newest rows taken by id")
        columns[table] = cols
        modified[table] = None if newest is None else str(newest)
    kept, dropped = policy.select_tables(modified)
    for table in dropped:
        out.skip(f"{where}:{table}", "table_cap",
                 f"newest updated_at {modified[table]}; only the {policy.max_tables} most recently modified tables")
    for table in kept:
        label = f"{where}:{table}"
        _guard(out, label, None, _load_rows, conn, slug, table, columns[table], label, out)


def _column(cols: list[str], name: str) -> str | None:
    return next((c for c in cols if c.lower() == name), None)


def _load_rows(conn: sqlite3.Connection, slug: str, table: str, cols: list[str], label: str, out: _Collector) -> None:
    policy = out.policy
    shown: list[str] = []
    for col in cols:
        if policy.secret_column(col):
            out.skip(f"{label}.{col}", "secret_column", f"column {col!r} is secret-like; never indexed")
        else:
            shown.append(col)
    id_col = _column(cols, "id")
    updated = _column(cols, "updated_at")
    order = f"{_quote(updated)} DESC, {_quote(id_col)} DESC" if updated else f"{_quote(id_col)} DESC"
    cap = policy.max_cell_chars
    # a cell over the cap is never fetched: NULL in its place, and its length beside it
    select = ", ".join(
        f"CASE WHEN length({_quote(c)}) > {cap} THEN NULL ELSE {_quote(c)} END, length({_quote(c)})" for c in shown
    )
    try:
        total = conn.execute(f"SELECT COUNT(*) FROM {_quote(table)}").fetchone()[0]
        rows = conn.execute(
            f"SELECT {select} FROM {_quote(table)} ORDER BY {order} LIMIT ?", (policy.max_rows,)
        ).fetchall()
    except sqlite3.Error as exc:
        out.skip(label, "bad_sqlite", str(exc))
        return
    if total > policy.max_rows:
        out.skip(label, "row_cap", f"{total - policy.max_rows} of {total} rows beyond the {policy.max_rows} newest")
    footer = f"Table: {table} ({', '.join(shown)})"  # H4
    for row in rows:
        values = dict(zip(shown, row[0::2]))
        lengths = dict(zip(shown, row[1::2]))
        row_id = values.get(id_col)
        if row_id is None:
            if (lengths.get(id_col) or 0) > cap:
                out.skip(label, "too_large", f"a row whose id is longer than max_cell_chars {cap}")
            else:
                out.skip(label, "bad_shape", "a row with a NULL id")
            continue
        if not plain_id(row_id):
            out.skip(label, "bad_id", _bad_id_detail("row id", row_id))
            continue
        where = f"{label}#{row_id}"
        for col, length in lengths.items():
            if isinstance(length, int) and length > cap and values.get(col) is None:
                out.skip(f"{where}.{col}", "too_large", f"a cell of {length} characters > max_cell_chars {cap}; "
                                                        "left out of the card")
        _guard(out, where, None, _sniff_cells, values, id_col, label, row_id, out)
        _guard(out, where, None, _add_row, slug, table, shown, values, id_col, updated, footer, where, out)


def _sniff_cells(values: dict[str, Any], id_col: str | None, label: str, row_id: Any, out: _Collector) -> None:
    """Cell contents are checked as file contents are (H2): a cell that is key material (a private
    key block, a service-account key, a dotenv file with a secret, ...) is left out of its row's
    card (``secret_content``); other secrets in a cell (a credential URL, a provider token, a JWT,
    ``password: …``) are replaced by ``[redacted]`` (noted ``redacted``). The report names
    ``TABLE.COLUMN#ROW``, never the value."""
    policy = out.policy
    for col, value in list(values.items()):
        if col == id_col or not isinstance(value, str) or not value.strip():
            continue
        where = f"{label}.{col}#{row_id}"
        secret = policy.secret_content(value)
        if secret:
            values[col] = None
            out.skip(where, "secret_content", f"the cell holds {secret}; left out of the card")
            continue
        redacted, counts = policy.redact_secrets(value)
        if counts:
            values[col] = redacted
            out.note(where, "redacted", _redaction_detail(counts))


def _add_row(
    slug: str, table: str, shown: list[str], values: dict[str, Any], id_col: str | None, updated: str | None,
    footer: str, where: str, out: _Collector,
) -> None:
    row_id = values.get(id_col)
    lines = [f"{c}: {_cell(v)}" for c, v in values.items() if v is not None and not isinstance(v, bytes)]
    lines.append(footer)
    stamp = values.get(updated) if updated else None
    fields: dict[str, Any] = {"table": table, "columns": tuple(shown), "row_id": row_id,
                              "source_path": ".space/app.sqlite"}
    if stamp is not None:
        fields["updated_at"] = str(stamp)
    out.add(
        kind="app", space=slug, key=f"{table}#{row_id}", ref=f"app:{table}#{row_id}",
        date=_iso_day(str(stamp)) if stamp is not None else None, title=f"{table} #{row_id}",
        text="\n".join(lines), where=where, fields=fields,
    )


def _cell(value: Any) -> str:
    return str(value).replace("\r\n", "\n").strip()
