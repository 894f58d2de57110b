"""The store-wide pass of a task import (issue 39 item 4; SPEC T2, T6; part of ``searchkit.ingest.tasks``).

A value redaction replaces in one comment, title or author of a space is redacted wherever it appears
again in that space: in the other comments' indexed text (the FTS5 index and ``folded`` with it), in
task titles and in comment authors, those of this import and those already in the store. The store
keeps the salted digests of the values (table ``known_secrets``: ``KnownSecrets.to_dict``), never a
value, so a later import redacts an earlier value too; when an import brings a new value, the rows
already stored in its space are read again (their shown text: what was redacted stays redacted).

The scope is the space: every caller of task search in a space sees all of its tasks (T1), so no value
found in a space changes what a caller of another space gets.
"""
from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import replace
from typing import Any

from searchkit.ingest.redact.known import SALT_BYTES, KnownSecrets
from searchkit.ingest.tasks.model import FTS_TABLE, fold
from searchkit.ingest.tasks.store import KNOWN_TABLE, _has_fts_table, _tables
from searchkit.ingest.tasks.validate import _Batch

def read_known(conn: sqlite3.Connection) -> KnownSecrets | None:
    """The digests a store keeps (None for a store without them, or a damaged row)."""
    if KNOWN_TABLE not in _tables(conn):
        return None
    row = conn.execute(f"SELECT data FROM {KNOWN_TABLE} WHERE id = 1").fetchone()
    if row is None:
        return None
    try:
        return KnownSecrets.from_dict(json.loads(row[0]))
    except (TypeError, ValueError, RecursionError):
        return None


def _spaces_of_comments(conn: sqlite3.Connection, batch: _Batch) -> dict[int, str]:
    """Task id -> space, for the tasks of this batch's comments (this import's tasks, then the store's)."""
    spaces = {t.id: t.space for t in batch.tasks}
    if {"tasks"} <= _tables(conn):
        for c in batch.comments:
            if c.task not in spaces:
                row = conn.execute("SELECT space FROM tasks WHERE id = ?", (c.task,)).fetchone()
                if row is not None:
                    spaces[c.task] = row[0]
    return spaces


def _digest_counts(known: KnownSecrets) -> dict[str, int]:
    return {scope: len(d["digests"]) for scope, d in known.to_dict()["scopes"].items()}


def apply(conn: sqlite3.Connection, batch: _Batch, *, searchable: bool) -> tuple[_Batch, int]:
    """Redact the known values in ``batch`` and, for a space this import brings a new value to, in
    the rows the store holds already; save the digests. Inside the caller's transaction, after the
    schema exists. Returns the batch to write and how many stored rows changed."""
    stored = read_known(conn)
    known = KnownSecrets(stored.salt if stored is not None else os.urandom(SALT_BYTES))
    if stored is not None:
        known.merge(stored)
    before = _digest_counts(known)
    spaces = _spaces_of_comments(conn, batch)
    for t in batch.tasks:
        for value in t.found:
            known.add(t.space, value)
    for c in batch.comments:
        space = spaces.get(c.task)
        if space is not None:
            for value in c.found:
                known.add(space, value)
    if not known:
        return batch, 0
    tasks = []
    for t in batch.tasks:
        shown, n = known.redact(t.shown, [t.space])
        tasks.append(replace(t, shown=shown) if n else t)
    comments = []
    for c in batch.comments:
        space = spaces.get(c.task)
        if space is None:
            comments.append(c)
            continue
        author, n = known.redact(c.shown_author, [space])
        indexed, m = known.redact(c.indexed, [space]) if c.indexed is not None else (None, 0)
        comments.append(replace(c, shown_author=author, indexed=indexed, redacted=c.redacted or bool(m))
                        if n or m else c)
    batch = replace(batch, tasks=tuple(tasks), comments=tuple(comments))
    after = _digest_counts(known)
    grown = sorted(s for s, n in after.items() if n > before.get(s, 0))
    changed = _redact_stored(conn, known, grown, batch, searchable=searchable) if grown else 0
    conn.execute(f"INSERT INTO {KNOWN_TABLE}(id, data) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data",
                 (json.dumps(known.to_dict(), sort_keys=True),))
    return batch, changed


def _redact_stored(conn: sqlite3.Connection, known: KnownSecrets, spaces: list[str], batch: _Batch, *,
                   searchable: bool) -> int:
    """The rows already in the store of ``spaces`` (not this batch's), redacted for ``known``."""
    if not {"tasks", "comments"} <= _tables(conn):
        return 0
    new_tasks = {t.id for t in batch.tasks}
    new_comments = {c.id for c in batch.comments}
    fts = searchable and _has_fts_table(conn)
    changed = 0
    for space in spaces:
        for tid, title in conn.execute("SELECT id, title FROM tasks WHERE space = ?", (space,)).fetchall():
            if tid in new_tasks:
                continue
            shown, n = known.redact(title, [space])
            if n:
                conn.execute("UPDATE tasks SET title = ? WHERE id = ?", (shown, tid))
                changed += 1
        rows: list[Any] = conn.execute(
            "SELECT c.id, c.author, c.indexed FROM comments c JOIN tasks t ON t.id = c.task WHERE t.space = ?",
            (space,)).fetchall()
        for cid, author, indexed in rows:
            if cid in new_comments:
                continue
            shown, n = known.redact(author, [space])
            text, m = known.redact(indexed, [space]) if indexed is not None else (None, 0)
            if not (n or m):
                continue
            conn.execute("UPDATE comments SET author = ?, indexed = ?, folded = ? WHERE id = ?",
                         (shown, text, fold(text) if text is not None else None, cid))
            if m and fts:
                conn.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid = ?", (cid,))
                conn.execute(f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (?, ?)", (cid, text))
            changed += 1
    return changed
