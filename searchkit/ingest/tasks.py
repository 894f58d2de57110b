"""The task store (SPEC T): SQLite tables for spaces, tasks and comments, and an FTS5 trigram
index over each comment's indexed text; the importer from the JSON-lines format of
WORKSPACE.md; the indexing rules of T2.

Indexing rules (T2): requests, interjections, results, asks, handoffs, and progress of type
``thinking`` or ``summary`` are indexed by their body; a tool run (progress of type ``tool``) is
indexed as ``tool: NAME`` alone; attachments append their file names only. Everything else
(``comment``, ``interjection_ack``, unknown kinds and progress types) is not indexed. Indexed text
is NFKC-normalised and redacted (``searchkit.ingest.redact``); each attachment name is redacted as
a file name too (``redact_file_name``). Task titles are redacted at import (T6): ``tasks.title`` holds
the title every tool shows, ``tasks.title_raw`` the title as imported.

Storage safety (issue 8 items 5-6):

- An import is all-or-nothing. Both files are read and every row validated before the store is
  touched (duplicate ids within the import, a task or comment that would change space, comments of
  unknown tasks are refused, naming the ids); then tasks and comments are written in one
  ``BEGIN IMMEDIATE`` transaction, so a failure or a kill leaves the previous state.
- A refused import leaves an existing target byte for byte as it was. The target is checked before
  it is opened for writing (``check_target``): a file that is not SQLite, or an SQLite database that
  is not a task store (other tables, or ours without their columns), is refused without SQLite
  writing anything; the data checks against the store come before the transaction's first write;
  and a store in rollback-journal mode is switched to WAL only after its import committed.
- A store that does not exist yet is built in a temporary file beside it and hard-linked into
  place only when complete (``os.link`` never replaces a store another importer made meanwhile):
  a failed or killed first import leaves no database file. Temporary files of killed importers are
  removed by the next import.
- Writers wait for each other (busy timeout, then retries until ``timeout``); a store that stays
  locked raises ``TaskStoreLocked``, which says so.
- The importer keeps the store in WAL mode, so searches read while an import commits. Readers
  (``open_readonly``) open the file with ``mode=ro``: they never write the store file or change its
  journal mode. On a rollback-journal store nothing appears beside it. On a WAL store SQLite
  creates (or reuses) the ``-wal`` and ``-shm`` side files: a read must see what a concurrent import
  committed and must not have pages rewritten under it by that import's checkpoint, and SQLite
  coordinates both through those files; the reader adds no frame to the ``-wal``. ``immutable=1``
  would create no side file, but SQLite answers wrongly or reports corruption when an immutable
  file changes during a read, which is what an import running meanwhile does (a test shows it), so
  readers do not use it. (The importer's own schema check of a target does use it: it reads a few
  schema rows once, and repeats the read through ``mode=ro`` if that fails.)
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
import unicodedata
from contextlib import closing
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from searchkit.errors import SearchkitError
from searchkit.index import fts
from searchkit.ingest.redact import redact, redact_file_name

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
    updated_utc TEXT,
    title_raw   TEXT
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
CREATE INDEX IF NOT EXISTS comments_ts ON comments(ts_utc, id, task, folded);
"""
"""``tasks.title`` is the title as every tool shows it, redacted (``shown_title``, T6);
``tasks.title_raw`` the title as imported. A store made before ``title_raw`` existed is migrated by
its next import (``_migrate_titles``) and read through a redacting view until then (``open_readonly``)."""

TABLE_COLUMNS: Mapping[str, frozenset[str]] = {
    "spaces": frozenset({"slug", "title"}),
    "tasks": frozenset({"id", "space", "title", "state", "piece", "created", "updated", "updated_utc"}),
    "comments": frozenset({"id", "task", "author", "kind", "progress_type", "tool", "body", "attachments", "ts",
                           "ts_utc", "indexed", "folded"}),
}
"""The tables (and the columns each must have) that make an SQLite file a task store."""


DEFAULT_LOCK_TIMEOUT = 30.0
"""Seconds an importer waits for another writer before it reports the store as locked."""
READ_TIMEOUT = 10.0
"""Seconds a reader waits for a lock (only a rollback-journal store ever makes a reader wait)."""

_TEMP_PREFIX = ".{name}.import-"
_TEMP_NAME = re.compile(r"\.import-(?P<pid>[0-9]+)-[0-9a-f]+\.tmp(?:-wal|-shm|-journal)?$")


