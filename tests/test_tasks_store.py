"""The task store (SPEC T1, T2): schema, importer, indexing rules, redaction, WAL."""
import json
import os
import sqlite3
from pathlib import Path
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from searchkit.errors import DataError
from searchkit.ingest import tasks as store
from searchkit.tools.base import ToolContext
from searchkit.tools.tasks import TaskListParams, TaskSearchParams, list_tasks, render, task_search

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "tasks-demo"


@pytest.fixture()
def demo():
    conn = store.connect(":memory:")
    store.import_dir(conn, DEMO)
    return conn


def _row(**kw):
    base = {"id": 1, "task": 1, "author": "user", "kind": "request", "body": "本文", "ts": "2026-06-20T10:00:00Z"}
    base.update(kw)
    return base


@pytest.mark.parametrize(
    "kw,expected",
    [
        ({"kind": "request"}, "本文"),
        ({"kind": "interjection"}, "本文"),
        ({"kind": "result"}, "本文"),
        ({"kind": "ask"}, "本文"),
        ({"kind": "handoff"}, "本文"),
        ({"kind": "progress", "progress_type": "thinking"}, "本文"),
        ({"kind": "progress", "progress_type": "summary"}, "本文"),
        ({"kind": "progress", "progress_type": "tool", "tool": "WebFetch", "body": "url=https://x.example/?q=1"},
         "tool: WebFetch"),
        ({"kind": "comment"}, None),
        ({"kind": "interjection_ack"}, None),
        ({"kind": "progress", "progress_type": "status"}, None),
        ({"kind": "progress"}, None),
        ({"kind": "progress", "progress_type": "tool"}, None),  # a tool run without a name
        ({"kind": "mystery"}, None),
    ],
)
def test_t2_indexing_rules(kw, expected):
    assert store.indexed_text(_row(**kw)) == expected


def test_attachments_add_file_names_only():
    text = store.indexed_text(_row(attachments=["docs/spec.pdf", "C:\\tmp\\mock.png"]))
    assert text == "本文\nattachments: spec.pdf, mock.png"
    tool = store.indexed_text(_row(kind="progress", progress_type="tool", tool="Read", attachments=["a.txt"]))
    assert tool == "tool: Read\nattachments: a.txt"
    assert store.indexed_text(_row(kind="comment", attachments=["a.txt"])) is None


def test_indexed_text_is_nfkc_and_redacted():
    text = store.indexed_text(_row(body="ＡＰＩ　キー　password=ｈｕｎｔｅｒ２ to ops@acme.example"))
    # NFKC first (full-width letters become ASCII, so the full-width secret is caught), then redaction;
    # the exact redacted form belongs to searchkit.ingest.redact (tested in test_tasks_redact.py)
    assert text.startswith("API キー ") and text.endswith(" to [email]") and "[redacted]" in text
    assert "hunter2" not in text and "ｈｕｎｔｅｒ" not in text and "ops@acme" not in text


def test_import_report_counts(demo):
    rep = store.import_dir(store.connect(":memory:"), DEMO)
    assert (rep.tasks, rep.comments) == (7, 26)
    assert rep.not_indexed == {"kind:comment": 1, "progress:status": 1, "kind:interjection_ack": 1}
    assert rep.indexed == 23
    assert rep.redacted == 2  # comments 110 and 152


def test_index_never_holds_a_raw_secret(demo):
    texts = [r[0] for r in demo.execute(f"SELECT text FROM {store.FTS_TABLE}")]
    joined = "\n".join(texts)
    for secret in ("4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "Hunter2", "ops@acme.example", "globex-admin-2026",
                   "intranet.acme.example", "deploy.sh"):
        assert secret not in joined
    # the raw body is kept for around_ref
    body = demo.execute("SELECT body FROM comments WHERE id = 110").fetchone()[0]
    assert "Hunter2" in body


def test_fts_rows_are_exactly_the_indexed_comments(demo):
    fts_ids = {r[0] for r in demo.execute(f"SELECT rowid FROM {store.FTS_TABLE}")}
    indexed = {r[0] for r in demo.execute("SELECT id FROM comments WHERE indexed IS NOT NULL")}
    assert fts_ids == indexed
    assert {86, 90, 123}.isdisjoint(fts_ids)


def test_reimport_replaces_rows(demo):
    before = demo.execute(f"SELECT count(*) FROM {store.FTS_TABLE}").fetchone()[0]
    store.import_dir(demo, DEMO)
    assert demo.execute(f"SELECT count(*) FROM {store.FTS_TABLE}").fetchone()[0] == before
    # a comment re-imported as a non-indexed kind leaves the index
    store.add_comments(demo, [_row(id=88, task=12, kind="comment")])
    assert demo.execute(f"SELECT count(*) FROM {store.FTS_TABLE} WHERE rowid = 88").fetchone()[0] == 0


def test_indexed_comments_for_a_second_ranker(demo):
    rows = store.indexed_comments(demo, "acme")
    ids = [r[0] for r in rows]
    assert 150 not in ids and 152 not in ids  # other space
    assert 86 not in ids and 90 not in ids  # not indexed
    by_id = {r[0]: r for r in rows}
    assert by_id[110][1] == 18 and "[redacted]" in by_id[110][2] and by_id[110][3] == "2026-07-05T13:05:00Z"
    assert by_id[91][2] == "tool: WebFetch"


def test_times_sort_in_utc(demo):
    # 2026-07-15T12:20:00+03:00 is 09:20Z
    assert demo.execute("SELECT ts_utc FROM comments WHERE id = 132").fetchone()[0] == "2026-07-15T09:20:00.000000Z"


@pytest.mark.parametrize(
    "rows,match",
    [
        ([_row(task=999)], "task 999 does not exist"),
        ([_row(ts="yesterday")], "not an ISO 8601 time"),
        ([_row(id="x")], "id must be a positive integer"),
        ([_row(id=True)], "id must be a positive integer"),
        ([{"id": 1, "task": 1, "kind": "request", "ts": "2026-06-20T10:00:00Z"}], "'author' is required"),
        ([_row(attachments="spec.pdf")], "attachments must be a list"),
    ],
)
def test_bad_comment_rows(rows, match):
    conn = store.connect(":memory:")
    store.add_tasks(conn, [{"id": 1, "space": "acme", "title": "t", "state": "open"}])
    with pytest.raises(DataError, match=match):
        store.add_comments(conn, rows)


