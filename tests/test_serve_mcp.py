"""`searchkit serve` driven by the MCP SDK's own client (issue 30 item 8): over stdio (who is calling
fixed by the launching flags) and over streamable HTTP (a bearer token per user), with the JSON API
beside it, the log lines, and the live refresh (an erased table row and a space switched off leave
the answers). Servers listen on 127.0.0.1 only, on a port the OS picks; every wait is bounded; each
server is stopped by the test that started it. Hashing embedder; the embedding cache in tmp."""
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the 'serve' extra (pip install -e '.[serve]')")

import anyio  # noqa: E402
import httpx  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from searchkit.cli import main  # noqa: E402
from searchkit.export import load_config  # noqa: E402
from searchkit.ingest import tasks as task_store  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CONFIG = ROOT / "tests" / "data" / "hashing.json"
START_S = 90
CALL_S = 60
HISTORY = ["history_search", "chat_read", "app_row"]
TASKS = ["task_search", "task_around", "task_list"]


@pytest.fixture()
def ws(tmp_path):
    out = tmp_path / "ws"
    shutil.copytree(DEMO, out)
    return out


@pytest.fixture(scope="module")
def tasks_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("tasks") / "tasks.sqlite"
    src = ROOT / "datasets" / "tasks-demo"
    task_store.import_into(db, src / "tasks.jsonl", src / "comments.jsonl")
    return db


def _env(tmp_path):
    return {**os.environ, "SEARCHKIT_CACHE": str(tmp_path / "cache.sqlite"), "PYTHONUNBUFFERED": "1"}


def _run(coro_fn, limit=CALL_S * 2):
    async def bounded():
        with anyio.fail_after(limit):
            return await coro_fn()
    return anyio.run(bounded)


def _text(result):
    return result.content[0].text


def _refs(result):
    return {c["ref"] for c in result.structured_content["cards"]}


# --------------------------------------------------------------------------------------- stdio


def test_stdio_one_caller_fixed_by_the_flags_every_tool_bad_parameters_no_one_else_s_chat(ws, tasks_db, tmp_path):
    log = tmp_path / "calls.log"
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "searchkit.cli", "serve", "--config", str(CONFIG), "--workspace", str(ws), "--tasks-db", str(tasks_db),
        "--caller", "u-boris", "--space", "acme", "--current-task", "30", "--log-file", str(log)],
        env=_env(tmp_path))

    async def session():
        async with Client(params, read_timeout_seconds=CALL_S) as c:
            info = c.server_info
            listed = [t.name for t in (await c.list_tools()).tools]
            calls = {
                "history_search": await c.call_tool("history_search", {"query": "премия команды"}),
                "chat_read": await c.call_tool("chat_read", {"ref": "chat:ses_b3d0"}),
                "app_row": await c.call_tool("app_row", {"ref": "app:tasks#55"}),
                "task_search": await c.call_tool("task_search", {"query": "認証"}),
                "task_around": await c.call_tool("task_around", {"around_ref": "comment:88", "context": 0}),
                "task_list": await c.call_tool("task_list", {}),
            }
            bad = [await c.call_tool("history_search", {"query": "x", "limit": 99}),
                   await c.call_tool("history_search", {"query": "x", "caller": "u-anna"}),
                   await c.call_tool("chat_read", {"ref": "chat:ses_7c19"}),  # Anna's personal chat
                   await c.call_tool("chat_read", {"ref": "chat:ses_nope"})]
            try:  # an unknown tool is a JSON-RPC error -32602 (issue 41 item 7), not a tool result
                await c.call_tool("no_such_tool", {})
                unknown = None
            except MCPError as exc:
                unknown = exc
            after = await c.call_tool("task_list", {"limit": 1})  # still serving
            return info, listed, calls, bad, unknown, after

    info, listed, calls, bad, unknown, after = _run(session)
    assert info.name == "searchkit" and f"config {load_config(CONFIG).fingerprint()}" in info.description
    assert listed == HISTORY + TASKS
    assert all(not r.is_error for r in calls.values()), {k: _text(r) for k, r in calls.items() if r.is_error}
    hits = calls["history_search"]
    assert hits.structured_content["cards"] and "chat:ses_7c19" not in _refs(hits)
    assert all("ses_7c19" not in json.dumps(c) for c in hits.structured_content["cards"])
    assert calls["chat_read"].structured_content["ref"] == "chat:ses_b3d0"  # Boris's own personal chat
    assert calls["app_row"].structured_content["table"] == "tasks"
    assert calls["task_around"].structured_content and calls["task_list"].structured_content
    assert all(r.structured_content["index_version"] == 1 for r in calls.values())
    assert [r.is_error for r in bad] == [True] * 4
    assert bad[0].structured_content["error"]["param"] == "limit"
    assert bad[1].structured_content["error"]["param"] == "caller"
    assert _text(bad[2]).replace("chat:ses_7c19", "REF") == _text(bad[3]).replace("chat:ses_nope", "REF")
    assert unknown is not None and unknown.code == -32602
    assert not after.is_error
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    call_lines = [x for x in lines if x["event"] == "call"]
    assert len(call_lines) == 12 and {x["transport"] for x in call_lines} == {"mcp-stdio"}
    assert all(set(x) >= {"tool", "caller", "latency_ms", "counts", "fingerprint", "index_version"} for x in call_lines)
    assert "u-boris" not in log.read_text() and "премия" not in log.read_text()  # no caller id, no query text


