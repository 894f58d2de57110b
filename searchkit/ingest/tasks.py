"""The task store (SPEC T): SQLite tables for spaces, tasks and comments, and an FTS5 trigram
index over each comment's indexed text; the importer from the JSON-lines format of
WORKSPACE.md; the indexing rules of T2.

Indexing rules (T2): requests, interjections, results, asks, handoffs, and progress of type
``thinking`` or ``summary`` are indexed by their body; a tool run (progress of type ``tool``) is
indexed as ``tool: NAME`` alone; attachments append their file names only. Everything else
(``comment``, ``interjection_ack``, unknown kinds and progress types) is not indexed. Indexed text
is NFKC-normalised and redacted (``searchkit.ingest.redact``).

The database runs in WAL mode, so searches read while comments are being added.
"""
from __future__ import annotations

import json
import sqlite3
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from searchkit.index import fts
from searchkit.ingest.redact import redact

FTS_TABLE = "comment_fts"

COMMENT_KINDS: tuple[str, ...] = (
    "request", "interjection", "interjection_ack", "comment", "result", "ask", "progress", "handoff",
)
"""Comment kinds of WORKSPACE.md. Other kinds are stored but never indexed."""

INDEXED_KINDS: frozenset[str] = frozenset({"request", "interjection", "result", "ask", "handoff"})
INDEXED_PROGRESS_TYPES: frozenset[str] = frozenset({"thinking", "summary"})
TOOL_PROGRESS_TYPE = "tool"
TASK_STATES: tuple[str, ...] = ("open", "closed")

SCHEMA = """
CREATE TABLE IF NOT EXISTS spaces (
    slug  TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS tasks (
    id          INTEGER PRIMARY KEY,
    space       TEXT NOT NULL REFERENCES spaces(slug),
    title       TEXT NOT NULL DEFAULT '',
    state       TEXT NOT NULL CHECK (state IN ('open', 'closed')),
    piece       TEXT NOT NULL DEFAULT '',
    created     TEXT,
    updated     TEXT,
    updated_utc TEXT
);
CREATE INDEX IF NOT EXISTS tasks_space_updated ON tasks(space, updated_utc);
CREATE TABLE IF NOT EXISTS comments (
    id            INTEGER PRIMARY KEY,
    task          INTEGER NOT NULL REFERENCES tasks(id),
    author        TEXT NOT NULL,
    kind          TEXT NOT NULL,
    progress_type TEXT,
    tool          TEXT,
    body          TEXT NOT NULL DEFAULT '',
    attachments   TEXT NOT NULL DEFAULT '[]',
    ts            TEXT NOT NULL,
    ts_utc        TEXT NOT NULL,
    indexed       TEXT,
    folded        TEXT
);
CREATE INDEX IF NOT EXISTS comments_task_ts ON comments(task, ts_utc, id);
"""


class TaskStoreError(ValueError):
    """Bad input to the task store (a malformed row, a missing task, no FTS5 to build with)."""


@dataclass(frozen=True)
class ImportReport:
    """What an import did: rows written, comments indexed, and why the others were not."""

    tasks: int = 0
    comments: int = 0
    indexed: int = 0
    not_indexed: Mapping[str, int] = field(default_factory=dict)
    redacted: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "comments": self.comments,
            "indexed": self.indexed,
            "not_indexed": dict(self.not_indexed),
            "redacted": self.redacted,
        }


def normalize(text: str) -> str:
    """NFKC-normalise ``text`` (full-width Latin and digits become ASCII, ideographic space a space)."""
    return unicodedata.normalize("NFKC", text)


def fold(text: str) -> str:
    """The case folding used by the LIKE path (Unicode-aware, unlike SQLite's ASCII-only LIKE)."""
    return text.casefold()


def utc_sort_key(ts: str, what: str = "ts") -> str:
    """An ISO time as a sortable UTC string (naive times are taken as UTC)."""
    if not isinstance(ts, str) or not ts:
        raise TaskStoreError(f"{what} must be an ISO 8601 time string, got {ts!r}")
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        raise TaskStoreError(f"{what} is not an ISO 8601 time: {ts!r} (e.g. 2026-06-20T10:00:00Z)") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def not_indexed_reason(comment: Mapping[str, Any]) -> str | None:
    """Why a comment is not indexed (``kind:comment``, ``progress:status``...), or None if it is."""
    kind = comment.get("kind")
    if kind in INDEXED_KINDS:
        return None
    if kind == "progress":
        ptype = comment.get("progress_type")
        if ptype in INDEXED_PROGRESS_TYPES:
            return None
        if ptype == TOOL_PROGRESS_TYPE and comment.get("tool"):
            return None
        return f"progress:{ptype}"
    return f"kind:{kind}"


