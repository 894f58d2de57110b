"""Load a workspace folder (the format of WORKSPACE.md) into Records of the seven kinds (SPEC H1).

One loader per kind; ``policy`` decides what is never indexed (H2). Bad input is reported in the
``IndexingReport`` and the load goes on: nothing else is lost.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from searchkit.ingest.policy import (
    CONTAINERS,
    DEFAULT_POLICY,
    IndexingReport,
    Policy,
    Skip,
    binary_reason,
)
from searchkit.records import KINDS, VISIBILITIES, Record

RUNS: tuple[str, ...] = ("chat", "scheduled", "automatic")
DIGEST_PARTS: tuple[tuple[str, str], ...] = (
    ("asked", "Asked"), ("done", "Done"), ("left", "Left"), ("decided", "Decided"),
)
LOG_HEADING = re.compile(r"^##[ \t]+(\d{4}-\d{2}-\d{2})(?![\d])[ \t]*[-—–:·|]*[ \t]*(.*?)\s*$")
TITLE_CHARS = 80


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


@dataclass(frozen=True)
class WorkspaceLoad:
    """Everything ``load_workspace`` read.

    Args:
        records: every indexable record, ordered by space, then kind (``KINDS`` order), then key.
        spaces: the spaces by slug.
        users: user id -> display name (from ``users.json``; empty when absent).
        report: what was skipped and why, and counts per kind.
    """

    records: tuple[Record, ...]
    spaces: Mapping[str, SpaceInfo]
    users: Mapping[str, str]
    report: IndexingReport

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", tuple(self.records))
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
        policy: the never-index rules (H2); default ``DEFAULT_POLICY`` (30 tables, 200 rows).

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
    users = _load_users(root, out)
    spaces: dict[str, SpaceInfo] = {}
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if not entry.is_dir():
            if entry.name != "users.json":
                out.note(entry.name, "not_a_space", "a top-level file; ignored")
            continue
        if entry.is_symlink():
            out.skip(entry.name, "symlink", "a space folder that is a link")
            continue
        if out.policy.excluded_dir(entry.name):
            out.skip(entry.name, "excluded_dir", f"{entry.name}/")
            continue
        info = _load_space_info(entry, out)
        if info is None:
            continue
        spaces[info.slug] = info
        _load_space(entry, info.slug, out)
    stamp = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    order = {kind: i for i, kind in enumerate(KINDS)}
    out.records.sort(key=lambda r: (r.space, order.get(r.kind, len(order))))  # stable: load order within
    counts = {kind: 0 for kind in KINDS}
    for record in out.records:
        counts[record.kind] = counts.get(record.kind, 0) + 1
    report = IndexingReport(skips=tuple(out.skips), notes=tuple(out.notes), counts=counts, loaded_at=stamp)
    return WorkspaceLoad(records=tuple(out.records), spaces=spaces, users=users, report=report)


# -- plumbing ---------------------------------------------------------------------------------

class _Collector:
    """Mutable accumulator of one load (private; the result is frozen)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.records: list[Record] = []
        self.skips: list[Skip] = []
        self.notes: list[Skip] = []
        self._ids: set[str] = set()

    def skip(self, what: str, rule: str, detail: str = "") -> None:
        self.skips.append(Skip(what, rule, detail))

    def note(self, what: str, rule: str, detail: str = "") -> None:
        self.notes.append(Skip(what, rule, detail))

    def add(
        self, *, kind: str, space: str, key: str, ref: str, date: str | None, title: str, text: str,
        where: str, owner: str | None = None, visibility: str = "shared", fields: Mapping[str, Any] | None = None,
    ) -> bool:
        text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
        if not text:
            self.skip(where, "empty", f"{kind} {key!r} has no text")
            return False
        rid = f"{space}/{kind}:{key}"
        if rid in self._ids:
            self.skip(where, "duplicate", f"{kind} {key!r} already loaded")
            return False
        self._ids.add(rid)
        extra = dict(fields or {})
        extra["source_key"] = rid
        extra["content_hash"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self.records.append(Record(
            id=rid, kind=kind, space=space, date=date, title=title or key, ref=ref, text=text,
            owner=owner, visibility=visibility, fields=extra,
        ))
        return True


_MISSING = object()


def _read_text(path: Path, where: str, out: _Collector, *, rule_on_bad: str) -> str | None:
    try:
        data = path.read_bytes()
    except OSError as exc:
        out.skip(where, "unreadable", str(exc.strerror or exc))
        return None
    reason = binary_reason(data)
    if reason:
        out.skip(where, rule_on_bad, reason)
        return None
    return data.decode("utf-8").removeprefix("\ufeff")


def _read_json(path: Path, where: str, out: _Collector) -> Any:
    text = _read_text(path, where, out, rule_on_bad="bad_json")
    if text is None:
        return _MISSING
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        out.skip(where, "bad_json", f"line {exc.lineno} column {exc.colno}: {exc.msg}")
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


def _lang(obj: Mapping[str, Any]) -> dict[str, Any]:
    lang = obj.get("lang")
    return {"lang": lang} if isinstance(lang, str) and lang else {}


# -- users and spaces -------------------------------------------------------------------------

def _load_users(root: Path, out: _Collector) -> dict[str, str]:
    path = root / "users.json"
    if not path.is_file():
        return {}
    data = _read_json(path, "users.json", out)
    if data is _MISSING:
        return {}
    if not isinstance(data, list):
        out.skip("users.json", "bad_shape", "expected a list of {\"id\", \"name\"}")
        return {}
    users: dict[str, str] = {}
    for i, item in enumerate(data):
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]:
            users[item["id"]] = str(item.get("name") or item["id"])
        else:
            out.skip(f"users.json[{i}]", "bad_shape", "a user needs a string \"id\"")
    return users