# ---------------------------------------------------------------------------------------- HTTP


class HttpServer:
    """``searchkit serve --transport http --port 0`` in a child process; the URL from its log."""

    def __init__(self, args, env, log):
        self.log = log
        self.proc = subprocess.Popen([sys.executable, "-m", "searchkit.cli", "serve", "--transport", "http", "--port", "0",
                                      "--log-file", str(log), *args], env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.url = self._wait_url()

    def _wait_url(self):
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the server stopped: {self.proc.stderr.read().decode()[-2000:]}")
            for line in self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else ():
                event = json.loads(line)
                if event["event"] == "listening":
                    return event["url"]
            time.sleep(0.2)
        raise AssertionError("the server did not start in time")

    def lines(self):
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """One server for the HTTP tests, in file order (the refresh test edits its workspace last)."""
    tmp = tmp_path_factory.mktemp("http")
    ws = tmp / "ws"
    shutil.copytree(DEMO, ws)
    tokens = tmp / "tokens.json"
    anna = _token(tokens, "u-anna", "acme")
    boris = _token(tokens, "u-boris", "acme")
    state = tmp / "state"
    state.mkdir()
    server = HttpServer(["--config", str(CONFIG), "--workspace", str(ws), "--tokens", str(tokens),
                         "--refresh-every", "1s", "--state-dir", str(state)], _env(tmp), tmp / "calls.log")
    server.ws = ws
    try:
        yield server, anna, boris
    finally:
        server.stop()
    assert list(state.iterdir()) == []  # the server's private copy of the index left with it


def _token(path, caller, space):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["serve-token", "--tokens", str(path), "--caller", caller, "--space", space,
                     "--workspace", str(DEMO)]) == 0
    return out.getvalue().strip()


def _client(url, token):
    return Client(streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=CALL_S)), read_timeout_seconds=CALL_S)