def _attachment_names(attachments: Iterable[str]) -> list[str]:
    names = []
    for a in attachments:
        name = str(a).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        if name:
            names.append(name)
    return names


def indexed_text(comment: Mapping[str, Any]) -> str | None:
    """The text a comment contributes to the index (T2), or None when it is not indexed.

    Body for indexed kinds, ``tool: NAME`` for a tool run (never its arguments or output),
    plus ``attachments: a.pdf, b.png`` (file names only); then NFKC and redaction.
    """
    text = _unredacted_index_text(comment)
    return None if text is None else redact(text)


def _unredacted_index_text(comment: Mapping[str, Any]) -> str | None:
    if not_indexed_reason(comment) is not None:
        return None
    if comment.get("kind") == "progress" and comment.get("progress_type") == TOOL_PROGRESS_TYPE:
        text = f"tool: {comment['tool']}"
    else:
        text = str(comment.get("body") or "")
    names = _attachment_names(comment.get("attachments") or ())
    if names:
        text = f"{text}\nattachments: {', '.join(names)}" if text else f"attachments: {', '.join(names)}"
    return normalize(text).replace("\x00", " ")


def connect(path: str | Path, *, create: bool = True) -> sqlite3.Connection:
    """Open (and by default create) a task store; WAL mode for a file database.

    The schema is created when missing; the FTS5 table is created only where FTS5 is
    available (a store without it still lists tasks; search answers with T8's message).
    """
    path = str(path)
    if not create and path != ":memory:" and not Path(path).exists():
        raise TaskStoreError(f"task store {path!r} does not exist; create it with `searchkit tasks import`")
    conn = sqlite3.connect(path, timeout=5.0)
    conn.execute("PRAGMA foreign_keys = ON")
    if path != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
    if create:
        conn.executescript(SCHEMA)
        if fts.fts5_available(conn):
            fts.create_trigram_table(conn, FTS_TABLE, ("text",))
    return conn


def has_fts(conn: sqlite3.Connection) -> bool:
    """True when the store has its FTS table and this connection's SQLite can read it."""
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name=?", (FTS_TABLE,)).fetchone()
    return bool(row) and fts.fts5_available(conn)


def _req(row: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in row or row[key] is None:
        raise TaskStoreError(f"{where}: field {key!r} is required")
    return row[key]


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not (1 <= value < 2**63):
        raise TaskStoreError(f"{what} must be a positive integer, got {value!r}")
    return value


def add_tasks(conn: sqlite3.Connection, rows: Iterable[Mapping[str, Any]], *, where: str = "task") -> int:
    """Insert or replace tasks given as WORKSPACE.md dicts; return how many were written."""
    n = 0
    with conn:
        for i, row in enumerate(rows, 1):
            w = f"{where} {i}"
            tid = _int(_req(row, "id", w), f"{w}: id")
            space = _req(row, "space", w)
            if not isinstance(space, str) or not space:
                raise TaskStoreError(f"{w}: space must be a non-empty string, got {space!r}")
            state = row.get("state", "open")
            if state not in TASK_STATES:
                raise TaskStoreError(f"{w}: state must be one of {TASK_STATES}, got {state!r}")
            updated = row.get("updated") or row.get("created")
            updated_utc = utc_sort_key(updated, f"{w}: updated") if updated else None
            conn.execute("INSERT OR IGNORE INTO spaces(slug) VALUES (?)", (space,))
            conn.execute(
                "INSERT OR REPLACE INTO tasks(id, space, title, state, piece, created, updated, updated_utc)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (tid, space, str(row.get("title") or ""), state, str(row.get("piece") or ""),
                 row.get("created"), updated, updated_utc),
            )
            n += 1
    return n


