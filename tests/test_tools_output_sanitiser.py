"""Issue 39 item 3: no terminal control of the data leaves a tool, on any path.

A workspace file, a chat and a task hold ESC/OSC/CSI sequences, BEL, NUL, C1 controls, DEL and bidi
controls (U+202E and the rest). ``searchkit history`` printed a card's snippet with them raw (the
card module skipped the sanitiser its docstring promised) and ``--json`` kept U+202E in the values.
One sanitiser (``searchkit.strict_json.safe_text`` / ``safe_data``) is applied where every tool
answer leaves (``Tool.run`` in ``searchkit.tools.base``): the CLI's text and ``--json``, the MCP
tool result (text and structured content) and the HTTP JSON API. Line breaks and tabs stay (they
are layout); every other control is removed (a run of them leaves one space), the bidi controls are
removed. Hashing embedder."""
import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.ingest import tasks as task_store
from searchkit.strict_json import safe_data, safe_text
from searchkit.tools.base import Tool, ToolContext
from searchkit.tools.history import HistoryIndex
from searchkit.tools.registry import TOOLS
from searchkit.tools.task_answers import TaskList, TaskSummary, Unavailable

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
HASHING = ROOT / "tests" / "data" / "hashing.json"
CFG = SearchConfig.load(HASHING)