def test_http_each_token_is_one_user_and_never_sees_another_s_chat(http_server):
    server, anna, boris = http_server

    async def session():
        async with _client(server.url, anna) as a, _client(server.url, boris) as b:
            tools = [t.name for t in (await a.list_tools()).tools]
            schemas = {t.name: t.input_schema for t in (await a.list_tools()).tools}
            return tools, schemas, {
                "anna_reads": await a.call_tool("chat_read", {"ref": "chat:ses_7c19"}),
                "boris_reads": await b.call_tool("chat_read", {"ref": "chat:ses_7c19"}),
                "boris_nothing": await b.call_tool("chat_read", {"ref": "chat:ses_nope"}),
                "anna_search": await a.call_tool("history_search", {"query": "Премия команды черновик"}),
                "boris_search": await b.call_tool("history_search", {"query": "Премия команды черновик"}),
                "boris_as_anna": await b.call_tool("history_search", {"query": "премия", "caller": "u-anna"}),
                "bad": await a.call_tool("app_row", {"ref": "row 55"}),
            }

    tools, schemas, r = _run(session)
    assert tools == HISTORY
    assert not r["anna_reads"].is_error and r["anna_reads"].structured_content["total"] == 2
    assert r["boris_reads"].is_error
    assert _text(r["boris_reads"]).replace("chat:ses_7c19", "R") == _text(r["boris_nothing"]).replace("chat:ses_nope", "R")
    assert "chat:ses_7c19" in _refs(r["anna_search"]) and "chat:ses_7c19" not in _refs(r["boris_search"])
    assert r["boris_as_anna"].is_error and r["boris_as_anna"].structured_content["error"]["param"] == "caller"
    assert r["bad"].is_error and r["bad"].structured_content["error"]["param"] == "ref"

    with httpx.Client(base_url=server.url, timeout=CALL_S) as h:
        for headers in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": f"Basic {anna}"}):
            assert h.post("/api/tools/chat_read", json={"ref": "chat:ses_7c19"}, headers=headers).status_code == 401
            assert h.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers).status_code == 401
        auth = {"Authorization": f"Bearer {boris}"}
        denied = h.post("/api/tools/chat_read", json={"ref": "chat:ses_7c19"}, headers=auth)
        assert denied.status_code == 422 and denied.json()["error"]["param"] == "ref"
        assert "Премия" not in denied.text
        ok = h.post("/api/tools/chat_read", json={"ref": "chat:ses_b3d0"}, headers=auth)
        assert ok.status_code == 200 and ok.json()["answer"]["ref"] == "chat:ses_b3d0" and ok.json()["index_version"] >= 1
        assert h.post("/api/tools/nope", json={}, headers=auth).status_code == 404
        assert h.post("/api/tools/history_search", content=b"{not json", headers=auth).status_code == 400
        assert h.post("/api/tools/history_search", json={"query": "x", "limit": 0}, headers=auth).json()["error"][
            "param"] == "limit"
        health = h.get("/health").json()
        assert health["status"] == "ok" and health["fingerprint"] and health["index_version"] >= 1
        api = h.get("/openapi.json").json()
        for name, schema in schemas.items():
            body = api["paths"][f"/api/tools/{name}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
            assert body == {k: v for k, v in schema.items() if k not in ("$schema", "$id")}
    callers = {x["caller"] for x in server.lines() if x["event"] == "call"}
    assert len(callers) == 2  # two tokens, two caller hashes; never a user id
    assert "u-anna" not in server.log.read_text() and "Премия" not in server.log.read_text()


def test_http_refresh_erases_a_deleted_row_and_a_space_switched_off_disappears(http_server):
    server, anna, _ = http_server
    ws = server.ws
    auth = {"Authorization": f"Bearer {anna}"}
    with httpx.Client(base_url=server.url, timeout=CALL_S) as h:
        def call(name, **args):
            return h.post(f"/api/tools/{name}", json=args, headers=auth)

        def version():
            return h.get("/health").json()["index_version"]

        assert call("app_row", ref="app:tasks#55").status_code == 200
        research = call("history_search", query="moon phases observations", spaces=["research"]).json()["answer"]
        assert "research" in research["searched"] and any(c["space"] == "research" for c in research["cards"])
        db = sqlite3.connect(ws / "acme" / ".space" / "app.sqlite")
        db.execute("DELETE FROM tasks WHERE id = 55")
        db.commit()
        db.close()
        space = ws / "research" / ".space" / "space.json"
        space.write_text(json.dumps({**json.loads(space.read_text()), "history_search": False}), encoding="utf-8")
        edited = math.ceil(time.time())  # the answers must be fresh as of a read begun after the edits
        v0 = version()

        def fresh_after_edits():
            health = h.get("/health").json()
            return datetime.fromisoformat(health["fresh_as_of"]).timestamp() >= edited

        deadline = time.monotonic() + 240  # a loaded machine: the refresh child runs at a lower priority
        while not fresh_after_edits() and time.monotonic() < deadline:  # a refresh that started after the edits
            time.sleep(0.3)
        assert fresh_after_edits() and version() >= v0 + 1
        gone = call("app_row", ref="app:tasks#55")
        assert gone.status_code == 422 and gone.json()["index_version"] >= v0 + 1
        found = call("history_search", query="Отчёт о продажах за октябрь", kinds=["app"]).json()["answer"]
        assert "app:tasks#55" not in {c["ref"] for c in found["cards"]}
        off = call("history_search", query="moon phases observations", spaces=["research"]).json()["answer"]
        assert off["searched"] == ["acme"] and {"space": "research", "reason": "history_search_off"} in off["skipped"]
        assert all(c["space"] != "research" for c in off["cards"])
    refreshes = [x for x in server.lines() if x["event"] == "refresh"]
    assert refreshes and all(x["ok"] for x in refreshes)