def add_comments(
    conn: sqlite3.Connection, rows: Iterable[Mapping[str, Any]], *, where: str = "comment"
) -> ImportReport:
    """Insert or replace comments (WORKSPACE.md dicts) and their FTS rows, in one transaction."""
    with_fts = bool(conn.execute("SELECT 1 FROM sqlite_master WHERE name=?", (FTS_TABLE,)).fetchone())
    if not with_fts or not fts.fts5_available(conn):
        raise TaskStoreError(f"cannot index comments: the store has no FTS5 table. {fts.INSTALL_HINT}")
    n = indexed = redacted = 0
    skipped: dict[str, int] = {}
    with conn:
        for i, row in enumerate(rows, 1):
            w = f"{where} {i}"
            cid = _int(_req(row, "id", w), f"{w}: id")
            task = _int(_req(row, "task", w), f"{w}: task")
            if not conn.execute("SELECT 1 FROM tasks WHERE id=?", (task,)).fetchone():
                raise TaskStoreError(f"{w}: task {task} does not exist; import tasks before comments")
            author = _req(row, "author", w)
            kind = _req(row, "kind", w)
            ts = _req(row, "ts", w)
            attachments = row.get("attachments") or []
            if not isinstance(attachments, (list, tuple)):
                raise TaskStoreError(f"{w}: attachments must be a list of file names, got {attachments!r}")
            raw = _unredacted_index_text(row)
            text = None if raw is None else redact(raw)
            if text is None:
                reason = not_indexed_reason(row) or "unknown"
                skipped[reason] = skipped.get(reason, 0) + 1
            else:
                indexed += 1
                redacted += text != raw
            conn.execute(
                "INSERT OR REPLACE INTO comments(id, task, author, kind, progress_type, tool, body,"
                " attachments, ts, ts_utc, indexed, folded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (cid, task, str(author), str(kind), row.get("progress_type"), row.get("tool"),
                 str(row.get("body") or ""), json.dumps(list(attachments), ensure_ascii=False), ts,
                 utc_sort_key(ts, f"{w}: ts"), text, fold(text) if text is not None else None),
            )
            conn.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid=?", (cid,))
            if text is not None:
                conn.execute(f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (?, ?)", (cid, text))
            n += 1
    return ImportReport(comments=n, indexed=indexed, not_indexed=skipped, redacted=redacted)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file (blank lines skipped); errors name the file and line."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise TaskStoreError(f"{path}:{n}: not valid JSON ({e.msg})") from None
            if not isinstance(obj, dict):
                raise TaskStoreError(f"{path}:{n}: each line must be a JSON object")
            rows.append(obj)
    return rows


def import_jsonl(
    conn: sqlite3.Connection, tasks_path: str | Path, comments_path: str | Path
) -> ImportReport:
    """Import ``tasks.jsonl`` then ``comments.jsonl`` (WORKSPACE.md) into the store."""
    n_tasks = add_tasks(conn, read_jsonl(tasks_path), where=f"{tasks_path}: row")
    rep = add_comments(conn, read_jsonl(comments_path), where=f"{comments_path}: row")
    return ImportReport(
        tasks=n_tasks, comments=rep.comments, indexed=rep.indexed,
        not_indexed=rep.not_indexed, redacted=rep.redacted,
    )


def import_dir(conn: sqlite3.Connection, folder: str | Path) -> ImportReport:
    """Import ``folder/tasks.jsonl`` and ``folder/comments.jsonl``."""
    folder = Path(folder)
    for name in ("tasks.jsonl", "comments.jsonl"):
        if not (folder / name).is_file():
            raise TaskStoreError(f"{folder}: {name} is missing (a task store folder holds tasks.jsonl and comments.jsonl)")
    return import_jsonl(conn, folder / "tasks.jsonl", folder / "comments.jsonl")


def indexed_comments(conn: sqlite3.Connection, space: str) -> list[tuple[int, int, str, str]]:
    """Every indexed comment of ``space`` as ``(comment_id, task_id, indexed_text, ts)``.

    The same redacted, normalised text the FTS5 index holds, oldest first; for a second
    ranker over the same corpus. Callers exclude the current task themselves.
    """
    return [
        (int(r[0]), int(r[1]), r[2], r[3])
        for r in conn.execute(
            "SELECT c.id, c.task, c.indexed, c.ts FROM comments c JOIN tasks t ON t.id = c.task"
            " WHERE t.space = ? AND c.indexed IS NOT NULL ORDER BY c.ts_utc, c.id",
            (space,),
        )
    ]
