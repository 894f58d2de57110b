"""app_row (issue 30; seed 000: «app:<table>#<id> — одна строка этой таблицы»): a table row's card
opened by its ref, every column as indexed (a secret-like column never, H2), the table's name and
columns (H4), under history search's privacy (a row the caller may not read answers like a row that
does not exist). Hashing embedder, a small workspace with app.sqlite files."""
import json
import sqlite3
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.errors import ParameterError
from searchkit.index.cache import EmbeddingCache
from searchkit.tools.base import ToolContext
from searchkit.tools.history import HistoryIndex
from searchkit.tools.registry import TOOLS

CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})
TOOL = TOOLS["app_row"]


def _space(ws: Path, slug: str, members, **extra) -> None:
    p = ws / slug / ".space" / "space.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"slug": slug, "title": slug, "members": members, "container": "shared", **extra}))


def _table(ws: Path, slug: str, rows) -> None:
    db = sqlite3.connect(ws / slug / ".space" / "app.sqlite")
    db.execute("CREATE TABLE deals (id INTEGER PRIMARY KEY, client TEXT, amount REAL, api_key TEXT, updated_at TEXT)")
    db.executemany("INSERT INTO deals VALUES (?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    ws = tmp_path_factory.mktemp("app_row") / "ws"
    _space(ws, "s", ["u-anna"])
    _table(ws, "s", [(7, "Acme Corp", 1250.5, "sk-live-0123456789abcdef", "2026-11-02T10:00:00+03:00"),
                     (8, "Globex " + "z" * 9000, 10.0, None, "2026-11-03T10:00:00+03:00")])
    _space(ws, "off", ["u-anna"], history_search=False)
    _table(ws, "off", [(1, "Initech", 1.0, None, "2026-11-01T10:00:00+03:00")])
    _space(ws, "other", ["u-boris"])
    _table(ws, "other", [(1, "Umbrella", 2.0, None, "2026-11-01T10:00:00+03:00")])
    return ws, HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))


def _anna(idx):
    return ToolContext(caller="u-anna", space="s", index=idx)


def test_a_row_opens_with_every_column_indexed_and_the_table_line(built):
    _, idx = built
    a = TOOL({"ref": "app:deals#7"}, _anna(idx))
    assert a.table == "deals" and a.row_id == "7" and a.space == "s" and a.date == "2026-11-02" and a.cut == 0
    assert "client: Acme Corp" in a.text and "amount: 1250.5" in a.text
    assert a.text.rstrip().endswith("Table: deals (id, client, amount, updated_at)")
    assert "api_key" not in a.text and "sk-live" not in json.dumps(a.to_dict())  # a secret-like column (H2)
    assert a.render("en").splitlines()[0] == "app:deals#7 · 2026-11-02 · deals #7 (space: s)"


def test_a_long_row_is_cut_and_says_by_how_much(built):
    _, idx = built
    a = TOOL({"ref": "app:deals#8"}, _anna(idx))
    assert a.cut > 0 and len(a.text) == 8000
    assert f"[cut: {a.cut:,} more characters]" in a.render("en")


def test_a_row_the_caller_may_not_read_reads_like_one_that_does_not_exist(built):
    _, idx = built

    def said(ref, **kw):
        with pytest.raises(ParameterError) as e:
            TOOL({"ref": ref, **kw}, _anna(idx))
        assert e.value.param == "ref"
        return str(e.value).replace(ref, "REF")

    assert said("app:deals#1", in_space="off") == said("app:deals#99", in_space="off")
    assert said("app:deals#1", in_space="other") == said("app:deals#99", in_space="other")
    boris = TOOL({"ref": "app:deals#1", "in_space": "other"}, ToolContext(caller="u-boris", space="other", index=idx))
    assert "Umbrella" in boris.text


@pytest.mark.parametrize("args, param", [
    ({"ref": "chat:ses_1"}, "ref"), ({"ref": "app:"}, "ref"), ({"ref": "app:deals#7\n"}, "ref"),
    ({"ref": "app:deals#7", "space": "other"}, "space"), ({}, "ref"),
])
def test_bad_parameters_name_the_parameter(built, args, param):
    with pytest.raises(ParameterError) as e:
        TOOL(args, _anna(built[1]))
    assert e.value.param == param


