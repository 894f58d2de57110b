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
