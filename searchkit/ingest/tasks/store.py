"""The task store as an SQLite file (SPEC T, T4): its schema and migration, opening it to write
(``connect``) or read (``open_readonly``), owner-only files, and the checks that an existing file is a
task store (``check_target``, ``check_fts``); part of ``searchkit.ingest.tasks``.
"""
from __future__ import annotations

import logging
import os
import sqlite3
import stat
from contextlib import closing
from pathlib import Path
from typing import Mapping

from searchkit.ingest.tasks import fts
from searchkit.errors import DataError
from searchkit.ingest.tasks.model import FTS_TABLE, shown_author, shown_title

log = logging.getLogger(__package__)  # searchkit.ingest.tasks, as before the split

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
CREATE TABLE IF NOT EXISTS known_secrets (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    data TEXT NOT NULL
);
"""
"""``tasks.title`` is the title as every tool shows it, redacted (``shown_title``, T6);
``tasks.title_raw`` the title as imported. ``tasks.state`` is the state's class (``open`` /
``closed``), ``tasks.state_raw`` the state as imported. ``comments.author`` is the author as every
tool shows it, redacted (``shown_author``), ``comments.author_raw`` as imported. A store made before
one of the ``*_raw`` columns existed is migrated by its next import (``_migrate``) and read through
a view that shows the same until then (``open_readonly``). ``known_secrets`` holds one row: the salted
digests of the secret values redaction replaced, by space (issue 39 item 4; ``known_pass``), never a
value; a store made before it gets it at its next import."""

TABLE_COLUMNS: Mapping[str, frozenset[str]] = {
    "spaces": frozenset({"slug", "title"}),
    "tasks": frozenset({"id", "space", "title", "state", "piece", "created", "updated", "updated_utc"}),
    "comments": frozenset({"id", "task", "author", "kind", "progress_type", "tool", "body", "attachments", "ts",
                           "ts_utc", "indexed", "folded"}),
}
"""The tables (and the columns each must have) that make an SQLite file a task store."""
KNOWN_TABLE = "known_secrets"
"""A table of a task store made since issue 39 (the salted digests of known secret values)."""


DEFAULT_LOCK_TIMEOUT = 30.0
"""Seconds an importer waits for another writer before it reports the store as locked."""
READ_TIMEOUT = 10.0
"""Seconds a reader waits for a lock (only a rollback-journal store ever makes a reader wait)."""


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
        DataError: ``path`` is missing, not a regular file (a FIFO would block the open), empty,
            not SQLite, or an SQLite database that is not a task store, each said as such;
            reason ``locked`` when a writer holds it past ``timeout``.
    """
    if str(path) == ":memory:":
        raise DataError("a read-only task store must be a file, not ':memory:'", reason="task_store")
    p = Path(path)
    _check_store_file(p)
    conn = _connect_readonly(p, READ_TIMEOUT if timeout is None else timeout)
    try:
        _check_task_store(p, conn, _tables(conn), suffix="")
        make_private(p)  # only a task store: never another file (a link to /etc/passwd) given as --db
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
        raise DataError(f"task store {str(p)!r} does not exist; create it with `searchkit tasks import`", reason="task_store") \
            from None
    except OSError as e:
        raise DataError(f"task store {str(p)!r} cannot be read ({e.strerror or e})", reason="task_store") from None
    if not stat.S_ISREG(st.st_mode):
        raise DataError(f"task store {str(p)!r} is not a regular file", reason="task_store")
    if st.st_size == 0 and not Path(f"{p}-wal").exists():
        raise DataError(f"{p}: an empty file, not a task store; create one with `searchkit tasks import`", reason="task_store")


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
    the store was imported where SQLite had no FTS5) raises ``DataError`` naming the file."""
    if not fts.fts5_available(conn):
        return False
    if _has_fts_table(conn):
        return True
    row = conn.execute("PRAGMA main.database_list").fetchone()
    name = (row[2] if row else "") or "the task store"
    raise DataError(f"{name}: the task store has no full-text index (its table {FTS_TABLE} is missing: "
                         "dropped, or the store was imported where SQLite had no FTS5); run `searchkit tasks "
                         "import` into it here to rebuild the index", reason="task_store")


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")}


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
    ``DataError`` naming the reason (``... nothing imported``)."""
    db = Path(db)
    try:
        with open(db, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as e:
        raise DataError(f"{db}: cannot read ({e.strerror or e}); nothing imported", reason="task_store") from None
    if not head:  # a zero-byte file is an empty SQLite database
        return False
    if head != SQLITE_MAGIC:
        raise DataError(f"{db}: exists and is not an SQLite file, so not a task store; nothing imported "
                             "(give --db a new path or an existing task store)", reason="task_store")
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
    """A failed read of ``db`` as one ``DataError`` (reason ``locked`` for a lock); ``suffix``
    ends the message (an importer's ``; nothing imported``)."""
    if is_lock_error(e):
        raise DataError(f"{db}: the task store is locked by another process{suffix}, try again", reason="locked") from None
    code = getattr(e, "sqlite_errorcode", 0) or 0
    if code & 0xFF == 26:  # SQLITE_NOTADB
        raise DataError(f"{db}: not an SQLite database (or a damaged one), so not a task store{suffix}"
                             f"{' (give --db a new path or an existing task store)' if suffix else ''}", reason="task_store") from None
    if code in _NO_SHM:
        raise DataError(f"{db}: cannot be read here ({e}): SQLite needs its -wal and -shm files, and "
                             f"this user cannot create them in its folder{suffix}", reason="task_store") from None
    raise DataError(f"{db}: not a readable SQLite database ({e}){suffix}", reason="task_store") from None


def _check_task_store(db: Path, conn: sqlite3.Connection, tables: set[str], *,
                      suffix: str = _NOTHING_IMPORTED) -> None:
    """Refuse an SQLite file that is not a task store: other tables, or ours without their columns;
    ``suffix`` ends the message (an importer's ``; nothing imported``)."""
    ours = set(TABLE_COLUMNS) | {FTS_TABLE, KNOWN_TABLE} | _SQLITE_INTERNAL
    foreign = sorted(t for t in tables if t not in ours and not t.startswith(f"{FTS_TABLE}_"))
    missing = sorted(set(TABLE_COLUMNS) - tables)
    if foreign or missing:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        why = f"it has table(s) {shown}" if foreign else f"it lacks table(s) {', '.join(missing)}"
        hint = " (give --db a new path or an existing task store)" if suffix else ""
        raise DataError(f"{db}: an SQLite database that is not a task store ({why}){suffix}{hint}", reason="task_store")
    for table, need in TABLE_COLUMNS.items():
        lacking = sorted(need - _columns(conn, table))
        if lacking:
            raise DataError(f"{db}: table {table} lacks column(s) {', '.join(lacking)}, so this is not a "
                                 f"task store{suffix}", reason="task_store")


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
