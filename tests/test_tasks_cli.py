"""`searchkit tasks ...` through the searchkit command (searchkit.cli.tasks)."""
import json
import os
import re
import sqlite3
from pathlib import Path

import pytest

from searchkit import cli as tasks_cli

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "tasks-demo"
WS = Path(__file__).resolve().parents[1] / "datasets" / "demo-workspace"
MEMBER = ["--workspace", str(WS), "--caller", "u-anna"]
"""A member of acme, read from the demo workspace (the tools answer members only, SPEC T1)."""


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
    rc = tasks_cli.main(["tasks", "search", "認証", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith('## Workspace Task Search Results (query: "認証", 2 hit(s))')
    assert "comment:88 user/request" in out


def test_search_options_and_json(db, capsys):
    rc = tasks_cli.main(["tasks", "search", "ログイン 認証", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER,
                         "--match-mode", "all", "--context", "1", "--limit", "5", "--kind", "result",
                         "--author", "agent", "--task-id", "12", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert [h["comment_id"] for h in data["hits"]] == [95]
    assert [c["comment_id"] for c in data["hits"][0]["context"]] == [93, 95]


def test_around_and_list(db, capsys):
    assert tasks_cli.main(["tasks", "around", "comment:88", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER,
                           "--lang", "en"]) == 0
    out = capsys.readouterr().out  # seed 003: one neighbour each side unless --context says otherwise
    assert "(comment:88, 2 neighbouring comment(s))" in out
    assert "- comment:88 user/request 2026-06-20T10:00:00Z ← 既存の認証フロー" in out and "- comment:86 " in out
    assert tasks_cli.main(["tasks", "around", "comment:88", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER,
                           "--lang", "en", "--context", "0"]) == 0
    out = capsys.readouterr().out
    assert "(comment:88, 0 neighbouring comment(s))" in out and "comment:86" not in out
    assert tasks_cli.main(["tasks", "list", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER,
                           "--state", "open"]) == 0
    out = capsys.readouterr().out
    assert "task:24" in out and "task:15" in out and "task:30" not in out


def test_errors_exit_2_and_name_the_parameter(db, capsys):
    assert tasks_cli.main(["tasks", "search", "認証", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER,
                           "--limit", "31"]) == 2
    assert "searchkit tasks: limit: must be from 1 to 30" in capsys.readouterr().err
    assert tasks_cli.main(["tasks", "around", "comment:152", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER]) == 2
    err = capsys.readouterr().err
    assert "around_ref: comment:152 was not found" in err and "globex" not in err
    assert tasks_cli.main(["tasks", "list", "--db", db + ".missing", "--space", "acme", "--current-task", "30", *MEMBER]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_unavailable_context_is_a_message_not_an_error(db, capsys):
    assert tasks_cli.main(["tasks", "search", "認証", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER,
                           "--no-auth"]) == 0
    assert capsys.readouterr().out.startswith("このコンテキストでは利用できません")
    assert tasks_cli.main(["tasks", "list", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER, "--subtask",
                           "--lang", "en"]) == 0
    assert capsys.readouterr().out.startswith("Not available in this context")


def test_add_parser_hooks_into_a_parent_parser(db):
    import argparse

    from searchkit.cli import tasks as tasks_verb

    parser = argparse.ArgumentParser(prog="searchkit")
    sub = parser.add_subparsers(dest="command", required=True)
    tasks_verb.add_parser(sub)
    args = parser.parse_args(["tasks", "list", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER])
    assert args.func is tasks_verb.run and tasks_verb.run(args) == 0


def test_top_level_searchkit_command(db, capsys):
    from searchkit import cli

    assert cli.main(["tasks", "around", "comment:88", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER,
                     "--context", "1"]) == 0
    assert "(comment:88 前後 2 件)" in capsys.readouterr().out


# ------------------------------------------------------------------ issue 7 item 12, issue 8 items 5-6

def _one_error_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("searchkit tasks: ") and "Traceback" not in err
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
    ws = tmp_path / "ws"  # a workspace where Anna is a member of globex too
    for slug in ("acme", "globex"):
        (ws / slug / ".space").mkdir(parents=True)
        (ws / slug / ".space" / "space.json").write_text(json.dumps({"slug": slug, "members": ["u-anna"]}))
    assert tasks_cli.main(["tasks", "around", "comment:88", "--db", db, "--space", "globex", "--current-task", "40",
                           "--workspace", str(ws), "--caller", "u-anna"]) == 2
    assert "comment:88 was not found in space 'globex'" in capsys.readouterr().err
    assert tasks_cli.main(["tasks", "search", "認証", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER]) == 0
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
    monkeypatch.setattr(store.store, "READ_TIMEOUT", 0.2)  # where open_readonly reads it
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert tasks_cli.main(["tasks", "list", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER]) == 2
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
        assert tasks_cli.main(["tasks", *argv, "--db", db, "--space", "acme", "--current-task", "30", *MEMBER]) == 0
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
    assert tasks_cli.main(["tasks", "list", "--db", str(junk), "--space", "acme", "--current-task", "30", *MEMBER]) == 2
    assert "not an SQLite database (or a damaged one), so not a task store" in _one_error_line(capsys.readouterr().err)
    assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", str(junk)]) == 2
    _one_error_line(capsys.readouterr().err)
    assert junk.read_bytes() == before
    assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", str(tmp_path)]) == 2
    assert "not a regular file" in _one_error_line(capsys.readouterr().err)


# ------------------------------------------------------------------ issue 27 item 14: what is wrong with the file

def _search(db, *extra):
    return tasks_cli.main(["tasks", "search", "認証", "--db", str(db), "--space", "acme", "--current-task", "30", *MEMBER,
                           *extra])


@pytest.mark.parametrize("make, says", [
    (lambda p: p.write_bytes(bytes(range(256)) * 40), "not an SQLite database (or a damaged one), so not a task store"),
    (lambda p: p.write_bytes(b""), "an empty file, not a task store"),
    (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200), "not an SQLite database (or a damaged one)"),
])
def test_a_file_that_is_not_a_task_store_is_named_and_exits_2(tmp_path, capsys, make, says):
    bad = tmp_path / "bad.sqlite"
    make(bad)
    for argv in (["search", "認証"], ["around", "comment:88"], ["list"]):
        assert tasks_cli.main(["tasks", *argv, "--db", str(bad), "--space", "acme", "--current-task", "30", *MEMBER]) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert str(bad) in line and says in line and "FTS5" not in line


def test_an_sqlite_database_of_something_else_is_not_a_task_store(tmp_path, capsys):
    other = tmp_path / "app.sqlite"
    c = sqlite3.connect(other)
    c.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, x TEXT)")
    c.commit()
    c.close()
    assert _search(other) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "an SQLite database that is not a task store" in line and "rows" in line and "FTS5" not in line


def test_a_store_whose_fts_table_was_dropped_says_so(db, capsys):
    c = sqlite3.connect(db)
    c.execute("DROP TABLE comment_fts")
    c.commit()
    c.close()
    assert _search(db) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "no full-text index" in line and "comment_fts" in line and "tasks import" in line
    assert tasks_cli.main(["tasks", "list", "--db", db, "--space", "acme", "--current-task", "30", *MEMBER]) == 0  # no FTS needed
    capsys.readouterr()
    assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", db]) == 0  # an import rebuilds the index
    capsys.readouterr()
    assert _search(db) == 0 and "2 hit(s)" in capsys.readouterr().out


def test_only_a_missing_fts5_module_is_the_plain_t8_message(db, capsys, monkeypatch):
    from searchkit.ingest.tasks import fts

    monkeypatch.setattr(fts, "fts5_available", lambda conn=None: False)
    assert _search(db) == 0
    assert capsys.readouterr().out.startswith("この環境の SQLite は FTS5")


def _run_as_nobody(fn):
    """Run ``fn()`` in a child process as user ``nobody`` (the test runs as root, whom file modes do
    not stop); the child's return code is ``fn``'s result."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            code = fn()
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_read_only_store_in_a_read_only_folder_is_searchable(tmp_path):
    import contextlib
    import io
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(dir="/tmp" if os.geteuid() == 0 else tmp_path))
    store_path = folder / "tasks.sqlite"
    assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", str(store_path)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["tasks.sqlite"]
    if os.geteuid() == 0:
        os.chown(folder, 65534, 65534)
        os.chown(store_path, 65534, 65534)
    os.chmod(store_path, 0o400)
    os.chmod(folder, 0o500)
    # the membership check reads the workspace: a copy that user nobody can read, wherever the
    # repository is (a clone in an owner-only temp folder included)
    ws = Path(tempfile.mkdtemp(dir="/tmp" if os.geteuid() == 0 else tmp_path)) / "ws"
    shutil.copytree(WS, ws)
    for p in [ws.parent, *ws.rglob("*"), ws]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)

    def check(db: Path = store_path) -> int:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = tasks_cli.main(["tasks", "search", "認証", "--db", str(db), "--space", "acme",
                                 "--current-task", "30", "--workspace", str(ws), "--caller", "u-anna", "--json"])
        return 0 if rc == 0 and [h["comment_id"] for h in json.loads(out.getvalue())["hits"]] == [95, 88] else 3

    # the same search once first, as this user on a copy of the store elsewhere: every module it needs
    # is loaded before the child drops to nobody (a clone in an owner-only folder, such as mktemp -d
    # makes, is not readable by nobody)
    shutil.copy(store_path, ws.parent / "copy.sqlite")
    assert check(ws.parent / "copy.sqlite") == 0
    try:
        assert (_run_as_nobody(check) if os.geteuid() == 0 else check()) == 0
        assert sorted(p.name for p in folder.iterdir()) == ["tasks.sqlite"]
    finally:
        os.chmod(folder, 0o700)
        shutil.rmtree(folder)
        shutil.rmtree(ws.parent)


# ------------------------------------------------------------------ issue 27 item 16: no terminal controls

HOSTILE = "\x1b[2J\x1b]0;pwned\x07\u202etxt.exe\x9b31m"


def test_terminal_controls_in_titles_authors_and_comments_never_reach_the_terminal(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "tasks.jsonl").write_text(json.dumps(
        {"id": 1, "space": "acme", "title": f"改修{HOSTILE}", "state": "closed", "piece": HOSTILE}) + "\n"
        + json.dumps({"id": 2, "space": "acme", "title": "current"}) + "\n", encoding="utf-8")
    (src / "comments.jsonl").write_text("".join(json.dumps(
        {"id": i, "task": 1, "author": f"anna{HOSTILE}", "kind": "request",
         "body": f"認証フロー{HOSTILE}\nline two{HOSTILE}", "ts": f"2026-06-20T10:0{i}:00Z"}) + "\n" for i in (1, 2, 3)),
        encoding="utf-8")
    db = str(tmp_path / "t.db")
    assert tasks_cli.main(["tasks", "import", str(src), "--db", db]) == 0
    capsys.readouterr()
    scope = ["--db", db, "--space", "acme", "--current-task", "2", *MEMBER]
    for argv in (["search", "認証フロー", "--context", "1"], ["around", "comment:2"], ["list"],
                 ["search", f"認証フロー {HOSTILE}"], ["search", "認証フロー", "--json"], ["around", "comment:2", "--json"],
                 ["list", "--json"]):
        assert tasks_cli.main(["tasks", *argv, *scope]) == 0
        out = capsys.readouterr().out
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]",
                             out), (argv, out)
        assert "pwned" in out  # the text is kept, its controls are not
        if "--json" in argv:  # the same values, sanitised as the text is (issue 39 item 3: one output sanitiser)
            values = list(_strings(json.loads(out)))
            assert any("pwned" in s and "txt.exe" in s for s in values), out
            assert not any(re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]", s) for s in values), out


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def test_terminal_helpers_keep_text_and_drop_controls():
    from searchkit.tools.terminal import json_text, one_line, plain_text

    assert one_line("a\x1b[31mb\x07\nc\u202ed") == "a [31mb cd"
    assert plain_text("a\x1b\tb\r\nc\u2028d\u202e") == "a \tb\nc\nd"
    doc = json.dumps({"t": HOSTILE}, ensure_ascii=False)
    assert json.loads(json_text(doc)) == json.loads(doc) and "\u202e" not in json_text(doc)


# ------------------------------------------------------------------ issue 28 item 6

@pytest.mark.parametrize("verb", [["search", "認証"], ["around", "comment:88"], ["list"]])
def test_current_task_is_required(db, capsys, verb):
    with pytest.raises(SystemExit) as e:
        tasks_cli.main(["tasks", *verb, "--db", db, "--space", "acme"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--current-task" in err[0] and "required" in err[0]


def test_list_shows_the_platforms_state_and_filters_on_its_class(db, capsys):
    scope = ["--db", db, "--space", "acme", "--current-task", "30", *MEMBER, "--lang", "en"]
    assert tasks_cli.main(["tasks", "list", *scope, "--state", "open"]) == 0
    out = capsys.readouterr().out
    assert '- task:15 "月齢カレンダーの実装" 実行中 / piece: default' in out and "task:21" not in out
    assert tasks_cli.main(["tasks", "list", *scope, "--state", "closed", "--json"]) == 0
    rows = {t["task_id"]: (t["state"], t["state_class"]) for t in json.loads(capsys.readouterr().out)["tasks"]}
    assert rows == {21: ("interrupted", "closed"), 18: ("closed", "closed"), 12: ("closed", "closed")}


def test_import_without_fts5_prints_the_t8_message_and_exits_0(tmp_path, capsys, monkeypatch):
    from searchkit.ingest.tasks import fts

    monkeypatch.setattr(fts, "fts5_available", lambda conn=None: False)
    db = tmp_path / "t.db"
    assert tasks_cli.main(["tasks", "import", str(DEMO), "--db", str(db), "--lang", "en"]) == 0
    out = capsys.readouterr()
    assert "imported 7 task(s), 26 comment(s)" in out.out and "this SQLite has no FTS5" in out.out
    assert out.err == ""
    assert tasks_cli.main(["tasks", "list", "--db", str(db), "--space", "acme", "--current-task", "30", *MEMBER]) == 0


# ------------------------------------------------------------------ issue 27 item 17: the cap on the command line

def test_import_reports_skipped_oversize_lines_and_takes_a_cap(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "tasks.jsonl").write_text((DEMO / "tasks.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    big = {"id": 999, "task": 12, "author": "user", "kind": "request", "body": "x" * 3000, "ts": "2026-06-20T10:00:00Z"}
    (src / "comments.jsonl").write_text((DEMO / "comments.jsonl").read_text(encoding="utf-8") + json.dumps(big) + "\n",
                                        encoding="utf-8")
    db = str(tmp_path / "t.db")
    assert tasks_cli.main(["tasks", "import", str(src), "--db", db, "--max-item-bytes", "2000"]) == 0
    out = capsys.readouterr().out
    assert "imported 7 task(s), 26 comment(s)" in out
    assert "skipped 1 line(s): " in out and "comments.jsonl:27 (too_large: " in out and "over the cap of 2,000" in out
    assert tasks_cli.main(["tasks", "import", str(src), "--db", db, "--max-item-bytes", "0"]) == 2
    assert "--max-item-bytes" in _one_error_line(capsys.readouterr().err)


# ------------------------------------------------------------------ issue 39 item 8: the space is a slug

@pytest.mark.parametrize("verb", [["search", "認証"], ["around", "comment:88"], ["list"]])
@pytest.mark.parametrize("space", ["../acme", "acme/../acme", "..", ".", "a\\b", "ac\x1bme"])
def test_a_space_that_is_not_a_slug_is_refused_in_one_line_naming_space(db, verb, space, capsys):
    """Before anything, whoever asks: as every space slug (a folder name; ``history_search.is_slug``)."""
    for extra in ([], ["--no-auth"], ["--json"]):
        rc = tasks_cli.main(["tasks", *verb, "--db", db, "--space", space, "--current-task", "30", *extra])
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert rc == 2 and captured.out == "" and len(lines) == 1, captured
        assert lines[0].startswith("searchkit: --space: must be a space slug") and "\x1b" not in lines[0]


def test_the_tools_refuse_a_space_that_is_not_a_slug_naming_space(db):
    from searchkit.errors import ParameterError
    from searchkit.tools.base import ToolContext
    from searchkit.tools.registry import TOOLS

    conn = sqlite3.connect(db)
    try:
        for space in ("../acme", "..", "a/b"):
            for name, args in (("task_search", {"query": "認証"}), ("task_around", {"around_ref": "comment:88"}),
                               ("task_list", {})):
                with pytest.raises(ParameterError) as e:
                    TOOLS[name](args, ToolContext(caller="u-anna", space=space, current_task=30, store=conn))
                assert e.value.param == "space" and "space slug" in e.value.message
    finally:
        conn.close()
