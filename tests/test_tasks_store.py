"""The task store (SPEC T1, T2): schema, importer, indexing rules, redaction, WAL."""
import json
import sqlite3
from pathlib import Path

import pytest

from searchkit.ingest import tasks as store

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
    assert text == "API キー password=[redacted] to [email]"


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
    with pytest.raises(store.TaskStoreError, match=match):
        store.add_comments(conn, rows)


def test_bad_task_rows():
    conn = store.connect(":memory:")
    with pytest.raises(store.TaskStoreError, match="state must be one of"):
        store.add_tasks(conn, [{"id": 1, "space": "acme", "state": "running"}])
    with pytest.raises(store.TaskStoreError, match="space must be a non-empty"):
        store.add_tasks(conn, [{"id": 1, "space": "", "state": "open"}])


def test_bad_jsonl_names_file_and_line(tmp_path):
    (tmp_path / "tasks.jsonl").write_text('{"id": 1, "space": "a", "state": "open"}\n\n{oops\n', encoding="utf-8")
    (tmp_path / "comments.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(store.TaskStoreError, match=r"tasks.jsonl:3: not valid JSON"):
        store.import_dir(store.connect(":memory:"), tmp_path)
    with pytest.raises(store.TaskStoreError, match="tasks.jsonl is missing"):
        store.import_dir(store.connect(":memory:"), tmp_path / "nowhere")


def test_failed_import_writes_nothing():
    conn = store.connect(":memory:")
    store.add_tasks(conn, [{"id": 1, "space": "acme", "state": "open"}])
    with pytest.raises(store.TaskStoreError):
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


def test_store_without_fts5_still_opens_but_cannot_index(monkeypatch):
    from searchkit.index import fts

    monkeypatch.setattr(fts, "fts5_available", lambda conn=None: False)
    conn = store.connect(":memory:")
    assert not store.has_fts(conn)
    store.add_tasks(conn, [{"id": 1, "space": "acme", "state": "open"}])
    with pytest.raises(store.TaskStoreError, match="FTS5"):
        store.add_comments(conn, [_row()])


def test_connect_without_create_needs_an_existing_file(tmp_path):
    with pytest.raises(store.TaskStoreError, match="does not exist"):
        store.connect(tmp_path / "missing.db", create=False)


def test_demo_files_follow_the_format():
    for line in (DEMO / "comments.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        assert row["kind"] in store.COMMENT_KINDS
        assert set(row) <= {"id", "task", "author", "kind", "progress_type", "tool", "body", "attachments", "ts"}