def _load_space_info(folder: Path, out: _Collector) -> SpaceInfo | None:
    slug = folder.name
    path = folder / ".space" / "space.json"
    if not path.is_file():
        out.skip(slug, "not_a_space", "no .space/space.json")
        return None
    data = _read_json(path, f"{slug}/.space/space.json", out)
    if data is _MISSING:
        out.skip(slug, "bad_space", "space.json unusable; the whole space is left out")
        return None
    problem = _space_problem(data)
    if problem:
        out.skip(slug, "bad_space", f"space.json: {problem}; the whole space is left out")
        return None
    if data.get("slug") not in (None, slug):
        out.note(slug, "bad_shape", f"space.json slug {data['slug']!r} differs from the folder; using {slug!r}")
    return SpaceInfo(
        slug=slug,
        title=str(data.get("title") or slug),
        members=tuple(data.get("members") or ()),
        container=data.get("container", "shared"),
        history_search=data.get("history_search", True),
    )


def _space_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "expected a JSON object"
    members = data.get("members", [])
    if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
        return "members must be a list of user ids"
    if data.get("container", "shared") not in CONTAINERS:
        return f"container must be one of {CONTAINERS}, got {data.get('container')!r}"
    if not isinstance(data.get("history_search", True), bool):
        return "history_search must be true or false"
    return None


def _load_space(folder: Path, slug: str, out: _Collector) -> None:
    meta = folder / ".space"
    file_dates = _load_file_dates(meta, slug, out)
    chats = _load_chats(meta, slug, out)
    _load_digests(meta, slug, chats, out)
    _load_log(folder, slug, file_dates, out)
    _load_files(folder, slug, file_dates, out)
    _load_sources(meta, slug, out)
    _load_pages(meta, slug, out)
    _load_app(meta, slug, out)


def _load_file_dates(meta: Path, slug: str, out: _Collector) -> dict[str, str]:
    path = meta / "files.json"
    if not path.is_file():
        return {}
    data = _read_json(path, f"{slug}/.space/files.json", out)
    if data is _MISSING:
        return {}
    if not isinstance(data, dict):
        out.skip(f"{slug}/.space/files.json", "bad_shape", "expected {\"path\": \"ISO time\"}; using file times")
        return {}
    return {str(k).replace("\\", "/").removeprefix("./"): v for k, v in data.items() if isinstance(v, str)}


def _json_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.suffix == ".json" and p.is_file()), key=lambda p: p.name)


# -- chats and digests ------------------------------------------------------------------------

@dataclass(frozen=True)
class _ChatMeta:
    ses_id: str
    title: str
    owner: str | None
    visibility: str
    run: str


