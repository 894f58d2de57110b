"""`searchkit tasks ...` through the searchkit command (searchkit.cli.tasks)."""
import json
from pathlib import Path

import pytest

from searchkit import cli as tasks_cli

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "tasks-demo"


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "tasks.db"
    assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", str(path)]) == 0
    return str(path)


def test_import_reports_counts(tmp_path, capsys):
    path = tmp_path / "x.db"
    assert tasks_cli.main(["tasks", "import", "--tasks", str(DEMO / "tasks.jsonl"),
                           "--comments", str(DEMO / "comments.jsonl"), "--db", str(path)]) == 0
    out = capsys.readouterr().out
    assert "imported 7 task(s), 26 comment(s)" in out and "23 indexed" in out and "kind:comment 1" in out
    assert "(new store)" in out


def test_search_renders_the_seed_layout(db, capsys):
    rc = tasks_cli.main(["tasks", "search", "認証", "--db", db, "--space", "acme", "--current-task", "30"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith('## Workspace Task Search Results (query: "認証", 2 hit(s))')
    assert "comment:88 user/request" in out


def test_search_options_and_json(db, capsys):
    rc = tasks_cli.main(["tasks", "search", "ログイン 認証", "--db", db, "--space", "acme", "--current-task", "30",
                         "--match-mode", "all", "--context", "1", "--limit", "5", "--kind", "result",
                         "--author", "agent", "--task-id", "12", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert [h["comment_id"] for h in data["hits"]] == [95]
    assert [c["comment_id"] for c in data["hits"][0]["context"]] == [93, 95]


def test_around_and_list(db, capsys):
    assert tasks_cli.main(["tasks", "around", "comment:88", "--db", db, "--space", "acme", "--lang", "en"]) == 0
    out = capsys.readouterr().out  # T3: no neighbours unless --context asks
    assert "(comment:88, 0 neighbouring comment(s))" in out
    assert "- comment:88 user/request 2026-06-20T10:00:00Z ← 既存の認証フロー" in out and "comment:86" not in out
    assert tasks_cli.main(["tasks", "around", "comment:88", "--db", db, "--space", "acme", "--lang", "en",
                           "--context", "1"]) == 0
    assert "(comment:88, 2 neighbouring comment(s))" in capsys.readouterr().out
    assert tasks_cli.main(["tasks", "list", "--db", db, "--space", "acme", "--current-task", "30",
                           "--state", "open"]) == 0
    out = capsys.readouterr().out
    assert "task:24" in out and "task:15" in out and "task:30" not in out


def test_errors_exit_2_and_name_the_parameter(db, capsys):
    assert tasks_cli.main(["tasks", "search", "認証", "--db", db, "--space", "acme", "--limit", "31"]) == 2
    assert "error: limit: must be from 1 to 30" in capsys.readouterr().err
    assert tasks_cli.main(["tasks", "around", "comment:152", "--db", db, "--space", "acme"]) == 2
    err = capsys.readouterr().err
    assert "around_ref: comment:152 was not found" in err and "globex" not in err
    assert tasks_cli.main(["tasks", "list", "--db", db + ".missing", "--space", "acme"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_unavailable_context_is_a_message_not_an_error(db, capsys):
    assert tasks_cli.main(["tasks", "search", "認証", "--db", db, "--space", "acme", "--no-auth"]) == 0
    assert capsys.readouterr().out.startswith("このコンテキストでは利用できません")
    assert tasks_cli.main(["tasks", "list", "--db", db, "--space", "acme", "--subtask", "--lang", "en"]) == 0
    assert capsys.readouterr().out.startswith("Not available in this context")


def test_add_parser_hooks_into_a_parent_parser(db):
    import argparse

    from searchkit.cli import tasks as tasks_verb

    parser = argparse.ArgumentParser(prog="searchkit")
    sub = parser.add_subparsers(dest="command", required=True)
    tasks_verb.add_parser(sub)
    args = parser.parse_args(["tasks", "list", "--db", db, "--space", "acme"])
    assert args.func is tasks_verb.run and tasks_verb.run(args) == 0


def test_top_level_searchkit_command(db, capsys):
    from searchkit import cli

    assert cli.main(["tasks", "around", "comment:88", "--db", db, "--space", "acme", "--current-task", "30",
                     "--context", "1"]) == 0
    assert "(comment:88 前後 2 件)" in capsys.readouterr().out


# ------------------------------------------------------------------ issue 7 item 12, issue 8 items 5-6

def _one_error_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("searchkit tasks: error: ") and "Traceback" not in err
    return lines[0]


def test_import_refuses_to_rehome_a_task_into_another_space(db, tmp_path, capsys):
    src = tmp_path / "globex"
    src.mkdir()
    (src / "tasks.jsonl").write_text('{"id": 12, "space": "globex", "title": "x", "state": "open"}\n', encoding="utf-8")
    (src / "comments.jsonl").write_text(
        '{"id": 500, "task": 12, "author": "user", "kind": "request", "body": "x", "ts": "2026-07-01T00:00:00Z"}\n',
        encoding="utf-8")
    before = Path(db).read_bytes()
    assert tasks_cli.main(["tasks", "import", str(src), "--db", db]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "task 12 belongs to space 'acme'" in line and "'globex'" in line and "nothing imported" in line
    assert Path(db).read_bytes() == before
    # the symptom: acme's comments readable from globex, acme's search empty
    assert tasks_cli.main(["tasks", "around", "comment:88", "--db", db, "--space", "globex"]) == 2
    assert "comment:88 was not found in space 'globex'" in capsys.readouterr().err
    assert tasks_cli.main(["tasks", "search", "認証", "--db", db, "--space", "acme", "--current-task", "30"]) == 0
    assert "2 hit(s)" in capsys.readouterr().out


def test_import_with_a_missing_source_creates_no_database(tmp_path, capsys):
    db = tmp_path / "t.db"
    assert tasks_cli.main(["tasks", "import", str(tmp_path / "nowhere"), "--db", str(db)]) == 2
    assert "nowhere: no such folder" in _one_error_line(capsys.readouterr().err)
    assert tasks_cli.main(["tasks", "import", "--tasks", str(DEMO / "tasks.jsonl"),
                           "--comments", str(tmp_path / "none.jsonl"), "--db", str(db)]) == 2
    assert "none.jsonl: no such file" in _one_error_line(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []


def test_import_of_a_bad_comments_file_creates_no_database_and_no_tasks(db, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text((DEMO / "comments.jsonl").read_text(encoding="utf-8") + '{"id": 9999, "task": 12}\n',
                   encoding="utf-8")
    new = tmp_path / "new.db"
    assert tasks_cli.main(["tasks", "import", "--tasks", str(DEMO / "tasks.jsonl"), "--comments", str(bad),
                           "--db", str(new)]) == 2
    assert "bad.jsonl:27: field 'author' is required" in _one_error_line(capsys.readouterr().err)
    assert not new.exists()


def test_lock_is_reported_as_a_lock(db, capsys):
    import sqlite3

    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", db, "--lock-timeout", "0.3"]) == 2
    finally:
        holder.execute("ROLLBACK")
    line = _one_error_line(capsys.readouterr().err)
    assert "locked by another process" in line and "not a readable task store" not in line
    assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", db, "--lock-timeout", "-1"]) == 2
    assert "--lock-timeout must be from 0" in _one_error_line(capsys.readouterr().err)


def test_reader_blocked_by_a_writer_says_locked(db, capsys, monkeypatch):
    import sqlite3

    from searchkit.ingest import tasks as store

    c = sqlite3.connect(db)
    c.execute("PRAGMA journal_mode = DELETE")  # only a rollback-journal store can block a reader
    c.close()
    monkeypatch.setattr(store, "READ_TIMEOUT", 0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert tasks_cli.main(["tasks", "list", "--db", db, "--space", "acme"]) == 2
    finally:
        holder.execute("ROLLBACK")
    line = _one_error_line(capsys.readouterr().err)
    assert "locked by another process" in line and "not a readable task store" not in line


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_read_commands_never_write_or_switch_to_wal(db, tmp_path, capsys, journal):
    import sqlite3

    c = sqlite3.connect(db)
    c.execute(f"PRAGMA journal_mode = {journal}")
    c.close()
    before = Path(db).read_bytes()
    for argv in (["search", "認証フロー", "--context", "1"], ["around", "comment:88"], ["list"]):
        assert tasks_cli.main(["tasks", *argv, "--db", db, "--space", "acme", "--current-task", "30"]) == 0
    out = capsys.readouterr().out
    assert "comment:88" in out and "task:24" in out
    assert Path(db).read_bytes() == before
    c = sqlite3.connect(db)
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == journal
    if journal == "delete":
        assert sorted(p.name for p in Path(db).parent.iterdir()) == ["tasks.db"]


def test_not_a_task_store_is_one_line(tmp_path, capsys):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    before = junk.read_bytes()
    assert tasks_cli.main(["tasks", "list", "--db", str(junk), "--space", "acme"]) == 2
    assert "not a readable task store" in _one_error_line(capsys.readouterr().err)
    assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", str(junk)]) == 2
    _one_error_line(capsys.readouterr().err)
    assert junk.read_bytes() == before
    assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", str(tmp_path)]) == 2
    assert "not a regular file" in _one_error_line(capsys.readouterr().err)
