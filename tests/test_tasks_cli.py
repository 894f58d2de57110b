"""`searchkit tasks ...` through tasks_cli.add_subparsers / run."""
import json
from pathlib import Path

import pytest

from searchkit.tools import tasks_cli

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


def test_add_subparsers_hooks_into_a_parent_parser(db):
    import argparse

    parser = argparse.ArgumentParser(prog="searchkit")
    sub = parser.add_subparsers(dest="command", required=True)
    tasks_cli.add_subparsers(sub)
    args = parser.parse_args(["tasks", "list", "--db", db, "--space", "acme"])
    assert args.func is tasks_cli.run and tasks_cli.run(args) == 0


def test_top_level_searchkit_command(db, capsys):
    from searchkit import cli

    assert cli.main(["tasks", "around", "comment:88", "--db", db, "--space", "acme", "--current-task", "30"]) == 0
    assert "(comment:88 前後 2 件)" in capsys.readouterr().out