def test_bad_task_rows():
    conn = store.connect(":memory:")
    for bad, match in (("", "state must be a non-empty string"), (7, "state must be a string"),
                       ("x" * 101, "state is 101 characters long; at most 100")):
        with pytest.raises(DataError, match=match):
            store.add_tasks(conn, [{"id": 1, "space": "acme", "state": bad}])
    with pytest.raises(DataError, match="space must be a non-empty"):
        store.add_tasks(conn, [{"id": 1, "space": "", "state": "open"}])


def test_bad_jsonl_names_file_and_line(tmp_path):
    (tmp_path / "tasks.jsonl").write_text('{"id": 1, "space": "a", "state": "open"}\n\n{oops\n', encoding="utf-8")
    (tmp_path / "comments.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match=r"tasks.jsonl:3: not valid JSON"):
        store.import_dir(store.connect(":memory:"), tmp_path)
    with pytest.raises(DataError, match="nowhere: no such folder"):
        store.import_dir(store.connect(":memory:"), tmp_path / "nowhere")
    (tmp_path / "comments.jsonl").unlink()
    with pytest.raises(DataError, match="comments.jsonl is missing"):
        store.import_dir(store.connect(":memory:"), tmp_path)


def test_failed_import_writes_nothing():
    conn = store.connect(":memory:")
    store.add_tasks(conn, [{"id": 1, "space": "acme", "state": "open"}])
    with pytest.raises(DataError):
        store.add_comments(conn, [_row(id=1), _row(id=2, task=42)])
    assert conn.execute("SELECT count(*) FROM comments").fetchone()[0] == 0
    assert conn.execute(f"SELECT count(*) FROM {store.FTS_TABLE}").fetchone()[0] == 0


def test_wal_reader_keeps_reading_while_a_writer_commits(tmp_path):
    db = tmp_path / "t.db"
    writer = store.connect(db)
    store.import_dir(writer, DEMO)
    assert writer.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reader = sqlite3.connect(db, timeout=0, isolation_level=None)
    reader.execute("BEGIN")
    n_before = reader.execute(f"SELECT count(*) FROM {store.FTS_TABLE}").fetchone()[0]
    # the reader holds an open read transaction; in rollback-journal mode this commit would fail
    writer.execute("PRAGMA busy_timeout = 0")
    store.add_comments(writer, [_row(id=500, task=12, body="新しいコメント")])
    assert reader.execute(f"SELECT count(*) FROM {store.FTS_TABLE}").fetchone()[0] == n_before  # snapshot
    reader.execute("COMMIT")
    assert reader.execute(f"SELECT count(*) FROM {store.FTS_TABLE}").fetchone()[0] == n_before + 1


def test_store_without_fts5_keeps_the_rows_and_a_later_import_builds_the_index(monkeypatch):
    from searchkit.ingest.tasks import fts

    real = fts.fts5_available
    monkeypatch.setattr(fts, "fts5_available", lambda conn=None: False)
    conn = store.connect(":memory:")
    assert not store.has_fts(conn)
    store.add_tasks(conn, [{"id": 1, "space": "acme", "state": "open"}])
    rep = store.add_comments(conn, [_row()])  # issue 28 item 6: kept, not refused (T8 is a message)
    assert (rep.comments, rep.searchable) == (1, False)
    assert not store.check_fts(conn)  # T8's plain answer here
    monkeypatch.setattr(fts, "fts5_available", real)
    with pytest.raises(DataError, match="no full-text index"):
        store.check_fts(conn)  # where FTS5 exists, the missing table is named, not "no FTS5"
    assert store.add_tasks(conn, []) == 0  # any import here builds the index from the stored comments
    assert store.check_fts(conn)
    assert conn.execute(f"SELECT rowid FROM {store.FTS_TABLE}").fetchall() == [(_row()["id"],)]


def test_an_fts_table_that_cannot_be_written_without_fts5_imports_nothing(monkeypatch):
    from searchkit.ingest.tasks import fts

    conn = store.connect(":memory:")
    store.add_tasks(conn, [{"id": 1, "space": "acme", "state": "open"}])
    monkeypatch.setattr(fts, "fts5_available", lambda conn=None: False)
    with pytest.raises(DataError, match="no FTS5") as e:
        store.add_comments(conn, [_row()])
    assert e.value.reason == "no_fts5"
    assert conn.execute("SELECT count(*) FROM comments").fetchone()[0] == 0


def test_connect_without_create_needs_an_existing_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        store.connect(tmp_path / "missing.db", create=False)


def test_demo_files_follow_the_format():
    for line in (DEMO / "comments.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        assert row["kind"] in store.COMMENT_KINDS
        assert set(row) <= {"id", "task", "author", "kind", "progress_type", "tool", "body", "attachments", "ts"}


# ------------------------------------------------------------------ issue 7 item 12: no re-homing across spaces

def _dump(conn):
    return {
        "tasks": conn.execute("SELECT * FROM tasks ORDER BY id").fetchall(),
        "comments": conn.execute("SELECT * FROM comments ORDER BY id").fetchall(),
        "fts": conn.execute(f"SELECT rowid, text FROM {store.FTS_TABLE} ORDER BY rowid").fetchall(),
        "spaces": conn.execute("SELECT * FROM spaces ORDER BY slug").fetchall(),
    }


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _folder(tmp_path, name, tasks, comments):
    d = tmp_path / name
    d.mkdir()
    _jsonl(d / "tasks.jsonl", tasks)
    _jsonl(d / "comments.jsonl", comments)
    return d


def test_duplicate_task_id_within_one_import_is_refused(demo, tmp_path):
    before = _dump(demo)
    src = _folder(tmp_path, "dup", [{"id": 77, "space": "acme", "state": "open"},
                                    {"id": 77, "space": "globex", "state": "open"}], [])
    with pytest.raises(DataError, match=r"tasks.jsonl:2: task id 77 appears more than once.*tasks.jsonl:1"):
        store.import_dir(demo, src)
    assert _dump(demo) == before


def test_duplicate_comment_id_within_one_import_is_refused(demo, tmp_path):
    before = _dump(demo)
    src = _folder(tmp_path, "dup", [{"id": 77, "space": "acme", "state": "open"}],
                  [_row(id=900, task=77), _row(id=900, task=77, body="二度目")])
    with pytest.raises(DataError, match=r"comments.jsonl:2: comment id 900 appears more than once"):
        store.import_dir(demo, src)
    assert _dump(demo) == before
    with pytest.raises(DataError, match="comment id 5 appears more than once"):
        store.add_comments(demo, [_row(id=5, task=12), _row(id=5, task=12)])
    assert _dump(demo) == before


def test_task_cannot_change_space(demo, tmp_path):
    # the reproduction: task 12 of acme re-imported under globex
    before = _dump(demo)
    src = _folder(tmp_path, "move", [{"id": 99, "space": "globex", "state": "open"},
                                     {"id": 12, "space": "globex", "title": "乗っ取り", "state": "open"}],
                  [_row(id=901, task=99)])
    with pytest.raises(DataError) as e:
        store.import_dir(demo, src)
    msg = str(e.value)
    assert "task 12" in msg and "'acme'" in msg and "'globex'" in msg and "nothing imported" in msg
    assert _dump(demo) == before  # task 99 and comment 901 were not imported either
    with pytest.raises(DataError, match="task 12 belongs to space 'acme'"):
        store.add_tasks(demo, [{"id": 12, "space": "globex", "state": "open"}])
    assert _dump(demo) == before


def test_comment_cannot_move_to_a_task_of_another_space(demo):
    before = _dump(demo)
    with pytest.raises(DataError) as e:
        store.add_comments(demo, [_row(id=88, task=40, body="moved")])  # 88: task 12 (acme); 40: globex
    msg = str(e.value)
    assert "comment 88" in msg and "task 12" in msg and "'acme'" in msg and "task 40" in msg and "'globex'" in msg
    assert _dump(demo) == before


def test_same_space_reimport_and_moves_within_a_space_are_fine(demo):
    store.add_tasks(demo, [{"id": 12, "space": "acme", "title": "改題", "state": "closed"}])
    store.add_comments(demo, [_row(id=88, task=15, body="同じスペースの別タスクへ")])
    assert demo.execute("SELECT title FROM tasks WHERE id = 12").fetchone()[0] == "改題"
    assert demo.execute("SELECT task FROM comments WHERE id = 88").fetchone()[0] == 15


# ------------------------------------------------------------------ issue 8 item 5: all or nothing

class FailOnCommentInsert(sqlite3.Connection):
    """A connection that dies while writing comments, after the tasks of the import were written."""

    def executemany(self, sql, *args):
        if sql.startswith("INSERT INTO comments"):
            raise sqlite3.OperationalError("disk I/O error (simulated)")
        return super().executemany(sql, *args)

    def execute(self, sql, *args):
        if sql.startswith("INSERT INTO comments"):
            raise sqlite3.OperationalError("disk I/O error (simulated)")
        return super().execute(sql, *args)


def test_tasks_and_comments_commit_together(tmp_path):
    db = tmp_path / "t.db"
    base = store.connect(db)
    base.execute("PRAGMA journal_mode = DELETE")
    base.close()
    conn = sqlite3.connect(db, factory=FailOnCommentInsert)
    with pytest.raises(sqlite3.OperationalError, match="simulated"):
        store.import_dir(conn, DEMO)
    conn.close()
    check = sqlite3.connect(db)
    assert check.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0  # tasks rolled back with the comments
    assert check.execute("SELECT count(*) FROM spaces").fetchone()[0] == 0


def test_a_bad_comments_file_writes_no_task(tmp_path):
    conn = store.connect(":memory:")
    src = _folder(tmp_path, "bad", [{"id": 1, "space": "acme", "state": "open"}],
                  [_row(id=1, task=1), _row(id=2, task=1, ts="yesterday")])
    with pytest.raises(DataError, match=r"comments.jsonl:2: ts is not an ISO 8601 time"):
        store.import_dir(conn, src)
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0


BAD_SOURCES = {
    "invalid JSON": ('{"id": 1, "space": "acme"}\n{oops\n', None, "tasks.jsonl:2: not valid JSON"),
    "not an object": ("[1, 2]\n", None, "tasks.jsonl:1: each line must be a JSON object"),
    "deep nesting": ('{"id": 1, "space": "acme", "x": ' + "[" * 100000 + "]" * 100000 + "}\n", None,
                     "tasks.jsonl:1: JSON nested too deeply"),
    "non-UTF-8": (b'{"id": 1, "space": "\xff\xfe"}\n', None, "tasks.jsonl:1: not UTF-8 text"),
    "kind as a list": (None, [_row(kind=["request"])], "comments.jsonl:1: kind must be a string"),
    "lone surrogate": (None, '{"id": 1, "task": 1, "author": "user", "kind": "request", "body": "\\ud800",'
                             ' "ts": "2026-06-20T10:00:00Z"}\n', "comments.jsonl:1: body is not valid Unicode"),
    "unknown task": (None, [_row(task=5)], "comments.jsonl:1: task 5 does not exist"),
    "bad task id": ('{"id": 0, "space": "acme"}\n', None, "tasks.jsonl:1: id must be a positive integer"),
    "huge value": ('{"id": 1, "space": "acme", "state": "' + "x" * 1_000_000 + '"}\n', None,
                   "tasks.jsonl:1: state is 1,000,000 characters long"),
    "bad created": ('{"id": 1, "space": "acme", "created": "soon", "updated": "2026-01-01"}\n', None,
                    "tasks.jsonl:1: created is not an ISO 8601 time"),
}


def _write_source(d, tasks, comments):
    d.mkdir()
    for name, content, default in (("tasks.jsonl", tasks, '{"id": 1, "space": "acme", "state": "open"}\n'),
                                   ("comments.jsonl", comments, "")):
        content = default if content is None else content
        if isinstance(content, list):
            content = "".join(json.dumps(r) + "\n" for r in content)
        (d / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    return d


@pytest.mark.parametrize("case", sorted(BAD_SOURCES))
def test_bad_input_creates_no_store_and_leaves_an_old_one_unchanged(tmp_path, case):
    tasks, comments, match = BAD_SOURCES[case]
    src = _write_source(tmp_path / "src", tasks, comments)
    new_db = tmp_path / "new" / "t.db"
    with pytest.raises(DataError, match=match) as e:
        store.import_into(new_db, src / "tasks.jsonl", src / "comments.jsonl")
    assert len(str(e.value)) < 400  # never echoes a huge value
    assert not (tmp_path / "new").exists()  # no empty database file, no folder
    old = tmp_path / "old.db"
    store.import_into(old, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    before = old.read_bytes()
    with pytest.raises(DataError, match=match):
        store.import_into(old, src / "tasks.jsonl", src / "comments.jsonl")
    assert old.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.db", "src"]


def test_missing_source_creates_nothing(tmp_path):
    with pytest.raises(DataError, match="no such folder"):
        store.source_files(tmp_path / "nowhere")
    with pytest.raises(DataError, match="no such file"):
        store.import_into(tmp_path / "t.db", tmp_path / "tasks.jsonl", DEMO / "comments.jsonl")
    assert list(tmp_path.iterdir()) == []


def test_a_failure_while_writing_a_new_store_leaves_no_file(tmp_path, monkeypatch):
    real = store._write

    def dies(conn, batch):
        real(conn, store._Batch(batch.tasks))  # the tasks are written, then the process fails
        raise sqlite3.OperationalError("disk full (simulated)")

    monkeypatch.setattr(store.importing, "_write", dies)  # where _transaction looks it up
    with pytest.raises(DataError, match="simulated"):
        store.import_into(tmp_path / "runs" / "t.db", DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert list(tmp_path.iterdir()) == []


def test_new_store_is_complete_and_in_wal_mode(tmp_path):
    db = tmp_path / "runs" / "t.db"  # the parent folder is created (README's `--db runs/tasks.sqlite`)
    rep = store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert (rep.tasks, rep.comments, rep.indexed) == (7, 26, 23)
    assert sorted(p.name for p in db.parent.iterdir()) == ["t.db"]  # no temporary file left
    conn = store.open_readonly(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT count(*) FROM comments").fetchone()[0] == 26


def test_stale_temp_files_of_killed_importers_are_removed(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = [tmp_path / f".t.db.import-{pid}-0badc0de.tmp", tmp_path / f".t.db.import-{pid}-0badc0de.tmp-wal"]
    live = tmp_path / f".t.db.import-{os.getpid()}-00000001.tmp"  # an importer still running: kept
    other = tmp_path / ".u.db.import-1-0badc0de.tmp"  # another store's: kept
    for p in stale + [live, other]:
        p.write_bytes(b"partial")
    rep = store.import_into(tmp_path / "t.db", DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert rep.created
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name, "t.db"])
    # a store created meanwhile by another importer: the next import into it cleans up too
    stale[0].write_bytes(b"partial")
    rep = store.import_into(tmp_path / "t.db", DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert not rep.created
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name, "t.db"])


# ------------------------------------------------------------------ issue 8 item 6: locks and read-only readers

def test_importer_waits_for_another_writer(tmp_path):
    import threading

    db = tmp_path / "t.db"
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        rep = store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl", timeout=20)
    finally:
        release.join()
    assert rep.comments == 26


def test_a_held_lock_is_reported_as_a_lock(tmp_path):
    db = tmp_path / "t.db"
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(DataError, match="locked by another process.*nothing imported") as e:
            store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl", timeout=0.3)
        assert e.value.reason == "locked"
    finally:
        holder.execute("ROLLBACK")


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_readonly_open_never_writes_the_store(tmp_path, journal):
    from searchkit.tools.tasks import list_tasks, task_search

    db = tmp_path / "t.db"
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    if journal == "delete":
        c = sqlite3.connect(db)
        c.execute("PRAGMA journal_mode = DELETE")
        c.close()
    before = db.read_bytes()
    conn = store.open_readonly(db)
    ctx = ToolContext(caller="u", space="acme", current_task=30)
    assert [h.comment_id for h in task_search(TaskSearchParams(query="認証"), replace(ctx, store=conn)).hits] == [95, 88]
    assert [h.comment_id for h in task_search(TaskSearchParams(query="認証フロー"), replace(ctx, store=conn)).hits] == [88]
    assert [c.comment_id for c in task_search(TaskSearchParams(around_ref="comment:88"), replace(ctx, store=conn)).comments] == [86, 88, 90]
    assert len(list_tasks(TaskListParams(), replace(ctx, store=conn)).tasks) == 5
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == journal
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("INSERT INTO spaces(slug) VALUES ('x')")
    conn.close()
    assert db.read_bytes() == before
    if journal == "delete":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["t.db"]  # no -wal / -shm appeared


def test_readonly_open_refuses_what_is_not_a_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        store.open_readonly(tmp_path / "missing.db")
    with pytest.raises(DataError, match="not a regular file"):
        store.open_readonly(tmp_path)
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file"):  # would block the open
        store.open_readonly(fifo)


# ------------------------------------------------------------------ audit of issues 7-8: titles, targets, readers

TITLE_SECRETS = st.builds(
    lambda letters, digits: letters + digits, st.text("abcdefghijkmnpqrstuvwxyz", min_size=4, max_size=8),
    st.text("0123456789", min_size=2, max_size=4),
)
TITLE_FRAMES = ["移行 パスワード: {v}", "{kw}={v} の件", "ログイン情報（{kw}「{v}」）", "Rotate {kw}: {v}",
                "Пароль {v} для стенда", "contact ops+{v}@acme.example", "{v} がパスワードです"]


def _title_store(tmp_path, title, *, name="src"):
    src = _folder(tmp_path, name, [{"id": 800, "space": "acme", "title": title, "state": "open",
                                    "updated": "2026-06-20T10:00:00Z"},
                                   {"id": 801, "space": "acme", "title": "current", "state": "open"}],
                  [_row(id=9001, task=800, body="移行の件です。認証も")])
    return src


def _every_rendering(conn):
    ctx = ToolContext(caller="u", space="acme", current_task=801)
    results = [task_search(TaskSearchParams(query="移行"), replace(ctx, store=conn)), task_search(TaskSearchParams(query="移行の件", context=1), replace(ctx, store=conn)),
               task_search(TaskSearchParams(around_ref="comment:9001"), replace(ctx, store=conn)), list_tasks(TaskListParams(), replace(ctx, store=conn))]
    return "\n".join(render(r, lang) for r in results for lang in ("ja", "en")) + "\n" + "\n".join(
        json.dumps(r.to_dict(), ensure_ascii=False) for r in results)


def test_a_title_with_a_secret_is_redacted_in_every_result(tmp_path):
    db = tmp_path / "t.db"
    rep = store.import_into(db, *store.source_files(_title_store(tmp_path, "移行 パスワード: titlesecret77")))
    assert rep.titles_redacted == 1
    conn = store.open_readonly(db)
    shown = _every_rendering(conn)
    assert "titlesecret77" not in shown
    assert 'task:800 "移行 パスワード: [redacted]"' in shown  # search lines, list_tasks and the around_ref header
    assert conn.execute("SELECT title, title_raw FROM tasks WHERE id = 800").fetchone() == (
        "移行 パスワード: [redacted]", "移行 パスワード: titlesecret77")
    conn.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=TITLE_SECRETS, frame=st.sampled_from(TITLE_FRAMES),
       kw=st.sampled_from(["password", "token", "APIキー", "パスワード", "api_key", "PW"]))
def test_no_secret_of_any_title_reaches_a_result(tmp_path_factory, value, frame, kw):
    tmp = tmp_path_factory.mktemp("title")
    conn = store.connect(":memory:")
    store.import_dir(conn, _title_store(tmp, frame.format(kw=kw, v=value)))
    assert value not in _every_rendering(conn)


@pytest.mark.parametrize("title", ["ログイン画面の改修", "API キーのローテーション", "Weekly report export",
                                   "Ошибка импорта CSV", "パスワード変更画面の改善 (ATL-1655)", "Rotate the token in v2.3.1"])
def test_ordinary_titles_are_shown_as_written(title):
    conn = store.connect(":memory:")
    store.add_tasks(conn, [{"id": 5, "space": "acme", "title": title, "state": "open"}])
    assert list_tasks(TaskListParams(), ToolContext(caller="u", space="acme", current_task=None, store=conn)).tasks[0].title == title


def _legacy_store(db):
    """A store as the importer made it before titles were redacted (no title_raw, raw titles)."""
    conn = store.connect(db)
    store.import_dir(conn, DEMO)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("CREATE TABLE tasks_old (id INTEGER PRIMARY KEY, space TEXT NOT NULL REFERENCES spaces(slug),"
                 " title TEXT NOT NULL DEFAULT '', state TEXT NOT NULL CHECK (state IN ('open', 'closed')),"
                 " piece TEXT NOT NULL DEFAULT '', created TEXT, updated TEXT, updated_utc TEXT)")
    conn.execute("INSERT INTO tasks_old SELECT id, space, title_raw, state, piece, created, updated, updated_utc"
                 " FROM tasks")
    conn.execute("DROP TABLE tasks")
    conn.execute("ALTER TABLE tasks_old RENAME TO tasks")
    conn.execute("UPDATE tasks SET title = 'Deploy token=legacy123xyz' WHERE id = 21")
    conn.commit()
    conn.close()


def test_a_store_made_before_titles_were_redacted_is_read_redacted_and_migrated(tmp_path):
    db = tmp_path / "t.db"
    _legacy_store(db)
    before = db.read_bytes()
    conn = store.open_readonly(db)
    ctx = ToolContext(caller="u", space="acme", current_task=30)
    titles = {t.task_id: t.title for t in list_tasks(TaskListParams(), replace(ctx, store=conn)).tasks}
    assert titles[21] == "Deploy token=[redacted]" and titles[12] == "ログイン画面の改修"
    conn.close()
    assert db.read_bytes() == before  # read through a temp view; the store is not written
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")  # the next import migrates
    conn = sqlite3.connect(db)
    rows = dict(conn.execute("SELECT id, title_raw FROM tasks").fetchall())
    assert rows[12] == "ログイン画面の改修" and rows[21] == "Weekly report export"
    conn.close()


# --- a refused import leaves the target byte for byte as it was (audit item 4; issue 8 items 5-6)

def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _foreign_sqlite(path, journal):
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.execute("CREATE TABLE deals (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT)")  # a `tasks` table of another shape
    conn.execute("INSERT INTO deals(name) VALUES ('Globex')")
    conn.commit()
    conn.close()


TARGETS = {
    "the demo workspace's app.sqlite": lambda p: p.write_bytes(
        (Path(__file__).resolve().parents[1] / "datasets/demo-workspace/acme/.space/app.sqlite").read_bytes()),
    "a foreign SQLite file (rollback journal)": lambda p: _foreign_sqlite(p, "DELETE"),
    "a foreign SQLite file (WAL)": lambda p: _foreign_sqlite(p, "WAL"),
    "a task store's tables with a column missing": lambda p: sqlite3.connect(p).executescript(
        "CREATE TABLE spaces(slug, title); CREATE TABLE tasks(id, space, title); CREATE TABLE comments(id, task);"),
    "a text file": lambda p: p.write_text("not a database\n"),
    "random bytes": lambda p: p.write_bytes(os.urandom(4096)),
    "an SQLite header and nothing else": lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84),
}


@pytest.mark.parametrize("case", sorted(TARGETS))
def test_an_import_into_a_file_that_is_not_a_task_store_changes_nothing(tmp_path, case):
    folder = tmp_path / "target"
    folder.mkdir()
    db = folder / "app.sqlite"
    TARGETS[case](db)
    before = _snapshot(folder)
    with pytest.raises(DataError, match="nothing imported"):
        store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert _snapshot(folder) == before  # the same bytes, header and change counter; no -wal / -shm / -journal


def test_the_cli_refuses_the_demo_workspace_database_and_leaves_it_as_it_was(tmp_path):
    import subprocess
    import sys

    db = tmp_path / "u.sqlite"
    TARGETS["the demo workspace's app.sqlite"](db)
    before = db.read_bytes()
    r = subprocess.run([sys.executable, "-m", "searchkit.cli", "tasks", "import", str(DEMO), "--db", str(db)],
                       check=False, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert r.returncode == 2 and "not a task store" in r.stderr and "nothing imported" in r.stderr
    assert db.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["u.sqlite"]


@pytest.mark.parametrize("journal", ["wal", "delete"])
@pytest.mark.parametrize("refusal", ["space change", "comment moves space", "unknown task"])
def test_an_import_refused_for_a_data_reason_leaves_the_store_byte_identical(tmp_path, journal, refusal):
    db = tmp_path / "t.db"
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    if journal == "delete":
        c = sqlite3.connect(db)
        c.execute("PRAGMA journal_mode = DELETE")
        c.close()
    tasks, comments = {
        "space change": ([{"id": 12, "space": "globex", "state": "open"}], []),
        "comment moves space": ([{"id": 500, "space": "globex", "state": "open"}], [_row(id=88, task=500)]),
        "unknown task": ([], [_row(id=5000, task=4242)]),
    }[refusal]
    src = _folder(tmp_path, "src", tasks, comments)
    before = db.read_bytes()
    with pytest.raises(DataError, match="nothing imported"):
        store.import_into(db, src / "tasks.jsonl", src / "comments.jsonl")
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "t.db"]
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == journal


@pytest.mark.parametrize("content", [b"", "empty sqlite"])
def test_an_empty_file_or_an_empty_sqlite_database_becomes_a_store(tmp_path, content):
    db = tmp_path / "t.db"
    if content == b"":
        db.write_bytes(b"")
    else:
        sqlite3.connect(db).execute("PRAGMA user_version = 1").connection.close()
    rep = store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert (rep.tasks, rep.comments) == (7, 26)
    assert store.check_target(db) is True


def test_a_legacy_rollback_store_is_switched_to_wal_only_after_its_import_committed(tmp_path):
    db = tmp_path / "t.db"
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    c = sqlite3.connect(db)
    c.execute("PRAGMA journal_mode = DELETE")
    c.close()
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# --- readers (audit item 5): mode=ro, never immutable=1; what appears beside a store

def _big_source(tmp_path, n=3000):
    src = tmp_path / "big"
    src.mkdir()
    _jsonl(src / "tasks.jsonl", [{"id": 1000 + i, "space": "acme", "title": f"t{i}", "state": "open"}
                                 for i in range(50)])
    _jsonl(src / "comments.jsonl", [_row(id=100000 + i, task=1000 + i % 50, body="認証 " * 300 + str(i))
                                    for i in range(n)])
    return src


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_a_reader_open_across_an_import_reads_the_new_version_whole(tmp_path):
    """Why readers use mode=ro and not immutable=1: an import committing (and checkpointing into the
    file) while a reader is open is normal, and only a reader that takes part in SQLite's locking
    sees a consistent store afterwards; an immutable one answers wrongly or reports corruption."""
    db = tmp_path / "t.db"
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    reader = store.open_readonly(db)
    immutable = sqlite3.connect(db.absolute().as_uri() + "?immutable=1", uri=True)
    assert reader.execute("SELECT count(*) FROM comments").fetchone()[0] == 26
    assert immutable.execute("SELECT count(*) FROM comments").fetchone()[0] == 26
    src = _big_source(tmp_path)
    store.import_into(db, src / "tasks.jsonl", src / "comments.jsonl")
    assert reader.execute("SELECT count(*) FROM comments").fetchone()[0] == 3026
    assert reader.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    try:
        seen = immutable.execute("SELECT count(*), sum(length(body)) FROM comments").fetchone()
        check = immutable.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError:
        seen = check = None
    assert (seen, check) != ((3026, reader.execute("SELECT sum(length(body)) FROM comments").fetchone()[0]), "ok")
    reader.close()
    immutable.close()


def test_what_a_read_leaves_beside_a_store(tmp_path):
    """The documented rule: a rollback-journal store gets nothing beside it; a WAL store gets (or keeps)
    its -wal and -shm, the reader adds no frame to the -wal, and the store file is never written."""
    db = tmp_path / "t.db"
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.db"]  # the importer leaves no side file
    before = db.read_bytes()
    conn = store.open_readonly(db)
    list_tasks(TaskListParams(), ToolContext(caller="u", space="acme", current_task=30, store=conn))
    task_search(TaskSearchParams(query="認証フロー"), ToolContext(caller="u", space="acme", current_task=30, store=conn))
    conn.close()
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.db", "t.db-shm", "t.db-wal"]
    assert (tmp_path / "t.db-wal").stat().st_size == 0
    # the next import, as the last connection, removes them
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.db"]


# ------------------------------------------------------------------ issue 27 item 1: owner-only store

def _mode(p):
    return os.stat(p).st_mode & 0o777


@pytest.fixture()
def open_umask():
    old = os.umask(0o022)  # what most shells have: files 0644 unless the program says otherwise
    yield
    os.umask(old)


def test_a_new_store_its_side_files_and_its_folders_are_owner_only(tmp_path, open_umask, monkeypatch):
    db = tmp_path / "runs" / "deep" / "t.db"
    seen = []
    real = store._write

    def spy(conn, batch):  # the temporary file the store is built in, while it is written
        name = conn.execute("PRAGMA database_list").fetchone()[2]
        seen.extend((Path(p).name, _mode(p)) for p in (name, f"{name}-journal", f"{name}-wal") if Path(p).exists())
        return real(conn, batch)

    monkeypatch.setattr(store.importing, "_write", spy)  # where _transaction looks it up
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert seen and all(mode == 0o600 for _, mode in seen), seen
    assert _mode(db) == 0o600
    assert _mode(tmp_path / "runs") == 0o700 and _mode(tmp_path / "runs" / "deep") == 0o700
    reader = store.open_readonly(db)  # a reader makes the -wal / -shm: they take the store's mode
    reader.execute("SELECT count(*) FROM comments").fetchone()
    sides = [Path(f"{db}{s}") for s in store.SIDE_FILES if Path(f"{db}{s}").exists()]
    assert sides and all(_mode(p) == 0o600 for p in sides)
    reader.close()
    assert _mode(store.connect(tmp_path / "c.db").execute("PRAGMA database_list").fetchone()[2]) == 0o600


def test_an_existing_store_others_can_read_is_tightened_with_a_warning(tmp_path, caplog):
    db = tmp_path / "t.db"
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    os.chmod(db, 0o644)
    with caplog.at_level("WARNING", logger=store.__name__):
        store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert _mode(db) == 0o600
    assert "readable by others" in caplog.text and "made it 0600" in caplog.text and "t.db 0644" in caplog.text
    os.chmod(db, 0o640)
    caplog.clear()
    with caplog.at_level("WARNING", logger=store.__name__):
        store.open_readonly(db).close()  # a reader who owns it tightens it too
    assert _mode(db) == 0o600 and "made it 0600" in caplog.text


def test_a_store_others_can_read_that_cannot_be_changed_is_warned_about(tmp_path, caplog, monkeypatch):
    db = tmp_path / "t.db"
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    os.chmod(db, 0o644)

    def refused(path, mode):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chmod", refused)  # another user's store
    with caplog.at_level("WARNING", logger=store.__name__):
        conn = store.open_readonly(db)
    assert [h.comment_id for h in task_search(TaskSearchParams(query="認証フロー"), ToolContext(caller="u", space="acme", current_task=30, store=conn)).hits] == [88]
    assert "could not be made 0600" in caplog.text and "Operation not permitted" in caplog.text


# ------------------------------------------------------------------ issue 27 item 7: authors are redacted

SECRET_AUTHORS = {"anna@example.com": "[email]", "bot password=Hunter_2x9": "bot password=[redacted]"}


def _author_store(tmp_path):
    rows = [_row(id=i, task=1, author=a, body=f"認証フローの件 {i}", ts=f"2026-06-20T10:0{i}:00Z")
            for i, a in enumerate(SECRET_AUTHORS, 1)]
    src = _folder(tmp_path, "src", [{"id": 1, "space": "acme", "title": "t", "state": "open"},
                                    {"id": 2, "space": "acme", "title": "current", "state": "open"}], rows)
    db = tmp_path / "t.db"
    store.import_into(db, src / "tasks.jsonl", src / "comments.jsonl")
    return db


def test_authors_are_shown_redacted_everywhere_and_kept_raw_in_the_store(tmp_path):
    db = _author_store(tmp_path)
    conn = store.open_readonly(db)
    ctx = ToolContext(caller="u", space="acme", current_task=2)
    hits = task_search(TaskSearchParams(query="認証フロー"), replace(ctx, store=conn)).hits
    around = task_search(TaskSearchParams(around_ref="comment:1", context=1), replace(ctx, store=conn))
    shown = {h.author for h in hits} | {c.author for c in around.comments}
    assert shown == set(SECRET_AUTHORS.values())
    for result in (task_search(TaskSearchParams(query="認証フロー"), replace(ctx, store=conn)), around):
        text = render(result, "en") + json.dumps(result.to_dict(), ensure_ascii=False)
        assert "anna@example.com" not in text and "Hunter_2x9" not in text
    # the filter matches what is shown; the raw author is not a key into the store
    assert [h.comment_id for h in task_search(TaskSearchParams(query="認証フロー", author="[email]"), replace(ctx, store=conn)).hits] == [1]
    assert task_search(TaskSearchParams(query="認証フロー", author="anna@example.com"), replace(ctx, store=conn)).hits == ()
    raw = dict(sqlite3.connect(db).execute("SELECT id, author_raw FROM comments").fetchall())
    assert raw == {1: "anna@example.com", 2: "bot password=Hunter_2x9"}


def test_a_store_made_before_authors_were_redacted_is_read_redacted_and_migrated(tmp_path):
    db = _author_store(tmp_path)
    conn = sqlite3.connect(db)  # as an older importer left it: raw authors, no author_raw / state_raw
    conn.execute("UPDATE comments SET author = author_raw")
    conn.execute("ALTER TABLE comments DROP COLUMN author_raw")
    conn.execute("ALTER TABLE tasks DROP COLUMN state_raw")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    reader = store.open_readonly(db)
    hits = task_search(TaskSearchParams(query="認証フロー"), ToolContext(caller="u", space="acme", current_task=2, store=reader)).hits
    assert {h.author for h in hits} == set(SECRET_AUTHORS.values())
    assert {t.state for t in list_tasks(TaskListParams(), ToolContext(caller="u", space="acme", current_task=2, store=reader)).tasks} == {"open"}
    reader.close()
    assert db.read_bytes() == before
    store.import_into(db, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")  # the next import migrates
    rows = sqlite3.connect(db).execute("SELECT author, author_raw FROM comments WHERE id <= 2 ORDER BY id").fetchall()
    assert rows == [("[email]", "anna@example.com"), ("bot password=[redacted]", "bot password=Hunter_2x9")]


# ------------------------------------------------------------------ issue 28 item 6: states as the platform has them

PLATFORM_STATES = {"実行中": "open", "完了": "closed", "中断": "closed", "open": "open", "closed": "closed",
                   "running": "open", "done": "closed", "interrupted": "closed", "In Progress": "open",
                   "someday-maybe": "open"}


def test_any_platform_state_is_imported_as_given_and_classed_open_or_closed():
    conn = store.connect(":memory:")
    rows = [{"id": i, "space": "acme", "title": f"t{i}", "state": s, "updated": f"2026-01-01T00:{i:02d}:00Z"}
            for i, s in enumerate(PLATFORM_STATES, 1)]
    assert store.add_tasks(conn, rows) == len(rows)
    ctx = ToolContext(caller="u", space="acme", current_task=99)
    every = list_tasks(TaskListParams(limit=50), replace(ctx, store=conn)).tasks
    assert {t.state: t.state_class for t in every} == PLATFORM_STATES
    for cls in ("open", "closed"):
        got = {t.state for t in list_tasks(TaskListParams(state=cls, limit=50), replace(ctx, store=conn)).tasks}
        assert got == {s for s, c in PLATFORM_STATES.items() if c == cls}
    assert store.state_class("something new") == store.UNKNOWN_STATE_CLASS == "open"


def test_search_ignores_the_state(tmp_path):
    rows = [{"id": i, "space": "acme", "title": f"t{i}", "state": s} for i, s in enumerate(PLATFORM_STATES, 1)]
    comments = [_row(id=100 + i, task=i, body="認証フローの件") for i in range(1, len(rows) + 1)]
    conn = store.connect(":memory:")
    store.add_tasks(conn, rows)
    store.add_comments(conn, comments)
    hits = task_search(TaskSearchParams(query="認証フロー", limit=30), ToolContext(caller="u", space="acme", current_task=99, store=conn)).hits
    assert len(hits) == len(rows)


# ------------------------------------------------------------------ issue 27 item 17: volume caps, streaming

def test_an_oversize_comment_is_skipped_with_its_reason_and_the_rest_imported(tmp_path):
    big = _row(id=2, body="x" * 5000)
    src = _folder(tmp_path, "src", [{"id": 1, "space": "acme", "state": "open"}],
                  [_row(id=1, body="認証フロー"), big, _row(id=3, body="ログイン")])
    rep = store.import_into(tmp_path / "t.db", src / "tasks.jsonl", src / "comments.jsonl", max_item_bytes=1000)
    assert (rep.comments, rep.indexed) == (2, 2)
    (skip,) = rep.skipped
    assert skip.where.endswith("comments.jsonl:2") and skip.reason == "too_large" and "over the cap of 1,000" in skip.detail
    assert rep.to_dict()["skipped"][0]["reason"] == "too_large"
    ids = [r[0] for r in sqlite3.connect(tmp_path / "t.db").execute("SELECT id FROM comments ORDER BY id")]
    assert ids == [1, 3]


def test_the_default_cap_is_stated_and_a_line_at_the_cap_is_kept(tmp_path):
    assert store.DEFAULT_MAX_ITEM_BYTES == 2_000_000
    row = _row(id=1, body="")
    exact = json.dumps(row, ensure_ascii=False)
    src = _folder(tmp_path, "src", [{"id": 1, "space": "acme", "state": "open"}], [row])
    (src / "comments.jsonl").write_text(exact + "\r\n", encoding="utf-8")
    rep = store.import_into(tmp_path / "t.db", src / "tasks.jsonl", src / "comments.jsonl",
                            max_item_bytes=len(exact.encode()))
    assert rep.comments == 1 and rep.skipped == ()
    for bad in (0, -1, True, 2**41):
        with pytest.raises(DataError, match="item size cap"):
            store.import_into(tmp_path / "u.db", src / "tasks.jsonl", src / "comments.jsonl", max_item_bytes=bad)


def test_a_huge_line_is_never_held_in_memory(tmp_path):
    import time
    import tracemalloc

    src = _folder(tmp_path, "src", [{"id": 1, "space": "acme", "state": "open"}], [_row(id=1, body="認証フロー")])
    with open(src / "comments.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"id": 2, "task": 1, "author": "user", "kind": "request", "ts": "2026-06-20T10:00:00Z", "body": "')
        fh.write("秘" * 15_000_000)  # 45 MB in one comment
        fh.write('"}\n')
        fh.write(json.dumps(_row(id=3, body="ログイン")) + "\n")
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        rep = store.import_into(tmp_path / "t.db", src / "tasks.jsonl", src / "comments.jsonl")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rep.comments == 2 and [s.reason for s in rep.skipped] == ["too_large"]
    assert "45,000,0" in rep.skipped[0].detail
    assert peak < 12_000_000, peak  # bounded by the cap (2 MB), not by the 45 MB line
    assert time.perf_counter() - t0 < 20


def test_comments_of_a_skipped_task_are_skipped_too_but_an_unknown_task_still_refuses(tmp_path):
    src = _folder(tmp_path, "src", [{"id": 1, "space": "acme", "state": "open"},
                                    {"id": 2, "space": "acme", "state": "open", "title": "t" * 3000}],
                  [_row(id=1, task=1), _row(id=2, task=2), _row(id=3, task=2)])
    rep = store.import_into(tmp_path / "t.db", src / "tasks.jsonl", src / "comments.jsonl", max_item_bytes=1000)
    assert (rep.tasks, rep.comments) == (1, 1)
    assert [(s.where.rsplit("/", 1)[-1], s.reason) for s in rep.skipped] == [
        ("tasks.jsonl:2", "too_large"), ("comments.jsonl:2", "task_skipped"), ("comments.jsonl:3", "task_skipped")]
    # nothing skipped: a comment of an unknown task is still a real error and nothing is imported
    src2 = _folder(tmp_path, "src2", [{"id": 1, "space": "acme", "state": "open"}],
                   [_row(id=1, task=1), _row(id=2, task=7)])
    with pytest.raises(DataError, match="task 7 does not exist"):
        store.import_into(tmp_path / "n.db", src2 / "tasks.jsonl", src2 / "comments.jsonl", max_item_bytes=1000)
    assert not (tmp_path / "n.db").exists()
    # a bad line next to an oversize one still refuses the whole import
    (src / "comments.jsonl").write_text((src / "comments.jsonl").read_text(encoding="utf-8") + "{oops\n",
                                        encoding="utf-8")
    before = (tmp_path / "t.db").read_bytes()
    with pytest.raises(DataError, match="comments.jsonl:4: not valid JSON"):
        store.import_into(tmp_path / "t.db", src / "tasks.jsonl", src / "comments.jsonl", max_item_bytes=1000)
    assert (tmp_path / "t.db").read_bytes() == before


@pytest.mark.parametrize("row", [
    {"id": "SECRET-hunter2", "space": "acme", "title": "t", "state": "open", "piece": "p", "created": "2026-01-01", "updated": "2026-01-01"},
    {"id": 1, "space": "acme", "title": "t", "state": "open", "piece": "p", "created": "SECRET-hunter2", "updated": "2026-01-01"},
    {"id": 1, "space": ["SECRET-hunter2"], "title": "t", "state": "open", "piece": "p", "created": "2026-01-01", "updated": "2026-01-01"},
])
def test_a_bad_line_is_named_never_quoted(tmp_path, row):
    """Issue 27 item 8: an import error names the file, the line and the problem, never a value of the
    line (a value of a task or comment line may be a secret)."""
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "tasks.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (folder / "comments.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(DataError) as info:
        store.import_into(tmp_path / "t.sqlite", *store.source_files(folder))
    assert "tasks.jsonl:1" in str(info.value) and "SECRET" not in str(info.value) and "hunter2" not in str(info.value)


def test_a_fifo_source_is_not_called_missing(tmp_path):
    import os

    folder = tmp_path / "src"
    folder.mkdir()
    os.mkfifo(folder / "tasks.jsonl")
    (folder / "comments.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="not a regular file"):
        store.import_into(tmp_path / "t.sqlite", *store.source_files(folder))


def test_a_file_that_is_not_a_store_keeps_its_mode(tmp_path, open_umask):
    """Only a task store is tightened: a search pointed at another file (a JSON file, a text file,
    a symbolic link to a system file, an SQLite file of another program) is refused and the file
    keeps its mode; a probe once made a link to /etc/passwd turn that file 0600 (issue 27 item 1)."""
    import sqlite3

    other = tmp_path / "notes.txt"
    other.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    os.chmod(other, 0o644)
    link = tmp_path / "link.db"
    link.symlink_to(other)
    foreign = tmp_path / "app.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (id INTEGER)")
    conn.close()
    os.chmod(foreign, 0o644)
    for path in (other, link, foreign):
        with pytest.raises(DataError):
            store.open_readonly(path)
        with pytest.raises(DataError):
            store.import_into(path, DEMO / "tasks.jsonl", DEMO / "comments.jsonl")
    assert _mode(other) == 0o644 and _mode(foreign) == 0o644
