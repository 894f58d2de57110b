"""Importing into the task store, all or nothing (SPEC T; issue 8 items 5-6; part of
``searchkit.ingest.tasks``): a validated batch checked against the store and written in one
``BEGIN IMMEDIATE`` transaction (``add_tasks``, ``add_comments``, ``import_jsonl``), and
``import_into``, which builds a new store aside and links it into place, or imports into an
existing one after checking it is a task store.
"""
from __future__ import annotations

import os
import re
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from searchkit.ingest.tasks import fts, known_pass
from searchkit.errors import DataError
from searchkit.ingest.tasks.model import FTS_TABLE, ImportReport, SkippedItem, fold
from searchkit.ingest.tasks.sources import DEFAULT_MAX_ITEM_BYTES, _read_and_validate, source_files
from searchkit.ingest.tasks.store import (
    DEFAULT_LOCK_TIMEOUT, READ_TIMEOUT, _create_private, _ensure_schema, _has_fts_table,
    _make_folders_private, _tables, check_target, is_lock_error, make_private,
)
from searchkit.ingest.tasks.validate import _Batch, _Comment, _numbered, _validate

_TEMP_PREFIX = ".{name}.import-"
_TEMP_NAME = re.compile(r"\.import-(?P<pid>[0-9]+)-[0-9a-f]+\.tmp(?:-wal|-shm|-journal)?$")


# --------------------------------------------------------------------------- writing (one transaction)

def _orphan(c: _Comment, batch: _Batch) -> SkippedItem:
    """A comment whose task is unknown: skipped when a task line was skipped, else refused."""
    if not batch.tasks_skipped:
        raise DataError(
            f"{c.where}: task {c.task} does not exist; import tasks before comments "
            "(or put the task in this import's tasks.jsonl); nothing imported", reason="task_store"
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
            raise DataError(
                f"{t.where}: task {t.id} belongs to space {row[0]!r}; this import puts it in space {t.space!r} "
                "(a task cannot change space); nothing imported", reason="task_store"
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
            raise DataError(
                f"{c.where}: comment {c.id} belongs to task {old[0]} in space {old[1]!r}; this import puts it "
                f"under task {c.task} in space {space!r} (a comment cannot move to another space); nothing imported", reason="task_store"
            )
        keep.append(c)
    return replace(batch, comments=tuple(keep), skipped=batch.skipped + tuple(orphans)) if orphans else batch


def _write(conn: sqlite3.Connection, batch: _Batch) -> ImportReport:
    """Check against the store, then write; the caller holds the transaction (BEGIN IMMEDIATE).
    Every refusal comes before the first write. Without FTS5 the rows are written without the
    full-text index (``searchable`` False; a later import where SQLite has FTS5 builds it), unless the
    store already has an FTS table, which then cannot be kept in step (``DataError``, reason ``no_fts5``)."""
    batch = _check_against_store(conn, batch)
    searchable = fts.fts5_available(conn)
    if not searchable and batch.comments and _has_fts_table(conn):
        raise DataError(f"this SQLite has no FTS5, and the store's full-text index must be updated with the "
                          f"comments; nothing imported. {fts.INSTALL_HINT}", reason="no_fts5")
    _ensure_schema(conn)
    # a value redacted once in a space is redacted wherever it appears again there (issue 39 item 4)
    batch, _ = known_pass.apply(conn, batch, searchable=searchable)
    tasks, comments = batch.tasks, batch.comments
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


def import_jsonl(
    conn: sqlite3.Connection, tasks_path: str | Path, comments_path: str | Path, *,
    max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES,
) -> ImportReport:
    """Import ``tasks.jsonl`` and ``comments.jsonl`` (WORKSPACE.md) into ``conn``: validated whole
    first, then written in one transaction (all or nothing; lines over ``max_item_bytes`` skipped)."""
    return _transaction(conn, _read_and_validate(tasks_path, comments_path, max_item_bytes))


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
    (``DataError``, reason ``locked``, after that). A new store is built in a temporary file beside ``db`` and
    linked into place only when complete; no file is left at ``db`` when the import fails.

    The files are streamed; a line over ``max_item_bytes`` is skipped and named in the report's
    ``skipped``. The store is owner-only: created ``0600`` (a folder made for it ``0700``), an
    existing one others could read tightened to ``0600`` with a warning (``make_private``).
    """
    batch = _read_and_validate(tasks_path, comments_path, max_item_bytes)
    db = Path(db)
    if str(db) == ":memory:":
        raise DataError("--db must be a file path, not ':memory:'", reason="task_store")
    remove_stale_temp_files(db)
    if db.exists() or db.is_symlink():
        if not db.is_file():
            raise DataError(f"{db}: exists and is not a regular file (a task store is an SQLite file)", reason="task_store")
        return _import_existing(db, batch, timeout)
    batch = _check_against_store_empty(batch)  # a new store holds no other task
    return _import_new(db, batch, timeout)


def _check_against_store_empty(batch: _Batch) -> _Batch:
    """``_check_against_store`` for a store that holds no task yet."""
    known = {t.id for t in batch.tasks}
    orphans = [_orphan(c, batch) for c in batch.comments if c.task not in known]
    if not orphans:
        return batch
    return replace(batch, comments=tuple(c for c in batch.comments if c.task in known),
                   skipped=batch.skipped + tuple(orphans))


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
                raise DataError(f"{db}: cannot write the task store ({e}); nothing imported", reason="task_store") from None
            if time.monotonic() >= deadline:
                raise DataError(
                    f"{db}: the task store is locked by another process (waited {timeout:g} s); "
                    "nothing imported, try again", reason="locked"
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
        raise DataError(f"{parent}: not a folder; cannot create the task store {db}", reason="task_store")
    made: list[Path] = []
    try:
        made = _make_folders_private(parent)
    except OSError as e:
        raise DataError(f"{parent}: cannot create the folder for the task store ({e.strerror or e})", reason="task_store") from None
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
        raise DataError(f"{db}: cannot create the task store ({e})", reason="task_store") from None
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
