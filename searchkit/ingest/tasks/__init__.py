"""The task store (SPEC T): SQLite tables for spaces, tasks and comments, and an FTS5 trigram
index over each comment's indexed text; the importer from the JSON-lines format of
WORKSPACE.md; the indexing rules of T2.

Indexing rules (T2): requests, interjections, results, asks, handoffs, and progress of type
``thinking`` or ``summary`` are indexed by their body; a tool run (progress of type ``tool``) is
indexed as ``tool: NAME`` alone; attachments append their file names only. Everything else
(``comment``, ``interjection_ack``, unknown kinds and progress types) is not indexed. Indexed text
is NFKC-normalised and redacted (``searchkit.ingest.redact``); each attachment name is redacted as
a file name too (``redact_file_name``). Task titles are redacted at import (T6): ``tasks.title`` holds
the title every tool shows, ``tasks.title_raw`` the title as imported. A value redaction replaces once in
a space is redacted wherever it appears again there (issue 39 item 4, ``known_pass``): in the other
comments, titles and authors, of this import and of those before; the store keeps salted digests of the
values (table ``known_secrets``), never a value.

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
  locked raises a ``DataError`` with reason ``locked``, which says so.
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
  while this SQLite has FTS5 are each refused with a ``DataError`` saying so. Only a genuinely
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

The package: ``model`` (kinds, states, errors, the indexed and shown text), ``store`` (schema,
connections, checks), ``validate`` (rows), ``sources`` (the JSON-lines files) and ``importing``
(writing, ``import_into``); the names below are its public face.
"""
from __future__ import annotations

from searchkit.ingest.tasks.importing import (
    add_comments, add_tasks, import_dir, import_into, import_jsonl, remove_stale_temp_files,
)
from searchkit.ingest.tasks.model import (
    COMMENT_KINDS, FTS_TABLE, INDEXED_KINDS, INDEXED_PROGRESS_TYPES, MAX_STATE_CHARS, STATE_CLASSES, TASK_STATES,
    TOOL_PROGRESS_TYPE, UNKNOWN_STATE_CLASS, STORE_REASONS, ImportReport, SkippedItem, fold,
    indexed_text, normalize, not_indexed_reason, query_terms, shown_author, shown_title, state_class, state_key,
    utc_sort_key,
)
from searchkit.ingest.tasks.sources import DEFAULT_MAX_ITEM_BYTES, MAX_ITEM_CAP, read_jsonl, source_files
from searchkit.ingest.tasks.store import (
    DEFAULT_LOCK_TIMEOUT, READ_TIMEOUT, SCHEMA, SIDE_FILES, SQLITE_MAGIC, TABLE_COLUMNS, check_fts, check_target,
    connect, has_fts, indexed_comments, is_lock_error, make_private, open_readonly,
)

# private names the tests drive directly, importable from here as before the split
from searchkit.ingest.tasks.importing import _transaction, _write  # noqa: F401
from searchkit.ingest.tasks.validate import _Batch, _numbered, _validate  # noqa: F401

__all__ = [
    "COMMENT_KINDS", "DEFAULT_LOCK_TIMEOUT", "DEFAULT_MAX_ITEM_BYTES", "FTS_TABLE", "INDEXED_KINDS",
    "INDEXED_PROGRESS_TYPES", "MAX_ITEM_CAP", "MAX_STATE_CHARS", "READ_TIMEOUT", "SCHEMA", "SIDE_FILES",
    "SQLITE_MAGIC", "STATE_CLASSES", "TABLE_COLUMNS", "TASK_STATES", "TOOL_PROGRESS_TYPE", "UNKNOWN_STATE_CLASS",
    "STORE_REASONS", "ImportReport", "SkippedItem", "add_comments", "add_tasks",
    "check_fts", "check_target", "connect", "fold", "has_fts", "import_dir", "import_into", "import_jsonl",
    "indexed_comments", "indexed_text", "is_lock_error", "make_private", "normalize", "not_indexed_reason",
    "open_readonly", "query_terms", "read_jsonl", "remove_stale_temp_files", "shown_author", "shown_title", "source_files",
    "state_class", "state_key", "utc_sort_key",
]
