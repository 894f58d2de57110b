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
  schema rows once, and repeats the read through ``mode=ro`` if that fails.) One exception: a WAL
  store in a folder the reader cannot write, with no ``-wal`` beside it (``chmod 0400`` store in a
  ``0500`` folder), cannot get its ``-shm``; no writer can be at work there, so it is read through
  ``immutable=1`` (SQLite's documented way to read such a file).
- A reader checks what it opened (``open_readonly``): a missing, empty or non-SQLite file, an SQLite
  database without the task store's tables, and (``check_fts``) a store whose FTS table is missing
  while this SQLite has FTS5 are each refused with a ``TaskStoreError`` saying so. Only a genuinely
  missing FTS5 module is T8's plain "not available" answer.

Privacy (issue 27 items 1, 7): the store holds raw comment text, so it is owner-only like the index
and the embedding cache. A new store, its ``-wal`` / ``-shm`` / ``-journal`` and the importer's
temporary files are created ``0600`` (SQLite gives the side files the store's mode), a folder the
importer creates for it ``0700``. An import tightens an existing store (and its side files) that
others could read to ``0600``, logging a warning; a reader does the same where it owns the file and
logs a warning where it cannot. Comment authors are redacted like titles: ``comments.author`` holds
the author every tool shows (and the ``author`` filter matches), ``comments.author_raw`` the author
as imported.

Task states (seed 003, issue 28 item 6): the platform's state is kept as given (``tasks.state_raw``:
``実行中``, ``完了``, ``中断``, ``open``, ``interrupted``...); ``tasks.state`` holds its class,
``open`` or ``closed``, by ``STATE_CLASSES`` (an unknown state is ``open``), which
``list_tasks(state=...)`` filters on. Search ignores states.

Volume (issue 27 item 17): the JSON-lines files are streamed line by line; a line longer than
``max_item_bytes`` (default ``DEFAULT_MAX_ITEM_BYTES``) is skipped unread, named with its reason in
the import report, and so are the comments whose task is unknown once a task line was skipped.
Every other problem still refuses the whole import.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import stat
import time
import unicodedata
from contextlib import closing
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping, Sequence

from searchkit.errors import SearchkitError
from searchkit.index import fts
from searchkit.ingest.redact import redact, redact_file_name
from searchkit.util import FileProblem, open_regular, parse_json_text

log = logging.getLogger(__name__)

FTS_TABLE = "comment_fts"

COMMENT_KINDS: tuple[str, ...] = (
    "request", "interjection", "interjection_ack", "comment", "result", "ask", "progress", "handoff",
)
"""Comment kinds of WORKSPACE.md. Other kinds are stored but never indexed."""

INDEXED_KINDS: frozenset[str] = frozenset({"request", "interjection", "result", "ask", "handoff"})
INDEXED_PROGRESS_TYPES: frozenset[str] = frozenset({"thinking", "summary"})
TOOL_PROGRESS_TYPE = "tool"
TASK_STATES: tuple[str, ...] = ("open", "closed")
"""The two classes a task's state falls in (``tasks.state``; ``list_tasks(state=...)``)."""

STATE_CLASSES: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys((
        "open", "opened", "new", "todo", "to_do", "pending", "queued", "waiting", "running", "in_progress",
        "active", "started", "paused", "blocked", "review", "in_review",
        "実行中", "進行中", "待機中", "未着手", "対応中", "作業中", "保留",
        "открыта", "открыт", "новая", "в_работе", "выполняется", "ожидает",
    ), "open"),
    **dict.fromkeys((
        "closed", "done", "completed", "complete", "finished", "resolved", "interrupted", "aborted",
        "cancelled", "canceled", "failed", "stopped", "archived",
        "完了", "中断", "終了", "失敗", "キャンセル", "取り消し",
        "закрыта", "закрыт", "выполнена", "завершена", "прервана", "отменена",
    ), "closed"),
})
"""A platform's task state (``state_key``: NFKC, case-folded, spaces and hyphens as ``_``) -> its
class. Running, waiting or paused work is ``open``; finished, interrupted, cancelled or failed work
is ``closed``."""
UNKNOWN_STATE_CLASS = "open"
"""The class of a state ``STATE_CLASSES`` does not know: a task counts as closed only when its state
says that it ended, so ``list --state open`` never hides a task that may still be running."""
MAX_STATE_CHARS = 100

