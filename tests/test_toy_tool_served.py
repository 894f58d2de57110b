"""One registry (issue 42 item 4): a tool registered in ``searchkit.tools.registry.TOOLS`` with its
declared needs is listed and callable over MCP (``/mcp``: tools/list, tools/call) and the JSON API
(``GET /api/tools``, ``POST /api/tools/<name>``), and by ``searchkit tools list``, with nothing of
``serve/`` touched; a tool that needs what the server does not have (a task store without
``--tasks-db``) is not served. Who is calling comes from the session (the bearer token), never
from the arguments. In process (the ASGI app driven by httpx, its lifespan run); hashing embedder;
the toy tool is removed after each test (monkeypatch)."""
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the 'serve' extra (pip install -e '.[serve]')")


from asgi_serving import run_bounded, serving  # noqa: E402
from searchkit.cli import main  # noqa: E402
from searchkit.config import SearchConfig  # noqa: E402
from searchkit.index.cache import EmbeddingCache  # noqa: E402
from searchkit.ingest import tasks as task_store  # noqa: E402
from searchkit.serve.auth import Tokens, add_token  # noqa: E402
from searchkit.serve.calllog import CallLog  # noqa: E402
from searchkit.serve.http_app import build_app  # noqa: E402
from searchkit.serve.service import Service  # noqa: E402
from searchkit.serve.session import Session  # noqa: E402
from searchkit.serve.state import Holder, Served, TaskStores  # noqa: E402
from searchkit.tools import registry  # noqa: E402
from searchkit.tools.base import NEEDS, Tool  # noqa: E402
from searchkit.tools.history import HistoryIndex  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})
BASE = "http://127.0.0.1:8765"
LIMIT_S = 60
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass(frozen=True)
class ToyParams:
    """Echo a word back."""

    word: str


@dataclass(frozen=True)
class ToyAnswer:
    word: str
    caller: str | None
    space: str | None
    has_index: bool
    has_store: bool
    current_task: int | None

    def to_dict(self):
        return {"word": self.word, "caller": self.caller, "space": self.space, "has_index": self.has_index,
                "has_store": self.has_store, "current_task": self.current_task}

    def render(self, lang=None):  # noqa: ARG002
        return f"toy: {self.word} for {self.caller}\n"


def _toy_run(params, ctx):
    return ToyAnswer(params.word, ctx.caller, ctx.space, ctx.index is not None, ctx.store is not None,
                     ctx.current_task)


TOY = Tool("toy_echo", ToyParams, _toy_run, "Echo a word back (a test's tool).", title="Toy echo",
           needs=frozenset({"caller"}))
TOY_TASKS = Tool("toy_tasks", ToyParams, _toy_run, "Echo a word back, over the task store (a test's tool).",
                 needs=frozenset({"caller", "task_store", "current_task"}))


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    ws = tmp_path_factory.mktemp("toy") / "ws"
    shutil.copytree(ROOT / "datasets" / "demo-workspace", ws)
    return HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))


@pytest.fixture(scope="module")
def tasks_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("toytasks") / "tasks.sqlite"
    src = ROOT / "datasets" / "tasks-demo"
    task_store.import_into(db, src / "tasks.jsonl", src / "comments.jsonl")
    return db


@pytest.fixture()
def toys(monkeypatch):
    """The toy tools registered, for this test only."""
    monkeypatch.setitem(registry.TOOLS, TOY.name, TOY)
    monkeypatch.setitem(registry.TOOLS, TOY_TASKS.name, TOY_TASKS)


@pytest.fixture()
def token(tmp_path):
    path = tmp_path / "tokens.json"
    return path, add_token(path, Session("u-anna", space="acme", current_task=30), "anna's laptop")


_run = run_bounded
_serving = serving


def _rpc(method, params=None, id_=1):
    return {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params is not None else {})}


def _exchange(service, token):
    """tools/list and tools/call over /mcp, and GET /api/tools and POST /api/tools/toy_echo, with the
    token's session."""
    path, tok = token
    app = build_app(service, Tokens(path), host="127.0.0.1", health=dict)
    mcp = {"Authorization": f"Bearer {tok}", **MCP_HEADERS}
    api = {"Authorization": f"Bearer {tok}"}

    async def scenario(client):
        listed = await client.post("/mcp", json=_rpc("tools/list"), headers=mcp)
        called = await client.post("/mcp", json=_rpc("tools/call", {"name": "toy_echo", "arguments": {"word": "hi"}},
                                                     2), headers=mcp)
        sneaky = await client.post("/mcp", json=_rpc("tools/call", {"name": "toy_echo", "arguments": {
            "word": "hi", "caller": "u-boris"}}, 3), headers=mcp)
        api_list = await client.get("/api/tools", headers=api)
        api_call = await client.post("/api/tools/toy_echo", json={"word": "hello"}, headers=api)
        api_tasks = await client.post("/api/tools/toy_tasks", json={"word": "t"}, headers=api)
        return listed, called, sneaky, api_list, api_call, api_tasks

    return _run(lambda: _serving(app, scenario))


