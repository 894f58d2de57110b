"""``searchkit snapshot SLUG`` (issue 41 item 7): the space snapshot from the command line, under the
same rules as the served resource: a member's text or JSON, dated; personal chats never in a space
of several members; one line (exit 2) for a space the reader may not read, whatever the reason;
one line naming a bad flag. From the workspace (nothing embedded) and from an index."""
import json
from pathlib import Path

import pytest

from searchkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
BASE = ["--workspace", str(DEMO), "--as-of", "2026-11-05", "--days", "30"]


def test_a_member_gets_the_dated_snapshot_without_personal_chats(capsys):
    assert main(["snapshot", "acme", *BASE, "--caller", "u-boris", "--lang", "en"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Snapshot of space acme") and "history from 2026-10-07 to 2026-11-05" in text
    assert "Ship the fix." in text and "## Waiting for an answer" in text
    assert "12% raise" not in text and "Никому не показывать" not in text
    assert main(["snapshot", "acme", *BASE, "--caller", "u-anna", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["until"] == "2026-11-05" and data["shared_only"] is True
    assert "ses_7c19" not in json.dumps(data) and "ses_b3d0" not in json.dumps(data)


def test_the_same_snapshot_from_an_index(tmp_path, capsys):
    idx = tmp_path / "idx"
    assert main(["index", "--workspace", str(DEMO), "--out", str(idx), "--config",
                 str(ROOT / "tests" / "data" / "hashing.json"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["snapshot", "research", "--index", str(idx), "--caller", "u-kenji", "--as-of", "2026-11-05",
                 "--json"]) == 0
    from_index = json.loads(capsys.readouterr().out)
    assert main(["snapshot", "research", "--workspace", str(DEMO), "--caller", "u-kenji", "--as-of", "2026-11-05",
                 "--json"]) == 0
    from_ws = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in from_index.items() if k != "built"} == {k: v for k, v in from_ws.items() if k != "built"}


@pytest.mark.parametrize("slug, who", [("legal", "u-anna"), ("archive", "u-anna"), ("no-such", "u-anna"),
                                       ("acme", "u-olga")])
def test_a_space_the_reader_may_not_read_is_one_line_the_same_for_every_reason(capsys, slug, who):
    assert main(["snapshot", slug, *BASE, "--caller", who]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.replace(slug, "SLUG") == (
        "searchkit: No snapshot of space SLUG: you are not a member, there is no such space, or history search is "
        "switched off there.\n")


@pytest.mark.parametrize("argv, flag", [(["--as-of", "11/05"], "--as-of"), (["--days", "0"], "--days"),
                                        ([], "--caller")])
def test_bad_flags_are_one_line_naming_the_flag(capsys, argv, flag):
    assert main(["snapshot", "acme", "--workspace", str(DEMO), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err and "Traceback" not in err