def _load_chats(meta: Path, slug: str, out: _Collector) -> dict[str, _ChatMeta]:
    chats: dict[str, _ChatMeta] = {}
    for path in _json_files(meta / "chats"):
        where = f"{slug}/.space/chats/{path.name}"
        data = _read_json(path, where, out)
        if data is _MISSING:
            continue
        problem = _chat_problem(data)
        if problem:
            out.skip(where, "bad_shape", problem)
            continue
        ses_id = data.get("ses_id") or path.stem
        if ses_id in chats:
            out.skip(where, "duplicate", f"chat {ses_id!r} already loaded")
            continue
        owner = data.get("owner")
        visibility = data.get("visibility") or ("personal" if owner else "shared")
        run = data.get("run") or "chat"
        if run not in RUNS:
            out.note(where, "bad_shape", f"run {run!r} is not one of {RUNS}; kept as given")
        chat = _ChatMeta(ses_id, str(data.get("title") or ses_id), owner, visibility, run)
        chats[ses_id] = chat
        lines = [chat.title]
        stamps: list[str] = []
        for msg in data.get("messages", []):
            if not isinstance(msg, dict):
                out.note(where, "bad_shape", "a message that is not an object was left out")
                continue
            body = _as_text(msg.get("text"))
            if isinstance(msg.get("ts"), str) and _iso_day(msg["ts"]):
                stamps.append(msg["ts"])
            if body:
                lines.append(f"{msg.get('author') or msg.get('role') or 'unknown'}: {body}")
        fields: dict[str, Any] = {"ses_id": ses_id, "run": run, "messages": len(lines) - 1, **_lang(data)}
        if stamps:
            fields["started"], fields["ts"] = stamps[0], stamps[-1]
        out.add(
            kind="chat", space=slug, key=ses_id, ref=f"chat:{ses_id}",
            date=_iso_day(stamps[-1]) if stamps else _iso_day(data.get("ts")), title=chat.title,
            text="\n".join(lines), where=where, owner=owner, visibility=visibility, fields=fields,
        )
    return chats


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
    if visibility is not None and visibility not in VISIBILITIES:
        return f"visibility must be one of {VISIBILITIES}, got {visibility!r}"
    if (visibility or ("personal" if owner else "shared")) == "personal" and not owner:
        return "a personal chat needs an owner"
    return None


def _load_digests(meta: Path, slug: str, chats: Mapping[str, _ChatMeta], out: _Collector) -> None:
    for path in _json_files(meta / "digests"):
        where = f"{slug}/.space/digests/{path.name}"
        data = _read_json(path, where, out)
        if data is _MISSING:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("ses_id"), str) or not data["ses_id"]:
            out.skip(where, "bad_shape", "a digest needs a JSON object with a string ses_id")
            continue
        turn_id = data.get("turn_id") if isinstance(data.get("turn_id"), str) and data["turn_id"] else path.stem
        chat = chats.get(data["ses_id"])
        if chat is None:
            out.skip(where, "orphan_digest", f"chat {data['ses_id']!r} is missing or unusable")
            continue
        lines = [f"{label}: {_as_text(data.get(key))}" for key, label in DIGEST_PARTS if _as_text(data.get(key))]
        if not lines:
            out.skip(where, "empty", f"digest {turn_id!r} has no asked/done/left/decided")
            continue
        lines.append(f"Chat: chat:{chat.ses_id}")  # H5
        fields = {"chat": chat.ses_id, "turn": turn_id, "run": chat.run, **_lang(data)}
        if isinstance(data.get("ts"), str):
            fields["ts"] = data["ts"]
        out.add(
            kind="digest", space=slug, key=turn_id, ref=f"digest:{turn_id}", date=_iso_day(data.get("ts")),
            title=_short(_as_text(data.get("asked"))) or chat.title, text="\n".join(lines), where=where,
            owner=chat.owner, visibility=chat.visibility, fields=fields,  # H15: the chat's owner and visibility
        )


# -- log.md and files -------------------------------------------------------------------------

def _file_day(path: Path, rel: str, file_dates: Mapping[str, str]) -> tuple[str | None, str | None]:
    stamp = file_dates.get(rel)
    if stamp and _iso_day(stamp):
        return _iso_day(stamp), stamp
    try:
        mtime = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat(timespec="seconds")
    except OSError:
        return None, None
    return _iso_day(mtime), mtime


def _load_log(folder: Path, slug: str, file_dates: Mapping[str, str], out: _Collector) -> None:
    path = folder / "log.md"
    where = f"{slug}/log.md"
    if not path.is_file() or path.is_symlink():
        if path.is_symlink():
            out.skip(where, "symlink", "log.md is a link")
        return
    text = _read_text(path, where, out, rule_on_bad="binary")
    if text is None:
        return
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
        out.add(
            kind="log", space=slug, key=day, ref=f"log.md#{day}", date=day,
            title=heads[day] or _short(rest) or f"log.md {day}", text=body, where=f"{where}#{day}",
            fields={"source_path": "log.md"},
        )


def _load_files(folder: Path, slug: str, file_dates: Mapping[str, str], out: _Collector) -> None:
    policy = out.policy
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(folder).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        keep: list[str] = []
        for name in sorted(dirnames):
            if not rel_dir and name == ".space":
                continue
            if (here / name).is_symlink():
                out.skip(f"{slug}/{rel_dir}{name}/", "symlink", "a folder link is never followed")
            elif policy.excluded_dir(name):
                out.skip(f"{slug}/{rel_dir}{name}/", "excluded_dir", f"{name}/")
            else:
                keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = rel_dir + name
            if rel == "log.md":
                continue
            _load_file(here / name, rel, slug, file_dates, out)


