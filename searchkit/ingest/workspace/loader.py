"""Loading a workspace folder (SPEC H1, H3, H14; part of ``searchkit.ingest.workspace``):
``load_workspace`` reads ``users.json`` and each space's settings, then runs the loader of each kind
in the space; ``carry_over`` keeps a previous index's records of the parts an update could not read.
"""
from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from searchkit.ingest.policy import CONTAINERS, DEFAULT_POLICY, IndexingReport, Policy, Skip
from searchkit.ingest.redact.known import KnownSecrets, salt_for
from searchkit.ingest.workspace.app import _load_app
from searchkit.ingest.workspace.chats import _Chats, _load_chats, _load_digests
from searchkit.ingest.workspace.collect import _Collector, _Space, _guard, _utf8
from searchkit.ingest.workspace.files import _load_files, _load_log
from searchkit.ingest.workspace.model import SpaceInfo, WorkspaceLoad
from searchkit.ingest.workspace.reading import _MISSING, _as_text, _lkind, _read_json, _special_detail, _str
from searchkit.ingest.workspace.sources import _load_pages, _load_sources
from searchkit.records import KINDS, Record


def load_workspace(
    path: str | os.PathLike[str],
    *,
    now: datetime | None = None,
    policy: Policy | None = None,
    memo: Mapping[str, Any] | None = None,
) -> WorkspaceLoad:
    """Read every space of a workspace folder into Records of the seven kinds (H1).

    Args:
        path: the workspace folder (``users.json`` and one folder per space slug).
        now: the time stamped on the report (default: the current UTC time).
        policy: the never-index rules and caps (H2); default ``DEFAULT_POLICY``.
        memo: the digests of the texts a previous load under the same rules found clean
            (``verdicts.read_memo``; issue 30): those are not checked for secrets again. What the
            load gives is the same with or without it. Its ``known`` (the salted digests of the
            secret values the previous load redacted) joins this load's when a part could not be
            read now (its records are kept: ``carry_over``).

    Every value the rules redact in a record is redacted wherever it appears again in its scope
    (issue 39 item 4; ``searchkit.ingest.redact.known``: the space's shared records, and a personal
    record's owner's own records); ``report.known_secrets`` holds their salted digests (never a value).

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
    out = _Collector(policy or DEFAULT_POLICY, memo)
    root_real = os.path.realpath(root)
    users: dict[str, str] = _guard(out, "users.json", {}, _load_users, root, root_real, out)
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
    previous = (memo or {}).get("known") if out.doubts else None  # an update keeps the records in doubt
    known = out.finish(salt_for(root_real), previous if isinstance(previous, KnownSecrets) else None)
    stamp = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    records = _in_order(out.records.values())
    report = IndexingReport(skips=tuple(out.skips), notes=tuple(out.notes), counts=_counts(records), loaded_at=stamp,
                            caps=out.policy.caps(), known_secrets=known)
    clean = out.verdicts.of_records()
    return WorkspaceLoad(records=tuple(records), spaces=spaces, users=users, report=report,
                         doubts=tuple(out.doubts), contested=frozenset(out.contested), orphans=frozenset(out.orphans),
                         clean={r.id: clean[r.id] for r in records if r.id in clean})


def _in_order(records: Iterable[Record]) -> list[Record]:
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
    chats: dict[tuple[str, str | None], Record] = {
        (r.space, _ses_id(r)): r for r in (*now.values(), *kept.values()) if r.kind == "chat"}
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


def _space_problem(data: object) -> str | None:
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
    file_dates: dict[str, str] = _guard(out, f"{slug}/.space/files.json", {}, _load_file_dates, sp, out)
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
