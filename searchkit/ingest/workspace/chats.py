"""The loaders of chats and digests (SPEC H1, H15; part of ``searchkit.ingest.workspace``): a chat's
owner and visibility decide its digests', a digest whose chat is gone or in doubt is left out.
``read_chat`` reads one chat as the workspace has it now, made into its record as ingest makes it
(issue 39 item 11).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchkit.ingest.workspace.collect import _Collector, _Space, _guard, _rel, _utf8
from searchkit.ingest.workspace.model import DIGEST_PARTS, RUNS, _bad_id_detail, plain_id
from searchkit.ingest.workspace.reading import (
    _MISSING, _as_text, _iso_day, _json_files, _lang, _lkind, _read_json, _short, _str,
)
from searchkit.records import VISIBILITIES, Record


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

    known: dict[str, _ChatMeta] = field(default_factory=dict)
    contested: dict[str, int] = field(default_factory=dict)


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
                if claimed is not None:  # always: None was taken out
                    claims.setdefault(claimed, []).append(where)
            continue
        assert isinstance(data, dict)  # _chat_problem found no problem: a JSON object
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
    kept: list[tuple[int, str | None]] = []  # (index in lines, ts) of each message kept
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
            kept.append((len(lines), ts if ts and _iso_day(ts) else None))
            lines.append(f"{who}: {body}")
    fields: dict[str, Any] = {"ses_id": ses_id, "run": run, "messages": len(lines) - 1, "source_path": _rel(where),
                              **_lang(data), **message_lines(lines, kept)}
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


def message_lines(lines: list[str], kept: list[tuple[int, str | None]]) -> dict[str, Any]:
    """Where each message starts in the chat record's text, for ``chat_read`` (issue 30):
    ``message_lines`` holds ``[line, ts]`` per message (the line number in the text as the
    collector stores it: line breaks normalised, the whole stripped) and ``lines`` the text's line
    count, which tells a reader whether redaction kept every line where it was."""
    raw = "\n".join(lines)
    norm = raw.replace("\r\n", "\n").replace("\r", "\n")
    lead = norm[: len(norm) - len(norm.lstrip())].count("\n")
    starts, pos, line, done = [], 0, 0, 0
    for index, ts in kept:
        while done < index:  # each chunk ends with the joining newline, so no CR-LF pair is split
            end = pos + len(lines[done]) + 1
            line += raw[pos:end].replace("\r\n", "\n").replace("\r", "\n").count("\n")
            pos, done = end, done + 1
        starts.append([line - lead, ts])
    return {"message_lines": starts, "lines": norm.strip().count("\n") + 1}


def _chat_problem(data: object) -> str | None:
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


@dataclass(frozen=True)
class LiveChat:
    """A chat as the workspace has it now (``read_chat``; issue 39 item 11).

    ``state``: ``found`` (``owner`` and ``visibility`` as its file says now, and ``record``: the
    chat record made and redacted exactly as ingest makes it, or None when ingest would leave its
    text out: too large, not Unicode), ``gone`` (no chat file holds it now) or ``unreadable``
    (a file that may hold it cannot be read or used, or two files claim it: whose it is is in
    doubt). ``path``: the file it was read from; ``why``: the rule behind it, never a value or a path."""

    state: str
    record: Record | None = None
    owner: str | None = None
    visibility: str = "shared"
    why: str = ""
    path: Path | None = None


def chat_files(sp: _Space, ses_id: str, source_path: object) -> list[Path]:
    """The files ``read_chat`` tries first for chat ``ses_id``, in order: the one the index read
    it from (``source_path``, ``.space/chats/NAME.json``), then ``SES_ID.json``."""
    names: list[str] = []
    if isinstance(source_path, str) and source_path.startswith(".space/chats/"):
        name = source_path[len(".space/chats/"):]
        if name.endswith(".json") and "/" not in name and "\\" not in name and name != ".json":
            names.append(name)
    if f"{ses_id}.json" not in names:
        names.append(f"{ses_id}.json")
    return [sp.meta / "chats" / name for name in names]


def read_chat(sp: _Space, ses_id: str, source_path: object, out: _Collector) -> LiveChat:
    """Chat ``ses_id`` of the space now: read from the file the index read it from
    (``source_path``, ``.space/chats/NAME.json``), else ``SES_ID.json``, else the one chat file
    that claims it; through ingest's guards (``_read_json``: no link followed, no FIFO opened,
    nothing outside the space, size caps) and made into a record by ``_load_chat`` into ``out``."""
    folder = sp.meta / "chats"
    first = chat_files(sp, ses_id, source_path)
    tried = [path.name for path in first]
    for path in first:
        if _lkind(path) == "missing":
            continue
        found = _claim(sp, path, ses_id, out)
        if found is not None:
            return found
    claims = [found for path in _json_files(folder, f"{sp.slug}/.space/chats", out) if path.name not in tried
              for found in [_claim(sp, path, ses_id, out)] if found is not None]
    if len(claims) == 1:
        return claims[0]
    return LiveChat("unreadable", why="duplicate_id") if claims else LiveChat("gone", why="no chat file holds it")


def _claim(sp: _Space, path: Path, ses_id: str, out: _Collector) -> LiveChat | None:
    """What the chat file at ``path`` says of chat ``ses_id``: None when it is some other chat."""
    where = f"{sp.slug}/.space/chats/{path.name}"
    before = len(out.skips)
    data = _read_json(path, where, out, sp.real)
    if data is _MISSING or _chat_problem(data):
        named = _str(data.get("ses_id")) if isinstance(data, dict) else None
        if ses_id in (path.stem, named):  # it may be this chat: in doubt
            fresh = out.skips[before:]
            return LiveChat("unreadable", why=fresh[0].rule if fresh else "bad_shape")
        return None
    if (data.get("ses_id") or path.stem) != ses_id:
        return None
    owner = data.get("owner")
    visibility = data.get("visibility") or ("personal" if owner else "shared")
    _guard(out, where, None, _load_chat, sp.slug, where, data, ses_id, out)
    return LiveChat("found", out.records.get(f"{sp.slug}/chat:{ses_id}"), owner, visibility, path=path)