def _load_file(path: Path, rel: str, slug: str, file_dates: Mapping[str, str], out: _Collector) -> None:
    where = f"{slug}/{rel}"
    if path.is_symlink():
        out.skip(where, "symlink", "a file link is never followed")
        return
    ruled = out.policy.path_skip(rel)
    if ruled:
        out.skip(where, *ruled)
        return
    try:
        size = path.stat().st_size
    except OSError as exc:
        out.skip(where, "unreadable", str(exc.strerror or exc))
        return
    if size > out.policy.max_file_bytes:
        out.skip(where, "too_large", f"{size} bytes > {out.policy.max_file_bytes}")
        return
    text = _read_text(path, where, out, rule_on_bad="binary")
    if text is None:
        return
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
        match = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        if match and match.group(1).strip():
            return f"{name} · {_short(match.group(1))}"
    return name


# -- sources and pages ------------------------------------------------------------------------

def _load_sources(meta: Path, slug: str, out: _Collector) -> None:
    path = meta / "sources.jsonl"
    if not path.is_file():
        return
    where = f"{slug}/.space/sources.jsonl"
    text = _read_text(path, where, out, rule_on_bad="bad_json")
    if text is None:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            out.skip(f"{where}:{number}", "bad_json", f"line {number}: {exc.msg}")
            continue
        if not isinstance(item, dict) or not isinstance(item.get("uuid"), str) or not item["uuid"]:
            out.skip(f"{where}:{number}", "bad_shape", "a source needs a JSON object with a string uuid")
            continue
        uuid = item["uuid"]
        title, url, summary = (_as_text(item.get(k)) for k in ("title", "url", "summary"))
        out.add(
            kind="source", space=slug, key=uuid, ref=f"source:{uuid}", date=_iso_day(item.get("added")),
            title=title or url or uuid, text="\n".join(s for s in (title, url, summary) if s),
            where=f"{where}:{number}", fields={"url": url, **_lang(item)} if url else _lang(item),
        )


def _load_pages(meta: Path, slug: str, out: _Collector) -> None:
    for path in _json_files(meta / "pages"):
        where = f"{slug}/.space/pages/{path.name}"
        data = _read_json(path, where, out)
        if data is _MISSING:
            continue
        if not isinstance(data, dict):
            out.skip(where, "bad_shape", "a page must be a JSON object")
            continue
        uuid = data.get("uuid") if isinstance(data.get("uuid"), str) and data["uuid"] else path.stem
        title = _as_text(data.get("title"))
        body = data.get("body")
        body_text = body.strip() if isinstance(body, str) else _as_text(body)
        fields = {"type": data.get("type") or "page", **_lang(data)}
        out.add(
            kind="page", space=slug, key=uuid, ref=f"page:{uuid}", date=_iso_day(data.get("updated")),
            title=title or uuid, text="\n\n".join(s for s in (title, body_text) if s), where=where, fields=fields,
        )


# -- app.sqlite -------------------------------------------------------------------------------

def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _load_app(meta: Path, slug: str, out: _Collector) -> None:
    path = meta / "app.sqlite"
    if not path.is_file():
        return
    where = f"{slug}/.space/app.sqlite"
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", str(exc))
        return
    try:
        _load_tables(conn, slug, where, out)
    finally:
        conn.close()


def _load_tables(conn: sqlite3.Connection, slug: str, where: str, out: _Collector) -> None:
    policy = out.policy
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )]
    except sqlite3.Error as exc:
        out.skip(where, "bad_sqlite", f"cannot list tables: {exc}")
        return
    columns: dict[str, list[str]] = {}
    modified: dict[str, str | None] = {}
    for table in names:
        label = f"{where}:{table}"
        try:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({_quote(table)})")]
        except sqlite3.Error as exc:
            out.skip(label, "bad_sqlite", str(exc))
            continue
        ruled = policy.table_skip(table, cols)
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
        _load_rows(conn, slug, table, columns[table], f"{where}:{table}", out)


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
    select = ", ".join(_quote(c) for c in shown)
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
        values = dict(zip(shown, row))
        row_id = values.get(id_col)
        if row_id is None:
            out.skip(label, "bad_shape", "a row with a NULL id")
            continue
        lines = [f"{c}: {_cell(v)}" for c, v in values.items() if v is not None and not isinstance(v, bytes)]
        lines.append(footer)
        stamp = values.get(updated) if updated else None
        fields: dict[str, Any] = {"table": table, "columns": tuple(shown), "row_id": row_id}
        if stamp is not None:
            fields["updated_at"] = str(stamp)
        out.add(
            kind="app", space=slug, key=f"{table}#{row_id}", ref=f"app:{table}#{row_id}",
            date=_iso_day(str(stamp)) if stamp is not None else None, title=f"{table} #{row_id}",
            text="\n".join(lines), where=f"{label}#{row_id}", fields=fields,
        )


def _cell(value: Any) -> str:
    return str(value).replace("\r\n", "\n").strip()