def test_the_cli_verb(built, capsys):
    ws, _ = built
    assert main(["app-row", "app:deals#7", "--workspace", str(ws), "--caller", "u-anna", "--space", "s", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["table"] == "deals"
    assert main(["app-row", "app:deals#1", "--workspace", str(ws), "--caller", "u-anna", "--space", "s", "--in-space", "other"]) == 2
    assert capsys.readouterr().err.startswith("searchkit app-row: ref: no table row")


# ---------------------------------------------------------------- issue 39 item 11: the row as the table has it now
# (seed 000: «берите цифры из таблицы, а не из карточки»): read live, through ingest's guards and redaction, and
# the answer says when the row changed or is gone since it was indexed.


@pytest.fixture()
def fresh(tmp_path):
    """A workspace and its index per test: the test then edits the table."""
    ws = tmp_path / "ws"
    _space(ws, "s", ["u-anna"])
    _table(ws, "s", [(7, "Acme Corp", 1250.5, "sk-live-0123456789abcdef", "2026-11-02T10:00:00+03:00"),
                     (9, "Hooli", 5.0, None, "2026-11-01T10:00:00+03:00")])
    return ws, HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))


def _sql(ws: Path, *statements) -> None:
    db = sqlite3.connect(ws / "s" / ".space" / "app.sqlite")
    for s in statements:
        db.execute(s)
    db.commit()
    db.close()


def _leaks(answer, *values) -> list:
    dump = json.dumps(answer.to_dict(), ensure_ascii=False)
    return [v for v in values if v in dump]


def test_the_row_is_read_from_the_table_now_and_says_when_it_changed(fresh):
    ws, idx = fresh
    a = TOOL({"ref": "app:deals#7"}, _anna(idx))
    assert a.freshness == "live" and "amount: 1250.5" in a.text and a.to_dict()["freshness"] == "live"
    assert len(a.render("en").splitlines()) == len(a.text.splitlines()) + 1  # nothing more to say
    _sql(ws, "UPDATE deals SET amount = 99999, updated_at = '2026-11-20T09:00:00+03:00' WHERE id = 7")
    b = TOOL({"ref": "app:deals#7"}, _anna(idx))
    assert "amount: 99999" in b.text and "1250.5" not in b.text and b.date == "2026-11-20"  # the index held 1250.5
    assert b.freshness == "changed" and b.to_dict()["freshness"] == "changed"
    assert b.text.rstrip().endswith("Table: deals (id, client, amount, updated_at)")
    en = b.render("en")
    assert en.splitlines()[1] == "Changed since it was indexed: these are the table's values now."
    assert "amount: 99999" in en and "изменилась" in b.render("ru") and "変更" in b.render("ja")


def test_a_live_row_is_redacted_as_ingest_redacts_it_and_secret_columns_stay_out(fresh):
    ws, idx = fresh
    _sql(ws, "UPDATE deals SET client = 'Acme, password: hunter-2-secret', api_key = 'sk-live-fedcba9876543210' "
             "WHERE id = 7")
    b = TOOL({"ref": "app:deals#7"}, _anna(idx))
    assert b.freshness == "changed" and "[redacted]" in b.text
    assert not _leaks(b, "hunter-2-secret", "sk-live", "api_key")


def test_a_row_deleted_since_indexing_says_it_is_no_longer_in_the_table(fresh):
    ws, idx = fresh
    _sql(ws, "DELETE FROM deals WHERE id = 7")
    b = TOOL({"ref": "app:deals#7"}, _anna(idx))
    assert b.freshness == "gone" and b.text == "" and not _leaks(b, "Acme", "1250.5")
    assert b.render("en").splitlines()[1:] == ["No longer in the table: the row was deleted after it was indexed."]
    assert TOOL({"ref": "app:deals#9"}, _anna(idx)).freshness == "live"
    _sql(ws, "DROP TABLE deals")
    assert TOOL({"ref": "app:deals#9"}, _anna(idx)).freshness == "gone"
    (ws / "s" / ".space" / "app.sqlite").unlink()
    assert TOOL({"ref": "app:deals#9"}, _anna(idx)).freshness == "gone"


def test_a_database_that_cannot_be_read_now_shows_the_indexed_copy_and_says_so_without_a_path(fresh, tmp_path):
    ws, idx = fresh
    db = ws / "s" / ".space" / "app.sqlite"
    db.write_bytes(b"not a database at all " * 100)
    b = TOOL({"ref": "app:deals#7"}, _anna(idx))
    assert b.freshness == "as_indexed" and "amount: 1250.5" in b.text
    en = b.render("en")
    assert en.splitlines()[1] == "Could not read the table now: these are the values as indexed, and may be out of date."
    assert not _leaks(b, str(tmp_path), "app.sqlite", "not a database", "sk-live")
    db.unlink()
    db.symlink_to(tmp_path / "elsewhere.sqlite")  # a link is never followed, as ingest never follows it
    assert TOOL({"ref": "app:deals#7"}, _anna(idx)).freshness == "as_indexed"