DEFAULT_MAX_ITEM_BYTES = 2_000_000
"""The longest JSON line (one task or one comment, in bytes) an import reads; a longer one is skipped
with its reason in the report (``tasks import --max-item-bytes``)."""
_SKIP_CHUNK = 1 << 20

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
    title_raw   TEXT,
    state_raw   TEXT
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
    folded        TEXT,
    author_raw    TEXT
);
CREATE INDEX IF NOT EXISTS comments_task_ts ON comments(task, ts_utc, id);
CREATE INDEX IF NOT EXISTS comments_ts ON comments(ts_utc, id, task, folded);
"""
"""``tasks.title`` is the title as every tool shows it, redacted (``shown_title``, T6);
``tasks.title_raw`` the title as imported. ``tasks.state`` is the state's class (``open`` /
``closed``), ``tasks.state_raw`` the state as imported. ``comments.author`` is the author as every
tool shows it, redacted (``shown_author``), ``comments.author_raw`` as imported. A store made before
one of the ``*_raw`` columns existed is migrated by its next import (``_migrate``) and read through
a view that shows the same until then (``open_readonly``)."""

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
class SkippedItem:
    """A line of an import file left out, and why: ``too_large`` (over the item cap) or
    ``task_skipped`` (a comment whose task is unknown once a task line was skipped)."""

    where: str
    reason: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"where": self.where, "reason": self.reason, "detail": self.detail}


@dataclass(frozen=True)
class ImportReport:
    """What an import did: rows written, comments indexed, why the others were not, and the lines
    skipped (``skipped``)."""

    tasks: int = 0
    comments: int = 0
    indexed: int = 0
    not_indexed: Mapping[str, int] = field(default_factory=dict)
    redacted: int = 0
    created: bool = False
    """True when this import created the store file (``import_into``)."""
    titles_redacted: int = 0
    """Task titles that redaction changed (``redacted`` counts comments)."""
    skipped: tuple[SkippedItem, ...] = ()
    searchable: bool = True
    """False when this SQLite has no FTS5: rows were written without the full-text index (T8)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "comments": self.comments,
            "indexed": self.indexed,
            "not_indexed": dict(self.not_indexed),
            "redacted": self.redacted,
            "created": self.created,
            "titles_redacted": self.titles_redacted,
            "skipped": [s.to_dict() for s in self.skipped],
            "searchable": self.searchable,
        }


def normalize(text: str) -> str:
    """NFKC-normalise ``text`` (full-width Latin and digits become ASCII, ideographic space a space)."""
    return unicodedata.normalize("NFKC", text)


def fold(text: str) -> str:
    """The case folding used by the LIKE path (Unicode-aware, unlike SQLite's ASCII-only LIKE)."""
    return text.casefold()


def _show(value: Any) -> str:
    """What ``value`` is, never what it holds (issue 27 item 8: an error about a bad line of an
    imported file must not echo the file, which may hold a secret): ``a string of 12 characters``,
    ``a number``, ``a list of 2 items``; ``true`` / ``false`` / ``null`` as they are."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, str):
        return f"a string of {len(value)} character{'s' if len(value) != 1 else ''}" if value else "an empty string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def utc_sort_key(ts: str, what: str = "ts") -> str:
    """An ISO time as a sortable UTC string (naive times are taken as UTC)."""
    if not isinstance(ts, str) or not ts:
        raise TaskStoreError(f"{what} must be an ISO 8601 time string, got {_show(ts)}")
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        raise TaskStoreError(f"{what} is not an ISO 8601 time (e.g. 2026-06-20T10:00:00Z)") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (OverflowError, ValueError):
        raise TaskStoreError(f"{what} is an ISO 8601 time out of range") from None


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


def shown_author(author: str) -> str:
    """A comment's author as every tool shows it (issue 27 item 7): redacted like titles. The store
    keeps this in ``comments.author`` (the ``author`` filter matches it) and the author as imported
    in ``comments.author_raw``."""
    return redact(author)


def state_key(state: str) -> str:
    """A state as ``STATE_CLASSES`` is keyed: NFKC, case-folded, runs of spaces and hyphens as ``_``."""
    return re.sub(r"[\s\-]+", "_", normalize(state).strip().casefold())


def state_class(state: str) -> str:
    """``open`` or ``closed`` for a platform's task state (``STATE_CLASSES``; unknown: ``open``)."""
    return STATE_CLASSES.get(state_key(state), UNKNOWN_STATE_CLASS)


# --------------------------------------------------------------------------- opening a store

def _schema_statements() -> list[str]:
    return [s.strip() for s in SCHEMA.split(";") if s.strip()]


