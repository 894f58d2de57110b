"""Text that is not valid Unicode in a tool's arguments (issue 39 item 5): JSON's ``\\ud800`` escape
decodes to a lone surrogate, which no UTF-8 text holds. On every transport the call is answered
with an error naming the parameter and logged not ok: the JSON API's 422 (it was a text/plain 500
with a traceback, logged ok), MCP over HTTP (a bare "Parse error") and MCP over stdio (no answer
at all: the client waited for its own timeout). Servers on 127.0.0.1, each wait bounded, each
server stopped by its test. Hashing embedder."""
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the 'serve' extra (pip install -e '.[serve]')")

import httpx  # noqa: E402
import mcp_types  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CONFIG = ROOT / "tests" / "data" / "hashing.json"
START_S = 120
CALL_S = 90
BAD_QUERY = b'{"query": "a\\ud800b"}'
BAD_FIND = b'{"ref": "chat:ses_4f2a", "find": "a\\udfffb"}'


def _exe() -> Path:
    return Path(sys.executable).parent / "searchkit"


def _env(tmp):
    return {**os.environ, "SEARCHKIT_CACHE": str(tmp / "cache.sqlite"), "PYTHONUNBUFFERED": "1"}


def _lines(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def _stop(proc):
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:  # pragma: no cover
        proc.kill()
        proc.wait(5)


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("unicode-http")
    ws = tmp / "ws"
    shutil.copytree(DEMO, ws)
    tokens, log = tmp / "tokens.json", tmp / "calls.log"
    made = subprocess.run([str(_exe()), "serve-token", "--tokens", str(tokens), "--caller", "u-anna", "--space", "acme",
                           "--workspace", str(ws)],
                          env=_env(tmp), capture_output=True, text=True, timeout=120, check=True)
    token = made.stdout.strip()
    proc = subprocess.Popen([str(_exe()), "serve", "--transport", "http", "--port", "0", "--config", str(CONFIG),
                             "--workspace", str(ws), "--tokens", str(tokens), "--log-file", str(log)],
                            env=_env(tmp), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline, url = time.monotonic() + START_S, None
        while url is None and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            url = next((x["url"] for x in _lines(log) if x["event"] == "listening"), None)
            time.sleep(0.2)
        assert url, "the server did not start in time"
        yield url, {"Authorization": f"Bearer {token}"}, log
    finally:
        _stop(proc)


@pytest.mark.parametrize("tool, body, param", [("history_search", BAD_QUERY, "query"),
                                               ("chat_read", BAD_FIND, "find")])
def test_the_json_api_answers_422_naming_the_parameter_and_logs_not_ok(http, tool, body, param):
    url, auth, log = http
    with httpx.Client(base_url=url, timeout=CALL_S) as h:
        r = h.post(f"/api/tools/{tool}", content=body, headers={**auth, "Content-Type": "application/json"})
        assert r.status_code == 422 and r.headers["content-type"].startswith("application/json"), r.text[:500]
        error = r.json()["error"]
        assert error["param"] == param and "Unicode" in error["message"] and "Traceback" not in r.text
        assert h.post("/api/tools/history_search", json={"query": "премия"}, headers=auth).status_code == 200
    calls = [x for x in _lines(log) if x["event"] == "call" and x["tool"] == tool and x["error"] == param]
    assert calls and not any(x["ok"] for x in calls)


def test_mcp_over_http_answers_a_tool_error_naming_the_parameter(http):
    url, auth, log = http
    headers = {**auth, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    body = (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "history_search", '
            b'"arguments": ' + BAD_QUERY + b'}}')
    with httpx.Client(base_url=url, timeout=CALL_S) as h:
        r = h.post("/mcp", content=body, headers=headers)
        assert r.status_code == 200, r.text[:500]
        answer = r.json()
        assert answer["id"] == 7 and answer["result"]["isError"] is True
        assert answer["result"]["structuredContent"]["error"]["param"] == "query"
        assert "query" in answer["result"]["content"][0]["text"]
        ok = h.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
            "name": "history_search", "arguments": {"query": "премия"}}})
        assert ok.status_code == 200 and ok.json()["result"].get("isError") is not True
    calls = [x for x in _lines(log) if x["event"] == "call" and x["transport"] == "mcp-http"]
    assert [x["ok"] for x in calls][-2:] == [False, True] and calls[-2]["error"] == "query"


def test_mcp_over_http_an_unknown_tool_with_a_lone_surrogate_is_invalid_params_as_without_one(http):
    """The rescued path answers an unknown tool as the SDK's path does: JSON-RPC -32602, not a tool result."""
    url, auth, _ = http
    headers = {**auth, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    body = (b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "no_such_tool", '
            b'"arguments": ' + BAD_QUERY + b'}}')
    with httpx.Client(base_url=url, timeout=CALL_S) as h:
        rescued = h.post("/mcp", content=body, headers=headers)
        plain = h.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
            "name": "no_such_tool", "arguments": {"query": "x"}}})
    assert rescued.status_code == 200, rescued.text[:500]
    assert "result" not in rescued.json() and rescued.json()["error"]["code"] == -32602
    assert rescued.json()["id"] == 9
    plain_answer = plain.json() if plain.headers.get("content-type", "").startswith("application/json") else None
    if plain_answer is not None:
        assert plain_answer["error"]["code"] == -32602


class Stdio:
    """A stdio server driven line by line; every read bounded."""

    def __init__(self, args, env):
        self.proc = subprocess.Popen([str(_exe()), "serve", *args], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.out: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.out.put(line)

    def send(self, raw: bytes):
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def answer(self, id_, limit=CALL_S):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                msg = json.loads(self.out.get(timeout=max(deadline - time.monotonic(), 0.01)))
            except queue.Empty:
                break
            if msg.get("id") == id_:
                return msg
        raise AssertionError(f"no answer to request {id_} in {limit} s")


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_mcp_over_stdio_answers_instead_of_leaving_the_client_waiting(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    log = tmp_path / "calls.log"
    s = Stdio(["--config", str(CONFIG), "--workspace", str(ws), "--caller", "u-anna", "--space", "acme",
               "--log-file", str(log)], _env(tmp_path))
    try:
        s.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}).encode())
        assert "result" in s.answer(1, START_S)
        s.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        s.send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "history_search", '
               b'"arguments": ' + BAD_QUERY + b'}}')
        bad = s.answer(2)
        s.send(b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "chat_read", '
               b'"arguments": ' + BAD_FIND + b'}}')
        find = s.answer(3)
        s.send(b'{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": "\\ud800"}}')
        listing = s.answer(4)
        s.send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "history_search", "arguments": {"query": "премия"}}}).encode())
        after = s.answer(5)
    finally:
        s.proc.stdin.close()
        try:
            s.proc.wait(30)
        except subprocess.TimeoutExpired:  # pragma: no cover
            _stop(s.proc)
    assert bad["result"]["isError"] is True and bad["result"]["structuredContent"]["error"]["param"] == "query"
    assert find["result"]["isError"] is True and find["result"]["structuredContent"]["error"]["param"] == "find"
    assert listing["error"]["code"] == mcp_types.INVALID_PARAMS and "Unicode" in listing["error"]["message"]
    assert after["result"].get("isError") is not True
    calls = [x for x in _lines(log) if x["event"] == "call"]
    assert [(x["tool"], x["ok"], x["error"]) for x in calls] == [
        ("history_search", False, "query"), ("chat_read", False, "find"), ("history_search", True, None)]