def test_a_table_the_rules_leave_out_now_is_not_read_and_a_never_indexed_table_never_opens(fresh):
    ws, idx = fresh
    _sql(ws, "CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT, updated_at TEXT)",
         "INSERT INTO messages VALUES (1, 'a journal-like table', '2026-11-03')")
    with pytest.raises(ParameterError) as e:  # a table ingest never indexes is never read, live or not
        TOOL({"ref": "app:messages#1"}, _anna(idx))
    assert e.value.param == "ref"
    _sql(ws, "ALTER TABLE deals ADD COLUMN channel TEXT", "ALTER TABLE deals ADD COLUMN sender TEXT",
         "ALTER TABLE deals ADD COLUMN text TEXT", "UPDATE deals SET text = 'a private message' WHERE id = 7")
    b = TOOL({"ref": "app:deals#7"}, _anna(idx))  # now a channel's message history: never indexed (H2)
    assert b.freshness == "withheld" and b.text == "" and not _leaks(b, "private message", "Acme")
    assert "rules" in b.render("en").splitlines()[1]


def test_a_row_of_a_space_the_caller_left_is_not_read(fresh):
    ws, idx = fresh
    _space(ws, "s", ["u-boris"])
    with pytest.raises(ParameterError):
        TOOL({"ref": "app:deals#7"}, _anna(idx))


def test_the_cli_and_a_saved_index_read_the_table_now(fresh, tmp_path, capsys):
    ws, idx = fresh
    idx.save(tmp_path / "index")
    _sql(ws, "UPDATE deals SET amount = 99999 WHERE id = 7")
    assert main(["app-row", "app:deals#7", "--index", str(tmp_path / "index"), "--caller", "u-anna", "--space", "s",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "amount: 99999" in out["text"] and out["freshness"] == "changed"


def test_a_wal_database_is_read_now_from_a_private_copy_and_nothing_is_written_beside_it(fresh):
    """A database with a ``-wal`` beside it (a writer's data not yet checkpointed) is read as ingest
    reads it: a private copy with its ``-wal``; the workspace folder gains nothing."""
    ws, idx = fresh
    writer = sqlite3.connect(ws / "s" / ".space" / "app.sqlite")
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("UPDATE deals SET amount = 424242 WHERE id = 7")
        writer.commit()
        before = sorted(p.name for p in (ws / "s" / ".space").iterdir())
        assert "app.sqlite-wal" in before
        b = TOOL({"ref": "app:deals#7"}, _anna(idx))
        assert "amount: 424242" in b.text and b.freshness == "changed"
        assert sorted(p.name for p in (ws / "s" / ".space").iterdir()) == before
    finally:
        writer.close()


def test_served_the_tools_read_the_workspace_now_too(tmp_path):
    """The server runs the same tool with the session's context over the version it serves (an
    index that names its workspace): the row and the chat come from the workspace now there too."""
    import shutil

    from searchkit.serve.calllog import CallLog
    from searchkit.serve.service import Service
    from searchkit.serve.session import Session
    from searchkit.serve.state import Holder, Served

    ws = tmp_path / "ws"
    shutil.copytree(Path(__file__).resolve().parents[1] / "datasets" / "demo-workspace", ws)
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    idx.save(tmp_path / "index")
    service = Service(Holder(Served(HistoryIndex.load(tmp_path / "index", CFG), 1, "t0")),
                      fingerprint=CFG.fingerprint(), log_=CallLog())
    db = sqlite3.connect(ws / "acme" / ".space" / "app.sqlite")
    db.execute("UPDATE tasks SET score = 0.97 WHERE id = 55")
    db.commit()
    db.close()
    chat = ws / "acme" / ".space" / "chats" / "ses_4f2a.json"
    data = json.loads(chat.read_text(encoding="utf-8"))
    data["messages"].append({"id": "m99", "role": "user", "author": "Анна", "ts": "2026-10-30T10:00:00+03:00",
                             "text": "ATL-1999: added after the index was built"})
    chat.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    anna = Session("u-anna", space="acme", lang="en")
    row = service.call("app_row", {"ref": "app:tasks#55"}, anna, "test")
    assert row.ok and "score: 0.97" in row.answer["text"] and row.answer["freshness"] == "changed"
    assert "Changed since it was indexed" in row.text
    found = service.call("chat_read", {"ref": "chat:ses_4f2a", "find": "ATL-1999"}, anna, "test")
    assert found.ok and found.answer["matches"] == 1 and found.answer["freshness"] == "changed"
    boris = service.call("chat_read", {"ref": "chat:ses_7c19"}, Session("u-boris", space="acme"), "test")
    assert boris.param == "ref"  # Anna's personal chat: never Boris's, live or not