def test_a_registered_toy_tool_is_served_over_mcp_and_http_with_the_session_s_caller(index, toys, token):
    service = Service(Holder(Served(index, 1, "t0")), fingerprint=CFG.fingerprint(), log_=CallLog())
    listed, called, sneaky, api_list, api_call, api_tasks = _exchange(service, token)

    assert listed.status_code == 200
    names = [t["name"] for t in listed.json()["result"]["tools"]]
    assert "toy_echo" in names and "history_search" in names
    assert "toy_tasks" not in names and "task_search" not in names  # no task store served

    assert called.status_code == 200
    result = called.json()["result"]
    assert not result.get("isError") and result["content"][0]["text"] == "toy: hi for u-anna\n"
    # the session's caller and space; nothing it did not declare (no index, no store, no current task)
    assert result["structuredContent"] == {"word": "hi", "caller": "u-anna", "space": "acme", "has_index": False,
                                           "has_store": False, "current_task": None, "index_version": 1}
    bad = sneaky.json()["result"]  # a caller argument is refused, never used
    assert bad["isError"] and "caller" in bad["content"][0]["text"] and "u-boris" not in json.dumps(bad)

    assert api_list.status_code == 200
    entry = {t["name"]: t for t in api_list.json()["tools"]}["toy_echo"]
    assert entry["title"] == "Toy echo" and entry["input_schema"]["required"] == ["word"]
    assert "toy_tasks" not in {t["name"] for t in api_list.json()["tools"]}
    assert api_call.status_code == 200 and api_call.json()["answer"]["word"] == "hello"
    assert api_call.json()["answer"]["caller"] == "u-anna"
    assert api_tasks.status_code == 404  # needs a task store: not served without one


def test_a_toy_tool_that_needs_the_task_store_is_served_with_one(index, tasks_db, toys, token):
    service = Service(Holder(Served(index, 1, "t0")), fingerprint=CFG.fingerprint(), log_=CallLog(),
                      tasks=TaskStores(tasks_db, CFG))
    assert {"toy_echo", "toy_tasks", "task_search", "history_search"} <= set(service.tools)
    assert list(service.tools) == [n for n in registry.TOOLS if n in service.tools]  # the registry's order
    out = service.call("toy_tasks", {"word": "t"}, Session("u-anna", space="acme", current_task=30), "test")
    assert out.ok and out.answer["has_store"] and out.answer["current_task"] == 30
    assert not out.answer["has_index"]  # it declared no workspace
    echo = service.call("toy_echo", {"word": "t"}, Session("u-anna", space="acme", current_task=30), "test")
    assert echo.ok and not echo.answer["has_store"] and echo.answer["current_task"] is None


def test_searchkit_tools_list_shows_the_toy_tool_and_each_tool_s_needs(toys, capsys):
    assert main(["tools", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == list(registry.TOOLS)
    toy = next(line for line in lines if line.startswith("toy_tasks:"))
    assert "needs: caller, current_task, task_store" in toy
    history = next(line for line in lines if line.startswith("history_search:"))
    assert "history_index" in history and "task_store" not in history


def test_needs_are_declared_from_the_one_vocabulary():
    assert all(t.needs and t.needs <= set(NEEDS) for t in registry.TOOLS.values())
    assert {n for n, t in registry.TOOLS.items() if "task_store" in t.needs} == {"task_search", "task_around",
                                                                                  "task_list"}
    with pytest.raises(ValueError, match="nosuch"):
        Tool("bad", ToyParams, _toy_run, "a tool with an unknown need", needs=frozenset({"nosuch"}))


def test_run_gives_a_tool_only_what_it_declared_on_every_path():
    """As the CLI verbs call a tool (``TOOLS[name].run(params, ctx)``): the same narrowing as the server's."""
    from searchkit.tools.base import ToolContext

    full = ToolContext(caller="u-anna", space="acme", current_task=30, index=object(), store=object())
    echo = TOY.run(ToyParams("w"), full).to_dict()
    assert echo == {"word": "w", "caller": "u-anna", "space": "acme", "has_index": False, "has_store": False,
                    "current_task": None}
    tasks = TOY_TASKS.run(ToyParams("w"), full).to_dict()
    assert tasks["has_store"] and tasks["current_task"] == 30 and not tasks["has_index"]