class TaskStoreError(SearchkitError, ValueError):
    """Bad input to the task store (a malformed row, a missing task, no FTS5 to build with)."""


class TaskStoreLocked(TaskStoreError):
    """Another process held the store's write lock for longer than the importer would wait."""


@dataclass(frozen=True)
class ImportReport:
    """What an import did: rows written, comments indexed, and why the others were not."""

    tasks: int = 0
    comments: int = 0
    indexed: int = 0
    not_indexed: Mapping[str, int] = field(default_factory=dict)
    redacted: int = 0
    created: bool = False
    """True when this import created the store file (``import_into``)."""
    titles_redacted: int = 0
    """Task titles that redaction changed (``redacted`` counts comments)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "comments": self.comments,
            "indexed": self.indexed,
            "not_indexed": dict(self.not_indexed),
            "redacted": self.redacted,
            "created": self.created,
            "titles_redacted": self.titles_redacted,
        }


def normalize(text: str) -> str:
    """NFKC-normalise ``text`` (full-width Latin and digits become ASCII, ideographic space a space)."""
    return unicodedata.normalize("NFKC", text)


def fold(text: str) -> str:
    """The case folding used by the LIKE path (Unicode-aware, unlike SQLite's ASCII-only LIKE)."""
    return text.casefold()


def _show(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters: error messages never echo a huge value."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"<deeply nested {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def utc_sort_key(ts: str, what: str = "ts") -> str:
    """An ISO time as a sortable UTC string (naive times are taken as UTC)."""
    if not isinstance(ts, str) or not ts:
        raise TaskStoreError(f"{what} must be an ISO 8601 time string, got {_show(ts)}")
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        raise TaskStoreError(f"{what} is not an ISO 8601 time: {_show(ts)} (e.g. 2026-06-20T10:00:00Z)") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (OverflowError, ValueError):
        raise TaskStoreError(f"{what} is out of range: {_show(ts)}") from None


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
    plus ``attachments: a.pdf, b.png`` (file names only); then NFKC and redaction. Each file
    name is redacted as a file name too (``password=attsecret55.txt`` reads
    ``password=[redacted].txt``: a file name is never a value to the text rules).
    """
    texts = _index_texts(comment)
    return None if texts is None else texts[1]


def _index_texts(comment: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(unredacted, redacted)`` index text of a comment, or None when it is not indexed."""
    if not_indexed_reason(comment) is not None:
        return None
    if comment.get("kind") == "progress" and comment.get("progress_type") == TOOL_PROGRESS_TYPE:
        text = f"tool: {comment['tool']}"
    else:
        text = str(comment.get("body") or "")
    text = _clean(text)
    names = [_clean(n) for n in _attachment_names(comment.get("attachments") or ())]
    if not names:
        return text, redact(text)
    shown = [redact_file_name(n) for n in names]
    head = f"{text}\n" if text else ""
    return f"{head}attachments: {', '.join(names)}", redact(f"{head}attachments: {', '.join(shown)}")


def _clean(text: str) -> str:
    return normalize(text).replace("\x00", " ")


def shown_title(title: str) -> str:
    """A task title as search results, ``list_tasks`` and ``around_ref`` show it (T6): redacted
    like indexed text (secrets, e-mail addresses), otherwise as written (no NFKC). The store keeps
    this in ``tasks.title`` and the title as imported in ``tasks.title_raw``."""
    return redact(title)


# --------------------------------------------------------------------------- opening a store

def _schema_statements() -> list[str]:
    return [s.strip() for s in SCHEMA.split(";") if s.strip()]


def _ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the tables (and the FTS5 table where FTS5 is available) inside the caller's transaction;
    migrate the titles of a store made before ``title_raw``."""
    for stmt in _schema_statements():
        conn.execute(stmt)
    _migrate_titles(conn)
    if fts.fts5_available(conn):
        fts.create_trigram_table(conn, FTS_TABLE, ("text",))


def _columns(conn: sqlite3.Connection, table: str, schema: str = "main") -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA {schema}.table_info({table})")}


def _migrate_titles(conn: sqlite3.Connection) -> None:
    """A store made before titles were redacted: add ``title_raw`` and redact ``title`` (T6)."""
    if "title_raw" in _columns(conn, "tasks"):
        return
    conn.execute("ALTER TABLE tasks ADD COLUMN title_raw TEXT")
    rows = conn.execute("SELECT id, title FROM tasks").fetchall()
    conn.executemany("UPDATE tasks SET title_raw = ?, title = ? WHERE id = ?",
                     [(title, shown_title(title), tid) for tid, title in rows])


def connect(path: str | Path, *, create: bool = True) -> sqlite3.Connection:
    """Open a task store for writing (created when missing, WAL mode for a file database).

    The schema is created when missing; the FTS5 table only where FTS5 is available (a store
    without it still lists tasks; search answers with T8's message). ``create=False`` opens an
    existing store read-only instead (``open_readonly``).
    """
    if not create:
        return open_readonly(path)
    path = str(path)
    conn = sqlite3.connect(path, timeout=DEFAULT_LOCK_TIMEOUT)
    conn.execute("PRAGMA foreign_keys = ON")
    if path != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
    with conn:
        _ensure_schema(conn)
    return conn


def open_readonly(path: str | Path, *, timeout: float | None = None) -> sqlite3.Connection:
    """Open an existing task store read-only (``mode=ro``): never written, journal mode unchanged.

    Works on a WAL and on a rollback-journal store; ``timeout`` (default ``READ_TIMEOUT``) is how
    long a read waits for a writer's lock. Raises ``TaskStoreError`` when ``path`` is missing or
    not a regular file (a FIFO would block the open).
    """
    if str(path) == ":memory:":
        raise TaskStoreError("a read-only task store must be a file, not ':memory:'")
    p = Path(path)
    if not p.exists():
        raise TaskStoreError(f"task store {str(path)!r} does not exist; create it with `searchkit tasks import`")
    if not p.is_file():
        raise TaskStoreError(f"task store {str(path)!r} is not a regular file")
    conn = sqlite3.connect(p.absolute().as_uri() + "?mode=ro", uri=True,
                           timeout=READ_TIMEOUT if timeout is None else timeout)
    try:
        _shown_titles_view(conn)
    except sqlite3.Error:
        pass  # not a task store, or locked: the caller's first query says so
    return conn


def _shown_titles_view(conn: sqlite3.Connection) -> None:
    """On a store made before ``title_raw`` (titles not yet redacted in the file), a ``temp.tasks`` view
    that shows redacted titles; it shadows ``main.tasks`` for this connection alone (the store is not
    written; its next import migrates it)."""
    cols = _columns(conn, "tasks")
    if not cols or "title_raw" in cols:
        return
    conn.create_function("searchkit_shown_title", 1, shown_title, deterministic=True)
    conn.execute(
        "CREATE TEMP VIEW tasks AS SELECT id, space, searchkit_shown_title(title) AS title, state, piece, created,"
        " updated, updated_utc, title AS title_raw FROM main.tasks"
    )


def is_lock_error(error: BaseException) -> bool:
    """True for SQLite's "database is locked" / "database is busy" errors."""
    if not isinstance(error, sqlite3.OperationalError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) in (5, 6):  # SQLITE_BUSY, SQLITE_LOCKED
        return True
    msg = str(error).lower()
    return "database is locked" in msg or "database is busy" in msg or "database table is locked" in msg


def has_fts(conn: sqlite3.Connection) -> bool:
    """True when the store has its FTS table and this connection's SQLite can read it."""
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name=?", (FTS_TABLE,)).fetchone()
    return bool(row) and fts.fts5_available(conn)


# --------------------------------------------------------------------------- validation (no store)

@dataclass(frozen=True)
class _Task:
    id: int
    space: str
    title: str
    state: str
    piece: str
    created: str | None
    updated: str | None
    updated_utc: str | None
    where: str
    shown: str = ""
    """The title as shown (``shown_title``), stored in ``tasks.title``."""


@dataclass(frozen=True)
class _Comment:
    id: int
    task: int
    author: str
    kind: str
    progress_type: str | None
    tool: str | None
    body: str
    attachments: str
    ts: str
    ts_utc: str
    indexed: str | None
    skip_reason: str | None
    redacted: bool
    where: str


def _req(row: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in row or row[key] is None:
        raise TaskStoreError(f"{where}: field {key!r} is required")
    return row[key]


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not (1 <= value < 2**63):
        raise TaskStoreError(f"{what} must be a positive integer, got {_show(value)}")
    return value


def _str(value: Any, what: str, *, optional: bool = False, nonempty: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TaskStoreError(f"{what} must be a string, got {_show(value)}")
    if nonempty and not value.strip():
        raise TaskStoreError(f"{what} must be a non-empty string, got {_show(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise TaskStoreError(f"{what} is not valid Unicode text (a lone surrogate): {_show(value)}") from None
    return value


def _validate_task(row: Mapping[str, Any], where: str) -> _Task:
    if not isinstance(row, Mapping):
        raise TaskStoreError(f"{where}: a task must be a JSON object, got {_show(row)}")
    tid = _int(_req(row, "id", where), f"{where}: id")
    space = _req(row, "space", where)
    if not isinstance(space, str) or not space.strip():
        raise TaskStoreError(f"{where}: space must be a non-empty string, got {_show(space)}")
    _str(space, f"{where}: space")
    state = row.get("state", "open")
    if state not in TASK_STATES:
        raise TaskStoreError(f"{where}: state must be one of {TASK_STATES}, got {_show(state)}")
    title = _str(row.get("title"), f"{where}: title", optional=True) or ""
    piece = _str(row.get("piece"), f"{where}: piece", optional=True) or ""
    created = row.get("created")
    if created is not None:
        utc_sort_key(created, f"{where}: created")
    updated = row.get("updated") or created
    updated_utc = utc_sort_key(updated, f"{where}: updated") if updated else None
    return _Task(tid, space, title, state, piece, created, updated, updated_utc, where, shown_title(title))


def _validate_comment(row: Mapping[str, Any], where: str) -> _Comment:
    if not isinstance(row, Mapping):
        raise TaskStoreError(f"{where}: a comment must be a JSON object, got {_show(row)}")
    cid = _int(_req(row, "id", where), f"{where}: id")
    task = _int(_req(row, "task", where), f"{where}: task")
    author = _str(_req(row, "author", where), f"{where}: author", nonempty=True)
    kind = _str(_req(row, "kind", where), f"{where}: kind", nonempty=True)
    ts = _req(row, "ts", where)
    ts_utc = utc_sort_key(ts, f"{where}: ts")
    progress_type = _str(row.get("progress_type"), f"{where}: progress_type", optional=True)
    tool = _str(row.get("tool"), f"{where}: tool", optional=True)
    body = _str(row.get("body"), f"{where}: body", optional=True) or ""
    attachments = row.get("attachments") or []
    if not isinstance(attachments, (list, tuple)):
        raise TaskStoreError(f"{where}: attachments must be a list of file names, got {_show(attachments)}")
    for i, a in enumerate(attachments):
        _str(a, f"{where}: attachments[{i}]")
    clean = {"kind": kind, "progress_type": progress_type, "tool": tool, "body": body, "attachments": attachments}
    texts = _index_texts(clean)
    raw, text = (None, None) if texts is None else texts
    return _Comment(
        cid, task, author, kind, progress_type, tool, body, json.dumps(list(attachments), ensure_ascii=False),
        ts, ts_utc, text, None if text is not None else (not_indexed_reason(clean) or "unknown"),
        text is not None and text != raw, where,
    )


def _no_duplicates(items: Sequence[_Task] | Sequence[_Comment], what: str) -> None:
    first: dict[int, str] = {}
    for item in items:
        if item.id in first:
            raise TaskStoreError(
                f"{item.where}: {what} id {item.id} appears more than once in this import "
                f"(also at {first[item.id]}); nothing imported"
            )
        first[item.id] = item.where


def _validate(
    task_rows: Iterable[tuple[str, Any]], comment_rows: Iterable[tuple[str, Any]]
) -> tuple[list[_Task], list[_Comment]]:
    """Validate every row (``(where, row)`` pairs) and the ids within the import; touches no store."""
    tasks = [_validate_task(row, where) for where, row in task_rows]
    _no_duplicates(tasks, "task")
    comments = [_validate_comment(row, where) for where, row in comment_rows]
    _no_duplicates(comments, "comment")
    return tasks, comments


def _numbered(rows: Iterable[Mapping[str, Any]], where: str) -> list[tuple[str, Any]]:
    return [(f"{where} {i}", row) for i, row in enumerate(rows, 1)]


# --------------------------------------------------------------------------- writing (one transaction)

def _check_against_store(conn: sqlite3.Connection, tasks: Sequence[_Task], comments: Sequence[_Comment]) -> None:
    """Refuse what would re-home a task or a comment into another space, or name an unknown task.

    Reads only; a store without tables yet (a new or empty file) holds no task."""
    if not {"tasks", "comments"} <= _tables(conn):
        _check_against_store_empty(tasks, comments)
        return
    new_space = {t.id: t.space for t in tasks}
    for t in tasks:
        row = conn.execute("SELECT space FROM tasks WHERE id = ?", (t.id,)).fetchone()
        if row is not None and row[0] != t.space:
            raise TaskStoreError(
                f"{t.where}: task {t.id} belongs to space {row[0]!r}; this import puts it in space {t.space!r} "
                "(a task cannot change space); nothing imported"
            )
    store_space: dict[int, str | None] = {}
    for c in comments:
        space = new_space.get(c.task)
        if space is None:
            if c.task not in store_space:
                row = conn.execute("SELECT space FROM tasks WHERE id = ?", (c.task,)).fetchone()
                store_space[c.task] = None if row is None else row[0]
            space = store_space[c.task]
            if space is None:
                raise TaskStoreError(
                    f"{c.where}: task {c.task} does not exist; import tasks before comments "
                    "(or put the task in this import's tasks.jsonl); nothing imported"
                )
        old = conn.execute(
            "SELECT c.task, t.space FROM comments c JOIN tasks t ON t.id = c.task WHERE c.id = ?", (c.id,)
        ).fetchone()
        if old is not None and old[1] != space:
            raise TaskStoreError(
                f"{c.where}: comment {c.id} belongs to task {old[0]} in space {old[1]!r}; this import puts it "
                f"under task {c.task} in space {space!r} (a comment cannot move to another space); nothing imported"
            )


def _check_fts(conn: sqlite3.Connection, comments: Sequence[_Comment]) -> None:
    """Comments need FTS5 (to create the store's FTS table, or to write into it)."""
    if comments and not fts.fts5_available(conn):
        raise TaskStoreError(f"cannot index comments: the store has no FTS5 table. {fts.INSTALL_HINT}")


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")}


def _write(conn: sqlite3.Connection, tasks: Sequence[_Task], comments: Sequence[_Comment]) -> ImportReport:
    """Check against the store, then write; the caller holds the transaction (BEGIN IMMEDIATE).
    Every refusal comes before the first write."""
    _check_against_store(conn, tasks, comments)
    _check_fts(conn, comments)
    _ensure_schema(conn)
    if comments and not has_fts(conn):
        raise TaskStoreError(f"cannot index comments: the store has no FTS5 table. {fts.INSTALL_HINT}")
    conn.executemany("INSERT INTO spaces(slug) VALUES (?) ON CONFLICT(slug) DO NOTHING",
                     [(s,) for s in dict.fromkeys(t.space for t in tasks)])
    conn.executemany(
        "INSERT INTO tasks(id, space, title, title_raw, state, piece, created, updated, updated_utc)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET space = excluded.space,"
        " title = excluded.title, title_raw = excluded.title_raw, state = excluded.state, piece = excluded.piece,"
        " created = excluded.created, updated = excluded.updated, updated_utc = excluded.updated_utc",
        [(t.id, t.space, t.shown, t.title, t.state, t.piece, t.created, t.updated, t.updated_utc) for t in tasks],
    )
    conn.executemany(
        "INSERT INTO comments(id, task, author, kind, progress_type, tool, body, attachments, ts, ts_utc,"
        " indexed, folded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
        " task = excluded.task, author = excluded.author, kind = excluded.kind,"
        " progress_type = excluded.progress_type, tool = excluded.tool, body = excluded.body,"
        " attachments = excluded.attachments, ts = excluded.ts, ts_utc = excluded.ts_utc,"
        " indexed = excluded.indexed, folded = excluded.folded",
        [(c.id, c.task, c.author, c.kind, c.progress_type, c.tool, c.body, c.attachments, c.ts, c.ts_utc,
          c.indexed, fold(c.indexed) if c.indexed is not None else None) for c in comments],
    )
    if comments:
        conn.executemany(f"DELETE FROM {FTS_TABLE} WHERE rowid = ?", [(c.id,) for c in comments])
        conn.executemany(f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (?, ?)",
                         [(c.id, c.indexed) for c in comments if c.indexed is not None])
    skipped: dict[str, int] = {}
    for c in comments:
        if c.skip_reason is not None:
            skipped[c.skip_reason] = skipped.get(c.skip_reason, 0) + 1
    return ImportReport(
        tasks=len(tasks), comments=len(comments), indexed=sum(c.indexed is not None for c in comments),
        not_indexed=skipped, redacted=sum(c.redacted for c in comments),
        titles_redacted=sum(t.shown != t.title for t in tasks),
    )


def _transaction(conn: sqlite3.Connection, tasks: Sequence[_Task], comments: Sequence[_Comment]) -> ImportReport:
    """``_write`` in one ``BEGIN IMMEDIATE`` transaction on ``conn``: committed whole or rolled back.

    A transaction the caller left open on ``conn`` is committed first (as ``with conn:`` did).
    """
    if conn.in_transaction:
        conn.commit()
    conn.execute("BEGIN IMMEDIATE")
    try:
        rep = _write(conn, tasks, comments)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return rep


def add_tasks(conn: sqlite3.Connection, rows: Iterable[Mapping[str, Any]], *, where: str = "task") -> int:
    """Insert or update tasks given as WORKSPACE.md dicts, all or none; return how many were written."""
    tasks, _ = _validate(_numbered(rows, where), [])
    return _transaction(conn, tasks, []).tasks


def add_comments(
    conn: sqlite3.Connection, rows: Iterable[Mapping[str, Any]], *, where: str = "comment"
) -> ImportReport:
    """Insert or update comments (WORKSPACE.md dicts) and their FTS rows, all or none."""
    _, comments = _validate([], _numbered(rows, where))
    return _transaction(conn, [], comments)


def _read_jsonl_rows(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    p = Path(path)
    if not p.exists():
        raise TaskStoreError(f"{path}: no such file")
    if not p.is_file():
        raise TaskStoreError(f"{path}: not a regular file")
    rows = []
    try:
        with open(p, encoding="utf-8") as fh:
            n = 0
            for n, line in enumerate(fh, 1):  # noqa: B007
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise TaskStoreError(f"{path}:{n}: not valid JSON ({e.msg})") from None
                except RecursionError:
                    raise TaskStoreError(f"{path}:{n}: JSON nested too deeply") from None
                if not isinstance(obj, dict):
                    raise TaskStoreError(f"{path}:{n}: each line must be a JSON object")
                rows.append((f"{path}:{n}", obj))
    except UnicodeDecodeError:
        raise TaskStoreError(f"{path}:{n + 1}: not UTF-8 text") from None
    except OSError as e:
        raise TaskStoreError(f"{path}: cannot read ({e.strerror or e})") from None
    return rows


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file (blank lines skipped); errors name the file and line."""
    return [row for _, row in _read_jsonl_rows(path)]


def _read_and_validate(tasks_path: str | Path, comments_path: str | Path) -> tuple[list[_Task], list[_Comment]]:
    task_rows = _read_jsonl_rows(tasks_path)
    comment_rows = _read_jsonl_rows(comments_path)
    return _validate(task_rows, comment_rows)


def import_jsonl(
    conn: sqlite3.Connection, tasks_path: str | Path, comments_path: str | Path
) -> ImportReport:
    """Import ``tasks.jsonl`` and ``comments.jsonl`` (WORKSPACE.md) into ``conn``: validated whole
    first, then written in one transaction (all or nothing)."""
    tasks, comments = _read_and_validate(tasks_path, comments_path)
    return _transaction(conn, tasks, comments)


def source_files(folder: str | Path) -> tuple[Path, Path]:
    """``folder/tasks.jsonl`` and ``folder/comments.jsonl``; a missing one is a TaskStoreError."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TaskStoreError(f"{folder}: no such folder (a task store folder holds tasks.jsonl and comments.jsonl)")
    for name in ("tasks.jsonl", "comments.jsonl"):
        if not (folder / name).is_file():
            raise TaskStoreError(
                f"{folder}: {name} is missing (a task store folder holds tasks.jsonl and comments.jsonl)"
            )
    return folder / "tasks.jsonl", folder / "comments.jsonl"


def import_dir(conn: sqlite3.Connection, folder: str | Path) -> ImportReport:
    """Import ``folder/tasks.jsonl`` and ``folder/comments.jsonl`` into ``conn`` (all or nothing)."""
    return import_jsonl(conn, *source_files(folder))


# --------------------------------------------------------------------------- importing into a file

def import_into(
    db: str | Path, tasks_path: str | Path, comments_path: str | Path, *, timeout: float = DEFAULT_LOCK_TIMEOUT
) -> ImportReport:
    """Import the two JSON-lines files into the store file ``db``, all or nothing.

    Everything is read and validated before ``db`` is touched. An existing ``db`` must be a task store
    or an empty SQLite file (``check_target``); anything else is refused and left byte for byte as it
    was, and so is a store whose import is refused. An existing store is updated in one
    ``BEGIN IMMEDIATE`` transaction, waiting up to ``timeout`` seconds for other writers
    (``TaskStoreLocked`` after that). A new store is built in a temporary file beside ``db`` and
    linked into place only when complete; no file is left at ``db`` when the import fails.
    """
    tasks, comments = _read_and_validate(tasks_path, comments_path)
    db = Path(db)
    if str(db) == ":memory:":
        raise TaskStoreError("--db must be a file path, not ':memory:'")
    remove_stale_temp_files(db)
    if db.exists() or db.is_symlink():
        if not db.is_file():
            raise TaskStoreError(f"{db}: exists and is not a regular file (a task store is an SQLite file)")
        return _import_existing(db, tasks, comments, timeout)
    _check_against_store_empty(tasks, comments)  # a new store holds no other task
    return _import_new(db, tasks, comments, timeout)


SQLITE_MAGIC = b"SQLite format 3\x00"


def _schema_connection(db: Path, timeout: float, *, immutable: bool) -> sqlite3.Connection:
    """``immutable=1`` (no lock, nothing written beside the file) when ``immutable`` and no ``-wal`` file
    is there; else ``mode=ro``."""
    uri = db.absolute().as_uri()
    if immutable and not Path(f"{db}-wal").exists():
        return sqlite3.connect(uri + "?immutable=1", uri=True, timeout=timeout)
    return sqlite3.connect(uri + "?mode=ro", uri=True, timeout=timeout)


def check_target(db: str | Path, *, timeout: float = READ_TIMEOUT) -> bool:
    """Check, before anything is opened for writing, that an existing ``db`` is a task store or empty.

    A task store is an SQLite file with the tables and columns of ``TABLE_COLUMNS``, the FTS table and
    its shadow tables, and nothing else. Reads only: the file's first bytes (a file that is not SQLite
    is never opened by SQLite), then its schema through ``immutable=1`` (no lock, nothing created
    beside a foreign file; a failed read is repeated through ``mode=ro``). Returns True for a task
    store, False for an empty database (a zero-byte file or one without tables); raises
    ``TaskStoreError`` naming the reason (``... nothing imported``)."""
    db = Path(db)
    try:
        with open(db, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as e:
        raise TaskStoreError(f"{db}: cannot read ({e.strerror or e}); nothing imported") from None
    if not head:  # a zero-byte file is an empty SQLite database
        return False
    if head != SQLITE_MAGIC:
        raise TaskStoreError(f"{db}: exists and is not an SQLite file, so not a task store; nothing imported "
                             "(give --db a new path or an existing task store)")
    tables: set[str] | None = None
    for immutable in (True, False):
        try:
            with closing(_schema_connection(db, timeout, immutable=immutable)) as conn:
                tables = _tables(conn)
                if tables - _SQLITE_INTERNAL:
                    _check_task_store(db, conn, tables)
            break
        except sqlite3.Error as e:
            if not immutable:
                _raise_read_error(db, e)
    assert tables is not None
    return bool(tables - _SQLITE_INTERNAL)


_SQLITE_INTERNAL = frozenset({"sqlite_sequence", "sqlite_stat1", "sqlite_stat4"})


def _raise_read_error(db: Path, e: sqlite3.Error) -> None:
    if is_lock_error(e):
        raise TaskStoreLocked(f"{db}: the task store is locked by another process; nothing imported, "
                              "try again") from None
    raise TaskStoreError(f"{db}: not a readable SQLite database ({e}); nothing imported") from None


def _check_against_store_empty(tasks: Sequence[_Task], comments: Sequence[_Comment]) -> None:
    known = {t.id for t in tasks}
    missing = next((c for c in comments if c.task not in known), None)
    if missing is not None:
        raise TaskStoreError(
            f"{missing.where}: task {missing.task} does not exist; import tasks before comments "
            "(or put the task in this import's tasks.jsonl); nothing imported"
        )


def _check_task_store(db: Path, conn: sqlite3.Connection, tables: set[str]) -> None:
    """Refuse an SQLite file that is not a task store: other tables, or ours without their columns."""
    ours = set(TABLE_COLUMNS) | {FTS_TABLE} | _SQLITE_INTERNAL
    foreign = sorted(t for t in tables if t not in ours and not t.startswith(f"{FTS_TABLE}_"))
    missing = sorted(set(TABLE_COLUMNS) - tables)
    if foreign or missing:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        why = f"it has table(s) {shown}" if foreign else f"it lacks table(s) {', '.join(missing)}"
        raise TaskStoreError(f"{db}: an SQLite database that is not a task store ({why}); nothing imported "
                             "(give --db a new path or an existing task store)")
    for table, need in TABLE_COLUMNS.items():
        lacking = sorted(need - _columns(conn, table))
        if lacking:
            raise TaskStoreError(f"{db}: table {table} lacks column(s) {', '.join(lacking)}, so this is not a "
                                 "task store; nothing imported")


def _import_existing(db: Path, tasks: Sequence[_Task], comments: Sequence[_Comment], timeout: float) -> ImportReport:
    """Update an existing store (or fill an empty SQLite file), byte for byte unchanged when refused:
    the file is checked read-only first (``check_target``: an SQLite task store, or empty); then one
    transaction whose data checks (``_check_against_store``) come before its first write; the switch
    to WAL comes after the commit."""
    check_target(db, timeout=min(max(timeout, 0.0), READ_TIMEOUT))
    deadline = time.monotonic() + max(timeout, 0.0)
    delay = 0.05
    while True:
        remaining = max(deadline - time.monotonic(), 0.0)
        conn = None
        try:
            conn = sqlite3.connect(str(db), timeout=remaining, isolation_level=None)
            conn.execute("PRAGMA foreign_keys = ON")
            rep = _transaction(conn, tasks, comments)
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                try:
                    conn.execute("PRAGMA busy_timeout = 1000")
                    conn.execute("PRAGMA journal_mode = WAL")  # readers never wait for the next import
                except sqlite3.Error:
                    pass  # a reader holds the file: it stays in rollback mode, the import is committed
            return rep
        except sqlite3.Error as e:
            if not is_lock_error(e):
                raise TaskStoreError(f"{db}: cannot write the task store ({e}); nothing imported") from None
            if time.monotonic() >= deadline:
                raise TaskStoreLocked(
                    f"{db}: the task store is locked by another process (waited {timeout:g} s); "
                    "nothing imported, try again"
                ) from None
        finally:
            if conn is not None:
                conn.close()
        time.sleep(min(delay, max(deadline - time.monotonic(), 0.0)))
        delay = min(delay * 2, 1.0)


def _temp_files(db: Path) -> list[Path]:
    prefix = _TEMP_PREFIX.format(name=db.name)
    try:
        return [p for p in db.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return []


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def remove_stale_temp_files(db: str | Path) -> list[Path]:
    """Remove the temporary files that killed importers of ``db`` left beside it; return them."""
    removed = []
    for p in _temp_files(Path(db)):
        m = _TEMP_NAME.search(p.name)
        if m and not _pid_alive(int(m.group("pid"))):
            try:
                p.unlink()
                removed.append(p)
            except OSError:
                pass
    return removed


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _import_new(db: Path, tasks: Sequence[_Task], comments: Sequence[_Comment], timeout: float) -> ImportReport:
    parent = db.parent
    made: list[Path] = []
    for p in reversed([parent, *parent.parents]):
        if not p.exists():
            made.append(p)
    if parent.exists() and not parent.is_dir():
        raise TaskStoreError(f"{parent}: not a folder; cannot create the task store {db}")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TaskStoreError(f"{parent}: cannot create the folder for the task store ({e.strerror or e})") from None
    linked = False
    tmp = parent / f"{_TEMP_PREFIX.format(name=db.name)}{os.getpid()}-{os.urandom(4).hex()}.tmp"
    try:
        conn = sqlite3.connect(str(tmp), timeout=timeout, isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            rep = _transaction(conn, tasks, comments)
            conn.execute("PRAGMA journal_mode = WAL")
        finally:
            conn.close()
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        try:
            os.link(tmp, db)
            linked = True
        except FileExistsError:  # another importer created the store meanwhile: update theirs
            return _import_existing(db, tasks, comments, timeout)
        except OSError:  # no hard links here: write into the store directly (still one transaction)
            return _import_existing(db, tasks, comments, timeout)
        _fsync_dir(parent)
        return replace(rep, created=True)
    except sqlite3.Error as e:
        raise TaskStoreError(f"{db}: cannot create the task store ({e})") from None
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                Path(f"{tmp}{suffix}").unlink()
            except OSError:
                pass
        if not linked and not db.exists():
            for p in reversed(made):
                try:
                    p.rmdir()
                except OSError:
                    break


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