HOSTILE = "\x1b[2J\x1b]0;pwned\x07\u202etxt.exe\x9b31m\x7f\u2066x\u2069\u200f\u061c\u202a\u200e"
"""ESC CSI (clear screen), an OSC title ending in BEL, U+202E, a C1 CSI, DEL and the bidi marks."""
BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""What no output may hold: every control but a line break and a tab, and the bidi controls."""


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


def _clean_json(data):
    """Every string of ``data`` free of controls but ``\\n`` and ``\\t`` (``\\r`` neither)."""
    bad = [s for s in _strings(data) if BAD.search(s) or "\r" in s]
    assert not bad, bad[:3]


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    out = tmp_path_factory.mktemp("sanitiser") / "ws"
    shutil.copytree(DEMO, out)
    body = ("# Зебра сводка\n\nКвартальная сводка по зебрам.\n"
            f"Зебра {HOSTILE} конец.\nВторая\tстрока про зебру.\n")
    (out / "acme" / "notes" / "zebra.md").write_text(body, encoding="utf-8")
    chat = {"ses_id": "ses_zebra", "title": f"Зебра{HOSTILE}", "owner": "u-anna", "visibility": "shared", "run": "chat",
            "messages": [{"id": "m1", "role": "user", "author": "Анна", "ts": "2026-12-01T10:00:00+03:00",
                          "text": f"Где сводка по зебрам? NUL\x00 тут {HOSTILE}\r\nи строка"}]}
    (out / "acme" / ".space" / "chats" / "ses_zebra.json").write_text(json.dumps(chat), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def index(ws):
    return HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))


@pytest.fixture(scope="module")
def saved(index, tmp_path_factory):
    return index.save(tmp_path_factory.mktemp("sanitiser-index") / "h.index")


@pytest.fixture(scope="module")
def tasks_db(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sanitiser-tasks")
    (tmp / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in (
        {"id": 1, "space": "acme", "title": f"改修{HOSTILE}", "state": f"closed{HOSTILE}", "piece": HOSTILE},
        {"id": 2, "space": "acme", "title": "current"})), encoding="utf-8")
    (tmp / "comments.jsonl").write_text(json.dumps(
        {"id": 7, "task": 1, "author": f"anna{HOSTILE}", "kind": "request", "body": f"認証フロー{HOSTILE}\nline two",
         "ts": "2026-06-20T10:00:00Z"}) + "\n", encoding="utf-8")
    db = tmp / "tasks.sqlite"
    task_store.import_into(db, tmp / "tasks.jsonl", tmp / "comments.jsonl")
    return db


# ------------------------------------------------------------------------------ the sanitiser


def test_the_sanitiser_keeps_layout_and_text_and_removes_every_other_control():
    assert safe_text("a\x1b[31mb\x07c\x00d\x9be\x7ff") == "a [31mb c d e f"
    assert safe_text("x\u202etxt.exe\u2066y\u2069\u200e\u200f\u061cz\u202a\u202c") == "xtxt.exeyz"
    assert safe_text("one\r\ntwo\rthree\u2028four\u2029five\n\tsix") == "one\ntwo\nthree\nfour\nfive\n\tsix"
    assert safe_text("plain Кириллица 日本語 — ok") == "plain Кириллица 日本語 — ok"
    data = {"t\u202e": [f"a{HOSTILE}", ("b\x00",), 3, 1.5, None, True], "n": {"x": "\x85y"}}
    assert safe_data(data) == {"t": ["a [2J ]0;pwned txt.exe 31m x", ("b ",), 3, 1.5, None, True], "n": {"x": " y"}}


# ------------------------------------------------------------------------------ the four paths


def test_cli_text_holds_no_control_and_keeps_the_text_and_its_layout(saved, capsys):
    assert main(["history", "зебра сводка", "--index", str(saved), "--caller", "u-anna", "--space", "acme",
                 "--kinds", "file,chat"]) == 0
    out = capsys.readouterr().out
    assert "zebra.md" in out and "pwned" in out and "txt.exe" in out
    assert not BAD.search(out), [m.group() for m in BAD.finditer(out)]
    assert "Вторая\tстрока" in out  # a tab is layout


def test_cli_json_holds_no_control_in_any_value(saved, capsys):
    assert main(["history", "зебра сводка", "--index", str(saved), "--caller", "u-anna", "--space", "acme",
                 "--kinds", "file,chat", "--json"]) == 0
    out = capsys.readouterr().out
    assert not BAD.search(out)
    data = json.loads(out)
    _clean_json(data)
    snippets = "\n".join(c["snippet"] for c in data["cards"])
    assert "pwned" in snippets and "txt.exe" in snippets and "\n" in snippets


def test_cli_chat_read_holds_no_control(saved, capsys):
    base = ["--index", str(saved), "--caller", "u-anna", "--space", "acme"]
    for extra in ([], ["--json"]):
        assert main(["chat-read", "chat:ses_zebra", *base, *extra]) == 0
        out = capsys.readouterr().out
        assert "pwned" in out and not BAD.search(out)
        if extra:
            _clean_json(json.loads(out))


@pytest.fixture()
def service(index, tasks_db):
    pytest.importorskip("mcp", reason="the 'serve' extra")
    from searchkit.serve.calllog import CallLog
    from searchkit.serve.service import Service
    from searchkit.serve.state import Holder, Served, TaskStores

    return Service(Holder(Served(index, 1, "t0")), fingerprint=CFG.fingerprint(), log_=CallLog(),
                   tasks=TaskStores(tasks_db, CFG))


CALLS = [
    ("history_search", {"query": "зебра сводка", "kinds": ["file", "chat"]}),
    ("chat_read", {"ref": "chat:ses_zebra"}),
    ("task_search", {"query": "認証フロー", "context": 1}),
    ("task_around", {"around_ref": "comment:7"}),
    ("task_list", {}),
]


def test_mcp_tool_results_hold_no_control(service):
    import anyio
    from mcp import Client

    from searchkit.serve.mcp_app import build_server, fixed_session
    from searchkit.serve.session import Session

    server = build_server(service, fixed_session(Session("u-anna", space="acme", current_task=2)), "test")

    async def session():
        with anyio.fail_after(120):
            async with Client(server, read_timeout_seconds=60) as c:
                return [await c.call_tool(name, args) for name, args in CALLS]

    results = anyio.run(session)
    for (name, _), r in zip(CALLS, results):
        assert not r.is_error, (name, r.content[0].text)
        text = r.content[0].text
        assert "pwned" in text or name == "task_list" and "改修" in text, (name, text)
        assert not BAD.search(text), (name, text)
        _clean_json(r.structured_content)


def test_http_json_api_holds_no_control(service, tmp_path):
    from starlette.testclient import TestClient

    from searchkit.serve.auth import Tokens, add_token
    from searchkit.serve.http_app import build_app
    from searchkit.serve.session import Session

    path = tmp_path / "tokens.json"
    token = add_token(path, Session("u-anna", space="acme", current_task=2))
    app = build_app(service, Tokens(path), host="127.0.0.1", health=lambda: {"status": "ok"})
    with TestClient(app) as client:
        for name, args in CALLS:
            r = client.post(f"/api/tools/{name}", json=args, headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200, (name, r.text)
            assert "pwned" in r.text and not BAD.search(r.text), (name, r.text)
            _clean_json(r.json())


# ------------------------------------------------------------------------------ applied centrally


@dataclasses.dataclass(frozen=True)
class _NoParams:
    """A tool without parameters."""


class _Raw:
    """An answer that sanitises nothing itself (a tool's own answer type)."""

    def __init__(self, text):
        self.text = text

    def to_dict(self):
        return {"text": self.text, "items": [self.text], "n": 1}

    def render(self, lang=None):
        return f"{lang}: {self.text}\n"


def test_every_tool_is_sanitised_where_its_answer_leaves_keeping_its_type_and_fields():
    t = Tool("raw", _NoParams, lambda params, ctx: _Raw(f"a{HOSTILE}\nb"), "a tool whose answer holds controls")
    answer = t.run({}, ToolContext())
    assert isinstance(answer, _Raw) and answer.text == f"a{HOSTILE}\nb"  # the fields as they are
    assert answer.render("en") == "en: a [2J ]0;pwned txt.exe 31m x\nb\n"
    assert answer.to_dict() == {"text": "a [2J ]0;pwned txt.exe 31m x\nb", "items": ["a [2J ]0;pwned txt.exe 31m x\nb"],
                                "n": 1}
    assert t({}, ToolContext()).to_dict() == answer.to_dict()  # Tool.__call__ too
    assert Tool(t.name, t.params, t.run, t.description).run({}, ToolContext()).to_dict() == answer.to_dict()


def test_the_registry_s_task_answers_are_sanitised_too(tasks_db, index):
    """Through the registry, as ``searchkit tasks`` and the server call them (the index: who the
    space's members are)."""
    conn = task_store.open_readonly(tasks_db)
    try:
        ctx = ToolContext(caller="u-anna", space="acme", current_task=2, store=conn, index=index)
        listed = TOOLS["task_list"]({}, ctx)
        unavailable = TOOLS["task_list"]({}, ToolContext(caller=None, space="acme", current_task=2, store=conn,
                                                         index=index))
    finally:
        conn.close()
    assert isinstance(listed, TaskList) and isinstance(listed.tasks[0], TaskSummary)
    assert HOSTILE in listed.tasks[0].title  # the answer's fields keep what was stored
    _clean_json(listed.to_dict())
    assert "pwned" in json.dumps(listed.to_dict()) and not BAD.search(listed.render("en"))
    assert isinstance(unavailable, Unavailable)
    import copy
    import pickle

    for again in (pickle.loads(pickle.dumps(listed)), copy.deepcopy(listed)):  # a wrapped answer copies as one
        assert again == listed and again.to_dict() == listed.to_dict()


def test_a_history_answer_is_sanitised_by_itself_too(index):
    """``HistoryIndex.search`` (the library call, not through the registry) gives the same clean
    answer: the card module sanitises its own snippets."""
    a = index.search("зебра сводка", kinds=["file", "chat"], caller="u-anna", container="personal", space="acme")
    assert "pwned" in a.text and not BAD.search(a.text) and not BAD.search(a.render("en"))
    _clean_json(a.to_dict())