def _ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the tables (and the FTS5 table where FTS5 is available) inside the caller's transaction;
    migrate a store made before a ``*_raw`` column (``_migrate``). An FTS table created here over
    comments already stored (a store imported where SQLite had no FTS5, or whose FTS table was
    dropped) is filled from their indexed text."""
    for stmt in _schema_statements():
        conn.execute(stmt)
    _migrate(conn)
    if fts.fts5_available(conn) and fts.create_trigram_table(conn, FTS_TABLE, ("text",)):
        conn.execute(f"INSERT INTO {FTS_TABLE}(rowid, text) SELECT id, indexed FROM comments"
                     " WHERE indexed IS NOT NULL")


def _columns(conn: sqlite3.Connection, table: str, schema: str = "main") -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA {schema}.table_info({table})")}


def _migrate(conn: sqlite3.Connection) -> None:
    """A store made before titles, authors or states had their ``*_raw`` column: add it, keep the
    value as imported there, and redact what tools show (titles T6, authors issue 27 item 7)."""
    tasks, comments = _columns(conn, "tasks"), _columns(conn, "comments")
    if "title_raw" not in tasks:
        conn.execute("ALTER TABLE tasks ADD COLUMN title_raw TEXT")
        rows = conn.execute("SELECT id, title FROM tasks").fetchall()
        conn.executemany("UPDATE tasks SET title_raw = ?, title = ? WHERE id = ?",
                         [(title, shown_title(title), tid) for tid, title in rows])
    if "state_raw" not in tasks:
        conn.execute("ALTER TABLE tasks ADD COLUMN state_raw TEXT")
        conn.execute("UPDATE tasks SET state_raw = state")
    if "author_raw" not in comments:
        conn.execute("ALTER TABLE comments ADD COLUMN author_raw TEXT")
        conn.execute("UPDATE comments SET author_raw = author")
        authors = [r[0] for r in conn.execute("SELECT DISTINCT author FROM comments")]
        conn.executemany("UPDATE comments SET author = ? WHERE author_raw = ?",
                         [(shown_author(a), a) for a in authors if shown_author(a) != a])


def connect(path: str | Path, *, create: bool = True) -> sqlite3.Connection:
    """Open a task store for writing (created ``0600`` when missing, WAL mode for a file database).

    The schema is created when missing; the FTS5 table only where FTS5 is available (a store
    without it still lists tasks; search answers with T8's message). ``create=False`` opens an
    existing store read-only instead (``open_readonly``).
    """
    if not create:
        return open_readonly(path)
    path = str(path)
    if path != ":memory:":
        _create_private(Path(path))
        make_private(Path(path))
    conn = sqlite3.connect(path, timeout=DEFAULT_LOCK_TIMEOUT)
    conn.execute("PRAGMA foreign_keys = ON")
    if path != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
    with conn:
        _ensure_schema(conn)
    return conn


# --------------------------------------------------------------------------- owner-only files

SIDE_FILES: tuple[str, ...] = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a store; they hold its text too."""


def _create_private(path: Path) -> bool:
    """Create ``path`` empty and ``0600`` unless it exists; True when it did. SQLite gives the
    ``-wal`` / ``-shm`` / ``-journal`` it makes beside a file that file's mode."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def make_private(db: str | Path) -> None:
    """Make a store and its side files that others could read ``0600`` (issue 27 item 1), logging a
    warning naming the files and their old modes; where a file cannot be changed (another user's),
    log a warning that it stays readable. Changes no content."""
    if os.name != "posix" or str(db) == ":memory:":
        return
    tightened: list[str] = []
    failed: list[str] = []
    for p in [Path(db), *(Path(f"{db}{suffix}") for suffix in SIDE_FILES)]:
        try:
            st = os.stat(p)
        except OSError:  # no such side file
            continue
        mode = stat.S_IMODE(st.st_mode)
        if not stat.S_ISREG(st.st_mode) or not mode & 0o077:
            continue
        try:
            os.chmod(p, mode & 0o700)
            tightened.append(f"{p.name} {mode:04o}")
        except OSError as e:
            failed.append(f"{p.name} {mode:04o} ({e.strerror or e})")
    if tightened:
        log.warning("task store %s was readable by others (%s): made it 0600; it holds the raw text of "
                    "every comment", db, ", ".join(tightened))
    if failed:
        log.warning("task store %s is readable by others and could not be made 0600: %s; it holds the raw "
                    "text of every comment, ask its owner to run chmod 600", db, ", ".join(failed))


def _make_folders_private(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents ``0700``; return those it created, outermost first."""
    made = [p for p in reversed([folder, *folder.parents]) if not p.exists()]
    for p in made:
        try:
            p.mkdir(mode=0o700)
        except FileExistsError:
            pass
    return made


# --------------------------------------------------------------------------- reading a store

def open_readonly(path: str | Path, *, timeout: float | None = None) -> sqlite3.Connection:
    """Open an existing task store read-only (``mode=ro``): never written, journal mode unchanged.

    Works on a WAL and on a rollback-journal store, and on a WAL store in a folder this user cannot
    write (read through ``immutable=1`` when no ``-wal`` is beside it); ``timeout`` (default
    ``READ_TIMEOUT``) is how long a read waits for a writer's lock. A store others could read is made
    ``0600`` where this user owns it, with a warning (``make_private``).

    Raises:
        TaskStoreError: ``path`` is missing, not a regular file (a FIFO would block the open), empty,
            not SQLite, or an SQLite database that is not a task store, each said as such;
            ``TaskStoreLocked`` when a writer holds it past ``timeout``.
    """
    if str(path) == ":memory:":
        raise TaskStoreError("a read-only task store must be a file, not ':memory:'")
    p = Path(path)
    _check_store_file(p)
    make_private(p)
    conn = _connect_readonly(p, READ_TIMEOUT if timeout is None else timeout)
    try:
        _check_task_store(p, conn, _tables(conn), suffix="")
        _compat_views(conn)
    except sqlite3.Error as e:
        conn.close()
        _raise_read_error(p, e, suffix="")
    except BaseException:
        conn.close()
        raise
    return conn


def _check_store_file(p: Path) -> None:
    """The path is a regular file, not empty (checked with ``stat`` only: opening and closing a
    descriptor of the file would drop the POSIX locks SQLite connections of this process hold on it,
    so a file that is not SQLite is told apart by SQLite's own answer, ``_raise_read_error``)."""
    try:
        st = p.stat()
    except FileNotFoundError:
        raise TaskStoreError(f"task store {str(p)!r} does not exist; create it with `searchkit tasks import`") \
            from None
    except OSError as e:
        raise TaskStoreError(f"task store {str(p)!r} cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise TaskStoreError(f"task store {str(p)!r} is not a regular file")
    if st.st_size == 0 and not Path(f"{p}-wal").exists():
        raise TaskStoreError(f"{p}: an empty file, not a task store; create one with `searchkit tasks import`")


_NO_SHM = (8 | 5 << 8, 8 | 6 << 8)
"""SQLITE_READONLY_CANTINIT, SQLITE_READONLY_DIRECTORY: a WAL store whose ``-shm`` cannot be made."""


def _connect_readonly(p: Path, timeout: float) -> sqlite3.Connection:
    """``mode=ro``; ``immutable=1`` when SQLite cannot open a WAL store's ``-shm`` (a folder this user
    cannot write) and no ``-wal`` is beside it: nothing uncheckpointed, and no writer at work."""
    uri = p.absolute().as_uri()
    conn = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=timeout)
    try:
        conn.execute("SELECT count(*) FROM main.sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as e:
        conn.close()
        code = getattr(e, "sqlite_errorcode", 0) or 0
        if code not in _NO_SHM or Path(f"{p}-wal").exists() or os.access(p.parent, os.W_OK):
            _raise_read_error(p, e, suffix="")
    except sqlite3.Error as e:
        conn.close()
        _raise_read_error(p, e, suffix="")
    return sqlite3.connect(uri + "?immutable=1", uri=True, timeout=timeout)


def _compat_views(conn: sqlite3.Connection) -> None:
    """On a store made before a ``*_raw`` column, ``temp`` views that show what a migrated store shows
    (redacted titles and authors, the state as imported); they shadow ``main.tasks`` /
    ``main.comments`` for this connection alone (the store is not written; its next import
    migrates it)."""
    tasks, comments = _columns(conn, "tasks"), _columns(conn, "comments")
    if not {"title_raw", "state_raw"} <= tasks:
        conn.create_function("searchkit_shown_title", 1, shown_title, deterministic=True)
        title, title_raw = ("title", "title_raw") if "title_raw" in tasks else ("searchkit_shown_title(title)", "title")
        state_raw = "state_raw" if "state_raw" in tasks else "state"
        conn.execute(
            f"CREATE TEMP VIEW tasks AS SELECT id, space, {title} AS title, state, piece, created, updated,"
            f" updated_utc, {title_raw} AS title_raw, {state_raw} AS state_raw FROM main.tasks"
        )
    if "author_raw" not in comments:
        conn.create_function("searchkit_shown_author", 1, shown_author, deterministic=True)
        conn.execute(
            "CREATE TEMP VIEW comments AS SELECT id, task, searchkit_shown_author(author) AS author, kind,"
            " progress_type, tool, body, attachments, ts, ts_utc, indexed, folded, author AS author_raw"
            " FROM main.comments"
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
    return _has_fts_table(conn) and fts.fts5_available(conn)


def _has_fts_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM main.sqlite_master WHERE name=?", (FTS_TABLE,)).fetchone() is not None


def check_fts(conn: sqlite3.Connection) -> bool:
    """Whether a search can run on this store: True when it can; False when this SQLite has no FTS5
    (T8's plain answer). A store without its FTS table where FTS5 is there (the table was dropped, or
    the store was imported where SQLite had no FTS5) raises ``TaskStoreError`` naming the file."""
    if not fts.fts5_available(conn):
        return False
    if _has_fts_table(conn):
        return True
    row = conn.execute("PRAGMA main.database_list").fetchone()
    name = (row[2] if row else "") or "the task store"
    raise TaskStoreError(f"{name}: the task store has no full-text index (its table {FTS_TABLE} is missing: "
                         "dropped, or the store was imported where SQLite had no FTS5); run `searchkit tasks "
                         "import` into it here to rebuild the index")


# --------------------------------------------------------------------------- validation (no store)

@dataclass(frozen=True)
class _Task:
    id: int
    space: str
    title: str
    state: str
    """The state as imported (``tasks.state_raw``)."""
    piece: str
    created: str | None
    updated: str | None
    updated_utc: str | None
    where: str
    shown: str = ""
    """The title as shown (``shown_title``), stored in ``tasks.title``."""
    state_class: str = "open"
    """``open`` or ``closed`` (``state_class``), stored in ``tasks.state``."""


@dataclass(frozen=True)
class _Comment:
    id: int
    task: int
    author: str
    """The author as imported (``comments.author_raw``)."""
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
    shown_author: str = ""
    """The author as shown (``shown_author``), stored in ``comments.author``."""


@dataclass(frozen=True)
class _Batch:
    """What an import writes: validated tasks and comments, and the lines it skipped."""

    tasks: tuple[_Task, ...] = ()
    comments: tuple[_Comment, ...] = ()
    skipped: tuple[SkippedItem, ...] = ()
    tasks_skipped: bool = False
    """A task line was skipped: a comment of an unknown task may belong to it."""


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
        raise TaskStoreError(f"{what} is not valid Unicode text (a lone surrogate)") from None
    return value


def _state(row: Mapping[str, Any], where: str) -> str:
    """The task's state as the platform gives it (default ``open``): a non-empty string of at most
    ``MAX_STATE_CHARS`` characters; any value is kept (``STATE_CLASSES`` classifies it)."""
    state = row.get("state")
    if state is None:
        return "open"
    state = _str(state, f"{where}: state", nonempty=True)
    assert state is not None
    if len(state) > MAX_STATE_CHARS:
        raise TaskStoreError(f"{where}: state is {len(state):,} characters long; at most {MAX_STATE_CHARS} "
                             "(a state is a word such as open, running, 完了)")
    return state


def _validate_task(row: Mapping[str, Any], where: str) -> _Task:
    if not isinstance(row, Mapping):
        raise TaskStoreError(f"{where}: a task must be a JSON object, got {_show(row)}")
    tid = _int(_req(row, "id", where), f"{where}: id")
    space = _req(row, "space", where)
    if not isinstance(space, str) or not space.strip():
        raise TaskStoreError(f"{where}: space must be a non-empty string, got {_show(space)}")
    _str(space, f"{where}: space")
    state = _state(row, where)
    title = _str(row.get("title"), f"{where}: title", optional=True) or ""
    piece = _str(row.get("piece"), f"{where}: piece", optional=True) or ""
    created = row.get("created")
    if created is not None:
        utc_sort_key(created, f"{where}: created")
    updated = row.get("updated") or created
    updated_utc = utc_sort_key(updated, f"{where}: updated") if updated else None
    return _Task(tid, space, title, state, piece, created, updated, updated_utc, where, shown_title(title),
                 state_class(state))


def _validate_comment(row: Mapping[str, Any], where: str) -> _Comment:
    if not isinstance(row, Mapping):
        raise TaskStoreError(f"{where}: a comment must be a JSON object, got {_show(row)}")
    cid = _int(_req(row, "id", where), f"{where}: id")
    task = _int(_req(row, "task", where), f"{where}: task")
    author = _str(_req(row, "author", where), f"{where}: author", nonempty=True)
    assert author is not None
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
        text is not None and text != raw, where, shown_author(author),
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

class FTS5Missing(TaskStoreError):
    """This SQLite has no FTS5 and the store's FTS table needs writing: nothing can be imported here
    (T8: the caller answers with the plain "not available" message)."""


def _orphan(c: _Comment, batch: _Batch) -> SkippedItem:
    """A comment whose task is unknown: skipped when a task line was skipped, else refused."""
    if not batch.tasks_skipped:
        raise TaskStoreError(
            f"{c.where}: task {c.task} does not exist; import tasks before comments "
            "(or put the task in this import's tasks.jsonl); nothing imported"
        )
    return SkippedItem(c.where, "task_skipped", f"task {c.task} is not in the store or this import "
                                                "(a task line was skipped as too large)")


def _check_against_store(conn: sqlite3.Connection, batch: _Batch) -> _Batch:
    """Refuse what would re-home a task or a comment into another space, or name an unknown task;
    the batch to write (comments of unknown tasks skipped when a task line was, ``_orphan``).

    Reads only; a store without tables yet (a new or empty file) holds no task."""
    if not {"tasks", "comments"} <= _tables(conn):
        return _check_against_store_empty(batch)
    new_space = {t.id: t.space for t in batch.tasks}
    for t in batch.tasks:
        row = conn.execute("SELECT space FROM tasks WHERE id = ?", (t.id,)).fetchone()
        if row is not None and row[0] != t.space:
            raise TaskStoreError(
                f"{t.where}: task {t.id} belongs to space {row[0]!r}; this import puts it in space {t.space!r} "
                "(a task cannot change space); nothing imported"
            )
    store_space: dict[int, str | None] = {}
    keep: list[_Comment] = []
    orphans: list[SkippedItem] = []
    for c in batch.comments:
        space = new_space.get(c.task)
        if space is None:
            if c.task not in store_space:
                row = conn.execute("SELECT space FROM tasks WHERE id = ?", (c.task,)).fetchone()
                store_space[c.task] = None if row is None else row[0]
            space = store_space[c.task]
            if space is None:
                orphans.append(_orphan(c, batch))
                continue
        old = conn.execute(
            "SELECT c.task, t.space FROM comments c JOIN tasks t ON t.id = c.task WHERE c.id = ?", (c.id,)
        ).fetchone()
        if old is not None and old[1] != space:
            raise TaskStoreError(
                f"{c.where}: comment {c.id} belongs to task {old[0]} in space {old[1]!r}; this import puts it "
                f"under task {c.task} in space {space!r} (a comment cannot move to another space); nothing imported"
            )
        keep.append(c)
    return replace(batch, comments=tuple(keep), skipped=batch.skipped + tuple(orphans)) if orphans else batch


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")}


def _write(conn: sqlite3.Connection, batch: _Batch) -> ImportReport:
    """Check against the store, then write; the caller holds the transaction (BEGIN IMMEDIATE).
    Every refusal comes before the first write. Without FTS5 the rows are written without the
    full-text index (``searchable`` False; a later import where SQLite has FTS5 builds it), unless the
    store already has an FTS table, which then cannot be kept in step (``FTS5Missing``)."""
    batch = _check_against_store(conn, batch)
    tasks, comments = batch.tasks, batch.comments
    searchable = fts.fts5_available(conn)
    if not searchable and comments and _has_fts_table(conn):
        raise FTS5Missing(f"this SQLite has no FTS5, and the store's full-text index must be updated with the "
                          f"comments; nothing imported. {fts.INSTALL_HINT}")
    _ensure_schema(conn)
    conn.executemany("INSERT INTO spaces(slug) VALUES (?) ON CONFLICT(slug) DO NOTHING",
                     [(s,) for s in dict.fromkeys(t.space for t in tasks)])
    conn.executemany(
        "INSERT INTO tasks(id, space, title, title_raw, state, state_raw, piece, created, updated, updated_utc)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET space = excluded.space,"
        " title = excluded.title, title_raw = excluded.title_raw, state = excluded.state,"
        " state_raw = excluded.state_raw, piece = excluded.piece, created = excluded.created,"
        " updated = excluded.updated, updated_utc = excluded.updated_utc",
        [(t.id, t.space, t.shown, t.title, t.state_class, t.state, t.piece, t.created, t.updated, t.updated_utc)
         for t in tasks],
    )
    conn.executemany(
        "INSERT INTO comments(id, task, author, author_raw, kind, progress_type, tool, body, attachments, ts,"
        " ts_utc, indexed, folded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
        " task = excluded.task, author = excluded.author, author_raw = excluded.author_raw, kind = excluded.kind,"
        " progress_type = excluded.progress_type, tool = excluded.tool, body = excluded.body,"
        " attachments = excluded.attachments, ts = excluded.ts, ts_utc = excluded.ts_utc,"
        " indexed = excluded.indexed, folded = excluded.folded",
        ((c.id, c.task, c.shown_author, c.author, c.kind, c.progress_type, c.tool, c.body, c.attachments, c.ts,
          c.ts_utc, c.indexed, fold(c.indexed) if c.indexed is not None else None) for c in comments),
    )
    if comments and searchable:
        conn.executemany(f"DELETE FROM {FTS_TABLE} WHERE rowid = ?", ((c.id,) for c in comments))
        conn.executemany(f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (?, ?)",
                         ((c.id, c.indexed) for c in comments if c.indexed is not None))
    skipped: dict[str, int] = {}
    for c in comments:
        if c.skip_reason is not None:
            skipped[c.skip_reason] = skipped.get(c.skip_reason, 0) + 1
    return ImportReport(
        tasks=len(tasks), comments=len(comments), indexed=sum(c.indexed is not None for c in comments),
        not_indexed=skipped, redacted=sum(c.redacted for c in comments),
        titles_redacted=sum(t.shown != t.title for t in tasks), skipped=batch.skipped,
        searchable=searchable,
    )


def _transaction(conn: sqlite3.Connection, batch: _Batch) -> ImportReport:
    """``_write`` in one ``BEGIN IMMEDIATE`` transaction on ``conn``: committed whole or rolled back.

    A transaction the caller left open on ``conn`` is committed first (as ``with conn:`` did).
    """
    if conn.in_transaction:
        conn.commit()
    conn.execute("BEGIN IMMEDIATE")
    try:
        rep = _write(conn, batch)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return rep


def add_tasks(conn: sqlite3.Connection, rows: Iterable[Mapping[str, Any]], *, where: str = "task") -> int:
    """Insert or update tasks given as WORKSPACE.md dicts, all or none; return how many were written."""
    tasks, _ = _validate(_numbered(rows, where), [])
    return _transaction(conn, _Batch(tuple(tasks))).tasks


def add_comments(
    conn: sqlite3.Connection, rows: Iterable[Mapping[str, Any]], *, where: str = "comment"
) -> ImportReport:
    """Insert or update comments (WORKSPACE.md dicts) and their FTS rows, all or none."""
    _, comments = _validate([], _numbered(rows, where))
    return _transaction(conn, _Batch(comments=tuple(comments)))


# --------------------------------------------------------------------------- reading the JSON-lines files

MAX_ITEM_CAP = 1 << 40
"""The largest item cap an import accepts (1 TiB)."""


def _check_cap(max_item_bytes: int) -> int:
    if isinstance(max_item_bytes, bool) or not isinstance(max_item_bytes, int) \
            or not 1 <= max_item_bytes <= MAX_ITEM_CAP:
        raise TaskStoreError(f"the item size cap (--max-item-bytes) must be from 1 to {MAX_ITEM_CAP:,} bytes, "
                             f"got {max_item_bytes!r}")
    return max_item_bytes


def _jsonl_lines(path: str | Path, max_item_bytes: int) -> Iterator[tuple[int, bytes | None, int]]:
    """``(line number, bytes, size)`` of each line of a JSON-lines file, read one line at a time; a line
    longer than ``max_item_bytes`` (its newline not counted) comes as ``(n, None, size)``, read past in
    chunks and never held."""
    try:
        fh = open_regular(path, "rb")
    except FileNotFoundError:
        raise TaskStoreError(f"{path}: no such file") from None
    except FileProblem:
        raise TaskStoreError(f"{path}: not a regular file") from None
    except OSError as e:
        raise TaskStoreError(f"{path}: cannot read ({e.strerror or e})") from None
    with fh:
        n = 0
        while True:
            try:
                line = fh.readline(max_item_bytes + 2)
            except OSError as e:
                raise TaskStoreError(f"{path}: cannot read ({e.strerror or e})") from None
            if not line:
                return
            n += 1
            body = line.rstrip(b"\r\n")
            if len(body) <= max_item_bytes:
                yield n, body, len(body)
                continue
            size = len(body)
            while not line.endswith(b"\n"):
                line = fh.readline(_SKIP_CHUNK)
                if not line:
                    break
                size += len(line.rstrip(b"\r\n"))
            yield n, None, size


def _read_items(
    path: str | Path, validate: Any, max_item_bytes: int, skipped: list[SkippedItem]
) -> Iterator[Any]:
    """Validated rows of one JSON-lines file, streamed (blank lines skipped); an oversize line goes to
    ``skipped``; any other problem is a ``TaskStoreError`` naming the file and line."""
    for n, data, size in _jsonl_lines(path, max_item_bytes):
        where = f"{path}:{n}"
        if data is None:
            skipped.append(SkippedItem(where, "too_large", f"{size:,} bytes, over the cap of {max_item_bytes:,}"))
            continue
        if not data.strip():
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise TaskStoreError(f"{where}: not UTF-8 text") from None
        try:
            obj = parse_json_text(text, where)
        except FileProblem as e:
            raise TaskStoreError(str(e)) from None
        if not isinstance(obj, dict):
            raise TaskStoreError(f"{where}: each line must be a JSON object")
        yield validate(obj, where)


def _row(obj: dict[str, Any], where: str) -> dict[str, Any]:  # noqa: ARG001 - a validator's signature
    return obj


def read_jsonl(path: str | Path, *, max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES) -> list[dict[str, Any]]:
    """Read a JSON-lines file (blank lines skipped); errors name the file and line, and a line longer
    than ``max_item_bytes`` is one of them."""
    skipped: list[SkippedItem] = []
    rows = list(_read_items(path, _row, _check_cap(max_item_bytes), skipped))
    if skipped:
        raise TaskStoreError(f"{skipped[0].where}: line too long ({skipped[0].detail})")
    return rows


def _read_and_validate(tasks_path: str | Path, comments_path: str | Path,
                       max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES) -> _Batch:
    """Both files, streamed and validated line by line (only the validated rows are kept), with the
    ids checked within the import; oversize lines are skipped into the batch's ``skipped``."""
    cap = _check_cap(max_item_bytes)
    skipped: list[SkippedItem] = []
    tasks = tuple(_read_items(tasks_path, _validate_task, cap, skipped))
    _no_duplicates(tasks, "task")
    tasks_skipped = bool(skipped)
    comments = tuple(_read_items(comments_path, _validate_comment, cap, skipped))
    _no_duplicates(comments, "comment")
    return _Batch(tasks, comments, tuple(skipped), tasks_skipped)


def import_jsonl(
    conn: sqlite3.Connection, tasks_path: str | Path, comments_path: str | Path, *,
    max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES,
) -> ImportReport:
    """Import ``tasks.jsonl`` and ``comments.jsonl`` (WORKSPACE.md) into ``conn``: validated whole
    first, then written in one transaction (all or nothing; lines over ``max_item_bytes`` skipped)."""
    return _transaction(conn, _read_and_validate(tasks_path, comments_path, max_item_bytes))


def source_files(folder: str | Path) -> tuple[Path, Path]:
    """``folder/tasks.jsonl`` and ``folder/comments.jsonl``; a missing one is a TaskStoreError."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TaskStoreError(f"{folder}: no such folder (a task store folder holds tasks.jsonl and comments.jsonl)")
    for name in ("tasks.jsonl", "comments.jsonl"):
        if not (folder / name).exists():
            raise TaskStoreError(
                f"{folder}: {name} is missing (a task store folder holds tasks.jsonl and comments.jsonl)"
            )
        if not (folder / name).is_file():
            raise TaskStoreError(f"{folder / name}: not a regular file (a FIFO, a device or a folder); "
                                 "only regular files are read")
    return folder / "tasks.jsonl", folder / "comments.jsonl"


def import_dir(conn: sqlite3.Connection, folder: str | Path, *,
               max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES) -> ImportReport:
    """Import ``folder/tasks.jsonl`` and ``folder/comments.jsonl`` into ``conn`` (all or nothing)."""
    return import_jsonl(conn, *source_files(folder), max_item_bytes=max_item_bytes)


# --------------------------------------------------------------------------- importing into a file

def import_into(
    db: str | Path, tasks_path: str | Path, comments_path: str | Path, *, timeout: float = DEFAULT_LOCK_TIMEOUT,
    max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES,
) -> ImportReport:
    """Import the two JSON-lines files into the store file ``db``, all or nothing.

    Everything is read and validated before ``db`` is touched. An existing ``db`` must be a task store
    or an empty SQLite file (``check_target``); anything else is refused and left byte for byte as it
    was, and so is a store whose import is refused. An existing store is updated in one
    ``BEGIN IMMEDIATE`` transaction, waiting up to ``timeout`` seconds for other writers
    (``TaskStoreLocked`` after that). A new store is built in a temporary file beside ``db`` and
    linked into place only when complete; no file is left at ``db`` when the import fails.

    The files are streamed; a line over ``max_item_bytes`` is skipped and named in the report's
    ``skipped``. The store is owner-only: created ``0600`` (a folder made for it ``0700``), an
    existing one others could read tightened to ``0600`` with a warning (``make_private``).
    """
    batch = _read_and_validate(tasks_path, comments_path, max_item_bytes)
    db = Path(db)
    if str(db) == ":memory:":
        raise TaskStoreError("--db must be a file path, not ':memory:'")
    remove_stale_temp_files(db)
    if db.exists() or db.is_symlink():
        if not db.is_file():
            raise TaskStoreError(f"{db}: exists and is not a regular file (a task store is an SQLite file)")
        return _import_existing(db, batch, timeout)
    batch = _check_against_store_empty(batch)  # a new store holds no other task
    return _import_new(db, batch, timeout)


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


_NOTHING_IMPORTED = "; nothing imported"


def _raise_read_error(db: Path, e: sqlite3.Error, *, suffix: str = _NOTHING_IMPORTED) -> None:
    """A failed read of ``db`` as one ``TaskStoreError`` (``TaskStoreLocked`` for a lock); ``suffix``
    ends the message (an importer's ``; nothing imported``)."""
    if is_lock_error(e):
        raise TaskStoreLocked(f"{db}: the task store is locked by another process{suffix}, try again") from None
    code = getattr(e, "sqlite_errorcode", 0) or 0
    if code & 0xFF == 26:  # SQLITE_NOTADB
        raise TaskStoreError(f"{db}: not an SQLite database (or a damaged one), so not a task store{suffix}"
                             f"{' (give --db a new path or an existing task store)' if suffix else ''}") from None
    if code in _NO_SHM:
        raise TaskStoreError(f"{db}: cannot be read here ({e}): SQLite needs its -wal and -shm files, and "
                             f"this user cannot create them in its folder{suffix}") from None
    raise TaskStoreError(f"{db}: not a readable SQLite database ({e}){suffix}") from None


def _check_against_store_empty(batch: _Batch) -> _Batch:
    """``_check_against_store`` for a store that holds no task yet."""
    known = {t.id for t in batch.tasks}
    orphans = [_orphan(c, batch) for c in batch.comments if c.task not in known]
    if not orphans:
        return batch
    return replace(batch, comments=tuple(c for c in batch.comments if c.task in known),
                   skipped=batch.skipped + tuple(orphans))


def _check_task_store(db: Path, conn: sqlite3.Connection, tables: set[str], *,
                      suffix: str = _NOTHING_IMPORTED) -> None:
    """Refuse an SQLite file that is not a task store: other tables, or ours without their columns;
    ``suffix`` ends the message (an importer's ``; nothing imported``)."""
    ours = set(TABLE_COLUMNS) | {FTS_TABLE} | _SQLITE_INTERNAL
    foreign = sorted(t for t in tables if t not in ours and not t.startswith(f"{FTS_TABLE}_"))
    missing = sorted(set(TABLE_COLUMNS) - tables)
    if foreign or missing:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        why = f"it has table(s) {shown}" if foreign else f"it lacks table(s) {', '.join(missing)}"
        hint = " (give --db a new path or an existing task store)" if suffix else ""
        raise TaskStoreError(f"{db}: an SQLite database that is not a task store ({why}){suffix}{hint}")
    for table, need in TABLE_COLUMNS.items():
        lacking = sorted(need - _columns(conn, table))
        if lacking:
            raise TaskStoreError(f"{db}: table {table} lacks column(s) {', '.join(lacking)}, so this is not a "
                                 f"task store{suffix}")


def _import_existing(db: Path, batch: _Batch, timeout: float) -> ImportReport:
    """Update an existing store (or fill an empty SQLite file), byte for byte unchanged when refused:
    the file is checked read-only first (``check_target``: an SQLite task store, or empty); then one
    transaction whose data checks (``_check_against_store``) come before its first write; the switch
    to WAL comes after the commit."""
    check_target(db, timeout=min(max(timeout, 0.0), READ_TIMEOUT))
    make_private(db)
    deadline = time.monotonic() + max(timeout, 0.0)
    delay = 0.05
    while True:
        remaining = max(deadline - time.monotonic(), 0.0)
        conn = None
        try:
            conn = sqlite3.connect(str(db), timeout=remaining, isolation_level=None)
            conn.execute("PRAGMA foreign_keys = ON")
            rep = _transaction(conn, batch)
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


def _import_new(db: Path, batch: _Batch, timeout: float) -> ImportReport:
    """Build a new store in a ``0600`` temporary file beside ``db`` (folders made ``0700``) and link it
    into place when complete."""
    parent = db.parent
    if parent.exists() and not parent.is_dir():
        raise TaskStoreError(f"{parent}: not a folder; cannot create the task store {db}")
    made: list[Path] = []
    try:
        made = _make_folders_private(parent)
    except OSError as e:
        raise TaskStoreError(f"{parent}: cannot create the folder for the task store ({e.strerror or e})") from None
    linked = False
    tmp = parent / f"{_TEMP_PREFIX.format(name=db.name)}{os.getpid()}-{os.urandom(4).hex()}.tmp"
    try:
        _create_private(tmp)  # SQLite gives its -wal / -journal the same mode
        conn = sqlite3.connect(str(tmp), timeout=timeout, isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            rep = _transaction(conn, batch)
            conn.execute("PRAGMA journal_mode = WAL")
        finally:
            conn.close()
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        try:
            os.link(tmp, db)
            linked = True
        except FileExistsError:  # another importer created the store meanwhile: update theirs
            return _import_existing(db, batch, timeout)
        except OSError:  # no hard links here: write into the store directly (still one transaction)
            _create_private(db)
            return _import_existing(db, batch, timeout)
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
